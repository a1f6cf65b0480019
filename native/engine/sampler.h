// Token sampling for a batch of rows, each with its own temperature, top-k and top-p (SPEC §5, §6).
//
// Every row draws from its own uniform number (the engine's per-request generator supplies it), and everything a row
// computes depends on its own logits only, so a row samples the same token whatever else shares its batch. Sampling
// is by inverse CDF over the row's kept probabilities, which costs one uniform per token and no host round trip: in
// descending probability for a row with a top-k or top-p cut (the cut needs that order anyway), in token-id order
// for a row without one (no sort over the vocabulary).
// The reported log-prob is log_softmax(logits / T)[token]: at the sampling temperature, without top-k/top-p.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace lamer::engine {

struct SamplingParams {
  double temperature = 1.0;  // 0: greedy (argmax; its log-prob is then taken at T = 1)
  double top_p = 1.0;        // in (0, 1]; 1 keeps everything
  int64_t top_k = 0;         // <= 0: no cut
};

// What a batch of rows needs to sample, prepared once per batch composition (index tensors on the device), so the
// per-token work launches only device ops.
class SamplerPlan {
 public:
  SamplerPlan() = default;
  SamplerPlan(const std::vector<SamplingParams>& rows, int64_t vocab, at::Device device);

  // tokens [B] (int64) and log-probs [B] (fp32) for fp32 `logits` [B, V] and `uniforms` [B] (fp64 in [0, 1)).
  std::pair<at::Tensor, at::Tensor> Sample(const at::Tensor& logits, const at::Tensor& uniforms) const;

  int64_t rows() const { return rows_; }

 private:
  int64_t rows_ = 0;
  int64_t vocab_ = 0;
  at::Tensor divisor_;  // [B, 1] fp32: T, or 1 for greedy rows
  // Row subsets by how they sample; undefined when empty.
  at::Tensor greedy_;    // argmax
  at::Tensor plain_;     // the full distribution (top_p = 1, no top-k)
  at::Tensor filtered_;  // top-k and/or top-p
  at::Tensor filtered_top_p_;  // [F] fp32
  at::Tensor filtered_top_k_;  // [F] int64, the cut per row (vocab when none)
  int64_t filtered_width_ = 0;  // candidates sorted per filtered row: max top-k, or the vocabulary when a row has none
};

}  // namespace lamer::engine
