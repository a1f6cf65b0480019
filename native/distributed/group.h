// A data-parallel process group on PyTorch's c10d: a TCPStore for the rendezvous (torchrun's conventions) and a
// ProcessGroupGloo (CPU) or ProcessGroupNCCL (CUDA) for the collectives. Every collective waits at most the group's
// timeout; a failure (a rank that died, a hang past the timeout) raises E_DIST naming the ranks that stopped
// answering when they can be told, so no rank ever hangs on a dead peer.
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace c10d {
class Store;
class Backend;
class Work;
}  // namespace c10d

namespace lamer::dist {

// Every field comes from the binding, which requires them all; the defaults live in TS (src/train/distributed.ts).
struct GroupOptions {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;
  int master_port = 0;
  // Every collective and the rendezvous itself fail with E_DIST after this long.
  std::chrono::milliseconds timeout{0};
  // "gloo" (CPU tensors) or "nccl" (CUDA tensors, device cuda:local_rank).
  std::string backend;
  // torchrun's agent already serves the store at MASTER_ADDR:MASTER_PORT: every rank is a client, under the prefix
  // /worker/attempt_<restart_count>. Otherwise rank 0 serves it.
  bool agent_store = false;
  int restart_count = 0;
};

// Names of the backends this build has ("gloo", "nccl").
std::vector<std::string> AvailableBackends();

class Group {
 public:
  // Connects to the other ranks (blocks until all joined, or E_DIST after the timeout).
  explicit Group(const GroupOptions& options);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  int rank() const { return options_.rank; }
  int size() const { return options_.world_size; }
  const GroupOptions& options() const { return options_; }
  // The device collectives run on ("cpu" for gloo, "cuda:<local_rank>" for nccl).
  at::Device device() const;

  // Sums the tensors over the ranks, in place. Tensors of one dtype and device are packed into buckets of at most
  // `bucket_bytes` and reduced one bucket at a time.
  void AllReduceSum(const std::vector<at::Tensor>& tensors, int64_t bucket_bytes = 32ll << 20);
  // Overwrites the tensors with rank `root`'s, in place.
  void Broadcast(const std::vector<at::Tensor>& tensors, int root = 0);
  // ZeRO's collectives over flat tensors. AllGatherInto: `out` [size * n] holds every rank's `in` [n], in rank order.
  // ReduceScatterSum: `out` [n] is this rank's n elements of the sum over the ranks of `in` [size * n]. Both 1-D and
  // contiguous, on the group's device; with one rank they copy.
  void AllGatherInto(const at::Tensor& out, const at::Tensor& in);
  void ReduceScatterSum(const at::Tensor& out, const at::Tensor& in);
  // Every rank's bytes, in rank order (the lengths may differ between ranks).
  std::vector<std::vector<uint8_t>> AllGatherBytes(const std::vector<uint8_t>& mine);
  void Barrier();
  // Leaves the group (idempotent); later collectives fail with E_DIST.
  void Close();

 private:
  // Launches a collective and waits for it (at most the timeout); any failure becomes E_DIST (Failed).
  void Run(const std::function<c10::intrusive_ptr<c10d::Work>()>& launch, const char* what);
  [[noreturn]] void Failed(const char* what, const std::string& cause);
  // Aborts the NCCL communicators after a failed collective (nothing for Gloo).
  void Abort() noexcept;
  void Heartbeat();
  void Check(const char* what) const;

  GroupOptions options_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> backend_;
  std::atomic<bool> closed_{false};
  // A thread stamps this rank's key in the store every second, so a rank whose collective failed can tell which
  // peers are gone (their stamps stop) from which are alive.
  std::thread heartbeat_;
  std::mutex hb_mu_;
  std::condition_variable hb_cv_;
  bool hb_stop_ = false;
};

}  // namespace lamer::dist
