// Decode steps captured as CUDA graphs and replayed: one graph per key (rows, attended width, kinds of sampling, top-k
// width). Every graph is captured on one stream kept for the object's life, from one memory pool: they replay one at
// a time on that stream, so a capture reuses the scratch memory the ones before it freed (graphs captured on streams
// of their own share a pool but never each other's blocks, which the caching allocator keeps per stream). The first
// step of a new key runs eagerly on that same stream before its capture, creating what capture must not (the stream's
// cuBLAS workspace, library handles, the compute-dtype weights). Work before and after is ordered against the caller's
// stream with events. Without CUDA (a CPU build, or a model on the CPU) nothing is captured and Run says so. No GPU
// has run this code yet: test/native/engine/cuda-graphs.test.ts, which checks it against eager decoding, skips without one.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>

namespace lamer::engine {

class DecodeGraphs {
 public:
  using Key = std::tuple<int64_t, int64_t, int, int64_t>;

  // `wanted`: the engine's cudaGraphs option; graphs are used only on a CUDA device of a CUDA build.
  DecodeGraphs(at::Device device, bool wanted);
  ~DecodeGraphs();
  DecodeGraphs(const DecodeGraphs&) = delete;
  DecodeGraphs& operator=(const DecodeGraphs&) = delete;

  // CUDA build, CUDA device, option on, and no capture has failed.
  bool enabled() const;
  // Graphs held now.
  int64_t size() const;
  // Nodes (kernels, copies, memsets) of the largest graph captured since the last Clear(): what one decode step of the
  // biggest bucket launches on the GPU. 0 before any capture.
  int64_t nodes() const { return nodes_; }
  // Why capture was turned off (empty while graphs work or are not used).
  const std::string& error() const { return error_; }
  // Forgets every graph (the buffers or weights they read moved); the stream stays.
  void Clear();
  // Runs `steps` decode steps for `key`, `step` being one (device work only, capturable): from the key's graph,
  // capturing it first when new, the eager warm-up before the capture counting as the first step. Returns false
  // when graphs are off or the capture failed (graphs are then off for good): `ran` steps ran eagerly (0 or 1) and
  // the caller runs the rest. `replayed`: steps of `ran` that came from a graph.
  bool Run(const Key& key, const std::function<void()>& step, int64_t steps, int64_t& ran, int64_t& replayed);
  // Captures the graph of `key` if it is new (its eager warm-up step included), replaying nothing: for capturing
  // the buckets when an engine starts. False when graphs are off or the capture failed.
  bool Capture(const Key& key, const std::function<void()>& step);

 private:
  // Run and Capture (steps 0): on the capture stream, ordered against the caller's stream (CUDA builds only).
  bool Replay(const Key& key, const std::function<void()>& step, int64_t steps, int64_t& ran, int64_t& replayed);

  struct Cuda;  // the CUDA objects (decode_graphs.cpp)
  std::unique_ptr<Cuda> cuda_;
  bool wanted_;
  bool on_cuda_;
  std::string error_;
  int64_t nodes_ = 0;
};

}  // namespace lamer::engine
