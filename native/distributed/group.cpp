#include "distributed/group.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef LAMER_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <cstdlib>
#include <map>

#include "bridge/errors.h"

namespace lamer::dist {

namespace {

constexpr const char* kHeartbeatPrefix = "lamer/heartbeat/";

bool IsLoopback(const std::string& addr) { return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1"; }

// The readable part of an exception's message: its first line (torch appends a C++ backtrace), without Gloo's
// source-location prefix ("[.../pair.cc:553] ") and its advice after the first sentence.
std::string FirstLine(const std::exception& e) {
  std::string m = e.what();
  const auto nl = m.find('\n');
  if (nl != std::string::npos) m = m.substr(0, nl);
  if (!m.empty() && m[0] == '[') {
    const auto close = m.find("] ");
    if (close != std::string::npos && m.substr(0, close).find(".cc:") != std::string::npos) m = m.substr(close + 2);
  }
  const auto sentence = m.find(". ");
  if (sentence != std::string::npos) m = m.substr(0, sentence + 1);
  return m;
}

}  // namespace

std::vector<std::string> AvailableBackends() {
  std::vector<std::string> out{"gloo"};
#ifdef LAMER_WITH_NCCL
  out.push_back("nccl");
#endif
  return out;
}

Group::Group(const GroupOptions& o) : options_(o) {
  if (o.world_size < 1) Fail("E_DIST", "distributed: WORLD_SIZE must be >= 1, found " + std::to_string(o.world_size));
  if (o.rank < 0 || o.rank >= o.world_size) {
    Fail("E_DIST", "distributed: RANK must be in [0, " + std::to_string(o.world_size) + "), found " + std::to_string(o.rank));
  }
  if (o.master_port < 1 || o.master_port > 65535)
    Fail("E_DIST", "distributed: MASTER_PORT must be in [1, 65535], found " + std::to_string(o.master_port));
  if (o.timeout.count() < 1) Fail("E_DIST", "distributed: the timeout must be at least 1 ms");
  const std::string where = o.master_addr + ":" + std::to_string(o.master_port);
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(o.master_port);
    so.isServer = !o.agent_store && o.rank == 0;
    so.numWorkers = o.agent_store ? std::nullopt : std::optional<std::size_t>(o.world_size);
    so.waitWorkers = !o.agent_store;
    so.timeout = o.timeout;
    c10::intrusive_ptr<c10d::Store> tcp = c10::make_intrusive<c10d::TCPStore>(o.master_addr, so);
    if (o.agent_store) tcp = c10::make_intrusive<c10d::PrefixStore>("/worker/attempt_" + std::to_string(o.restart_count), tcp);
    store_ = c10::make_intrusive<c10d::PrefixStore>("lamer", tcp);
  } catch (const std::exception& e) {
    Fail("E_DIST", "distributed: rank " + std::to_string(o.rank) + " could not join the rendezvous store at " + where + " within " +
                       std::to_string(o.timeout.count()) + " ms: " + FirstLine(e) +
                       ". Check MASTER_ADDR/MASTER_PORT, that every rank was started, and that the port is free");
  }
  try {
    if (o.backend == "gloo") {
      auto opts = c10d::ProcessGroupGloo::Options::create(o.timeout);
      // On one machine (the loopback rendezvous) the ranks talk over loopback; otherwise Gloo's default device
      // (this host's name, or GLOO_SOCKET_IFNAME) as torch.distributed picks it.
      if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      } else if (IsLoopback(o.master_addr)) {
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      } else {
        opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      opts->threads = 2;
      backend_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store_, o.rank, o.world_size, opts);
    } else if (o.backend == "nccl") {
#ifdef LAMER_WITH_NCCL
      // torch's default on an NCCL error or timeout (SkipCleanUp) is to take the process down from its watchdog
      // thread, before the caller could say which rank stopped. Instead: the waiting call itself sees the timeout
      // (blocking wait) and the communicators are aborted (CleanUpOnly), so Run can fail with E_DIST like Gloo does.
      // Read when the group is made; a value the user set is kept.
      setenv("TORCH_NCCL_BLOCKING_WAIT", "1", /*overwrite=*/0);
      setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2", /*overwrite=*/0);
      auto opts = c10d::ProcessGroupNCCL::Options::create();
      opts->timeout = o.timeout;
      backend_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(store_, o.rank, o.world_size, opts);
#else
      Fail("E_DIST", "distributed: this addon was built without NCCL (a CUDA libtorch and nccl.h are needed); use backend gloo");
#endif
    } else {
      Fail("E_DIST", "distributed: backend must be gloo or nccl, found '" + o.backend + "'");
    }
  } catch (const NativeError&) {
    throw;
  } catch (const std::exception& e) {
    Fail("E_DIST", "distributed: rank " + std::to_string(o.rank) + " could not create the " + o.backend + " process group through " +
                       where + ": " + FirstLine(e));
  }
  heartbeat_ = std::thread([this] { Heartbeat(); });
}

Group::~Group() { Close(); }

at::Device Group::device() const {
  if (options_.backend == "nccl") return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(options_.local_rank));
  return at::Device(at::kCPU);
}

void Group::Heartbeat() {
  const std::string key = kHeartbeatPrefix + std::to_string(options_.rank);
  std::unique_lock<std::mutex> lock(hb_mu_);
  while (!hb_stop_) {
    lock.unlock();
    try {
      store_->add(key, 1);
    } catch (...) {
      return;  // the store is gone (its host ended); a failing collective says so
    }
    lock.lock();
    hb_cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return hb_stop_; });
  }
}

void Group::Check(const char* what) const {
  if (closed_.load()) Fail("E_DIST", std::string("distributed ") + what + ": the process group was closed");
}

void Group::Failed(const char* what, const std::string& cause) {
  // Which peers stopped answering: their heartbeat counters do not move over 1.5 s. When the store itself cannot be
  // reached, rank 0 (which serves it, unless torchrun's agent does) is gone.
  std::string who;
  try {
    auto counters = [&]() {
      std::map<int, int64_t> c;
      for (int r = 0; r < options_.world_size; ++r) {
        if (r != options_.rank) c[r] = store_->add(kHeartbeatPrefix + std::to_string(r), 0);
      }
      return c;
    };
    const auto before = counters();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const auto after = counters();
    std::vector<int> gone;
    for (const auto& [r, n] : before) {
      if (after.at(r) == n) gone.push_back(r);
    }
    if (!gone.empty()) {
      who = gone.size() == 1 ? "rank " : "ranks ";
      for (size_t i = 0; i < gone.size(); ++i) who += (i ? ", " : "") + std::to_string(gone[i]);
      who += gone.size() == 1 ? " stopped answering" : " stopped answering";
    }
  } catch (...) {
    who = options_.agent_store ? "the rendezvous store (torchrun's agent) is unreachable"
                               : "rank 0 (which serves the rendezvous store) is unreachable";
  }
  Fail("E_DIST", std::string("distributed ") + what + " failed on rank " + std::to_string(options_.rank) + " of " +
                     std::to_string(options_.world_size) + (who.empty() ? "" : ": " + who) + " (" + cause +
                     "). The run stops; resume it with --resume once every rank can run");
}

void Group::Run(const std::function<c10::intrusive_ptr<c10d::Work>()>& launch, const char* what) {
  // Launching can fail too (a peer already gone): inside the same handler as the wait.
  try {
    if (!launch()->wait(options_.timeout)) Failed(what, "timed out after " + std::to_string(options_.timeout.count()) + " ms");
  } catch (const NativeError&) {
    Abort();
    throw;
  } catch (const std::exception& e) {
    Abort();
    Failed(what, FirstLine(e));
  }
}

void Group::Abort() noexcept {
  // NCCL: a communicator left in a failed collective hangs whoever touches it next (the destructor included); abort
  // it so the error can surface and the process end cleanly. Gloo needs nothing (its pairs fail on their own).
  if (options_.backend != "nccl" || !backend_) return;
  try {
    backend_->abort();
  } catch (...) {
  }
}

void Group::AllReduceSum(const std::vector<at::Tensor>& tensors, int64_t bucket_bytes) {
  Check("all-reduce");
  if (options_.world_size == 1) return;
  // Buckets: consecutive tensors of one dtype and device, up to bucket_bytes (a larger tensor is a bucket alone).
  size_t i = 0;
  while (i < tensors.size()) {
    std::vector<at::Tensor> bucket{tensors[i]};
    int64_t bytes = tensors[i].numel() * static_cast<int64_t>(tensors[i].element_size());
    size_t j = i + 1;
    while (j < tensors.size() && tensors[j].scalar_type() == tensors[i].scalar_type() && tensors[j].device() == tensors[i].device() &&
           bytes + tensors[j].numel() * static_cast<int64_t>(tensors[j].element_size()) <= bucket_bytes) {
      bytes += tensors[j].numel() * static_cast<int64_t>(tensors[j].element_size());
      bucket.push_back(tensors[j]);
      ++j;
    }
    std::vector<at::Tensor> flat;
    if (bucket.size() == 1 && bucket[0].is_contiguous()) {
      flat.push_back(bucket[0]);
    } else {
      std::vector<at::Tensor> views;
      views.reserve(bucket.size());
      for (const auto& t : bucket) views.push_back(t.reshape({-1}));
      flat.push_back(at::cat(views));
    }
    c10d::AllreduceOptions ao;
    ao.reduceOp = c10d::ReduceOp::SUM;
    ao.timeout = options_.timeout;
    Run([&] { return backend_->allreduce(flat, ao); }, "all-reduce");
    if (!(bucket.size() == 1 && bucket[0].is_contiguous())) {
      int64_t offset = 0;
      for (const auto& t : bucket) {
        const int64_t n = t.numel();
        t.copy_(flat[0].narrow(0, offset, n).view(t.sizes()));
        offset += n;
      }
    }
    i = j;
  }
}

void Group::Broadcast(const std::vector<at::Tensor>& tensors, int root) {
  Check("broadcast");
  if (options_.world_size == 1) return;
  for (const auto& t : tensors) {
    std::vector<at::Tensor> one{t.is_contiguous() ? t : t.contiguous()};
    c10d::BroadcastOptions bo;
    bo.rootRank = root;
    bo.timeout = options_.timeout;
    Run([&] { return backend_->broadcast(one, bo); }, "broadcast");
    if (!one[0].is_same(t)) t.copy_(one[0]);
  }
}

void Group::AllGatherInto(const at::Tensor& out, const at::Tensor& in) {
  Check("all-gather");
  if (out.dim() != 1 || in.dim() != 1 || out.numel() != in.numel() * options_.world_size || !out.is_contiguous() || !in.is_contiguous()) {
    Fail("E_ARG", "all-gather: expected contiguous 1-D tensors, out = world size x in");
  }
  if (options_.world_size == 1) {
    out.copy_(in);
    return;
  }
  at::Tensor o = out, i = in;
  c10d::AllgatherOptions go;
  go.timeout = options_.timeout;
  Run([&] { return backend_->_allgather_base(o, i, go); }, "all-gather");
}

void Group::ReduceScatterSum(const at::Tensor& out, const at::Tensor& in) {
  Check("reduce-scatter");
  if (out.dim() != 1 || in.dim() != 1 || in.numel() != out.numel() * options_.world_size || !out.is_contiguous() || !in.is_contiguous()) {
    Fail("E_ARG", "reduce-scatter: expected contiguous 1-D tensors, in = world size x out");
  }
  if (options_.world_size == 1) {
    out.copy_(in);
    return;
  }
  at::Tensor o = out, i = in;
  c10d::ReduceScatterOptions ro;
  ro.reduceOp = c10d::ReduceOp::SUM;
  ro.timeout = options_.timeout;
  Run([&] { return backend_->_reduce_scatter_base(o, i, ro); }, "reduce-scatter");
}

std::vector<std::vector<uint8_t>> Group::AllGatherBytes(const std::vector<uint8_t>& mine) {
  Check("all-gather");
  if (options_.world_size == 1) return {mine};
  const at::Device dev = device();
  const auto lopts = at::TensorOptions().dtype(at::kLong).device(dev);
  // Lengths first, then every rank's bytes padded to the longest.
  at::Tensor len = at::full({1}, static_cast<int64_t>(mine.size()), lopts);
  std::vector<std::vector<at::Tensor>> lens_out(1);
  for (int r = 0; r < options_.world_size; ++r) lens_out[0].push_back(at::empty({1}, lopts));
  std::vector<at::Tensor> lens_in{len};
  c10d::AllgatherOptions go;
  go.timeout = options_.timeout;
  Run([&] { return backend_->allgather(lens_out, lens_in, go); }, "all-gather");
  std::vector<int64_t> lengths;
  int64_t longest = 0;
  for (const auto& t : lens_out[0]) {
    lengths.push_back(t.to(at::kCPU).item<int64_t>());
    longest = std::max(longest, lengths.back());
  }
  const auto bopts = at::TensorOptions().dtype(at::kByte).device(dev);
  at::Tensor padded = at::zeros({std::max<int64_t>(longest, 1)}, at::kByte);
  if (!mine.empty()) std::memcpy(padded.data_ptr<uint8_t>(), mine.data(), mine.size());
  std::vector<at::Tensor> in{padded.to(dev)};
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < options_.world_size; ++r) out[0].push_back(at::empty({std::max<int64_t>(longest, 1)}, bopts));
  Run([&] { return backend_->allgather(out, in, go); }, "all-gather");
  std::vector<std::vector<uint8_t>> result;
  for (int r = 0; r < options_.world_size; ++r) {
    const at::Tensor h = out[0][r].to(at::kCPU).contiguous();
    const uint8_t* p = h.data_ptr<uint8_t>();
    result.emplace_back(p, p + lengths[r]);
  }
  return result;
}

void Group::Barrier() {
  Check("barrier");
  if (options_.world_size == 1) return;
  // A one-element all-reduce: unlike Gloo's barrier it carries the group's timeout and reports a dead peer the same way.
  at::Tensor one = at::ones({1}, at::TensorOptions().dtype(at::kFloat).device(device()));
  std::vector<at::Tensor> t{one};
  c10d::AllreduceOptions ao;
  ao.timeout = options_.timeout;
  Run([&] { return backend_->allreduce(t, ao); }, "barrier");
}

void Group::Close() {
  if (closed_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(hb_mu_);
    hb_stop_ = true;
  }
  hb_cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
  try {
    if (backend_) backend_->shutdown();
  } catch (...) {
  }
  backend_.reset();
  store_.reset();
}

}  // namespace lamer::dist
