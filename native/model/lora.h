// LoRA adapters in peft's layout (SPEC §9, docs/lora.md): a projection `W` of a decoder layer becomes
// W x + scale * B (A x), with A [r, in] and B [out, r] trained and W frozen. Tensors are keyed by the names peft writes
// to adapter_model.safetensors ("base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight"), so an adapter
// loads and saves without renaming, and any subset of layers and projections can carry one.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/decoder.h"

namespace lamer::model {

// The seven projections of a layer LoRA may adapt, by the module names peft and transformers use.
const std::vector<std::string>& LoraModuleNames();

struct LoraOptions {
  int64_t r = 0;
  double alpha = 0;
  double dropout = 0;   // on the adapter's input, in training forwards only
  bool rslora = false;  // scale alpha / sqrt(r) instead of alpha / r
  // Module paths carrying an adapter ("model.layers.3.self_attn.q_proj").
  std::vector<std::string> modules;

  double scale() const;
};

// "model.layers.<i>.<self_attn|mlp>.<module>" of a module name.
std::string LoraModulePath(int64_t layer, const std::string& module);
// peft's key of a module's A or B ('A' | 'B').
std::string LoraKey(const std::string& module_path, char which);
// Input and output size of a module path's projection; E_ARG for a path that is no adaptable projection of `c`.
std::pair<int64_t, int64_t> LoraModuleShape(const DecoderConfig& c, const std::string& module_path);
// Every tensor `o` implies, by peft key: A [r, in], B [out, r].
std::vector<std::pair<std::string, std::vector<int64_t>>> ExpectedLoraParameters(const DecoderConfig& c, const LoraOptions& o);
// peft's initialisation (init_lora_weights=True): A ~ kaiming_uniform(a = sqrt(5)) = U(-1/sqrt(in), 1/sqrt(in)),
// B = 0, drawn on the CPU from one seeded generator in module order.
std::map<std::string, at::Tensor> InitLoraParameters(const DecoderConfig& c, const LoraOptions& o, at::Device device, at::ScalarType dtype,
                                                     uint64_t seed);

}  // namespace lamer::model
