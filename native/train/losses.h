// The losses of the train step as pure functions of per-token tensors (SPEC §5), so each reads as its formula and the
// step only gathers inputs and weights. Every function works per scored token; aggregation over a mini-batch is by
// per-token weights (AggregationWeights), which is what lets micro-batching leave the loss unchanged.
// test/native/train/step-loss.test.ts checks each against SPEC §5 written out in TS, through the train step.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace lamer::train {

enum class Aggregation { kTokenMean, kSeqMeanTokenSum, kSeqMeanTokenMean };
enum class KlType { kNone, kLowVar, kK1, kMse };

// Weight of each token of row r in the aggregated loss, by row, for rows of `scored[r]` tokens:
//   token-mean            1 / (all tokens)
//   seq-mean-token-sum    1 / rows
//   seq-mean-token-mean   1 / (rows * tokens of the row)
std::vector<double> AggregationWeights(const std::vector<int64_t>& scored, Aggregation aggregation);
// The same with the mini-batch's row and token counts given: a data-parallel step normalises each rank's rows by the
// counts of the whole (global) mini-batch, so the summed gradients equal one process's over all rows.
std::vector<double> AggregationWeights(const std::vector<int64_t>& scored, Aggregation aggregation, double rows, double tokens);

// Dual-clip PPO, per token:
//   ratio = exp(clamp(logp - old, -20, 20))
//   clip1 = max(-A ratio, -A clamp(ratio, 1 - clip_low, 1 + clip_high))
//   pg    = A < 0 ? min(-A dual_clip, clip1) : clip1
struct PolicyLossTerms {
  at::Tensor pg;       // the loss per token
  at::Tensor clipped;  // the clipped term was the larger (bool)
  at::Tensor dual;     // the dual clip bound it (A < 0 only; bool)
};
PolicyLossTerms DualClipPolicyLoss(const at::Tensor& logp, const at::Tensor& old_logp, const at::Tensor& advantages, double clip_low,
                                   double clip_high, double dual_clip);

// KL penalty to a reference policy, per token (d = ref - logp):
//   k1 (kl)          logp - ref
//   mse              0.5 (logp - ref)^2
//   k3 (low_var_kl)  clamp(exp(d) - d - 1, -10, 10), d clamped to [-20, 20] first
at::Tensor KlPenalty(const at::Tensor& logp, const at::Tensor& ref_logp, KlType type);

// Clipped value loss, per token: 0.5 max((v - R)^2, (clamp(v, old - clip, old + clip) - R)^2).
struct ValueLossTerms {
  at::Tensor loss;     // per token
  at::Tensor clipped;  // the clipped term was the larger (bool)
};
ValueLossTerms ClippedValueLoss(const at::Tensor& values, const at::Tensor& old_values, const at::Tensor& returns, double clip);

}  // namespace lamer::train
