#include "train/optimizer.h"

#include <ATen/core/grad_mode.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "algo/gae.h"
#include "bridge/errors.h"
#include "model/batching.h"
#include "model/lora.h"
#include "model/safetensors.h"
#include "train/logprobs.h"

namespace lamer::train {

namespace {

const char* kHeadWeight = "value_head.weight";
const char* kHeadBias = "value_head.bias";

// Turns requires_grad on for the trainable parameters for the length of a step and always leaves them as it found
// them (no grad, no .grad), whatever happens in between.
class GradScope {
 public:
  GradScope(std::map<std::string, at::Tensor>& params, bool on) : params_(params) {
    if (!on) return;
    for (auto& [name, p] : params_) {
      if (!p.is_leaf()) Fail("E_TRAIN", "parameter '" + name + "' is not a leaf tensor; it cannot be trained");
      p.requires_grad_(true);
    }
  }
  ~GradScope() {
    for (auto& [name, p] : params_) {
      if (p.grad().defined()) p.mutable_grad() = at::Tensor();
      if (p.requires_grad()) p.requires_grad_(false);
    }
  }
  GradScope(const GradScope&) = delete;
  GradScope& operator=(const GradScope&) = delete;

 private:
  std::map<std::string, at::Tensor>& params_;
};

// One micro-batch, left-padded like the inference path (positions count real tokens only).
struct Micro {
  at::Tensor ids, mask, positions;           // [B, T]; a prefix tree's: [1, N]
  std::optional<model::TreeAttention> tree;  // a prefix tree's attention (on the CPU), or none (padded rows)
  int64_t computed = 0;                      // tokens the forward computes (padded or packed)
  std::vector<int64_t> flat;                 // per scored token: row * T + column of the hidden state that predicts it
  std::vector<int64_t> targets;              // per scored token
  std::vector<int64_t> token;                // per scored token: its index in the batch's per-token columns
  std::vector<int64_t> out;                  // per scored token: its index in the step's result log-probs
  std::vector<double> weight;                // per scored token: its weight in the mini-batch's aggregated loss
};

// The rows' ids as (pointer, length) spans, in the order given.
std::vector<std::pair<const int64_t*, int64_t>> RowSpans(const Batch& b, const std::vector<int64_t>& rows) {
  std::vector<std::pair<const int64_t*, int64_t>> spans;
  spans.reserve(rows.size());
  for (int64_t r : rows) spans.emplace_back(b.ids.data() + b.row_begin[r], b.length(r));
  return spans;
}

// One micro-batch's forward input and scored tokens. `block` 0: the rows left-padded to the widest; above 0: packed
// as one prefix tree with query blocks of `block` (model/batching.h), so a prefix they share is computed once, and
// each scored token reads the hidden state of its predecessor's packed token, the one it would have in its own row.
// tok_begin[r]: row r's first token in the batch's per-token columns; out_begin[r]: in the step's result; row_weight[r]:
// its tokens' weight (all indexed by batch row).
Micro Build(const Batch& b, const std::vector<int64_t>& rows, const std::vector<int64_t>& tok_begin, const std::vector<int64_t>& out_begin,
            const std::vector<double>& row_weight, int64_t block = 0) {
  Micro m;
  const auto spans = RowSpans(b, rows);
  std::optional<model::PrefixTree> tree;
  model::LeftPadded padded;
  if (block > 0) {
    tree = model::PackPrefixTree(spans, block);
  } else {
    padded = model::LeftPad(spans);
  }
  const int64_t T = padded.width;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t r = rows[i];
    const int64_t len = b.length(r);
    const int64_t* src = b.ids.data() + b.row_begin[r];
    for (int64_t t = b.starts[r]; t < len; ++t) {
      // The hidden state that predicts token t: the packed index of token t - 1, or its padded column.
      m.flat.push_back(tree ? tree->path[i][t - 1] : static_cast<int64_t>(i) * T + (T - len) + t - 1);
      m.targets.push_back(src[t]);
      m.token.push_back(tok_begin[r] + t - b.starts[r]);
      m.out.push_back(out_begin[r] + t - b.starts[r]);
      m.weight.push_back(row_weight[r]);
    }
  }
  if (tree) {
    m.ids = tree->ids;
    m.positions = tree->positions;
    m.computed = tree->tokens;
    m.tree = std::move(tree->attention);
    return m;
  }
  m.ids = padded.ids;
  m.positions = padded.positions;
  m.computed = padded.ids.numel();
  // Rows of one length need no padding mask: the decoder then runs plain causal attention (a faster kernel).
  if (padded.padded) m.mask = padded.mask;
  return m;
}

// `groups` of indices into `rows` as groups of the rows themselves.
std::vector<std::vector<int64_t>> PickRows(const std::vector<int64_t>& rows, const std::vector<std::vector<size_t>>& groups) {
  std::vector<std::vector<int64_t>> out;
  out.reserve(groups.size());
  for (const auto& group : groups) {
    std::vector<int64_t>& micro = out.emplace_back();
    for (const auto i : group) micro.push_back(rows[i]);
  }
  return out;
}

// The micro-batches of `rows`: padded forwards by width, or prefix trees by packed tokens.
std::vector<std::vector<int64_t>> StepMicroBatches(const Batch& batch, const std::vector<int64_t>& rows, int64_t budget, bool share,
                                                   int64_t block) {
  if (!share) return MicroBatches(batch, rows, budget);
  return PickRows(rows, model::PrefixTreeGroups(RowSpans(batch, rows), budget, block));
}

at::Tensor Column(const std::vector<float>& column, const std::vector<int64_t>& token, const at::TensorOptions& opts) {
  std::vector<double> v(token.size());
  for (size_t i = 0; i < token.size(); ++i) v[i] = column[token[i]];
  return at::tensor(v, at::kDouble).to(opts);
}

// Metric slots accumulated over micro-batches (one device-to-host copy per step).
enum Slot { kLoss, kPg, kEntAgg, kKlAgg, kVf, kEntSum, kApproxKlSum, kClipSum, kDualSum, kVfClipSum, kSlots };

}  // namespace

int64_t Batch::total_scored() const {
  int64_t n = 0;
  for (int64_t r = 0; r < rows(); ++r) n += scored(r);
  return n;
}

void Batch::Validate(int64_t vocab) const {
  if (row_begin.size() != starts.size() + 1 || row_begin.front() != 0 || row_begin.back() != static_cast<int64_t>(ids.size())) {
    Fail("E_ARG", "train batch: lengths do not add up to the number of ids");
  }
  for (int64_t r = 0; r < rows(); ++r) {
    if (length(r) < 1) Fail("E_ARG", "train batch: row " + std::to_string(r) + " is empty");
    if (starts[r] < 1 || starts[r] > length(r)) {
      Fail("E_ARG", "train batch: row " + std::to_string(r) + ": prompt length " + std::to_string(starts[r]) + " must be in [1, " +
                        std::to_string(length(r)) + "] (the first token has no prediction)");
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab) {
      Fail("E_ARG", "train batch: token id " + std::to_string(ids[i]) + " at flat position " + std::to_string(i) +
                        " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
  }
  const size_t n = static_cast<size_t>(total_scored());
  auto check = [&](const std::vector<float>& c, const char* name) {
    if (!c.empty() && c.size() != n) {
      Fail("E_ARG", std::string("train batch: '") + name + "' has " + std::to_string(c.size()) +
                        " values, expected one per response token (" + std::to_string(n) + ")");
    }
    for (size_t i = 0; i < c.size(); ++i) {
      if (!std::isfinite(c[i])) Fail("E_ARG", std::string("train batch: '") + name + "' value " + std::to_string(i) + " is not finite");
    }
  };
  check(advantages, "advantages");
  check(old_logprobs, "oldLogprobs");
  check(ref_logprobs, "refLogprobs");
  check(returns, "returns");
  check(old_values, "oldValues");
}

std::vector<std::vector<int64_t>> MicroBatches(const Batch& batch, const std::vector<int64_t>& rows, int64_t budget) {
  std::vector<int64_t> widths(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) widths[i] = batch.length(rows[i]);
  return PickRows(rows, model::WidestFirstGroups(widths, budget, model::ForwardOverhead(budget)));
}

namespace {
std::vector<int64_t> AllRows(const Batch& batch) {
  std::vector<int64_t> rows(batch.rows());
  for (int64_t r = 0; r < batch.rows(); ++r) rows[r] = r;
  return rows;
}
// Per batch row: its first token in the per-token columns (rows + 1 entries).
std::vector<int64_t> TokenBegin(const Batch& batch) {
  std::vector<int64_t> begin(batch.rows() + 1, 0);
  for (int64_t r = 0; r < batch.rows(); ++r) begin[r + 1] = begin[r] + batch.scored(r);
  return begin;
}
}  // namespace

Optimizer::Optimizer(std::shared_ptr<model::Decoder> decoder, AdamWOptions adam, bool value_head, int zero)
    : decoder_(std::move(decoder)), update_(adam), value_head_(value_head) {
  if (zero < 0 || zero > 2) Fail("E_ARG", "optimizer: zero must be 0, 1 or 2, found " + std::to_string(zero));
  if (zero > 0) zero_ = std::make_unique<ZeroAdamW>(zero);
}

void Optimizer::EnsureValueHead() {
  if (!head_.empty()) return;
  at::NoGradGuard no_grad;
  // Zero-initialised: the critic starts by predicting 0 and its first gradients do not disturb the policy trunk.
  const auto opts = at::TensorOptions().dtype(ScoreDType(decoder_->compute_dtype())).device(decoder_->device());
  head_[kHeadWeight] = at::zeros({1, decoder_->config().hidden_size}, opts);
  head_[kHeadBias] = at::zeros({1}, opts);
}

std::map<std::string, at::Tensor> Optimizer::TrainableParameters() {
  if (decoder_->parameters().empty()) Fail("E_DISPOSED", "the model was disposed");
  // With a LoRA adapter the adapter alone is trained; the base stays frozen (no gradient, no optimizer state).
  std::map<std::string, at::Tensor> params = decoder_->lora() ? decoder_->lora_parameters() : decoder_->parameters();
  if (value_head_) {
    EnsureValueHead();
    for (auto& [name, t] : head_) params[name] = t;
  }
  return params;
}

StepResult Optimizer::Step(const Batch& batch, const StepOptions& o) {
  batch.Validate(decoder_->config().vocab_size);
  return StepRows(batch, AllRows(batch), o);
}

StepResult Optimizer::Step(const StagedBatch& staged, const std::vector<int64_t>& rows, const StepOptions& o) {
  // Each row at most once: the step keeps per-row offsets and weights by batch row.
  std::vector<bool> seen(staged.batch.rows(), false);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= staged.batch.rows()) {
      Fail("E_ARG", "train step: row " + std::to_string(rows[i]) + " (position " + std::to_string(i) +
                        ") is not a row of the staged batch (" + std::to_string(staged.batch.rows()) + " rows)");
    }
    if (seen[rows[i]]) Fail("E_ARG", "train step: row " + std::to_string(rows[i]) + " is named twice");
    seen[rows[i]] = true;
  }
  return StepRows(staged.batch, rows, o);
}

namespace {

// What a step computes, from its options.
struct StepPlan {
  bool policy = false;          // the policy-gradient objective (else SFT)
  bool use_value = false;       // value loss (PPO)
  bool use_kl = false;          // KL penalty
  bool reference_pass = false;  // KL against a reference policy's log-probs computed now
  bool data_parallel = false;   // gradients and sums reduced over the ranks
};

// The rows and tokens of a step's mini-batch and the per-token weights that aggregate its loss. Indexed by batch
// row: where each row's tokens are in the per-token columns and in the step's result.
struct RowCounts {
  std::vector<int64_t> tok_begin, out_begin;
  std::vector<double> row_weight;
  int64_t rows = 0, tokens = 0;               // this process's
  double global_rows = 0, global_tokens = 0;  // the whole mini-batch's (summed over the ranks)
};

// Checks a step's batch and options against what it asks for; E_ARG naming the first thing missing.
StepPlan CheckStep(const Batch& batch, bool any_rows, const StepOptions& o, const model::Decoder& decoder, bool value_head) {
  const LossOptions& L = o.loss;
  StepPlan plan;
  plan.policy = o.objective == Objective::kPolicy;
  plan.use_value = plan.policy && L.value_coef > 0;
  plan.use_kl = plan.policy && L.kl != KlType::kNone;
  plan.data_parallel = o.group && o.group->size() > 1;
  plan.reference_pass = plan.use_kl && batch.ref_logprobs.empty();
  if (!any_rows && !plan.data_parallel) Fail("E_ARG", "train step: the batch has no rows");
  if (plan.policy && any_rows && batch.advantages.empty()) Fail("E_ARG", "train step: the policy loss needs 'advantages'");
  if (o.reference_base && !decoder.lora()) Fail("E_ARG", "train step: referenceBase needs a model with a LoRA adapter");
  if (o.reference_base && o.reference) Fail("E_ARG", "train step: give a reference policy or referenceBase, not both");
  if (plan.reference_pass && any_rows && !o.reference && !o.reference_base)
    Fail("E_ARG", "train step: a KL loss needs 'refLogprobs' (or a reference policy)");
  if (plan.reference_pass && o.reference) {
    if (o.reference->device() != decoder.device()) Fail("E_ARG", "train step: the reference policy must be on the trained model's device");
    if (o.reference->config().vocab_size != decoder.config().vocab_size)
      Fail("E_ARG", "train step: the reference policy's vocabulary differs from the trained model's");
  }
  if (plan.use_value && !value_head) Fail("E_ARG", "train step: valueCoef > 0 needs an optimizer created with valueHead: true");
  if (plan.use_value && any_rows && (batch.returns.empty() || batch.old_values.empty())) {
    Fail("E_ARG", "train step: the value loss needs 'returns' and 'oldValues'");
  }
  if (plan.policy && !L.policy_loss) Fail("E_ARG", "train step: the policy objective needs a policy loss");
  if (!(L.temperature > 0)) Fail("E_ARG", "train step: temperature must be > 0");
  if (o.update && !o.with_grad) Fail("E_ARG", "train step: an update needs gradients");
  return plan;
}

// Aggregation as per-token weights over the whole mini-batch (all ranks), so micro-batching never changes the loss.
RowCounts CountRows(const Batch& batch, const std::vector<int64_t>& selected, Aggregation aggregation, const StepOptions& o,
                    bool data_parallel) {
  RowCounts c;
  c.rows = static_cast<int64_t>(selected.size());
  c.tok_begin = TokenBegin(batch);
  c.out_begin.assign(batch.rows(), 0);
  std::vector<int64_t> scored(c.rows);
  for (int64_t i = 0; i < c.rows; ++i) {
    scored[i] = batch.scored(selected[i]);
    c.out_begin[selected[i]] = c.tokens;
    c.tokens += scored[i];
  }
  c.global_rows = static_cast<double>(c.rows);
  c.global_tokens = static_cast<double>(c.tokens);
  if (data_parallel) {
    at::Tensor counts = at::tensor({c.global_rows, c.global_tokens}, at::kDouble).to(o.group->device());
    o.group->AllReduceSum({counts});
    const at::Tensor host = counts.to(at::kCPU);
    c.global_rows = host[0].item<double>();
    c.global_tokens = host[1].item<double>();
    if (c.global_rows == 0) Fail("E_ARG", "train step: the mini-batch has no rows on any rank");
  }
  c.row_weight.assign(batch.rows(), 0.0);
  const std::vector<double> w = AggregationWeights(scored, aggregation, c.global_rows, c.global_tokens);
  for (int64_t i = 0; i < c.rows; ++i) c.row_weight[selected[i]] = w[i];
  return c;
}

// One micro-batch's objective and its parts (the Slot sums), given its tokens' log-probs and scores.
struct MicroLoss {
  at::Tensor loss;
  std::vector<at::Tensor> parts;
};

// Supervised loss per token: cross-entropy -lp; with the batch's per-token weights a (its `advantages` column), a * -lp
// where a > 0 and the unlikelihood |a| * -log(1 - p) where a < 0 (a token the row's context must not be continued
// with: a move the environment refuses), nothing where a = 0. log(1 - p) is log(-expm1(lp)), with p kept below 1.
MicroLoss SftLoss(const Batch& batch, const Micro& m, const at::Tensor& lp, const at::Tensor& w, const at::TensorOptions& sopts) {
  at::Tensor per = -lp;
  if (!batch.advantages.empty()) {
    const at::Tensor a = Column(batch.advantages, m.token, sopts);
    const double eps = sopts.dtype() == at::kDouble ? 1e-12 : 1e-6;
    const at::Tensor unlikely = -at::log(-at::expm1(at::clamp_max(lp, -eps)));
    per = at::where(a < 0, -a * unlikely, a * per);
  }
  MicroLoss out{(per * w).sum(), std::vector<at::Tensor>(kSlots, at::zeros({}, sopts))};
  return out;
}

// The policy-gradient loss (the one the options name), minus the entropy bonus, plus the KL penalty and the value
// loss when asked.
MicroLoss PolicyLoss(const Batch& batch, const Micro& m, const TokenScores& s, const at::Tensor& w, const at::Tensor& ref_lp,
                     const at::Tensor& h, const std::map<std::string, at::Tensor>& params, const StepPlan& plan, const LossOptions& L,
                     const at::TensorOptions& sopts) {
  const at::ScalarType score = sopts.dtype().toScalarType();
  const at::Tensor& lp = s.logprobs;
  MicroLoss out{at::Tensor(), std::vector<at::Tensor>(kSlots, at::zeros({}, sopts))};
  auto& parts = out.parts;
  const at::Tensor adv = Column(batch.advantages, m.token, sopts);
  const at::Tensor old = batch.old_logprobs.empty() ? lp.detach() : Column(batch.old_logprobs, m.token, sopts);
  const PolicyLossTerms pg = L.policy_loss(lp, old, adv, L);
  const at::Tensor pg_loss = (pg.pg * w).sum();
  const at::Tensor ent_agg = (s.entropy * w).sum();
  out.loss = pg_loss - L.entropy_coef * ent_agg;
  parts[kPg] = pg_loss.detach();
  parts[kEntAgg] = ent_agg.detach();
  parts[kEntSum] = s.entropy.detach().sum();
  parts[kApproxKlSum] = (old - lp.detach()).sum();
  if (pg.clipped.defined()) parts[kClipSum] = pg.clipped.to(score).sum();
  if (pg.dual.defined()) parts[kDualSum] = pg.dual.to(score).sum();
  if (plan.use_kl) {
    const at::Tensor ref = ref_lp.defined() ? ref_lp : Column(batch.ref_logprobs, m.token, sopts);
    const at::Tensor kl_agg = (KlPenalty(lp, ref, L.kl) * w).sum();
    out.loss = out.loss + L.kl_coef * kl_agg;
    parts[kKlAgg] = kl_agg.detach();
  }
  if (plan.use_value) {
    const at::Tensor v = at::linear(h.to(score), params.at(kHeadWeight), params.at(kHeadBias)).squeeze(-1);
    const ValueLossTerms vf =
        ClippedValueLoss(v, Column(batch.old_values, m.token, sopts), Column(batch.returns, m.token, sopts), L.value_clip);
    const at::Tensor vf_agg = (vf.loss * w).sum();
    out.loss = out.loss + L.value_coef * vf_agg;
    parts[kVf] = vf_agg.detach();
    parts[kVfClipSum] = vf.clipped.to(score).sum();
  }
  return out;
}

// The step's metrics from the summed parts.
void AddMetrics(StepResult& out, const at::Tensor& sums, const StepPlan& plan, const RowCounts& c, size_t micro_batches) {
  const at::Tensor host = sums.to(at::kCPU, at::kDouble);
  const double* v = host.data_ptr<double>();
  const double n = std::max<double>(1.0, c.global_tokens);
  out.metrics.emplace_back("loss", v[kLoss]);
  if (plan.policy) {
    out.metrics.emplace_back("pgLoss", v[kPg]);
    out.metrics.emplace_back("entropy", v[kEntSum] / n);
    out.metrics.emplace_back("entropyLoss", v[kEntAgg]);
    out.metrics.emplace_back("approxKl", v[kApproxKlSum] / n);
    out.metrics.emplace_back("clipFrac", v[kClipSum] / n);
    out.metrics.emplace_back("dualClipFrac", v[kDualSum] / n);
    if (plan.use_kl) out.metrics.emplace_back("klLoss", v[kKlAgg]);
    if (plan.use_value) {
      out.metrics.emplace_back("valueLoss", v[kVf]);
      out.metrics.emplace_back("valueClipFrac", v[kVfClipSum] / n);
    }
  }
  out.metrics.emplace_back("tokens", c.global_tokens);
  out.metrics.emplace_back("rows", c.global_rows);
  out.metrics.emplace_back("microBatches", static_cast<double>(micro_batches));
}

}  // namespace

StepResult Optimizer::StepRows(const Batch& batch, const std::vector<int64_t>& selected, const StepOptions& o) {
  const StepPlan plan = CheckStep(batch, !selected.empty(), o, *decoder_, value_head_);
  const LossOptions& L = o.loss;

  std::map<std::string, at::Tensor> params = TrainableParameters();
  // A step with gradients reads the parameters themselves; a loss evaluation without them reads the forward's cached
  // copies, which parameters written from outside (a test's data view) may have left stale.
  if (!o.with_grad) decoder_->ParametersChanged();
  at::AutoGradMode grad_mode(o.with_grad);
  GradScope scope(params, o.with_grad);

  const RowCounts counts = CountRows(batch, selected, plan.policy ? L.aggregation : Aggregation::kTokenMean, o, plan.data_parallel);
  const at::ScalarType score = ScoreDType(decoder_->compute_dtype());
  const auto sopts = at::TensorOptions().dtype(score).device(decoder_->device());
  const auto lopts = at::TensorOptions().dtype(at::kLong).device(decoder_->device());
  at::Tensor sums = at::zeros({kSlots}, sopts);
  std::vector<float> logprobs(counts.tokens);
  // Prefix sharing is exact; with LoRA dropout it would give a shared prefix one mask for all its rows (a different
  // estimator), so it is left off there.
  const bool share = o.share_prefix && !(decoder_->lora() && decoder_->lora()->dropout > 0 && o.with_grad);
  const int64_t block = model::TreeBlock(decoder_->device());
  const auto micro = StepMicroBatches(batch, selected, std::max<int64_t>(1, o.micro_batch_tokens), share, block);
  double computed = 0;
  // Logit chunks: the device profile's size (src/model/device.ts), or the caller's.
  const int64_t chunk_bytes = o.chunk_bytes;

  // Gradient checkpointing: each decoder layer keeps only its input and is recomputed in backward.
  // LoRA dropout draws from the device's default generator, seeded for each micro-batch from the step, the
  // micro-batch and the rank, so a rerun or a resumed run draws the same masks.
  const bool dropout = o.with_grad && decoder_->lora() && decoder_->lora()->dropout > 0;
  model::Decoder::LayerRunner runner;
  if (o.gradient_checkpointing && o.with_grad) {
    runner = [dropout](const model::Decoder::LayerFn& layer, const at::Tensor& x) { return Checkpointed(layer, x, dropout); };
  }
  int64_t micro_index = 0;
  // Wall seconds of the step's parts (the reference's forwards, the policy's forwards and backwards with the reduction
  // over ranks, the clip and optimizer update); on CUDA each boundary waits for the device, so each part holds its work.
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  const auto settle = [dev = decoder_->device()] {
    if (dev.is_cuda()) torch::cuda::synchronize(dev.index());
  };
  const auto step_start = Clock::now();
  double reference_seconds = 0;

  for (const auto& rows : micro) {
    const Micro m = Build(batch, rows, counts.tok_begin, counts.out_begin, counts.row_weight, share ? block : 0);
    if (m.flat.empty()) continue;
    computed += static_cast<double>(m.computed);
    const at::Device dev = decoder_->device();
    const std::optional<model::TreeAttention> tree = m.tree ? std::optional<model::TreeAttention>(m.tree->To(dev)) : std::nullopt;
    const model::TreeAttention* tree_ptr = tree ? &*tree : nullptr;
    if (dropout) {
      const uint64_t rank = o.group ? static_cast<uint64_t>(o.group->rank()) : 0;
      const uint64_t seed = (static_cast<uint64_t>(step()) * 1000003ull + static_cast<uint64_t>(micro_index)) * 1009ull + rank;
      at::Generator gen = at::globalContext().defaultGenerator(dev);
      gen.set_current_seed(seed);
    }
    ++micro_index;
    const at::Tensor ids = m.ids.to(dev);
    const at::Tensor positions = m.positions.to(dev);
    const at::Tensor mask = m.mask.defined() ? m.mask.to(dev) : m.mask;
    const at::Tensor flat = at::tensor(m.flat, at::kLong).to(lopts);
    const at::Tensor targets = at::tensor(m.targets, at::kLong).to(lopts);
    // The reference's log-probs of the same tokens, before the policy's forward so that its activations are freed.
    at::Tensor ref_lp;
    if (plan.policy && plan.reference_pass) {
      settle();
      const auto ref_start = Clock::now();
      at::NoGradGuard frozen;
      model::Decoder& ref = o.reference_base ? *decoder_ : *o.reference;
      std::optional<model::Decoder::AdapterOff> base_only;
      if (o.reference_base) base_only.emplace(*decoder_);
      const at::Tensor rh = ref.Hidden(ids, positions, mask, nullptr, {}, tree_ptr);
      ref_lp = ChunkedTokenScores(rh.reshape({-1, rh.size(-1)}).index_select(0, flat), ref.LmHeadWeight(), targets, L.temperature, false,
                                  chunk_bytes)
                   .logprobs.to(score);
      settle();
      reference_seconds += seconds_since(ref_start);
    }
    std::optional<model::Decoder::Training> training;
    if (o.with_grad) training.emplace(*decoder_);
    const at::Tensor hidden = decoder_->Hidden(ids, positions, mask, nullptr, runner, tree_ptr);
    const at::Tensor h = hidden.reshape({-1, hidden.size(-1)}).index_select(0, flat);
    // The head in the compute dtype, in the graph when it is trained.
    const at::Tensor head = decoder_->LmHeadWeight();
    const TokenScores s = o.chunked ? ChunkedTokenScores(h, head, targets, L.temperature, plan.policy, chunk_bytes)
                                    : FullTokenScores(h, head, targets, L.temperature, plan.policy);
    const at::Tensor w = at::tensor(m.weight, at::kDouble).to(sopts);
    {
      const at::Tensor lp_cpu = s.logprobs.detach().to(at::kCPU, at::kFloat).contiguous();
      const float* p = lp_cpu.data_ptr<float>();
      for (size_t i = 0; i < m.out.size(); ++i) logprobs[m.out[i]] = p[i];
    }
    MicroLoss ml = plan.policy ? PolicyLoss(batch, m, s, w, ref_lp, h, params, plan, L, sopts) : SftLoss(batch, m, s.logprobs, w, sopts);
    ml.parts[kLoss] = ml.loss.detach();
    sums.add_(at::stack(ml.parts));
    if (o.with_grad) ml.loss.backward();
  }

  // ZeRO stage 2 reduce-scatters the gradients of an update (each rank keeps its shard's); anything else all-reduces.
  const bool scatter = zero_ && zero_->stage() == 2 && o.with_grad && o.update;
  if (plan.data_parallel) ReduceOverRanks(params, sums, o, !scatter);
  if (scatter) zero_->ReduceScatterGradients(params, plan.data_parallel ? o.group.get() : nullptr);
  StepResult out;
  AddMetrics(out, sums, plan, counts, micro.size());
  // Tokens the forwards computed (padding or packed prefixes included): this process's, not summed over the ranks.
  out.metrics.emplace_back("computedTokens", computed);
  out.logprobs = std::move(logprobs);
  settle();
  out.metrics.emplace_back("forwardBackwardSeconds", seconds_since(step_start) - reference_seconds);
  out.metrics.emplace_back("referenceSeconds", reference_seconds);
  const auto update_start = Clock::now();
  if (o.with_grad) ClipAndUpdate(params, o, out);
  settle();
  out.metrics.emplace_back("optimizerSeconds", seconds_since(update_start));
  out.metrics.emplace_back("step", static_cast<double>(step()));
  return out;
}

void Optimizer::ReduceOverRanks(std::map<std::string, at::Tensor>& params, at::Tensor& sums, const StepOptions& o, bool grads) {
  // Every rank reduces the same tensors in the same (name) order; a parameter this rank's rows left without a
  // gradient contributes zeros.
  if (o.with_grad && grads) {
    std::vector<at::Tensor> grads;
    for (auto& [name, p] : params) {
      if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
      grads.push_back(p.mutable_grad());
    }
    o.group->AllReduceSum(grads);
  }
  at::Tensor s = sums.to(o.group->device(), at::kDouble);
  o.group->AllReduceSum({s});
  sums = s.to(sums.device(), sums.scalar_type());
}

void Optimizer::ClipAndUpdate(std::map<std::string, at::Tensor>& params, const StepOptions& o, StepResult& out) {
  if (o.return_grads) {
    for (auto& [name, p] : params) {
      if (p.grad().defined()) out.grads[name] = p.grad().detach().clone();
    }
  }
  gradient_bytes_ = zero_ ? zero_->GradientBytes() : 0;
  for (auto& [name, p] : params) {
    if (p.grad().defined()) gradient_bytes_ += static_cast<int64_t>(p.grad().nbytes());
  }
  if (zero_ && o.update) {
    // The sharded update: the global norm, AdamW on this rank's shard, the all-gather of every shard.
    const double norm =
        zero_->ClipAndStep(params, update_, o.lr, o.max_grad_norm, o.group && o.group->size() > 1 ? o.group.get() : nullptr);
    out.metrics.emplace_back("gradNorm", norm);
    if (!std::isfinite(norm)) {
      Fail("E_TRAIN", "train step: the gradient norm is not finite (" + std::to_string(norm) +
                          "); parameters were left unchanged. Lower the learning rate or check the advantages");
    }
    decoder_->ParametersChanged();
    out.metrics.emplace_back("lr", o.lr);
    return;
  }
  const double norm = ClipGradNorm(params, o.update ? o.max_grad_norm : 0.0);
  out.metrics.emplace_back("gradNorm", norm);
  if (!o.update) return;
  if (!std::isfinite(norm)) {
    Fail("E_TRAIN", "train step: the gradient norm is not finite (" + std::to_string(norm) +
                        "); parameters were left unchanged. Lower the learning rate or check the advantages");
  }
  adam_.Step(params, update_, o.lr);
  decoder_->ParametersChanged();
  out.metrics.emplace_back("lr", o.lr);
}

std::vector<float> Optimizer::Values(const Batch& batch, int64_t micro_batch_tokens) {
  batch.Validate(decoder_->config().vocab_size);
  if (!value_head_) Fail("E_ARG", "values: this optimizer has no value head (create it with valueHead: true)");
  EnsureValueHead();
  at::NoGradGuard no_grad;
  const std::vector<int64_t> tok_begin = TokenBegin(batch);
  const std::vector<double> row_weight(batch.rows(), 0.0);
  std::vector<float> values(batch.total_scored());
  const at::ScalarType score = ScoreDType(decoder_->compute_dtype());
  for (const auto& rows : MicroBatches(batch, AllRows(batch), std::max<int64_t>(1, micro_batch_tokens))) {
    const Micro m = Build(batch, rows, tok_begin, tok_begin, row_weight);
    if (m.flat.empty()) continue;
    const at::Device dev = decoder_->device();
    const at::Tensor hidden = decoder_->Hidden(m.ids.to(dev), m.positions.to(dev), m.mask.defined() ? m.mask.to(dev) : m.mask);
    const at::Tensor h = hidden.reshape({-1, hidden.size(-1)}).index_select(0, at::tensor(m.flat, at::kLong).to(dev));
    const at::Tensor v =
        at::linear(h.to(score), head_.at(kHeadWeight), head_.at(kHeadBias)).squeeze(-1).to(at::kCPU, at::kFloat).contiguous();
    const float* p = v.data_ptr<float>();
    for (size_t i = 0; i < m.token.size(); ++i) values[m.token[i]] = p[i];
  }
  return values;
}

void Optimizer::Gae(StagedBatch& staged, double gamma, double lambda, int64_t micro_batch_tokens) {
  Batch& b = staged.batch;
  if (static_cast<int64_t>(staged.row_returns.size()) != b.rows()) {
    Fail("E_ARG", "gae: the staged batch carries " + std::to_string(staged.row_returns.size()) + " row returns for " +
                      std::to_string(b.rows()) + " rows");
  }
  if (!(gamma >= 0 && gamma <= 1) || !(lambda >= 0 && lambda <= 1)) Fail("E_ARG", "gae: gamma and lambda must be in [0, 1]");
  std::vector<float> values = Values(b, micro_batch_tokens);
  std::vector<int64_t> lengths(b.rows());
  for (int64_t r = 0; r < b.rows(); ++r) lengths[r] = b.scored(r);
  b.advantages.assign(values.size(), 0.0f);
  b.returns.assign(values.size(), 0.0f);
  algo::GaeParams params;
  params.gamma = gamma;
  params.lambda = lambda;
  algo::compute_gae(b.rows(), lengths.data(), staged.row_returns.data(), values.data(), params, b.advantages.data(), b.returns.data());
  b.old_values = std::move(values);
}

MemoryBytes Optimizer::Memory() {
  MemoryBytes m;
  const std::map<std::string, at::Tensor> trained = TrainableParameters();
  for (const auto& [name, t] : trained) {
    m.trainable += static_cast<int64_t>(t.nbytes());
    m.trainable_count += t.numel();
  }
  for (const auto* map : {&decoder_->parameters(), &decoder_->lora_parameters(), &head_}) {
    for (const auto& [name, t] : *map) m.parameters += static_cast<int64_t>(t.nbytes());
  }
  m.gradients = gradient_bytes_;
  m.optimizer_state = zero_ ? zero_->StateBytes() : adam_.StateBytes();
  return m;
}

void Optimizer::Save(const std::string& path, const std::map<std::string, std::string>& extra_metadata, dist::Group* group) {
  at::NoGradGuard no_grad;
  if (value_head_) EnsureValueHead();  // saved even before the first step, so load() finds it
  std::map<std::string, std::string> metadata = extra_metadata;
  for (const auto& [k, v] : update_.Metadata()) metadata[k] = v;
  metadata["value_head"] = value_head_ ? "1" : "0";
  if (zero_) {
    std::vector<std::pair<std::string, at::Tensor>> head(head_.begin(), head_.end());
    zero_->Save(path, head, metadata, TrainableParameters(), group && group->size() > 1 ? group : nullptr);
    return;
  }
  if (path.empty()) return;  // a rank other than 0 has nothing to write without ZeRO
  auto items = adam_.StateTensors();
  for (const auto& [name, t] : head_) items.emplace_back(name, t);
  model::WriteSafetensors(path, items, at::ScalarType::Undefined, metadata);
}

void Optimizer::Load(const std::string& path, dist::Group* group) {
  at::NoGradGuard no_grad;
  const model::SafetensorsFile file = model::SafetensorsFile::Open(path);
  // An AdamW state file (E_CHECKPOINT otherwise) before anything is read from it.
  const int64_t step = StateFileStep(file.metadata(), path);
  std::map<std::string, at::Tensor> tensors;
  for (const auto& e : file.entries()) tensors[e.name] = file.Tensor(e);
  const bool has_head = tensors.count(kHeadWeight) > 0;
  if (value_head_ && !has_head) {
    Fail("E_CHECKPOINT", path + ": no value head in this optimizer state, but the optimizer was created with valueHead: true");
  }
  if (!value_head_ && has_head) {
    Fail("E_CHECKPOINT", path + ": this optimizer state has a value head; create the optimizer with valueHead: true to load it");
  }
  std::map<std::string, at::Tensor> params = TrainableParameters();
  if (has_head) {
    for (const char* name : {kHeadWeight, kHeadBias}) {
      auto it = tensors.find(name);
      if (it == tensors.end() || it->second.sizes() != head_.at(name).sizes()) {
        Fail("E_CHECKPOINT", path + ": tensor '" + std::string(name) + "' missing or of the wrong shape for this model");
      }
      head_.at(name).copy_(it->second);
    }
  }
  if (zero_) {
    zero_->Restore(path, tensors, file.metadata(), params, group && group->size() > 1 ? group : nullptr);
  } else if (IsShardedState(file.metadata())) {
    // A sharded state continued whole: read every shard into one rank's layout, then as AdamW names it.
    ZeroAdamW whole(1);
    whole.Restore(path, tensors, file.metadata(), params, nullptr);
    adam_.Restore(whole.PerParameterState(params), params, path);
  } else {
    adam_.Restore(tensors, params, path);
  }
  update_.Restore(step);
  decoder_->ParametersChanged();
}

}  // namespace lamer::train
