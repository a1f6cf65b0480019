// The losses of the train step as pure functions of per-token tensors (SPEC §5), so each reads as its formula and the
// step only gathers inputs and weights. Every function works per scored token; aggregation over a mini-batch is by
// per-token weights (AggregationWeights), which is what lets micro-batching leave the loss unchanged.
// test/native/train/step-loss.test.ts checks each against SPEC §5 written out in TS, through the train step.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <utility>
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

struct LossOptions;

// What a policy loss returns per token.
struct PolicyLossTerms {
  at::Tensor pg;       // the loss per token
  at::Tensor clipped;  // a clip bound the token's loss (bool; the clipFrac metric); undefined: the loss never clips
  at::Tensor dual;     // the dual clip bound it (bool; dualClipFrac); undefined: the loss has no dual clip
};

// A policy loss: per-token losses from the new log-probs (with gradient), the log-probs the rows were sampled with
// and the advantages, under the step's loss options. The step weights and sums them (AggregationWeights).
using PolicyLossFn = PolicyLossTerms (*)(const at::Tensor& logp, const at::Tensor& old_logp, const at::Tensor& advantages,
                                         const LossOptions& options);

// The policy losses by name, the names of the config's loss.policyLoss (src/native/types.ts, POLICY_LOSSES, lists the
// same ones). A new loss is a function in losses.cpp and a row of this table there (docs/extending.md).
const std::vector<std::pair<std::string, PolicyLossFn>>& PolicyLosses();
// The loss named `name`, nullptr when there is none.
PolicyLossFn FindPolicyLoss(const std::string& name);

// Dual-clip PPO, per token (the table's "dual-clip"):
//   ratio = exp(clamp(logp - old, -20, 20))
//   clip1 = max(-A ratio, -A clamp(ratio, 1 - clip_low, 1 + clip_high))
//   pg    = A < 0 ? min(-A dual_clip, clip1) : clip1
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

// The loss settings of a step. No defaults here: the binding requires every one of them, and their defaults live
// once, in the config schema (src/train/options.ts).
struct LossOptions {
  PolicyLossFn policy_loss = nullptr;  // one of PolicyLosses()
  double clip_low = 0;
  double clip_high = 0;
  double dual_clip = 0;
  Aggregation aggregation = Aggregation::kTokenMean;
  double entropy_coef = 0;
  KlType kl = KlType::kNone;
  double kl_coef = 0;
  double value_clip = 0;
  double value_coef = 0;  // > 0 trains the value head (PPO); needs returns and old values
  double temperature = 1;
};

}  // namespace lamer::train
