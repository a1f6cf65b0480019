// Host-callable launchers of kernels/fused_ops.cu over raw device pointers (no torch types), for the CUDA
// implementations of the fused operators (model/fused_ops.cpp). They exist only in CUDA builds (LAMER_WITH_CUDA).
// `dtype`: 0 float32, 1 bfloat16, 2 float16. Each enqueues one kernel on `stream` and returns the launch error ("").
#pragma once

#include <cstdint>
#include <string>

namespace lamer::model::cuda {

// x rows of `d` elements at x + i0 * x0 + i1 * x1 + i2 * x2 (rows indexed [n0, n1, n2]); cos/sin likewise with their
// own strides (0 where they broadcast); out contiguous [n0, n1, n2, d].
struct RowLayout {
  int64_t n0, n1, n2;
  int64_t x0, x1, x2;
  int64_t c0, c1, c2;
  int64_t d;
};
std::string rotary(const void* x, const void* cos, const void* sin, void* out, const RowLayout& layout, int dtype, void* stream);

// out[r, i] = silu(in[r, i]) * in[r, half + i] for `rows` rows of 2 * half contiguous elements.
std::string swiglu(const void* in, void* out, int64_t rows, int64_t half, int dtype, void* stream);

// k/v [B, T, H, D] (rows of D contiguous; strides kb, kt, kh and vb, vt, vh) into contiguous caches
// [B, H, capacity, D] at column write_at[b] + t.
struct KvLayout {
  int64_t B, T, H, D, capacity;
  int64_t kb, kt, kh, vb, vt, vh;
};
std::string kv_write(void* k_cache, void* v_cache, const void* k, const void* v, const int64_t* write_at, const KvLayout& layout, int dtype,
                     void* stream);

}  // namespace lamer::model::cuda
