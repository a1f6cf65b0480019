#include "model/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>

#include "bridge/errors.h"
#include "bridge/tensor.h"
#include "model/safetensors.h"

namespace lamer::model {

namespace {

std::string ShapeText(at::IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Checks the checkpoint's tensors against the names and shapes the config implies and converts them to the
// parameter dtype on the device. Every parameter is a copy, never a view of the mapped file: a private mapping still
// reads the file's pages until they are written, so a checkpoint truncated or overwritten while the model is loaded
// would kill the process (SIGBUS) at its next forward. The copy costs one pass over the weights at load, and no
// memory beyond the parameters themselves: the mapping is released once loading ends.
std::map<std::string, at::Tensor> ParametersFrom(CheckpointTensors& ckpt, const DecoderConfig& c, at::Device device,
                                                 at::ScalarType param_dtype, const std::string& dir) {
  // Every layer has at least 9 tensors: a config.json whose layer count the files cannot hold is refused before
  // anything that scales with it is built.
  if (c.num_hidden_layers < 1 || static_cast<uint64_t>(c.num_hidden_layers) > ckpt.tensors.size() / 9) {
    Fail("E_CHECKPOINT", dir + ": config.json says " + std::to_string(c.num_hidden_layers) + " layers, but the checkpoint holds " +
                             std::to_string(ckpt.tensors.size()) + " tensors (at least 9 per layer)");
  }
  std::map<std::string, at::Tensor> params;
  for (const auto& [name, shape] : ExpectedParameters(c)) {
    auto it = ckpt.tensors.find(name);
    if (it == ckpt.tensors.end()) {
      Fail("E_CHECKPOINT", dir + ": missing tensor '" + name + "' (expected shape " + ShapeText(shape) + " for a " + c.model_type +
                               " model with this config.json)");
    }
    const at::Tensor& t = it->second;
    const std::string file = ckpt.file_of[name];
    if (t.sizes() != at::IntArrayRef(shape)) {
      Fail("E_CHECKPOINT",
           file + ": tensor '" + name + "': expected shape " + ShapeText(shape) + " from config.json, found " + ShapeText(t.sizes()));
    }
    if (!at::isFloatingType(t.scalar_type())) {
      Fail("E_CHECKPOINT",
           file + ": tensor '" + name + "': expected a floating dtype (F32, F16, BF16), found " + DTypeName(t.scalar_type()));
    }
    at::Tensor p = t.to(device, param_dtype);
    if (p.is_alias_of(t)) p = p.clone();
    params.emplace(name, std::move(p));
  }
  for (const auto& [name, t] : ckpt.tensors) {
    if (params.count(name)) continue;
    // Tied checkpoints sometimes still carry lm_head.weight (transformers ignores it); old Llama files carry the
    // RoPE buffer. Anything else means the config and the weights describe different models.
    if (name == "lm_head.weight" && c.tie_word_embeddings) {
      if (t.sizes() != at::IntArrayRef({c.vocab_size, c.hidden_size})) {
        Fail("E_CHECKPOINT", ckpt.file_of[name] + ": tensor 'lm_head.weight': expected shape " + ShapeText({c.vocab_size, c.hidden_size}) +
                                 " (ignored with tied embeddings, but a different shape means another model), found " +
                                 ShapeText(t.sizes()));
      }
      continue;
    }
    if (name.size() > 20 && name.compare(name.size() - 20, 20, "rotary_emb.inv_freq") == 0) continue;
    Fail("E_CHECKPOINT", ckpt.file_of[name] + ": unexpected tensor '" + name + "' (not part of a " + c.model_type + " model with " +
                             std::to_string(c.num_hidden_layers) + " layers as config.json describes)");
  }
  return params;
}

}  // namespace

std::map<std::string, at::Tensor> LoadParameters(const std::string& dir, const DecoderConfig& c, at::Device device,
                                                 at::ScalarType param_dtype) {
  CheckpointTensors ckpt = ReadCheckpointTensors(dir);
  return ParametersFrom(ckpt, c, device, param_dtype, dir);
}

std::map<std::string, at::Tensor> InitParameters(const DecoderConfig& c, at::Device device, at::ScalarType param_dtype, uint64_t seed,
                                                 double std) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::map<std::string, at::Tensor> params;
  for (const auto& [name, shape] : ExpectedParameters(c)) {
    at::Tensor t;
    const bool is_norm = name.find("norm.weight") != std::string::npos;
    const bool is_bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    if (is_norm)
      t = at::ones(shape, at::kFloat);
    else if (is_bias)
      t = at::zeros(shape, at::kFloat);
    else
      t = at::normal(0.0, std, shape, gen, at::kFloat);
    params.emplace(name, t.to(device, param_dtype));
  }
  return params;
}

}  // namespace lamer::model
