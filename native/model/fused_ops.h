// Three operators of the decoder's inference forward fused into one pass each (registered with the dispatcher as
// lamer::rotary, lamer::swiglu and lamer::kv_write_, with CPU kernels here and CUDA kernels in kernels/fused_ops.cu;
// a CUDA build without nvcc runs the composite forms on CUDA too), so that a decode step dispatches a few hundred
// operators rather than thousands. Each equals its composite form (what the training forward runs, with autograd) up
// to one rounding: test/native/model/fused-ops.test.ts compares them. And a fourth, lamer::decode_attention, the attention
// of a decode step over the fixed-slot cache, which on CUDA reads each row's live columns only.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

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

// A decode step's attention over a fixed-slot cache: q [B, Hk, G, D] (the G query heads sharing each kv head as its
// query rows), k_cache / v_cache [B, Hk, capacity, D] contiguous, row b attending to its first lengths[b] + 1
// columns, all below `width` -> [B, Hk, G, D]. `allowed` [B, 1, 1, width] (bool) is that mask; `live` [3] holds, when
// given (see DecodeAttentionInputs), what the CUDA kernel takes instead: the key count of each (row, kv head) and the
// query and key start offsets. Without `live` (the CPU), sdpa over the first `width` columns with the mask; with it
// (CUDA, compute capability 8 or newer), torch's memory-efficient kernel, which stops at each row's own length, so a
// step reads the live keys/values only and `width` bounds nothing but the shapes a CUDA graph fixes.
at::Tensor DecodeAttention(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache, const at::Tensor& allowed,
                           int64_t width, double scale, const std::vector<at::Tensor>& live);

// Whether DecodeAttention reads live columns only on `device` (a CUDA build, a CUDA device of compute capability 8+).
bool DecodeAttentionReadsLiveColumns(const at::Device& device);

// The key counts and offsets DecodeAttention takes on such a device, for a step whose rows write at `write_at` [B]
// into caches of `capacity` columns, with `kv_heads` heads of `groups` query heads each; empty elsewhere.
std::vector<at::Tensor> DecodeAttentionInputs(const at::Tensor& write_at, int64_t kv_heads, int64_t groups, int64_t capacity);

// The largest difference between each fused operator and its composite form on random inputs of `dtype` on
// `device` (rotary with head-shared and per-head factors, swiglu, kv_write), and between decode attention and a
// plain softmax over each row's live columns, for the tests.
struct FusedOpGaps {
  double rotary = 0, swiglu = 0, kv_write = 0, decode_attention = 0;
};
FusedOpGaps MeasureFusedOpGaps(at::Device device, at::ScalarType dtype, uint64_t seed);

// The fused operators (through the dispatcher, as the decoder calls them) run on seeded random inputs of `dtype` on
// `device`, with every input and output by name ("rotary.x", "rotary.shared.out", "kvWrite.kCacheAfter", ...), each
// copied to the CPU as float64, so that a test can check them against a reference of its own.
std::vector<std::pair<std::string, at::Tensor>> RunFusedOps(at::Device device, at::ScalarType dtype, uint64_t seed);

// Seconds per call of decode attention alone (one layer of a decode step): rows of `lengths` live keys each, `kv_heads`
// heads of `groups` query heads of `head_dim`, caches of `capacity` columns, random values of `dtype` on `device`;
// the mean of `iters` calls after a warm-up, the device synchronised before and after. For the GPU bench: its live
// keys/values over this time is the bandwidth the kernel reaches.
double TimeDecodeAttention(at::Device device, at::ScalarType dtype, int64_t kv_heads, int64_t groups, int64_t head_dim, int64_t capacity,
                           const std::vector<int64_t>& lengths, int64_t iters);

// The same three through their composite ATen forms (what the fused ones are checked against).
at::Tensor RotaryReference(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);
at::Tensor SwiGluReference(const at::Tensor& gate_up);
void KvWriteReference(at::Tensor& k_cache, at::Tensor& v_cache, const at::Tensor& k, const at::Tensor& v, const at::Tensor& write_at);

}  // namespace lamer::model
