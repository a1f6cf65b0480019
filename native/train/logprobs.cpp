// Chunked log-probs/entropy as a custom autograd function, and gradient checkpointing. The only file of the train
// concern that needs torch's autograd API (custom functions, reentrant backward).
#include "train/logprobs.h"

#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

#include "bridge/errors.h"

namespace lamer::train {

namespace ag = torch::autograd;

at::ScalarType ScoreDType(at::ScalarType compute_dtype) { return compute_dtype == at::kDouble ? at::kDouble : at::kFloat; }

namespace {

// Rows per chunk so that about three [rows, V] score-dtype buffers fit in `chunk_bytes`.
int64_t ChunkRows(int64_t vocab, at::ScalarType score, int64_t chunk_bytes) {
  const int64_t per_row = vocab * static_cast<int64_t>(at::elementSize(score)) * 3;
  return std::max<int64_t>(1, chunk_bytes / std::max<int64_t>(1, per_row));
}

at::Tensor ScaledLogits(const at::Tensor& h, const at::Tensor& weight, double temperature, at::ScalarType score) {
  at::Tensor z = at::linear(h, weight).to(score);
  if (temperature != 1.0) z.div_(temperature);
  return z;
}

struct ChunkedScoresFn : public ag::Function<ChunkedScoresFn> {
  static ag::variable_list forward(ag::AutogradContext* ctx, const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                   double temperature, bool with_entropy, int64_t rows) {
    const at::ScalarType score = ScoreDType(hidden.scalar_type());
    const int64_t n = hidden.size(0);
    const auto opts = at::TensorOptions().dtype(score).device(hidden.device());
    at::Tensor logz = at::empty({n}, opts);
    at::Tensor logp = at::empty({n}, opts);
    at::Tensor entropy = with_entropy ? at::empty({n}, opts) : at::empty({0}, opts);
    for (int64_t s = 0; s < n; s += rows) {
      const int64_t len = std::min(rows, n - s);
      at::Tensor z = ScaledLogits(hidden.narrow(0, s, len), weight, temperature, score);
      const at::Tensor lz = at::logsumexp(z, {-1});
      logz.narrow(0, s, len).copy_(lz);
      logp.narrow(0, s, len).copy_(z.gather(1, targets.narrow(0, s, len).unsqueeze(1)).squeeze(1) - lz);
      if (with_entropy) {
        // H = logZ - sum(p z), with p = softmax(z).
        const at::Tensor pz = (at::softmax(z, -1) * z).sum(-1);
        entropy.narrow(0, s, len).copy_(lz - pz);
      }
    }
    ctx->save_for_backward({hidden, weight, targets, logz});
    ctx->saved_data["temperature"] = temperature;
    ctx->saved_data["rows"] = rows;
    ctx->saved_data["entropy"] = with_entropy;
    return {logp, entropy};
  }

  static ag::variable_list backward(ag::AutogradContext* ctx, ag::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& hidden = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& targets = saved[2];
    const at::Tensor& logz = saved[3];
    const double temperature = ctx->saved_data["temperature"].toDouble();
    const int64_t rows = ctx->saved_data["rows"].toInt();
    const bool with_entropy = ctx->saved_data["entropy"].toBool();
    const at::ScalarType score = ScoreDType(hidden.scalar_type());
    const int64_t n = hidden.size(0);
    const at::Tensor g_logp = grads[0].defined() ? grads[0] : at::zeros({n}, logz.options());
    const at::Tensor g_ent = with_entropy && grads[1].defined() && grads[1].numel() == n ? grads[1] : at::Tensor();

    const bool need_h = ctx->needs_input_grad(0);
    const bool need_w = ctx->needs_input_grad(1);
    at::Tensor grad_h = need_h ? at::empty_like(hidden) : at::Tensor();
    // The head's gradient sums over every chunk: accumulate it in the score dtype, not in bf16.
    at::Tensor grad_w = need_w ? at::zeros(weight.sizes(), weight.options().dtype(score)) : at::Tensor();
    for (int64_t s = 0; s < n; s += rows) {
      const int64_t len = std::min(rows, n - s);
      const at::Tensor h = hidden.narrow(0, s, len);
      const at::Tensor gl = g_logp.narrow(0, s, len).unsqueeze(1);
      // lp = log softmax(z); p = exp(lp).
      at::Tensor lp = ScaledLogits(h, weight, temperature, score);
      lp.sub_(logz.narrow(0, s, len).unsqueeze(1));
      at::Tensor g = lp.exp();  // p
      // d logp[target] / dz = onehot - p;  dH / dz = -p (log p + H).
      if (g_ent.defined()) {
        const at::Tensor H = -(g * lp).sum(-1, /*keepdim=*/true);
        lp.add_(H).mul_(g_ent.narrow(0, s, len).unsqueeze(1)).add_(gl);  // ge (lp + H) + gl
        g.mul_(lp).neg_();
      } else {
        g.mul_(gl).neg_();
      }
      g.scatter_add_(1, targets.narrow(0, s, len).unsqueeze(1), gl);
      if (temperature != 1.0) g.div_(temperature);
      lp = at::Tensor();
      const at::Tensor gc = g.to(hidden.scalar_type());
      if (need_h) grad_h.narrow(0, s, len).copy_(at::mm(gc, weight));
      if (need_w) grad_w.add_(at::mm(gc.t(), h));
    }
    if (need_w) grad_w = grad_w.to(weight.scalar_type());
    return {grad_h, grad_w, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

void CheckScoreArgs(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, double temperature) {
  if (!(temperature > 0)) Fail("E_ARG", "temperature must be > 0, found " + std::to_string(temperature));
  if (hidden.dim() != 2 || weight.dim() != 2 || hidden.size(1) != weight.size(1)) {
    Fail("E_ARG", "token scores: hidden [N, H] and weight [V, H] expected");
  }
  if (targets.dim() != 1 || targets.size(0) != hidden.size(0)) Fail("E_ARG", "token scores: one target per hidden row expected");
}

}  // namespace

TokenScores ChunkedTokenScores(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, double temperature,
                               bool with_entropy, int64_t chunk_bytes) {
  CheckScoreArgs(hidden, weight, targets, temperature);
  const int64_t rows = ChunkRows(weight.size(0), ScoreDType(hidden.scalar_type()), chunk_bytes);
  const at::Tensor t = targets.to(hidden.device(), at::kLong).contiguous();
  auto out = ChunkedScoresFn::apply(hidden, weight, t, temperature, with_entropy, rows);
  return {out[0], with_entropy ? out[1] : at::Tensor()};
}

TokenScores FullTokenScores(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, double temperature,
                            bool with_entropy) {
  CheckScoreArgs(hidden, weight, targets, temperature);
  at::Tensor z = at::linear(hidden, weight).to(ScoreDType(hidden.scalar_type()));
  if (temperature != 1.0) z = z / temperature;
  const at::Tensor lsm = at::log_softmax(z, -1);
  TokenScores out;
  out.logprobs = lsm.gather(1, targets.to(hidden.device(), at::kLong).unsqueeze(1)).squeeze(1);
  if (with_entropy) out.entropy = -(lsm.exp() * lsm).sum(-1);
  return out;
}

namespace {

struct LayerHolder : public torch::CustomClassHolder {
  explicit LayerHolder(LayerFn f) : fn(std::move(f)) {}
  LayerFn fn;
  bool random = false;
  at::Tensor rng_state;  // the default generator's state before the forward (random layers)
};

at::Generator DefaultGenerator(const at::Tensor& x) { return at::globalContext().defaultGenerator(x.device()); }

struct CheckpointFn : public ag::Function<CheckpointFn> {
  static ag::variable_list forward(ag::AutogradContext* ctx, const at::Tensor& x, c10::intrusive_ptr<LayerHolder> holder) {
    // Custom-function forwards run without gradients, so fn keeps no graph here.
    if (holder->random) holder->rng_state = DefaultGenerator(x).get_state();
    at::Tensor y = holder->fn(x);
    ctx->save_for_backward({x});
    ctx->saved_data["fn"] = c10::IValue::make_capsule(std::move(holder));
    return {y};
  }

  static ag::variable_list backward(ag::AutogradContext* ctx, ag::variable_list grads) {
    const at::Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_(true);
    auto holder = c10::static_intrusive_pointer_cast<LayerHolder>(ctx->saved_data["fn"].toCapsule());
    at::Tensor y;
    {
      at::AutoGradMode grad_on(true);
      if (holder->random) {
        at::Generator gen = DefaultGenerator(x);
        const at::Tensor now = gen.get_state();
        gen.set_state(holder->rng_state);
        y = holder->fn(x);
        gen.set_state(now);
      } else {
        y = holder->fn(x);
      }
    }
    // Reentrant backward: accumulates into the parameters' .grad and into x.grad.
    ag::backward({y}, {grads[0]});
    return {x.grad(), at::Tensor()};
  }
};

}  // namespace

at::Tensor Checkpointed(const LayerFn& fn, const at::Tensor& x, bool random) {
  if (!at::GradMode::is_enabled()) return fn(x);
  auto holder = c10::make_intrusive<LayerHolder>(fn);
  holder->random = random;
  // A custom function's output needs an input with gradient to be part of the graph at all.
  const at::Tensor in = x.requires_grad() ? x : x.detach().requires_grad_(true);
  return CheckpointFn::apply(in, std::move(holder))[0];
}

}  // namespace lamer::train
