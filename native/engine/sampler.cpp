// Inverse-CDF sampling with per-row temperature, top-k and top-p. See sampler.h for why each row uses only its own
// logits and its own uniform number.
#include "engine/sampler.h"

#include "bridge/errors.h"

namespace lamer::engine {

namespace {

at::Tensor IndexTensor(const std::vector<int64_t>& v, at::Device device) {
  if (v.empty()) return at::Tensor();
  return at::tensor(v, at::kLong).to(device);
}

// The first position whose cumulative weight exceeds u * total, for rows of non-negative weights `w` [N, W] (fp64)
// and uniforms `u` [N] in [0, 1). A position of zero weight is never picked: its cumulative value equals its
// predecessor's, so the predecessor is found first; the target is kept strictly below the total so that rounding
// of u * total cannot run past the last token of positive weight.
at::Tensor InverseCdf(const at::Tensor& w, const at::Tensor& u) {
  const at::Tensor cdf = w.cumsum(-1);
  const at::Tensor total = cdf.select(-1, cdf.size(-1) - 1);
  const at::Tensor target = at::minimum(u * total, total * (1.0 - 1e-12)).unsqueeze(-1).contiguous();
  return at::searchsorted(cdf.contiguous(), target, /*out_int32=*/false, /*right=*/true).squeeze(-1).clamp_max(w.size(-1) - 1);
}

}  // namespace

SamplerPlan::SamplerPlan(const std::vector<SamplingParams>& rows, int64_t vocab, at::Device device)
    : rows_(static_cast<int64_t>(rows.size())), vocab_(vocab) {
  std::vector<float> divisor(rows.size());
  std::vector<int64_t> greedy, plain, filtered, top_k;
  std::vector<float> top_p;
  for (size_t i = 0; i < rows.size(); ++i) {
    const SamplingParams& p = rows[i];
    if (!(p.temperature >= 0) || !(p.top_p > 0 && p.top_p <= 1)) {
      Fail("E_ARG", "sampling: temperature must be >= 0 and top_p in (0, 1]; found temperature " +
                        std::to_string(p.temperature) + ", top_p " + std::to_string(p.top_p));
    }
    divisor[i] = p.temperature > 0 ? static_cast<float>(p.temperature) : 1.0f;
    const bool cut_k = p.top_k > 0 && p.top_k < vocab;
    if (p.temperature == 0) {
      greedy.push_back(static_cast<int64_t>(i));
    } else if (!cut_k && p.top_p >= 1) {
      plain.push_back(static_cast<int64_t>(i));
    } else {
      filtered.push_back(static_cast<int64_t>(i));
      // top_p = 1 keeps every token of the top-k cut, even those the cumulative sum rounds past 1.
      top_p.push_back(p.top_p >= 1 ? 2.0f : static_cast<float>(p.top_p));
      const int64_t k = cut_k ? p.top_k : vocab;
      top_k.push_back(k);
      filtered_width_ = std::max(filtered_width_, k);
    }
  }
  divisor_ = at::tensor(divisor, at::kFloat).view({-1, 1}).to(device);
  greedy_ = IndexTensor(greedy, device);
  plain_ = IndexTensor(plain, device);
  filtered_ = IndexTensor(filtered, device);
  if (!filtered.empty()) {
    filtered_top_p_ = at::tensor(top_p, at::kFloat).to(at::kDouble).view({-1, 1}).to(device);
    filtered_top_k_ = at::tensor(top_k, at::kLong).view({-1, 1}).to(device);
  }
}

std::pair<at::Tensor, at::Tensor> SamplerPlan::Sample(const at::Tensor& logits, const at::Tensor& uniforms) const {
  const at::Tensor logp = at::log_softmax(logits / divisor_, -1);  // [B, V] fp32, at each row's temperature
  at::Tensor tokens = at::empty({rows_}, logits.options().dtype(at::kLong));
  if (greedy_.defined()) {
    tokens.index_copy_(0, greedy_, logits.index_select(0, greedy_).argmax(-1));
  }
  if (plain_.defined()) {
    const at::Tensor w = logp.index_select(0, plain_).to(at::kDouble).exp();
    tokens.index_copy_(0, plain_, InverseCdf(w, uniforms.index_select(0, plain_)));
  }
  if (filtered_.defined()) {
    const at::Tensor lp = logp.index_select(0, filtered_);
    // Candidates in descending probability; ties keep the lower token id first (stable), so the order is a
    // function of the row alone.
    at::Tensor values, order;
    if (filtered_width_ < vocab_) {
      std::tie(values, order) = at::topk(lp, filtered_width_, -1, /*largest=*/true, /*sorted=*/true);
    } else {
      std::tie(values, order) = at::sort(lp, /*stable=*/true, -1, /*descending=*/true);
    }
    const at::Tensor rank = at::arange(values.size(-1), order.options()).view({1, -1});
    // top-k first, renormalised; then top-p keeps the smallest prefix whose mass reaches top_p (the first token
    // always, since the mass before it is 0).
    at::Tensor w = values.to(at::kDouble).exp() * (rank < filtered_top_k_);
    w = w / w.sum(-1, /*keepdim=*/true);
    const at::Tensor before = w.cumsum(-1) - w;
    w = w * (before < filtered_top_p_);
    const at::Tensor pick = InverseCdf(w, uniforms.index_select(0, filtered_));
    tokens.index_copy_(0, filtered_, order.gather(-1, pick.unsqueeze(-1)).squeeze(-1));
  }
  const at::Tensor chosen = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1);
  return {tokens, chosen};
}

}  // namespace lamer::engine
