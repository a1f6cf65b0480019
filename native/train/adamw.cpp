#include "train/adamw.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/_fused_adamw.h>

#include <cmath>

#include "bridge/errors.h"

namespace lamer::train {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool LowPrecision(const at::Tensor& t) { return t.scalar_type() == at::kBFloat16 || t.scalar_type() == at::kHalf; }

std::string Shape(at::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

bool DecaysWeight(const std::string& name) { return !(EndsWith(name, "norm.weight") || EndsWith(name, ".bias")); }

void AdamW::Step(std::map<std::string, at::Tensor>& params, double lr) {
  at::NoGradGuard no_grad;
  ++step_;
  const double beta1 = options_.beta1, beta2 = options_.beta2;
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(step_));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(step_));
  const double step_size = lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  // On CUDA the update of every tensor of a group (with or without weight decay) is one fused multi-tensor kernel
  // (torch's _fused_adamw_, the same update in fp32); on the CPU the separate operators below, whose results the
  // default job's figures were measured with.
  struct Group {
    std::vector<at::Tensor> w, g, m, v;
    std::vector<std::pair<at::Tensor, at::Tensor>> copies;  // low-precision parameter <- its fp32 master
  };
  Group fused[2];  // [no weight decay, weight decay]
  for (auto& [name, p] : params) {
    const at::Tensor& g_raw = p.grad();
    if (!g_raw.defined()) continue;
    State& s = state_[name];
    const bool low = LowPrecision(p);
    if (!s.exp_avg.defined()) {
      const auto opts = p.options().dtype(low ? at::kFloat : p.scalar_type());
      s.exp_avg = at::zeros(p.sizes(), opts);
      s.exp_avg_sq = at::zeros(p.sizes(), opts);
      if (low && !s.master.defined()) s.master = p.detach().to(at::kFloat);
    }
    at::Tensor w = low ? s.master : p.detach();
    const at::Tensor g = low ? g_raw.to(at::kFloat) : g_raw;
    const bool decays = DecaysWeight(name);
    if (p.is_cuda() && w.scalar_type() == at::kFloat) {
      Group& group = fused[decays ? 1 : 0];
      group.w.push_back(w);
      group.g.push_back(g);
      group.m.push_back(s.exp_avg);
      group.v.push_back(s.exp_avg_sq);
      if (low) group.copies.emplace_back(p.detach(), w);
      continue;
    }
    const double wd = decays ? options_.weight_decay : 0.0;
    if (wd != 0) w.mul_(1 - lr * wd);
    s.exp_avg.lerp_(g, 1 - beta1);
    s.exp_avg_sq.mul_(beta2).addcmul_(g, g, 1 - beta2);
    const at::Tensor denom = (s.exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(options_.eps);
    w.addcdiv_(s.exp_avg, denom, -step_size);
    if (low) p.detach().copy_(w);
  }
  for (int decays = 0; decays < 2; ++decays) {
    Group& group = fused[decays];
    if (group.w.empty()) continue;
    // The step count the kernel's bias corrections read (one tensor for every parameter of the group).
    const at::Tensor step = at::full({}, static_cast<double>(step_), group.w[0].options());
    const std::vector<at::Tensor> steps(group.w.size(), step);
    at::_fused_adamw_(group.w, group.g, group.m, group.v, {}, steps, lr, beta1, beta2, decays ? options_.weight_decay : 0.0, options_.eps,
                      /*amsgrad=*/false, /*maximize=*/false, std::nullopt, std::nullopt);
    for (auto& [param, master] : group.copies) param.copy_(master);
  }
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

std::map<std::string, std::string> AdamW::StateMetadata() const {
  auto num = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  return {{"optimizer", "adamw"},         {"step", std::to_string(step_)}, {"beta1", num(options_.beta1)},
          {"beta2", num(options_.beta2)}, {"eps", num(options_.eps)},      {"weight_decay", num(options_.weight_decay)}};
}

int64_t StateFileStep(const std::map<std::string, std::string>& metadata, const std::string& file) {
  auto meta = [&](const char* key) -> std::string {
    auto it = metadata.find(key);
    if (it == metadata.end()) Fail("E_CHECKPOINT", file + ": metadata '" + key + "' missing (not an optimizer state file?)");
    return it->second;
  };
  if (meta("optimizer") != "adamw") Fail("E_CHECKPOINT", file + ": metadata 'optimizer' is '" + meta("optimizer") + "', expected 'adamw'");
  try {
    return std::stoll(meta("step"));
  } catch (const std::exception&) {
    Fail("E_CHECKPOINT", file + ": metadata 'step' is not an integer: '" + meta("step") + "'");
  }
}

void AdamW::Restore(const std::map<std::string, at::Tensor>& tensors, const std::map<std::string, std::string>& metadata,
                    std::map<std::string, at::Tensor>& params, const std::string& file) {
  const int64_t step = StateFileStep(metadata, file);
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
    const at::ScalarType want = LowPrecision(p->second) ? at::kFloat : p->second.scalar_type();
    at::Tensor copy = t.to(p->second.device(), want, /*non_blocking=*/false, /*copy=*/true);
    State& s = state[name];
    (kind == "exp_avg" ? s.exp_avg : kind == "exp_avg_sq" ? s.exp_avg_sq : s.master) = copy;
  }
  for (auto& [name, s] : state) {
    if (!s.exp_avg.defined() || !s.exp_avg_sq.defined()) {
      Fail("E_CHECKPOINT", file + ": parameter '" + name + "' has only one of exp_avg / exp_avg_sq");
    }
    if (s.master.defined()) {
      at::NoGradGuard no_grad;
      params.at(name).detach().copy_(s.master);
    }
  }
  state_ = std::move(state);
  step_ = step;
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
