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

// Positions of the vocabulary per block of InverseCdf.
constexpr int64_t kCdfBlock = 1024;

// The first position whose cumulative weight exceeds u * total, for rows of non-negative weights `w` [N, W] (fp32)
// and uniforms `u` [N] (fp64) in [0, 1). In two levels, so that nothing of the vocabulary's width is float64: the
// weights' sums per block of kCdfBlock positions (read as fp32, added in fp64), their cumulative sum (fp64, a few
// hundred a row), the block the target falls in, then the cumulative sum inside that block alone (fp64, kCdfBlock a
// row). A position of zero weight is never picked: its cumulative value equals its predecessor's, so the predecessor
// is found first; the target is kept strictly below the total, and the pick inside a block at or below its last
// position of positive weight, so that rounding cannot run past the last token of positive weight.
at::Tensor InverseCdf(const at::Tensor& w, const at::Tensor& u) {
  const int64_t N = w.size(0), W = w.size(-1);
  const int64_t block = std::min(W, kCdfBlock), blocks = (W + block - 1) / block;
  const at::Tensor padded = blocks * block == W ? w : at::constant_pad_nd(w, {0, blocks * block - W}, 0.0);
  const at::Tensor cells = padded.view({N, blocks, block});
  const at::Tensor sums = cells.sum(-1, /*keepdim=*/false, at::kDouble);  // [N, blocks]
  const at::Tensor cdf = sums.cumsum(-1);
  const at::Tensor total = cdf.select(-1, blocks - 1);
  const at::Tensor target = at::minimum(u * total, total * (1.0 - 1e-12)).unsqueeze(-1).contiguous();                          // [N, 1]
  const at::Tensor b = at::searchsorted(cdf.contiguous(), target, /*out_int32=*/false, /*right=*/true).clamp_max(blocks - 1);  // [N, 1]
  const at::Tensor rest = target - (cdf.gather(-1, b) - sums.gather(-1, b));
  const at::Tensor cell = cells.gather(1, b.view({N, 1, 1}).expand({N, 1, block})).squeeze(1);  // [N, block] fp32
  const at::Tensor inner = cell.to(at::kDouble).cumsum(-1);
  const at::Tensor positions = at::arange(block, b.options()).view({1, block});
  const at::Tensor last_positive = (positions * (cell > 0)).amax(-1, /*keepdim=*/true);
  const at::Tensor j = at::minimum(at::searchsorted(inner, rest, /*out_int32=*/false, /*right=*/true), last_positive);
  return (b * block + j).squeeze(-1);
}

// The kind of sampling a row does, and the cut it applies (filtered rows): the one place that decides both.
enum Kind { kGreedy = 0, kPlain = 1, kFiltered = 2 };
Kind KindOf(const SamplingParams& p, int64_t vocab) {
  if (p.temperature == 0) return kGreedy;
  const bool cut_k = p.top_k > 0 && p.top_k < vocab;
  return !cut_k && p.top_p >= 1 ? kPlain : kFiltered;
}
int64_t CutK(const SamplingParams& p, int64_t vocab) { return p.top_k > 0 && p.top_k < vocab ? p.top_k : vocab; }
// top_p = 1 keeps every token of the top-k cut, even those the cumulative sum rounds past 1.
double CutP(const SamplingParams& p) { return p.top_p >= 1 ? 2.0 : static_cast<double>(static_cast<float>(p.top_p)); }
float Divisor(const SamplingParams& p) { return p.temperature > 0 ? static_cast<float>(p.temperature) : 1.0f; }

void CheckParams(const SamplingParams& p) {
  if (!(p.temperature >= 0) || !(p.top_p > 0 && p.top_p <= 1)) {
    Fail("E_ARG", "sampling: temperature must be >= 0 and top_p in (0, 1]; found temperature " + std::to_string(p.temperature) +
                      ", top_p " + std::to_string(p.top_p));
  }
}

// Inverse-CDF draw over the whole distribution: rows of log-probs `logp` [N, V] (fp32), uniforms [N].
at::Tensor SamplePlain(const at::Tensor& logp, const at::Tensor& u) { return InverseCdf(logp.exp(), u); }

// Draw after a top-k cut then a top-p cut: `width` candidates per row sorted in descending probability (ties keep the
// lower token id first, so the order is a function of the row alone), `top_p` [N, 1] fp64, `top_k` [N, 1] int64.
at::Tensor SampleFiltered(const at::Tensor& logp, const at::Tensor& u, const at::Tensor& top_p, const at::Tensor& top_k, int64_t width) {
  at::Tensor values, order;
  if (width < logp.size(-1)) {
    std::tie(values, order) = at::topk(logp, width, -1, /*largest=*/true, /*sorted=*/true);
  } else {
    std::tie(values, order) = at::sort(logp, /*stable=*/true, -1, /*descending=*/true);
  }
  const at::Tensor rank = at::arange(values.size(-1), order.options()).view({1, -1});
  // top-k first, renormalised; then top-p keeps the smallest prefix whose mass reaches top_p (the first token
  // always, since the mass before it is 0). In fp32 (top_p is a float's value): a cut moves only where the mass
  // before a token lies within a rounding of top_p.
  at::Tensor w = values.exp() * (rank < top_k);
  w = w / w.sum(-1, /*keepdim=*/true);
  const at::Tensor before = w.cumsum(-1) - w;
  w = w * (before < top_p);
  const at::Tensor pick = InverseCdf(w, u);
  return order.gather(-1, pick.unsqueeze(-1)).squeeze(-1);
}

}  // namespace

SamplerPlan::SamplerPlan(const std::vector<SamplingParams>& rows, int64_t vocab, at::Device device)
    : rows_(static_cast<int64_t>(rows.size())), vocab_(vocab) {
  std::vector<float> divisor(rows.size());
  std::vector<int64_t> greedy, plain, filtered, top_k;
  std::vector<double> top_p;
  for (size_t i = 0; i < rows.size(); ++i) {
    const SamplingParams& p = rows[i];
    CheckParams(p);
    divisor[i] = Divisor(p);
    switch (KindOf(p, vocab)) {
      case kGreedy:
        greedy.push_back(static_cast<int64_t>(i));
        break;
      case kPlain:
        plain.push_back(static_cast<int64_t>(i));
        break;
      case kFiltered:
        filtered.push_back(static_cast<int64_t>(i));
        top_p.push_back(CutP(p));
        top_k.push_back(CutK(p, vocab));
        filtered_width_ = std::max(filtered_width_, top_k.back());
        break;
    }
  }
  divisor_ = at::tensor(divisor, at::kFloat).view({-1, 1}).to(device);
  greedy_ = IndexTensor(greedy, device);
  plain_ = IndexTensor(plain, device);
  filtered_ = IndexTensor(filtered, device);
  if (!filtered.empty()) {
    filtered_top_p_ = at::tensor(top_p, at::kFloat).view({-1, 1}).to(device);
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
    tokens.index_copy_(0, plain_, SamplePlain(logp.index_select(0, plain_), uniforms.index_select(0, plain_)));
  }
  if (filtered_.defined()) {
    tokens.index_copy_(0, filtered_,
                       SampleFiltered(logp.index_select(0, filtered_), uniforms.index_select(0, filtered_), filtered_top_p_,
                                      filtered_top_k_, filtered_width_));
  }
  const at::Tensor chosen = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1);
  return {tokens, chosen};
}

SlotSampler::SlotSampler(int64_t slots, int64_t vocab, at::Device device)
    : vocab_(vocab), device_(device), host_(static_cast<size_t>(slots)) {
  divisor_ = at::ones({slots, 1}, at::TensorOptions().dtype(at::kFloat).device(device));
  mode_ = at::zeros({slots}, at::TensorOptions().dtype(at::kLong).device(device));
  top_p_ = at::full({slots, 1}, 2.0, at::TensorOptions().dtype(at::kFloat).device(device));
  top_k_ = at::full({slots, 1}, vocab, at::TensorOptions().dtype(at::kLong).device(device));
}

void SlotSampler::Set(int64_t slot, const SamplingParams& p) {
  CheckParams(p);
  host_.at(static_cast<size_t>(slot)) = p;
  dirty_ = true;
}

void SlotSampler::Upload() {
  if (!dirty_) return;
  const int64_t rows = static_cast<int64_t>(host_.size());
  std::vector<float> divisor(rows);
  std::vector<int64_t> mode(rows), top_k(rows);
  std::vector<double> top_p(rows);
  for (int64_t i = 0; i < rows; ++i) {
    const SamplingParams& p = host_[i];
    divisor[i] = Divisor(p);
    mode[i] = KindOf(p, vocab_);
    top_p[i] = CutP(p);
    top_k[i] = CutK(p, vocab_);
  }
  // Copies into the fixed buffers (graphs read them at replay).
  divisor_.narrow(0, 0, rows).copy_(at::tensor(divisor, at::kFloat).view({rows, 1}));
  mode_.narrow(0, 0, rows).copy_(at::tensor(mode, at::kLong));
  top_p_.narrow(0, 0, rows).copy_(at::tensor(top_p, at::kFloat).view({rows, 1}));
  top_k_.narrow(0, 0, rows).copy_(at::tensor(top_k, at::kLong).view({rows, 1}));
  dirty_ = false;
}

SlotSampler::Shape SlotSampler::ShapeOf(int64_t rows, const std::vector<bool>& active) const {
  Shape s;
  for (int64_t i = 0; i < rows; ++i) {
    if (!active[i]) continue;
    const Kind k = KindOf(host_[i], vocab_);
    s.kinds |= 1 << k;
    if (k == kFiltered) s.filtered_width = std::max(s.filtered_width, CutK(host_[i], vocab_));
  }
  if (s.kinds == 0) s.kinds = 1 << kGreedy;  // no live row: any kind will do
  return s;
}

std::pair<at::Tensor, at::Tensor> SlotSampler::Sample(const at::Tensor& logits, const at::Tensor& uniforms, const Shape& shape) const {
  const int64_t rows = logits.size(0);
  const at::Tensor mode = mode_.narrow(0, 0, rows);
  const at::Tensor logp = at::log_softmax(logits / divisor_.narrow(0, 0, rows), -1);
  at::Tensor tokens;
  const auto pick = [&](Kind k, const at::Tensor& t) { tokens = tokens.defined() ? at::where(mode == k, t, tokens) : t; };
  if (shape.kinds & (1 << kGreedy)) pick(kGreedy, logits.argmax(-1));
  if (shape.kinds & (1 << kPlain)) pick(kPlain, SamplePlain(logp, uniforms));
  if (shape.kinds & (1 << kFiltered)) {
    pick(kFiltered, SampleFiltered(logp, uniforms, top_p_.narrow(0, 0, rows), top_k_.narrow(0, 0, rows), shape.filtered_width));
  }
  const at::Tensor chosen = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1);
  return {tokens, chosen};
}

}  // namespace lamer::engine
