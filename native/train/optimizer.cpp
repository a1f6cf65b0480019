#include "train/optimizer.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>

#include "algo/gae.h"
#include "bridge/errors.h"
#include "model/batching.h"
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
  at::Tensor ids, mask, positions;  // [B, T]
  std::vector<int64_t> flat;        // per scored token: row * T + column of the hidden state that predicts it
  std::vector<int64_t> targets;     // per scored token
  std::vector<int64_t> token;       // per scored token: its index in the batch's per-token columns
  std::vector<int64_t> out;         // per scored token: its index in the step's result log-probs
  std::vector<double> weight;       // per scored token: its weight in the mini-batch's aggregated loss
};

// tok_begin[r]: row r's first token in the batch's per-token columns; out_begin[r]: in the step's result; row_weight[r]:
// its tokens' weight (all indexed by batch row).
Micro Build(const Batch& b, const std::vector<int64_t>& rows, const std::vector<int64_t>& tok_begin, const std::vector<int64_t>& out_begin,
            const std::vector<double>& row_weight) {
  Micro m;
  std::vector<std::pair<const int64_t*, int64_t>> spans;
  spans.reserve(rows.size());
  for (int64_t r : rows) spans.emplace_back(b.ids.data() + b.row_begin[r], b.length(r));
  model::LeftPadded padded = model::LeftPad(spans);
  const int64_t T = padded.width;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t r = rows[i];
    const int64_t len = b.length(r);
    const int64_t off = T - len;
    const int64_t* src = b.ids.data() + b.row_begin[r];
    for (int64_t t = b.starts[r]; t < len; ++t) {
      m.flat.push_back(static_cast<int64_t>(i) * T + off + t - 1);
      m.targets.push_back(src[t]);
      m.token.push_back(tok_begin[r] + t - b.starts[r]);
      m.out.push_back(out_begin[r] + t - b.starts[r]);
      m.weight.push_back(row_weight[r]);
    }
  }
  m.ids = padded.ids;
  m.positions = padded.positions;
  // Rows of one length need no padding mask: the decoder then runs plain causal attention (a faster kernel).
  if (padded.padded) m.mask = padded.mask;
  return m;
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
  std::vector<std::vector<int64_t>> out;
  for (const auto& group : model::WidestFirstGroups(widths, budget, model::ForwardOverhead(budget))) {
    std::vector<int64_t>& micro = out.emplace_back();
    for (const auto i : group) micro.push_back(rows[i]);
  }
  return out;
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

Optimizer::Optimizer(std::shared_ptr<model::Decoder> decoder, AdamWOptions adam, bool value_head)
    : decoder_(std::move(decoder)), adam_(adam), value_head_(value_head) {}

void Optimizer::EnsureValueHead() {
  if (!head_.empty()) return;
  at::NoGradGuard no_grad;
  // Zero-initialised: the critic starts by predicting 0 and its first gradients do not disturb the policy trunk.
  const auto opts = at::TensorOptions().dtype(ScoreDType(decoder_->compute_dtype())).device(decoder_->device());
  head_[kHeadWeight] = at::zeros({1, decoder_->config().hidden_size}, opts);
  head_[kHeadBias] = at::zeros({1}, opts);
}

std::map<std::string, at::Tensor> Optimizer::TrainableParameters() {
  std::map<std::string, at::Tensor> params = decoder_->parameters();
  if (params.empty()) Fail("E_DISPOSED", "the model was disposed");
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

StepResult Optimizer::StepRows(const Batch& batch, const std::vector<int64_t>& selected, const StepOptions& o) {
  const model::DecoderConfig& cfg = decoder_->config();
  const bool policy = o.objective == Objective::kPolicy;
  const LossOptions& L = o.loss;
  const bool use_value = policy && L.value_coef > 0;
  const bool use_kl = policy && L.kl != KlType::kNone;
  const bool data_parallel = o.group && o.group->size() > 1;
  const bool any = !selected.empty();
  if (!any && !data_parallel) Fail("E_ARG", "train step: the batch has no rows");
  if (policy && any && batch.advantages.empty()) Fail("E_ARG", "train step: the policy loss needs 'advantages'");
  const bool reference_pass = use_kl && batch.ref_logprobs.empty();
  if (reference_pass && any && !o.reference) Fail("E_ARG", "train step: a KL loss needs 'refLogprobs' (or a reference policy)");
  if (reference_pass && o.reference) {
    if (o.reference->device() != decoder_->device())
      Fail("E_ARG", "train step: the reference policy must be on the trained model's device");
    if (o.reference->config().vocab_size != cfg.vocab_size)
      Fail("E_ARG", "train step: the reference policy's vocabulary differs from the trained model's");
  }
  if (use_value && !value_head_) Fail("E_ARG", "train step: valueCoef > 0 needs an optimizer created with valueHead: true");
  if (use_value && any && (batch.returns.empty() || batch.old_values.empty())) {
    Fail("E_ARG", "train step: the value loss needs 'returns' and 'oldValues'");
  }
  if (!(L.temperature > 0)) Fail("E_ARG", "train step: temperature must be > 0");
  if (o.update && !o.with_grad) Fail("E_ARG", "train step: an update needs gradients");

  std::map<std::string, at::Tensor> params = TrainableParameters();
  // A step with gradients reads the parameters themselves; a loss evaluation without them reads the forward's cached
  // copies, which parameters written from outside (a test's data view) may have left stale.
  if (!o.with_grad) decoder_->ParametersChanged();
  at::AutoGradMode grad_mode(o.with_grad);
  GradScope scope(params, o.with_grad);

  // Aggregation as per-token weights over the whole mini-batch, so micro-batching never changes the loss.
  // Indexed by batch row: where each row's tokens are in the per-token columns and in this step's result.
  const int64_t R = static_cast<int64_t>(selected.size());
  const std::vector<int64_t> tok_begin = TokenBegin(batch);
  std::vector<int64_t> out_begin(batch.rows(), 0);
  std::vector<int64_t> scored(R);
  int64_t N = 0;
  for (int64_t i = 0; i < R; ++i) {
    scored[i] = batch.scored(selected[i]);
    out_begin[selected[i]] = N;
    N += scored[i];
  }
  const Aggregation aggregation = policy ? L.aggregation : Aggregation::kTokenMean;
  // Rows and scored tokens of the whole mini-batch: this process's, or the sum over the ranks.
  double global_rows = static_cast<double>(R);
  double global_tokens = static_cast<double>(N);
  if (data_parallel) {
    at::Tensor counts = at::tensor({global_rows, global_tokens}, at::kDouble).to(o.group->device());
    o.group->AllReduceSum({counts});
    const at::Tensor c = counts.to(at::kCPU);
    global_rows = c[0].item<double>();
    global_tokens = c[1].item<double>();
    if (global_rows == 0) Fail("E_ARG", "train step: the mini-batch has no rows on any rank");
  }
  std::vector<double> row_weight(batch.rows(), 0.0);
  {
    const std::vector<double> w = AggregationWeights(scored, aggregation, global_rows, global_tokens);
    for (int64_t i = 0; i < R; ++i) row_weight[selected[i]] = w[i];
  }

  const at::ScalarType score = ScoreDType(decoder_->compute_dtype());
  const auto sopts = at::TensorOptions().dtype(score).device(decoder_->device());
  const auto lopts = at::TensorOptions().dtype(at::kLong).device(decoder_->device());
  at::Tensor sums = at::zeros({kSlots}, sopts);
  std::vector<float> logprobs(N);
  const auto micro = MicroBatches(batch, selected, std::max<int64_t>(1, o.micro_batch_tokens));

  // Logit chunks: the device profile's size (src/model/device.ts), or the caller's.
  const int64_t chunk_bytes = o.chunk_bytes;

  // Gradient checkpointing: each decoder layer keeps only its input and is recomputed in backward.
  model::Decoder::LayerRunner runner;
  if (o.gradient_checkpointing && o.with_grad) {
    runner = [](const model::Decoder::LayerFn& layer, const at::Tensor& x) { return Checkpointed(layer, x); };
  }

  for (const auto& rows : micro) {
    const Micro m = Build(batch, rows, tok_begin, out_begin, row_weight);
    if (m.flat.empty()) continue;
    const at::Device dev = decoder_->device();
    const at::Tensor ids = m.ids.to(dev);
    const at::Tensor positions = m.positions.to(dev);
    const at::Tensor mask = m.mask.defined() ? m.mask.to(dev) : m.mask;
    const at::Tensor flat = at::tensor(m.flat, at::kLong).to(lopts);
    const at::Tensor targets = at::tensor(m.targets, at::kLong).to(lopts);
    // The reference's log-probs of the same tokens, before the policy's forward so that its activations are freed.
    at::Tensor ref_lp;
    if (policy && reference_pass) {
      at::NoGradGuard frozen;
      const at::Tensor rh = o.reference->Hidden(ids, positions, mask);
      ref_lp = ChunkedTokenScores(rh.reshape({-1, rh.size(-1)}).index_select(0, flat), o.reference->LmHeadWeight(), targets, L.temperature,
                                  false, chunk_bytes)
                   .logprobs.to(score);
    }
    const at::Tensor hidden = decoder_->Hidden(ids, positions, mask, nullptr, runner);
    const at::Tensor h = hidden.reshape({-1, hidden.size(-1)}).index_select(0, flat);
    at::Tensor head = params.at(decoder_->LmHeadName());
    if (head.scalar_type() != decoder_->compute_dtype()) head = head.to(decoder_->compute_dtype());
    const bool want_entropy = policy;
    const TokenScores s = o.chunked ? ChunkedTokenScores(h, head, targets, L.temperature, want_entropy, chunk_bytes)
                                    : FullTokenScores(h, head, targets, L.temperature, want_entropy);
    const at::Tensor lp = s.logprobs;
    const at::Tensor w = at::tensor(m.weight, at::kDouble).to(sopts);
    {
      const at::Tensor lp_cpu = lp.detach().to(at::kCPU, at::kFloat).contiguous();
      const float* p = lp_cpu.data_ptr<float>();
      for (size_t i = 0; i < m.out.size(); ++i) logprobs[m.out[i]] = p[i];
    }

    at::Tensor loss;
    std::vector<at::Tensor> parts(kSlots, at::zeros({}, sopts));
    if (!policy) {
      loss = -(lp * w).sum();
    } else {
      const at::Tensor adv = Column(batch.advantages, m.token, sopts);
      const at::Tensor old = batch.old_logprobs.empty() ? lp.detach() : Column(batch.old_logprobs, m.token, sopts);
      const PolicyLossTerms pg = DualClipPolicyLoss(lp, old, adv, L.clip_low, L.clip_high, L.dual_clip);
      const at::Tensor pg_loss = (pg.pg * w).sum();
      const at::Tensor ent_agg = (s.entropy * w).sum();
      loss = pg_loss - L.entropy_coef * ent_agg;
      parts[kPg] = pg_loss.detach();
      parts[kEntAgg] = ent_agg.detach();
      parts[kEntSum] = s.entropy.detach().sum();
      parts[kApproxKlSum] = (old - lp.detach()).sum();
      parts[kClipSum] = pg.clipped.to(score).sum();
      parts[kDualSum] = pg.dual.to(score).sum();
      if (use_kl) {
        const at::Tensor ref = ref_lp.defined() ? ref_lp : Column(batch.ref_logprobs, m.token, sopts);
        const at::Tensor kl_agg = (KlPenalty(lp, ref, L.kl) * w).sum();
        loss = loss + L.kl_coef * kl_agg;
        parts[kKlAgg] = kl_agg.detach();
      }
      if (use_value) {
        const at::Tensor v = at::linear(h.to(score), params.at(kHeadWeight), params.at(kHeadBias)).squeeze(-1);
        const ValueLossTerms vf =
            ClippedValueLoss(v, Column(batch.old_values, m.token, sopts), Column(batch.returns, m.token, sopts), L.value_clip);
        const at::Tensor vf_agg = (vf.loss * w).sum();
        loss = loss + L.value_coef * vf_agg;
        parts[kVf] = vf_agg.detach();
        parts[kVfClipSum] = vf.clipped.to(score).sum();
      }
    }
    parts[kLoss] = loss.detach();
    sums.add_(at::stack(parts));
    if (o.with_grad) loss.backward();
  }

  if (data_parallel) {
    // Every rank reduces the same tensors in the same (name) order; a parameter this rank's rows left without a
    // gradient contributes zeros.
    if (o.with_grad) {
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

  StepResult out;
  const at::Tensor host = sums.to(at::kCPU, at::kDouble);
  const double* v = host.data_ptr<double>();
  const double n = std::max<double>(1.0, global_tokens);
  out.metrics.emplace_back("loss", v[kLoss]);
  if (policy) {
    out.metrics.emplace_back("pgLoss", v[kPg]);
    out.metrics.emplace_back("entropy", v[kEntSum] / n);
    out.metrics.emplace_back("entropyLoss", v[kEntAgg]);
    out.metrics.emplace_back("approxKl", v[kApproxKlSum] / n);
    out.metrics.emplace_back("clipFrac", v[kClipSum] / n);
    out.metrics.emplace_back("dualClipFrac", v[kDualSum] / n);
    if (use_kl) out.metrics.emplace_back("klLoss", v[kKlAgg]);
    if (use_value) {
      out.metrics.emplace_back("valueLoss", v[kVf]);
      out.metrics.emplace_back("valueClipFrac", v[kVfClipSum] / n);
    }
  }
  out.metrics.emplace_back("tokens", global_tokens);
  out.metrics.emplace_back("rows", global_rows);
  out.metrics.emplace_back("microBatches", static_cast<double>(micro.size()));
  out.logprobs = std::move(logprobs);

  if (o.with_grad) {
    if (o.return_grads) {
      for (auto& [name, p] : params) {
        if (p.grad().defined()) out.grads[name] = p.grad().detach().clone();
      }
    }
    const double norm = ClipGradNorm(params, o.update ? o.max_grad_norm : 0.0);
    out.metrics.emplace_back("gradNorm", norm);
    if (o.update) {
      if (!std::isfinite(norm)) {
        Fail("E_TRAIN", "train step: the gradient norm is not finite (" + std::to_string(norm) +
                            "); parameters were left unchanged. Lower the learning rate or check the advantages");
      }
      adam_.Step(params, o.lr);
      decoder_->ParametersChanged();
      out.metrics.emplace_back("lr", o.lr);
    }
  }
  out.metrics.emplace_back("step", static_cast<double>(adam_.step()));
  return out;
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

void Optimizer::Save(const std::string& path, const std::map<std::string, std::string>& extra_metadata) {
  at::NoGradGuard no_grad;
  if (value_head_) EnsureValueHead();  // saved even before the first step, so load() finds it
  auto items = adam_.StateTensors();
  for (const auto& [name, t] : head_) items.emplace_back(name, t);
  auto metadata = adam_.StateMetadata();
  metadata["value_head"] = value_head_ ? "1" : "0";
  for (const auto& [k, v] : extra_metadata) metadata.emplace(k, v);
  model::WriteSafetensors(path, items, at::ScalarType::Undefined, metadata);
}

void Optimizer::Load(const std::string& path) {
  at::NoGradGuard no_grad;
  const model::SafetensorsFile file = model::SafetensorsFile::Open(path);
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
  adam_.Restore(tensors, file.metadata(), params, path);
  decoder_->ParametersChanged();
}

}  // namespace lamer::train
