#include "engine/decode_graphs.h"

#include <algorithm>
#include <map>

#ifdef LAMER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace lamer::engine {

#ifdef LAMER_WITH_CUDA

struct DecodeGraphs::Cuda {
  explicit Cuda(at::Device device) : device(device), stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())) {}
  at::Device device;
  c10::cuda::CUDAStream stream;
  std::map<Key, std::unique_ptr<at::cuda::CUDAGraph>> graphs;
  at::cuda::MempoolId_t pool = {0, 0};

  // Makes `to` wait for the work queued on `from` so far.
  static void Order(const c10::cuda::CUDAStream& from, const c10::cuda::CUDAStream& to) {
    at::cuda::CUDAEvent done;
    done.record(from);
    done.block(to);
  }

  // The graph of `key`, captured now if new (after an eager step on the capture stream); null if capture failed.
  // Runs on the capture stream (the caller's guard).
  at::cuda::CUDAGraph* Find(const Key& key, const std::function<void()>& step, bool& warmed, std::string& error, int64_t& nodes) {
    warmed = false;
    auto it = graphs.find(key);
    if (it != graphs.end()) return it->second.get();
    step();  // the warm-up: a real step
    warmed = true;
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    stream.synchronize();
    try {
      if (pool == at::cuda::MempoolId_t{0, 0}) pool = at::cuda::graph_pool_handle();
      graph->capture_begin(pool, cudaStreamCaptureModeThreadLocal);
      try {
        step();
      } catch (...) {
        try {
          graph->capture_end();
        } catch (...) {
        }
        throw;
      }
      // The nodes captured (the graph being built on this stream, read before capture_end instantiates it).
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      unsigned long long id = 0;
      cudaGraph_t built = nullptr;
      size_t count = 0;
      if (cudaStreamGetCaptureInfo(stream.stream(), &status, &id, &built) == cudaSuccess && built != nullptr &&
          cudaGraphGetNodes(built, nullptr, &count) == cudaSuccess) {
        nodes = std::max(nodes, static_cast<int64_t>(count));
      }
      (void)cudaGetLastError();
      graph->capture_end();
    } catch (const std::exception& e) {
      (void)cudaGetLastError();  // the failed capture's error must not surface in a later, unrelated check
      error = std::string("CUDA graph capture failed; decoding eagerly from now on: ") + e.what();
      return nullptr;
    }
    return graphs.emplace(key, std::move(graph)).first->second.get();
  }
};

DecodeGraphs::DecodeGraphs(at::Device device, bool wanted) : wanted_(wanted), on_cuda_(device.is_cuda()) {
  if (wanted_ && on_cuda_) cuda_ = std::make_unique<Cuda>(device);
}

bool DecodeGraphs::enabled() const { return cuda_ && error_.empty(); }

int64_t DecodeGraphs::size() const { return cuda_ ? static_cast<int64_t>(cuda_->graphs.size()) : 0; }

void DecodeGraphs::Clear() {
  if (!cuda_) return;
  cuda_->graphs.clear();
  nodes_ = 0;
  cuda_->pool = {0, 0};  // a fresh pool: the old one's memory goes back once its graphs are gone
}

bool DecodeGraphs::Run(const Key& key, const std::function<void()>& step, int64_t steps, int64_t& ran, int64_t& replayed) {
  ran = replayed = 0;
  if (steps <= 0) return false;
  return Replay(key, step, steps, ran, replayed);
}

bool DecodeGraphs::Capture(const Key& key, const std::function<void()>& step) {
  int64_t ran = 0, replayed = 0;
  return Replay(key, step, 0, ran, replayed);
}

bool DecodeGraphs::Replay(const Key& key, const std::function<void()>& step, int64_t steps, int64_t& ran, int64_t& replayed) {
  if (!enabled()) return false;
  Cuda& c = *cuda_;
  const c10::cuda::CUDAGuard device_guard(c.device);
  const c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream(c.device.index());
  Cuda::Order(caller, c.stream);
  bool ok = true;
  {
    const c10::cuda::CUDAStreamGuard on_stream(c.stream);
    bool warmed = false;
    at::cuda::CUDAGraph* graph = c.Find(key, step, warmed, error_, nodes_);
    ran = warmed ? 1 : 0;
    if (graph == nullptr) {
      Clear();
      ok = false;
    } else {
      for (; ran < steps; ++ran, ++replayed) graph->replay();
    }
  }
  Cuda::Order(c.stream, caller);
  return ok;
}

#else  // a CPU build: nothing is ever captured

struct DecodeGraphs::Cuda {};

DecodeGraphs::DecodeGraphs(at::Device device, bool wanted) : wanted_(wanted), on_cuda_(device.is_cuda()) {}
bool DecodeGraphs::enabled() const { return false; }
int64_t DecodeGraphs::size() const { return 0; }
void DecodeGraphs::Clear() {}
bool DecodeGraphs::Run(const Key&, const std::function<void()>&, int64_t, int64_t& ran, int64_t& replayed) {
  ran = replayed = 0;
  return false;
}
bool DecodeGraphs::Capture(const Key&, const std::function<void()>&) { return false; }

#endif

DecodeGraphs::~DecodeGraphs() = default;

}  // namespace lamer::engine
