#include "train/adamw.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/_fused_adamw.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bridge/errors.h"
#include "bridge/tensor.h"

namespace lamer::train {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Shape(at::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Elements updated by the separate operators at a time: their temporaries (the denominator) stay this small.
constexpr int64_t kBlock = 1ll << 22;

}  // namespace

bool DecaysWeight(const std::string& name) { return !(EndsWith(name, "norm.weight") || EndsWith(name, ".bias")); }

bool LowPrecision(at::ScalarType dtype) { return dtype == at::kBFloat16 || dtype == at::kHalf; }

void AdamWUpdate::Step(const std::vector<Slice>& slices, double lr) {
  at::NoGradGuard no_grad;
  ++step_;
  const double beta1 = options_.beta1, beta2 = options_.beta2;
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(step_));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(step_));
  const double step_size = lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  // torch.optim.AdamW's single-tensor update, operator for operator.
  auto update = [&](at::Tensor w, const at::Tensor& g, at::Tensor m, at::Tensor v, double wd) {
    if (wd != 0) w.mul_(1 - lr * wd);
    m.lerp_(g, 1 - beta1);
    v.mul_(beta2).addcmul_(g, g, 1 - beta2);
    const at::Tensor denom = (v.sqrt() / bias_correction2_sqrt).add_(options_.eps);
    w.addcdiv_(m, denom, -step_size);
  };
  struct Group {
    std::vector<at::Tensor> w, g, m, v;
    std::vector<const Slice*> low;  // slices whose low-precision parameter takes w after the kernel
  };
  Group fused[2];  // [no weight decay, weight decay]
  for (const Slice& x : slices) {
    if (x.w.is_cuda() && x.w.scalar_type() == at::kFloat) {
      Group& group = fused[x.decays ? 1 : 0];
      group.w.push_back(x.w);
      group.g.push_back(x.g);
      group.m.push_back(x.m);
      group.v.push_back(x.v);
      if (x.low.defined()) group.low.push_back(&x);
      continue;
    }
    const double wd = x.decays ? options_.weight_decay : 0.0;
    const int64_t n = x.w.numel();
    const bool flat = x.w.is_contiguous() && x.g.is_contiguous() && x.m.is_contiguous() && x.v.is_contiguous();
    if (n <= kBlock || !flat) {
      update(x.w, x.g, x.m, x.v, wd);
    } else {
      const at::Tensor w = x.w.view({-1}), g = x.g.view({-1}), m = x.m.view({-1}), v = x.v.view({-1});
      for (int64_t o = 0; o < n; o += kBlock) {
        const int64_t len = std::min(kBlock, n - o);
        update(w.narrow(0, o, len), g.narrow(0, o, len), m.narrow(0, o, len), v.narrow(0, o, len), wd);
      }
    }
    if (x.low.defined()) x.low.copy_(x.w);
  }
  for (int decays = 0; decays < 2; ++decays) {
    Group& group = fused[decays];
    if (group.w.empty()) continue;
    // The step count the kernel's bias corrections read (one tensor for every tensor of the group).
    const at::Tensor step = at::full({}, static_cast<double>(step_), group.w[0].options());
    const std::vector<at::Tensor> steps(group.w.size(), step);
    at::_fused_adamw_(group.w, group.g, group.m, group.v, {}, steps, lr, beta1, beta2, decays ? options_.weight_decay : 0.0, options_.eps,
                      /*amsgrad=*/false, /*maximize=*/false, std::nullopt, std::nullopt);
    for (const Slice* x : group.low) x->low.copy_(x->w);
  }
}

std::map<std::string, std::string> AdamWUpdate::Metadata() const {
  return {{"optimizer", "adamw"},         {"step", std::to_string(step_)}, {"beta1", Num(options_.beta1)},
          {"beta2", Num(options_.beta2)}, {"eps", Num(options_.eps)},      {"weight_decay", Num(options_.weight_decay)}};
}

void AdamW::Step(std::map<std::string, at::Tensor>& params, AdamWUpdate& update, double lr) {
  at::NoGradGuard no_grad;
  std::vector<AdamWUpdate::Slice> slices;
  for (auto& [name, p] : params) {
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    State& s = state_[name];
    const bool low = LowPrecision(p.scalar_type());
    if (!s.exp_avg.defined()) {
      const auto opts = p.options().dtype(low ? at::kFloat : p.scalar_type());
      s.exp_avg = at::zeros(p.sizes(), opts);
      s.exp_avg_sq = at::zeros(p.sizes(), opts);
      if (low && !s.master.defined()) s.master = p.detach().to(at::kFloat);
    }
    AdamWUpdate::Slice& x = slices.emplace_back();
    x.w = low ? s.master : p.detach();
    x.g = low ? g.to(at::kFloat) : g;
    x.m = s.exp_avg;
    x.v = s.exp_avg_sq;
    x.decays = DecaysWeight(name);
    if (low) x.low = p.detach();
  }
  update.Step(slices, lr);
}

std::vector<std::pair<std::string, at::Tensor>> AdamW::StateTensors() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& [name, s] : state_) {
    if (!s.exp_avg.defined()) continue;
    out.emplace_back("exp_avg." + name, s.exp_avg);
    out.emplace_back("exp_avg_sq." + name, s.exp_avg_sq);
    if (s.master.defined()) out.emplace_back("master." + name, s.master);
  }
  return out;
}

int64_t AdamW::StateBytes() const {
  int64_t n = 0;
  for (const auto& [name, s] : state_) {
    for (const at::Tensor* t : {&s.exp_avg, &s.exp_avg_sq, &s.master}) {
      if (t->defined()) n += static_cast<int64_t>(t->nbytes());
    }
  }
  return n;
}

int64_t StateFileStep(const std::map<std::string, std::string>& metadata, const std::string& file) {
  auto meta = [&](const char* key) -> std::string {
    auto it = metadata.find(key);
    if (it == metadata.end()) Fail("E_CHECKPOINT", file + ": metadata '" + key + "' missing (not an optimizer state file?)");
    return it->second;
  };
  if (meta("optimizer") != "adamw") Fail("E_CHECKPOINT", file + ": metadata 'optimizer' is '" + meta("optimizer") + "', expected 'adamw'");
  const std::string step = meta("step");
  if (step.empty() || step.size() > 15 || step.find_first_not_of("0123456789") != std::string::npos) {
    Fail("E_CHECKPOINT", file + ": metadata 'step' is '" + step + "', expected a non-negative integer (decimal digits only)");
  }
  return std::stoll(step);
}

void CheckStateTensor(const std::string& file, const std::string& key, const at::Tensor& t) {
  if (!at::isFloatingType(t.scalar_type())) {
    Fail("E_CHECKPOINT", file + ": tensor '" + key + "' is of dtype " + DTypeName(t.scalar_type()) +
                             "; optimizer moments and master copies are floating point");
  }
  at::NoGradGuard no_grad;
  const int64_t bad = t.isfinite().logical_not().sum().item<int64_t>();
  if (bad > 0) {
    Fail("E_CHECKPOINT", file + ": tensor '" + key + "' holds " + std::to_string(bad) + " NaN or infinite value(s) of " +
                             std::to_string(t.numel()) + "; the optimizer state is corrupt");
  }
  if (key.compare(0, 11, "exp_avg_sq.") == 0) {
    const int64_t neg = (t < 0).sum().item<int64_t>();
    if (neg > 0) {
      Fail("E_CHECKPOINT", file + ": tensor '" + key + "' holds " + std::to_string(neg) +
                               " negative value(s); a second moment (a mean of squares) is never negative");
    }
  }
}

void AdamW::Restore(const std::map<std::string, at::Tensor>& tensors, std::map<std::string, at::Tensor>& params, const std::string& file) {
  std::map<std::string, State> state;
  for (const auto& [key, t] : tensors) {
    const size_t dot = key.find('.');
    const std::string kind = dot == std::string::npos ? key : key.substr(0, dot);
    const std::string name = dot == std::string::npos ? "" : key.substr(dot + 1);
    if (kind != "exp_avg" && kind != "exp_avg_sq" && kind != "master") continue;  // other sections (value head)
    auto p = params.find(name);
    if (p == params.end()) {
      Fail("E_CHECKPOINT", file + ": tensor '" + key + "' is for a parameter '" + name + "' this model does not have");
    }
    if (t.sizes() != p->second.sizes()) {
      Fail("E_CHECKPOINT", file + ": tensor '" + key + "': expected shape " + Shape(p->second.sizes()) + ", found " + Shape(t.sizes()));
    }
    CheckStateTensor(file, key, t);
    const at::ScalarType want = LowPrecision(p->second.scalar_type()) ? at::kFloat : p->second.scalar_type();
    at::Tensor copy = t.to(p->second.device(), want, /*non_blocking=*/false, /*copy=*/true);
    State& s = state[name];
    (kind == "exp_avg" ? s.exp_avg : kind == "exp_avg_sq" ? s.exp_avg_sq : s.master) = copy;
  }
  for (auto& [name, s] : state) {
    if (!s.exp_avg.defined() || !s.exp_avg_sq.defined()) {
      Fail("E_CHECKPOINT", file + ": parameter '" + name + "' has only one of exp_avg / exp_avg_sq");
    }
  }
  // The other direction: a file with moments holds them for every trained parameter (each has a gradient at every
  // update), so a parameter without any is a state of another parameter set.
  if (!state.empty()) {
    for (const auto& [name, p] : params) {
      if (!state.count(name)) {
        Fail("E_CHECKPOINT",
             file + ": no optimizer state for parameter '" + name + "' of this model (an optimizer state of other parameters)");
      }
    }
  }
  for (auto& [name, s] : state) {
    if (s.master.defined()) {
      at::NoGradGuard no_grad;
      params.at(name).detach().copy_(s.master);
    }
  }
  state_ = std::move(state);
}

double ClipGradNorm(std::map<std::string, at::Tensor>& params, double max_norm) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> norms;
  for (auto& [name, p] : params) {
    if (p.grad().defined()) norms.push_back(at::linalg_vector_norm(p.grad(), 2));
  }
  if (norms.empty()) return 0.0;
  const at::Tensor total = at::linalg_vector_norm(at::stack(norms), 2);
  if (max_norm > 0) {
    const at::Tensor coef = at::clamp(max_norm / (total + 1e-6), std::nullopt, 1.0);
    for (auto& [name, p] : params) {
      if (p.grad().defined()) p.mutable_grad().mul_(coef.to(p.grad().scalar_type()));
    }
  }
  return total.item<double>();
}

}  // namespace lamer::train
