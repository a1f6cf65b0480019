#include "model/lora.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "bridge/errors.h"

namespace lamer::model {

const std::vector<std::string>& LoraModuleNames() {
  static const std::vector<std::string> names = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  return names;
}

double LoraOptions::scale() const { return rslora ? alpha / std::sqrt(static_cast<double>(r)) : alpha / static_cast<double>(r); }

namespace {

bool IsAttention(const std::string& module) { return module == "q_proj" || module == "k_proj" || module == "v_proj" || module == "o_proj"; }

}  // namespace

std::string LoraModulePath(int64_t layer, const std::string& module) {
  return "model.layers." + std::to_string(layer) + (IsAttention(module) ? ".self_attn." : ".mlp.") + module;
}

std::string LoraKey(const std::string& module_path, char which) {
  return "base_model.model." + module_path + (which == 'A' ? ".lora_A.weight" : ".lora_B.weight");
}

std::pair<int64_t, int64_t> LoraModuleShape(const DecoderConfig& c, const std::string& path) {
  // model.layers.<i>.<self_attn|mlp>.<module>
  const std::string prefix = "model.layers.";
  auto bad = [&]() -> std::pair<int64_t, int64_t> {
    Fail("E_ARG", "LoRA: '" + path + "' is not a projection of this model (expected model.layers.<0.." +
                      std::to_string(c.num_hidden_layers - 1) + ">.self_attn.{q,k,v,o}_proj or .mlp.{gate,up,down}_proj)");
  };
  if (path.compare(0, prefix.size(), prefix) != 0) return bad();
  size_t dot = path.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size()) return bad();
  const std::string digits = path.substr(prefix.size(), dot - prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6 || (digits.size() > 1 && digits[0] == '0'))
    return bad();
  const int64_t layer = std::stoll(digits);
  if (layer >= c.num_hidden_layers) return bad();
  const std::string module = path.substr(path.rfind('.') + 1);
  if (LoraModulePath(layer, module) != path) return bad();
  const int64_t q_out = c.num_attention_heads * c.head_dim, kv_out = c.num_key_value_heads * c.head_dim;
  if (module == "q_proj") return {c.hidden_size, q_out};
  if (module == "k_proj" || module == "v_proj") return {c.hidden_size, kv_out};
  if (module == "o_proj") return {q_out, c.hidden_size};
  if (module == "gate_proj" || module == "up_proj") return {c.hidden_size, c.intermediate_size};
  if (module == "down_proj") return {c.intermediate_size, c.hidden_size};
  return bad();
}

std::vector<std::pair<std::string, std::vector<int64_t>>> ExpectedLoraParameters(const DecoderConfig& c, const LoraOptions& o) {
  if (o.r < 1) Fail("E_ARG", "LoRA: r must be >= 1, found " + std::to_string(o.r));
  if (!(o.alpha > 0) || !std::isfinite(o.alpha)) Fail("E_ARG", "LoRA: alpha must be a finite number > 0");
  if (!(o.dropout >= 0 && o.dropout < 1)) Fail("E_ARG", "LoRA: dropout must be in [0, 1)");
  if (o.modules.empty()) Fail("E_ARG", "LoRA: no module to adapt");
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  for (const auto& path : o.modules) {
    const auto [in, outs] = LoraModuleShape(c, path);
    out.push_back({LoraKey(path, 'A'), {o.r, in}});
    out.push_back({LoraKey(path, 'B'), {outs, o.r}});
  }
  return out;
}

std::map<std::string, at::Tensor> InitLoraParameters(const DecoderConfig& c, const LoraOptions& o, at::Device device, at::ScalarType dtype,
                                                     uint64_t seed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::map<std::string, at::Tensor> params;
  for (const auto& [name, shape] : ExpectedLoraParameters(c, o)) {
    at::Tensor t;
    if (name.compare(name.size() - 13, 13, "lora_A.weight") == 0) {
      // kaiming_uniform_(a = sqrt(5)): gain sqrt(2 / (1 + 5)), bound gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in).
      const double bound = 1.0 / std::sqrt(static_cast<double>(shape[1]));
      t = at::empty(shape, at::kFloat).uniform_(-bound, bound, gen);
    } else {
      t = at::zeros(shape, at::kFloat);
    }
    params.emplace(name, t.to(device, dtype));
  }
  return params;
}

}  // namespace lamer::model
