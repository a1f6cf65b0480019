// CUDA version of native/algo/advantages.cpp over raw device pointers (compiles on its own with `nvcc -c`).
//
//   1. one thread per trial (a thread whose row starts a trial): episode rewards, scores and returns, walking the
//      trial's rows like the CPU kernel does (trials are a few dozen rows);
//   2. episode level: a stable radix sort of row indices by group id makes each group one contiguous segment; one
//      thread per segment reduces it (mean, then squared deviations) in row order and writes A_E;
//   3. step level: the same over the 64-bit key (group, step key), writing A_S;
//   4. A = A_E + omega * A_S.
// Each segment is reduced sequentially, in row order, with explicitly rounded operations (no fused multiply-add), so
// that the GPU does the CPU kernel's arithmetic in the CPU kernel's order. Its test (test/native/algo/cuda_kernel_check.cu)
// compares the two to 1e-5 and has not yet run on a GPU. Segments are one task group (hundreds of rows) or one state
// inside it, so the sequential reduction per segment is not the bottleneck.
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "advantages_cuda.h"

namespace lamer::algo::cuda {
namespace {

struct DeviceParams {
  int gigpo;
  int paper;
  double gamma_step;
  double gamma_traj;
  double invalid_penalty;
  int divide_by_std;
  double omega;
  double eps;
};

__device__ __forceinline__ bool same_trial(const RowView& r, int64_t a, int64_t b) {
  return r.group[a] == r.group[b] && r.trial[a] == r.trial[b];
}

// Step 1. Thread i works only when row i starts a trial.
__global__ void trial_kernel(RowView r, DeviceParams p, float* episode_reward, double* score, double* G) {
  const int64_t start = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (start >= r.rows) return;
  if (start > 0 && same_trial(r, start, start - 1)) return;
  int64_t end = start + 1;
  while (end < r.rows && same_trial(r, end, start)) ++end;

  // Episode rewards: runs of play rows of one episode, summed in row order.
  int64_t run_start = -1;
  double run_sum = 0.0;
  for (int64_t i = start; i <= end; ++i) {
    const bool play = i < end && r.phase[i] == 0;
    const bool continues = play && run_start >= 0 && r.episode[i] == r.episode[run_start];
    if (run_start >= 0 && !continues) {
      for (int64_t j = run_start; j < i; ++j) {
        episode_reward[j] = static_cast<float>(run_sum);
        score[j] = __dsub_rn(run_sum, __dmul_rn(p.invalid_penalty, static_cast<double>(1 - r.valid[j])));
      }
      run_start = -1;
    }
    if (i == end) break;
    if (!play) {
      episode_reward[i] = 0.0f;
      score[i] = __dsub_rn(0.0, __dmul_rn(p.invalid_penalty, static_cast<double>(1 - r.valid[i])));
      continue;
    }
    if (run_start < 0) {
      run_start = i;
      run_sum = 0.0;
    }
    run_sum = __dadd_rn(run_sum, static_cast<double>(r.reward[i]));
  }

  // Returns, backwards (SPEC §3).
  if (!p.paper) {
    double running = 0.0;
    int32_t cur = r.episode[end - 1];
    for (int64_t t = end - 1; t >= start; --t) {
      if (r.phase[t] == 0) {
        const double gamma = r.episode[t] == cur ? p.gamma_step : p.gamma_traj;
        running = __dadd_rn(static_cast<double>(r.reward[t]), __dmul_rn(gamma, running));
        cur = r.episode[t];
      }
      G[t] = running;
    }
  } else {
    double within = 0.0, tail = 0.0;
    bool seen_play = false;
    int32_t cur = 0;
    for (int64_t t = end - 1; t >= start; --t) {
      if (r.phase[t] != 0) {
        G[t] = seen_play ? __dadd_rn(within, tail) : 0.0;
        continue;
      }
      if (seen_play && r.episode[t] != cur) {
        tail = __dmul_rn(p.gamma_traj, __dadd_rn(within, tail));
        within = 0.0;
      }
      within = __dadd_rn(static_cast<double>(r.reward[t]), __dmul_rn(p.gamma_step, within));
      G[t] = __dadd_rn(within, tail);
      cur = r.episode[t];
      seen_play = true;
    }
  }
}

__global__ void iota_kernel(int32_t* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<int32_t>(i);
}

__global__ void group_keys_kernel(RowView r, uint32_t* episode_key, uint64_t* step_key) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= r.rows) return;
  const uint32_t g = static_cast<uint32_t>(r.group[i]);
  episode_key[i] = g;
  if (step_key) step_key[i] = (static_cast<uint64_t>(g) << 32) | static_cast<uint32_t>(r.step_key[i]);
}

// Steps 2 and 3. `keys` are sorted, `rows` the row index of each sorted position (row order inside equal keys).
// The thread at a segment's first position reduces the whole segment. A segment of one gets `singleton(value)`:
// the raw value at the episode level, 0 at the step level.
template <typename Key>
__global__ void segment_normalize_kernel(const Key* keys, const int32_t* rows, int64_t n, const double* value, int divide_by_std,
                                         double eps, int singleton_keeps_value, double* out) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (first >= n) return;
  if (first > 0 && keys[first] == keys[first - 1]) return;
  int64_t end = first + 1;
  while (end < n && keys[end] == keys[first]) ++end;
  const int64_t count = end - first;
  if (count == 1) {
    const int32_t i = rows[first];
    out[i] = singleton_keeps_value ? value[i] : 0.0;
    return;
  }
  double sum = 0.0;
  for (int64_t j = first; j < end; ++j) sum = __dadd_rn(sum, value[rows[j]]);
  const double mean = __ddiv_rn(sum, static_cast<double>(count));
  double denom = 1.0;
  if (divide_by_std) {
    double squares = 0.0;
    for (int64_t j = first; j < end; ++j) {
      const double d = __dsub_rn(value[rows[j]], mean);
      squares = __dadd_rn(squares, __dmul_rn(d, d));
    }
    denom = __dadd_rn(__dsqrt_rn(__ddiv_rn(squares, static_cast<double>(count - 1))), eps);
  }
  for (int64_t j = first; j < end; ++j) {
    const int32_t i = rows[j];
    const double d = __dsub_rn(value[i], mean);
    out[i] = divide_by_std ? __ddiv_rn(d, denom) : d;
  }
}

__global__ void combine_kernel(int64_t n, const double* a_episode, const double* a_step, const double* G, double omega, float* advantage,
                               float* step_return) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double a = a_step ? __dadd_rn(a_episode[i], __dmul_rn(omega, a_step[i])) : a_episode[i];
  advantage[i] = static_cast<float>(a);
  step_return[i] = static_cast<float>(G[i]);
}

// Device scratch freed on every exit path.
class Scratch {
 public:
  explicit Scratch(cudaStream_t stream) : stream_(stream) {}
  ~Scratch() {
    for (void* p : blocks_) cudaFreeAsync(p, stream_);
  }
  template <typename T>
  cudaError_t alloc(T** out, size_t count) {
    void* p = nullptr;
    cudaError_t e = cudaMallocAsync(&p, count * sizeof(T) + 1, stream_);
    if (e == cudaSuccess) blocks_.push_back(p);
    *out = static_cast<T*>(p);
    return e;
  }

 private:
  cudaStream_t stream_;
  std::vector<void*> blocks_;
};

std::string describe(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

#define LAMER_CUDA_TRY(expr)                                    \
  do {                                                          \
    cudaError_t lamer_err_ = (expr);                            \
    if (lamer_err_ != cudaSuccess) return describe(lamer_err_); \
  } while (0)

inline unsigned blocks_for(int64_t n, unsigned threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace

std::string compute_advantages_device(const RowView& rows, const AdvantageParams& params, const AdvantageOutputs& out, void* stream_ptr) {
  const int64_t n = rows.rows;
  if (n <= 0) return "";
  if (n > INT32_MAX) return "more than 2^31-1 rows";
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  // This kernel has the two estimators of the paper; another (added to the CPU kernel) is refused, never computed as GRPO.
  if (params.estimator != Estimator::kGiGPO && params.estimator != Estimator::kGRPO) return "the CUDA kernel computes gigpo and grpo only";
  const bool gigpo = params.estimator == Estimator::kGiGPO;
  const DeviceParams p{gigpo ? 1 : 0,          params.returns == ReturnsFormula::kPaper ? 1 : 0,
                       params.gamma_step,      params.gamma_traj,
                       params.invalid_penalty, params.divide_by_std ? 1 : 0,
                       params.omega,           params.eps};
  constexpr unsigned kThreads = 256;
  const unsigned grid = blocks_for(n, kThreads);
  const int num_items = static_cast<int>(n);
  {
    Scratch scratch(stream);
    double *score, *G, *a_episode, *a_step = nullptr;
    int32_t *row_in, *row_out;
    uint32_t *episode_key_in, *episode_key_out;
    uint64_t *step_key_in = nullptr, *step_key_out = nullptr;
    LAMER_CUDA_TRY(scratch.alloc(&score, n));
    LAMER_CUDA_TRY(scratch.alloc(&G, n));
    LAMER_CUDA_TRY(scratch.alloc(&a_episode, n));
    LAMER_CUDA_TRY(scratch.alloc(&row_in, n));
    LAMER_CUDA_TRY(scratch.alloc(&row_out, n));
    LAMER_CUDA_TRY(scratch.alloc(&episode_key_in, n));
    LAMER_CUDA_TRY(scratch.alloc(&episode_key_out, n));
    if (gigpo) {
      LAMER_CUDA_TRY(scratch.alloc(&a_step, n));
      LAMER_CUDA_TRY(scratch.alloc(&step_key_in, n));
      LAMER_CUDA_TRY(scratch.alloc(&step_key_out, n));
    }

    trial_kernel<<<grid, kThreads, 0, stream>>>(rows, p, out.episode_reward, score, G);
    iota_kernel<<<grid, kThreads, 0, stream>>>(row_in, n);
    group_keys_kernel<<<grid, kThreads, 0, stream>>>(rows, episode_key_in, step_key_in);
    LAMER_CUDA_TRY(cudaGetLastError());

    // One temp buffer sized for the larger of the two sorts.
    size_t episode_temp = 0, step_temp = 0;
    LAMER_CUDA_TRY(
        cub::DeviceRadixSort::SortPairs(nullptr, episode_temp, episode_key_in, episode_key_out, row_in, row_out, num_items, 0, 32, stream));
    if (gigpo) {
      LAMER_CUDA_TRY(
          cub::DeviceRadixSort::SortPairs(nullptr, step_temp, step_key_in, step_key_out, row_in, row_out, num_items, 0, 64, stream));
    }
    unsigned char* temp;
    const size_t temp_bytes = episode_temp > step_temp ? episode_temp : step_temp;
    LAMER_CUDA_TRY(scratch.alloc(&temp, temp_bytes));

    // Radix sort is stable: rows with equal keys keep row order, the CPU kernel's summation order.
    LAMER_CUDA_TRY(
        cub::DeviceRadixSort::SortPairs(temp, episode_temp, episode_key_in, episode_key_out, row_in, row_out, num_items, 0, 32, stream));
    segment_normalize_kernel<uint32_t>
        <<<grid, kThreads, 0, stream>>>(episode_key_out, row_out, n, score, p.divide_by_std, p.eps, 1, a_episode);
    LAMER_CUDA_TRY(cudaGetLastError());
    if (gigpo) {
      LAMER_CUDA_TRY(
          cub::DeviceRadixSort::SortPairs(temp, step_temp, step_key_in, step_key_out, row_in, row_out, num_items, 0, 64, stream));
      segment_normalize_kernel<uint64_t><<<grid, kThreads, 0, stream>>>(step_key_out, row_out, n, G, p.divide_by_std, p.eps, 0, a_step);
      LAMER_CUDA_TRY(cudaGetLastError());
    }
    combine_kernel<<<grid, kThreads, 0, stream>>>(n, a_episode, a_step, G, p.omega, out.advantage, out.step_return);
    LAMER_CUDA_TRY(cudaGetLastError());
  }  // scratch freed (stream-ordered) here
  LAMER_CUDA_TRY(cudaStreamSynchronize(stream));
  return "";
}

std::string compute_advantages_from_host(const RowView& rows, const AdvantageParams& params, const AdvantageOutputs& out) {
  const int64_t n = rows.rows;
  if (n <= 0) return "";
  cudaStream_t stream = nullptr;
  RowView d = rows;
  AdvantageOutputs d_out;
  std::string error;
  {
    Scratch scratch(stream);
    auto upload = [&](auto** dst, const auto* src) -> cudaError_t {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(src)>>;
      T* p = nullptr;
      cudaError_t e = scratch.alloc(&p, static_cast<size_t>(n));
      if (e != cudaSuccess) return e;
      *dst = p;
      return cudaMemcpyAsync(p, src, n * sizeof(T), cudaMemcpyHostToDevice, stream);
    };
    LAMER_CUDA_TRY(upload(const_cast<int32_t**>(&d.group), rows.group));
    LAMER_CUDA_TRY(upload(const_cast<int32_t**>(&d.trial), rows.trial));
    LAMER_CUDA_TRY(upload(const_cast<int32_t**>(&d.episode), rows.episode));
    LAMER_CUDA_TRY(upload(const_cast<int32_t**>(&d.turn), rows.turn));
    LAMER_CUDA_TRY(upload(const_cast<uint8_t**>(&d.phase), rows.phase));
    LAMER_CUDA_TRY(upload(const_cast<float**>(&d.reward), rows.reward));
    LAMER_CUDA_TRY(upload(const_cast<uint8_t**>(&d.valid), rows.valid));
    LAMER_CUDA_TRY(upload(const_cast<int32_t**>(&d.step_key), rows.step_key));
    LAMER_CUDA_TRY(scratch.alloc(&d_out.episode_reward, n));
    LAMER_CUDA_TRY(scratch.alloc(&d_out.step_return, n));
    LAMER_CUDA_TRY(scratch.alloc(&d_out.advantage, n));
    error = compute_advantages_device(d, params, d_out, stream);
    if (error.empty()) {
      LAMER_CUDA_TRY(cudaMemcpyAsync(out.episode_reward, d_out.episode_reward, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
      LAMER_CUDA_TRY(cudaMemcpyAsync(out.step_return, d_out.step_return, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
      LAMER_CUDA_TRY(cudaMemcpyAsync(out.advantage, d_out.advantage, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
    }
  }
  if (!error.empty()) return error;
  LAMER_CUDA_TRY(cudaStreamSynchronize(stream));
  return "";
}

}  // namespace lamer::algo::cuda
