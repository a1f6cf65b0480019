// CUDA kernels of the fused decoder operators (model/fused_ops.h): one pass over the data each, grid-stride loops over
// raw device pointers, computed in float whatever the storage type (as torch's elementwise kernels do).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "fused_ops_cuda.h"

namespace lamer::model::cuda {
namespace {

template <typename T>
__device__ float Load(const T* p) {
  return static_cast<float>(*p);
}
template <>
__device__ float Load(const __nv_bfloat16* p) {
  return __bfloat162float(*p);
}
template <>
__device__ float Load(const __half* p) {
  return __half2float(*p);
}
template <typename T>
__device__ void Store(T* p, float v) {
  *p = static_cast<T>(v);
}
template <>
__device__ void Store(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16(v);
}
template <>
__device__ void Store(__half* p, float v) {
  *p = __float2half(v);
}

// One thread per (row, j < D / 2) pair: x[j] and x[j + half] rotated together.
template <typename T>
__global__ void RotaryKernel(const T* x, const T* cos, const T* sin, T* out, RowLayout l) {
  const int64_t half = l.d / 2;
  const int64_t total = l.n0 * l.n1 * l.n2 * half;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = idx % half;
    int64_t r = idx / half;
    const int64_t i2 = r % l.n2;
    r /= l.n2;
    const int64_t i1 = r % l.n1;
    const int64_t i0 = r / l.n1;
    const T* row = x + i0 * l.x0 + i1 * l.x1 + i2 * l.x2;
    T* o = out + ((i0 * l.n1 + i1) * l.n2 + i2) * l.d;
    const int64_t c = i0 * l.c0 + i1 * l.c1 + i2 * l.c2;
    const float a = Load(row + j), b = Load(row + j + half);
    Store(o + j, a * Load(cos + c + j) + b * Load(sin + c + j));
    Store(o + j + half, b * Load(cos + c + j + half) + a * Load(sin + c + j + half));
  }
}

template <typename T>
__global__ void SwiGluKernel(const T* in, T* out, int64_t rows, int64_t half) {
  const int64_t total = rows * half;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = idx / half, i = idx % half;
    const float g = Load(in + r * 2 * half + i), u = Load(in + r * 2 * half + half + i);
    Store(out + idx, g / (1.0f + __expf(-g)) * u);
  }
}

template <typename T>
__global__ void KvWriteKernel(T* k_cache, T* v_cache, const T* k, const T* v, const int64_t* write_at, KvLayout l) {
  const int64_t total = l.B * l.T * l.H * l.D;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = idx % l.D;
    int64_t r = idx / l.D;
    const int64_t h = r % l.H;
    r /= l.H;
    const int64_t t = r % l.T;
    const int64_t b = r / l.T;
    const int64_t column = write_at[b] + t;
    const int64_t at = ((b * l.H + h) * l.capacity + column) * l.D + d;
    k_cache[at] = k[b * l.kb + t * l.kt + h * l.kh + d];
    v_cache[at] = v[b * l.vb + t * l.vt + h * l.vh + d];
  }
}

unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

std::string Launched() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : cudaGetErrorString(e);
}

template <typename Fn>
std::string ByType(int dtype, Fn&& fn) {
  switch (dtype) {
    case 0:
      fn(static_cast<float*>(nullptr));
      break;
    case 1:
      fn(static_cast<__nv_bfloat16*>(nullptr));
      break;
    case 2:
      fn(static_cast<__half*>(nullptr));
      break;
    default:
      return "unknown dtype";
  }
  return Launched();
}

}  // namespace

std::string rotary(const void* x, const void* cos, const void* sin, void* out, const RowLayout& layout, int dtype, void* stream) {
  return ByType(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    RotaryKernel<T><<<Blocks(layout.n0 * layout.n1 * layout.n2 * layout.d / 2), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(x), static_cast<const T*>(cos), static_cast<const T*>(sin), static_cast<T*>(out), layout);
  });
}

std::string swiglu(const void* in, void* out, int64_t rows, int64_t half, int dtype, void* stream) {
  return ByType(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    SwiGluKernel<T>
        <<<Blocks(rows * half), 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const T*>(in), static_cast<T*>(out), rows, half);
  });
}

std::string kv_write(void* k_cache, void* v_cache, const void* k, const void* v, const int64_t* write_at, const KvLayout& layout, int dtype,
                     void* stream) {
  return ByType(dtype, [&](auto* tag) {
    using E = std::remove_pointer_t<decltype(tag)>;
    KvWriteKernel<E><<<Blocks(layout.B * layout.T * layout.H * layout.D), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<E*>(k_cache), static_cast<E*>(v_cache), static_cast<const E*>(k), static_cast<const E*>(v), write_at, layout);
  });
}

}  // namespace lamer::model::cuda
