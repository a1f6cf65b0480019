// Attention over whole sequences: a prompt's prefill, scoring, the train step's forward (a decode step over the slot
// cache is DecodeAttention, model/fused_ops.h). Grouped-query: each key/value head serves `groups` query heads.
//
// torch's sdpa takes the shared key/value heads itself (enable_gqa), but only some of its fused kernels accept them:
// flash attention does (no mask), while the memory-efficient kernel, the one that takes a padding mask, does not in
// torch 2.11 (it gained grouped heads later), so masked grouped-query attention there falls to the math path, which
// materialises every [T, S] score matrix in fp32. Where that happens, each key/value head is repeated for its query
// heads first (the same numbers, in a layout every fused kernel takes). The choice is asked of sdpa itself
// (at::_fused_sdp_choice) once per kind of call and logged once per kind on CUDA. Elsewhere (the CPU, whose flash
// kernel takes shared heads with a mask) the heads stay shared.
#pragma once

#include <ATen/ATen.h>

#include <string>

namespace lamer::model {

// How the key/value heads reach sdpa: shared (Hk heads, enable_gqa) or repeated to the Hq query heads.
enum class KvHeads { kShared, kExpanded };

// softmax(q k^T * scale + mask) v for q [B, Hq, T, D] and k, v [B, Hk, S, D], Hq = groups * Hk: `allowed` [B or 1, 1,
// T, S] (bool) says which keys each query sees; undefined with `causal` (no padding, no past: query i sees keys <= i).
at::Tensor SequenceAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed, bool causal,
                             double scale, int64_t groups);

// The same with the key/value heads handled as `heads` says.
at::Tensor SequenceAttentionWith(KvHeads heads, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed,
                                 bool causal, double scale, int64_t groups);

// sdpa's backend name for a backend number (at::SDPBackend): "math", "flash_attention", "efficient_attention", ...
std::string SdpBackendName(int64_t backend);

// For the tests: on random inputs of `dtype` on `device` (groups 2 and 4; a padded batch with a mask, and a causal one),
// the largest difference between the two ways of passing the key/value heads, over the outputs and the gradients of
// q, k and v; and what SequenceAttention picks there for a masked call with gradients (heads and sdpa's backend).
struct AttentionCheck {
  double gap = 0;
  std::string masked_heads, masked_backend, causal_heads, causal_backend;
};
AttentionCheck CheckSequenceAttention(at::Device device, at::ScalarType dtype, uint64_t seed);

}  // namespace lamer::model
