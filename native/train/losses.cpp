#include "train/losses.h"

namespace lamer::train {

std::vector<double> AggregationWeights(const std::vector<int64_t>& scored, Aggregation aggregation) {
  double tokens = 0;
  for (int64_t n : scored) tokens += static_cast<double>(n);
  return AggregationWeights(scored, aggregation, static_cast<double>(scored.size()), tokens);
}

std::vector<double> AggregationWeights(const std::vector<int64_t>& scored, Aggregation aggregation, double rows, double tokens) {
  std::vector<double> w(scored.size());
  for (size_t r = 0; r < scored.size(); ++r) {
    const double n = static_cast<double>(scored[r]);
    switch (aggregation) {
      case Aggregation::kTokenMean:
        w[r] = tokens > 0 ? 1.0 / tokens : 0.0;
        break;
      case Aggregation::kSeqMeanTokenSum:
        w[r] = rows > 0 ? 1.0 / rows : 0.0;
        break;
      case Aggregation::kSeqMeanTokenMean:
        w[r] = n > 0 ? 1.0 / (rows * n) : 0.0;
        break;
    }
  }
  return w;
}

PolicyLossTerms DualClipPolicyLoss(const at::Tensor& logp, const at::Tensor& old_logp, const at::Tensor& advantages, double clip_low,
                                   double clip_high, double dual_clip) {
  // The exponent is clamped so a stale row cannot overflow the ratio.
  const at::Tensor ratio = at::exp(at::clamp(logp - old_logp, -20.0, 20.0));
  const at::Tensor l1 = -advantages * ratio;
  const at::Tensor l2 = -advantages * at::clamp(ratio, 1.0 - clip_low, 1.0 + clip_high);
  const at::Tensor clip1 = at::maximum(l1, l2);
  const at::Tensor l3 = -advantages * dual_clip;
  const at::Tensor negative = advantages < 0;
  return {at::where(negative, at::minimum(l3, clip1), clip1), (l2 > l1).detach(), ((clip1 > l3) & negative).detach()};
}

namespace {

PolicyLossTerms DualClip(const at::Tensor& logp, const at::Tensor& old_logp, const at::Tensor& advantages, const LossOptions& o) {
  return DualClipPolicyLoss(logp, old_logp, advantages, o.clip_low, o.clip_high, o.dual_clip);
}

}  // namespace

const std::vector<std::pair<std::string, PolicyLossFn>>& PolicyLosses() {
  static const std::vector<std::pair<std::string, PolicyLossFn>> table = {
      {"dual-clip", DualClip},
  };
  return table;
}

PolicyLossFn FindPolicyLoss(const std::string& name) {
  for (const auto& [n, fn] : PolicyLosses()) {
    if (n == name) return fn;
  }
  return nullptr;
}

at::Tensor KlPenalty(const at::Tensor& logp, const at::Tensor& ref_logp, KlType type) {
  switch (type) {
    case KlType::kK1:
      return logp - ref_logp;
    case KlType::kMse:
      return 0.5 * (logp - ref_logp).square();
    case KlType::kLowVar: {
      const at::Tensor d = at::clamp(ref_logp - logp, -20.0, 20.0);
      return at::clamp(at::exp(d) - d - 1, -10.0, 10.0);
    }
    case KlType::kNone:
      break;
  }
  return at::zeros_like(logp);
}

ValueLossTerms ClippedValueLoss(const at::Tensor& values, const at::Tensor& old_values, const at::Tensor& returns, double clip) {
  const at::Tensor clipped_values = at::clamp(values, old_values - clip, old_values + clip);
  const at::Tensor unclipped = (values - returns).square();
  const at::Tensor clipped = (clipped_values - returns).square();
  return {0.5 * at::maximum(unclipped, clipped), (clipped > unclipped).detach()};
}

}  // namespace lamer::train
