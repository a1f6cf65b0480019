// Three operators of the decoder's inference forward fused into one pass each (registered with the dispatcher as
// lamer::rotary, lamer::swiglu and lamer::kv_write_, with CPU kernels here and CUDA kernels in kernels/fused_ops.cu),
// so that a decode step dispatches a few hundred operators rather than thousands. Each equals its composite form
// (what the training forward runs, with autograd) up to one rounding: test/model/fused-ops.test.ts compares them.
#pragma once

#include <ATen/ATen.h>

namespace lamer::model {

// x * cos + roll(x, D / 2, -1) * sin over x [B, T, H, D] (each row of D contiguous; a view of a wider buffer is
// fine), as a new contiguous tensor; cos and sin broadcast to x's shape ([B, T, 1, D] or [B, T, H, D]). RoPE with
// rotate_half's sign folded into sin.
at::Tensor Rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

// silu(gu[..., :I]) * gu[..., I:] for gu [..., 2I] -> [..., I]: SwiGLU's product in one pass.
at::Tensor SwiGlu(const at::Tensor& gate_up);

// The fixed-slot cache write of a step: k and v [B, T, H, D] into k_cache / v_cache [B, H, capacity, D] at columns
// write_at[b] + t (write_at [B] int64, on the device), both caches in one pass.
void KvWrite_(at::Tensor& k_cache, at::Tensor& v_cache, const at::Tensor& k, const at::Tensor& v, const at::Tensor& write_at);

// The largest difference between each fused operator and its composite form on random inputs of `dtype` on
// `device` (rotary with head-shared and per-head factors, swiglu, kv_write), for the tests.
struct FusedOpGaps {
  double rotary = 0, swiglu = 0, kv_write = 0;
};
FusedOpGaps MeasureFusedOpGaps(at::Device device, at::ScalarType dtype, uint64_t seed);

// The same three through their composite ATen forms (what the fused ones are checked against).
at::Tensor RotaryReference(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);
at::Tensor SwiGluReference(const at::Tensor& gate_up);
void KvWriteReference(at::Tensor& k_cache, at::Tensor& v_cache, const at::Tensor& k, const at::Tensor& v, const at::Tensor& write_at);

}  // namespace lamer::model
