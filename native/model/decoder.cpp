// The decoder, written to be read beside the checkpoint: every parameter is fetched by its checkpoint name.
//
//   x = embed_tokens[ids]
//   for each layer:  h = input_layernorm(x)
//                    q, k, v = q_proj(h), k_proj(h), v_proj(h)            (Qwen2: with biases)
//                    q, k = q_norm(q), k_norm(k)                          (Qwen3: per head, before RoPE)
//                    q, k = RoPE(q), RoPE(k)                              (llama3 scaling of inv_freq when set)
//                    x += o_proj(softmax(q k^T / sqrt(head_dim) + mask) v) (k, v shared by head groups: GQA)
//                    h = post_attention_layernorm(x)
//                    x += down_proj(silu(gate_proj(h)) * up_proj(h))
//   logits = lm_head(norm(x))                                             (tied: lm_head = embed_tokens)
#include "model/decoder.h"

#include <cstdlib>

#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "bridge/errors.h"
#include "model/attention.h"
#include "model/batching.h"
#include "model/fused_ops.h"
#include "model/lora.h"

namespace lamer::model {

namespace {

std::string LayerPrefix(int64_t i) { return "model.layers." + std::to_string(i) + "."; }

}  // namespace

std::vector<std::pair<std::string, std::vector<int64_t>>> ExpectedParameters(const DecoderConfig& c) {
  const int64_t q_out = c.num_attention_heads * c.head_dim;
  const int64_t kv_out = c.num_key_value_heads * c.head_dim;
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  out.push_back({"model.embed_tokens.weight", {c.vocab_size, c.hidden_size}});
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = LayerPrefix(i);
    out.push_back({p + "input_layernorm.weight", {c.hidden_size}});
    out.push_back({p + "self_attn.q_proj.weight", {q_out, c.hidden_size}});
    out.push_back({p + "self_attn.k_proj.weight", {kv_out, c.hidden_size}});
    out.push_back({p + "self_attn.v_proj.weight", {kv_out, c.hidden_size}});
    if (c.qkv_bias) {
      out.push_back({p + "self_attn.q_proj.bias", {q_out}});
      out.push_back({p + "self_attn.k_proj.bias", {kv_out}});
      out.push_back({p + "self_attn.v_proj.bias", {kv_out}});
    }
    out.push_back({p + "self_attn.o_proj.weight", {c.hidden_size, q_out}});
    if (c.o_bias) out.push_back({p + "self_attn.o_proj.bias", {c.hidden_size}});
    if (c.qk_norm) {
      out.push_back({p + "self_attn.q_norm.weight", {c.head_dim}});
      out.push_back({p + "self_attn.k_norm.weight", {c.head_dim}});
    }
    out.push_back({p + "post_attention_layernorm.weight", {c.hidden_size}});
    out.push_back({p + "mlp.gate_proj.weight", {c.intermediate_size, c.hidden_size}});
    out.push_back({p + "mlp.up_proj.weight", {c.intermediate_size, c.hidden_size}});
    out.push_back({p + "mlp.down_proj.weight", {c.hidden_size, c.intermediate_size}});
    if (c.mlp_bias) {
      out.push_back({p + "mlp.gate_proj.bias", {c.intermediate_size}});
      out.push_back({p + "mlp.up_proj.bias", {c.intermediate_size}});
      out.push_back({p + "mlp.down_proj.bias", {c.hidden_size}});
    }
  }
  out.push_back({"model.norm.weight", {c.hidden_size}});
  if (!c.tie_word_embeddings) out.push_back({"lm_head.weight", {c.vocab_size, c.hidden_size}});
  return out;
}

at::Tensor RopeInvFreq(const DecoderConfig& c) {
  // transformers: 1 / base ** (arange(0, dim, 2).float() / dim), in float32.
  const at::Tensor exponent = at::arange(0, c.head_dim, 2, at::kLong).to(at::kFloat) / static_cast<double>(c.head_dim);
  at::Tensor inv_freq = 1.0 / at::pow(c.rope_theta, exponent);
  if (c.rope_factor > 0) {
    // llama3: long wavelengths are slowed by `factor`, short ones kept, the band between blended smoothly.
    const double old_len = static_cast<double>(c.rope_original_max_position_embeddings);
    const double low_freq_wavelen = old_len / c.rope_low_freq_factor;
    const double high_freq_wavelen = old_len / c.rope_high_freq_factor;
    const at::Tensor wavelen = 2 * M_PI / inv_freq;
    at::Tensor scaled = at::where(wavelen > low_freq_wavelen, inv_freq / c.rope_factor, inv_freq);
    const at::Tensor smooth = (old_len / wavelen - c.rope_low_freq_factor) / (c.rope_high_freq_factor - c.rope_low_freq_factor);
    const at::Tensor smoothed = (1 - smooth) * scaled / c.rope_factor + smooth * scaled;
    const at::Tensor medium = at::logical_not(wavelen < high_freq_wavelen) & at::logical_not(wavelen > low_freq_wavelen);
    inv_freq = at::where(medium, smoothed, scaled);
  }
  return inv_freq;
}

Decoder::Decoder(DecoderConfig config, std::map<std::string, at::Tensor> params, at::Device device, at::ScalarType compute_dtype)
    : config_(std::move(config)), params_(std::move(params)), device_(device), compute_dtype_(compute_dtype) {
  inv_freq_ = RopeInvFreq(config_).to(device_);
  FuseProjections();
  // torch's sdpa would pick cuDNN's attention first on Hopper: it builds an execution plan for every new shape, and
  // prefill and training shapes change nearly every call; flash (unmasked bf16) and memory-efficient (masked) serve
  // every call here. LAMER_SDPA_CUDNN=1 lets sdpa use cuDNN anyway (docs/engine.md). A process-wide setting.
  if (device_.is_cuda()) {
    const char* cudnn = std::getenv("LAMER_SDPA_CUDNN");
    at::globalContext().setSDPUseCuDNN(cudnn != nullptr && std::string(cudnn) == "1");
  }
}

at::ScalarType Decoder::param_dtype() const {
  auto it = params_.find("model.embed_tokens.weight");
  return it == params_.end() ? compute_dtype_ : it->second.scalar_type();
}

void Decoder::ParametersChanged() {
  // In place, so captured CUDA graphs that read the copies see the new values (and no memory is reallocated). The
  // copies were made by engine steps under inference mode, and inference tensors may change only inside it. A fused
  // copy is refreshed from its buffer, which the parameters are views of.
  c10::InferenceMode inference;
  for (auto it = compute_cache_.begin(); it != compute_cache_.end();) {
    const at::Tensor* source = nullptr;
    for (auto* map : {&fused_, &params_, &lora_params_}) {
      auto found = map->find(it->first);
      if (found != map->end()) {
        source = &found->second;
        break;
      }
    }
    if (source != nullptr && source->sizes() == it->second.sizes()) {
      it->second.copy_(*source);
      ++it;
    } else {
      it = compute_cache_.erase(it);
      ++storage_version_;
    }
  }
  for (auto& [key, m] : merged_) m.weight.copy_(BuildMerged(m.parts));
  if (qk_rows_.defined()) {
    c10::NoGradGuard no_grad;
    const at::Tensor rows = qk_rows_, rolled = qk_rows_rolled_;
    qk_rows_ = at::Tensor();
    const auto [fresh, fresh_rolled] = QkNormRows();
    rows.copy_(fresh);
    rolled.copy_(fresh_rolled);
    qk_rows_ = rows;
    qk_rows_rolled_ = rolled;
  }
  ++version_;
}

void Decoder::Clear() {
  params_.clear();
  fused_.clear();
  lora_.reset();
  lora_params_.clear();
  merged_.clear();
  qk_rows_ = qk_rows_rolled_ = at::Tensor();
  compute_cache_.clear();
  ++version_;
  ++storage_version_;
}

namespace {

std::string QkvName(int64_t i, const char* what) { return LayerPrefix(i) + "self_attn.qkv_proj." + what; }
std::string GateUpName(int64_t i, const char* what) { return LayerPrefix(i) + "mlp.gate_up_proj." + what; }

}  // namespace

void Decoder::FuseProjections() {
  // One buffer per group, filled from the parameters, which then become views of it (leaves of their own, so the
  // optimizer trains them as before): an update of a parameter is an update of the buffer.
  auto fuse = [this](const std::string& fused, const std::vector<std::string>& parts) {
    std::vector<at::Tensor> tensors;
    for (const auto& name : parts) tensors.push_back(params_.at(name));
    at::Tensor buffer = at::cat(tensors, 0);
    int64_t offset = 0;
    for (const auto& name : parts) {
      const int64_t rows = params_.at(name).size(0);
      params_[name] = buffer.narrow(0, offset, rows).detach();
      offset += rows;
    }
    fused_[fused] = buffer;
  };
  const DecoderConfig& c = config_;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string a = LayerPrefix(i) + "self_attn.", m = LayerPrefix(i) + "mlp.";
    for (const char* what : {"weight", "bias"}) {
      if (std::string(what) == "bias" && !c.qkv_bias) continue;
      fuse(QkvName(i, what), {a + "q_proj." + what, a + "k_proj." + what, a + "v_proj." + what});
    }
    for (const char* what : {"weight", "bias"}) {
      if (std::string(what) == "bias" && !c.mlp_bias) continue;
      fuse(GateUpName(i, what), {m + "gate_proj." + what, m + "up_proj." + what});
    }
  }
}

at::Tensor Decoder::W(const std::string& name) {
  auto it = params_.find(name);
  const at::Tensor* found = it != params_.end() ? &it->second : nullptr;
  if (found == nullptr) {
    auto adapter = lora_params_.find(name);
    if (adapter != lora_params_.end()) found = &adapter->second;
  }
  if (found == nullptr) Fail("E_DISPOSED", "model parameter '" + name + "' is gone (the model was disposed)");
  const at::Tensor& p = *found;
  if (p.scalar_type() == compute_dtype_) return p;
  // With gradients on, the cast must stay in the graph so gradients reach the fp32 master parameter.
  if (at::GradMode::is_enabled()) return p.to(compute_dtype_);
  auto cached = compute_cache_.find(name);
  if (cached == compute_cache_.end()) cached = compute_cache_.emplace(name, p.to(compute_dtype_)).first;
  return cached->second;
}

at::Tensor Decoder::Fused(const std::string& fused, const std::vector<std::string>& parts) {
  if (MergedForward() && parts[0].compare(parts[0].size() - 7, 7, ".weight") == 0) {
    for (const auto& p : parts) {
      if (lora_params_.count(LoraKey(p.substr(0, p.rfind('.')), 'A'))) return MergedWeight(fused, parts);
    }
  }
  if (at::GradMode::is_enabled()) {
    std::vector<at::Tensor> tensors;
    for (const auto& name : parts) tensors.push_back(W(name));
    return at::cat(tensors, 0);
  }
  auto it = fused_.find(fused);
  if (it == fused_.end()) Fail("E_DISPOSED", "model parameter '" + fused + "' is gone (the model was disposed)");
  if (it->second.scalar_type() == compute_dtype_) return it->second;
  auto cached = compute_cache_.find(fused);
  if (cached == compute_cache_.end()) cached = compute_cache_.emplace(fused, it->second.to(compute_dtype_)).first;
  return cached->second;
}

at::Tensor Decoder::RmsNorm(const at::Tensor& x, const std::string& weight) {
  // transformers' order: normalise in fp32 (fp64 models stay in fp64, for the train step's gradient checks), back to
  // the input dtype, then scale by the weight. One operator (a fused kernel on CUDA).
  return at::rms_norm(x, {x.size(-1)}, W(weight), config_.rms_norm_eps);
}

bool Decoder::MergedForward() const { return lora_ && lora_merged_ && adapter_on_ && !at::GradMode::is_enabled(); }

at::Tensor Decoder::BuildMerged(const std::vector<std::string>& parts) {
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> rows;
  for (const auto& name : parts) {
    const std::string path = name.substr(0, name.rfind('.'));
    auto a = lora_params_.find(LoraKey(path, 'A'));
    at::Tensor w = params_.at(name);
    if (a != lora_params_.end()) {
      // W + scale B A, summed in fp32 (or the base's own wider dtype), then rounded once to the compute dtype.
      const at::ScalarType acc = w.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
      const at::Tensor b = lora_params_.at(LoraKey(path, 'B')).to(acc);
      w = at::addmm(w.to(acc), b, a->second.to(acc), 1.0, lora_->scale());
    }
    rows.push_back(w.to(compute_dtype_));
  }
  return rows.size() == 1 ? rows[0] : at::cat(rows, 0);
}

at::Tensor Decoder::MergedWeight(const std::string& key, const std::vector<std::string>& parts) {
  auto it = merged_.find(key);
  if (it == merged_.end()) it = merged_.emplace(key, Merged{BuildMerged(parts), parts}).first;
  return it->second.weight;
}

void Decoder::SetLoraMerged(bool merged) {
  if (merged == lora_merged_) return;
  lora_merged_ = merged;
  merged_.clear();
  ++storage_version_;
}

at::Tensor Decoder::Linear(const at::Tensor& x, const std::string& prefix, bool bias) {
  return at::linear(x, W(prefix + ".weight"), bias ? std::optional<at::Tensor>(W(prefix + ".bias")) : std::nullopt);
}

at::Tensor Decoder::ResidualLinear(const at::Tensor& x, const at::Tensor& in, const std::string& prefix, bool bias, bool in_place) {
  const bool merged = MergedForward() && lora_params_.count(LoraKey(prefix, 'A'));
  const at::Tensor w = merged ? MergedWeight(prefix + ".weight", {prefix + ".weight"}) : W(prefix + ".weight");
  if (bias) return x + at::linear(in, w, W(prefix + ".bias"));
  if (in_place && x.is_contiguous()) {
    // One GEMM accumulating into x (out of place, a copy of x comes first).
    x.view({-1, x.size(-1)}).addmm_(in.reshape({-1, in.size(-1)}), w.t());
    return x;
  }
  return at::addmm(x.reshape({-1, x.size(-1)}), in.reshape({-1, in.size(-1)}), w.t()).view(x.sizes());
}

at::Tensor Decoder::LoraDelta(const at::Tensor& x, int64_t layer, const std::string& module) {
  if (!lora_ || !adapter_on_ || MergedForward()) return at::Tensor();
  const std::string path = LoraModulePath(layer, module);
  const std::string a = LoraKey(path, 'A');
  if (!lora_params_.count(a)) return at::Tensor();
  // peft: lora_B(lora_A(dropout(x))) * scaling, in the compute dtype.
  const at::Tensor in = training_ && lora_->dropout > 0 ? at::dropout(x, lora_->dropout, true) : x;
  return at::linear(at::linear(in, W(a)), W(LoraKey(path, 'B'))) * lora_->scale();
}

at::Tensor Decoder::WithLora(const at::Tensor& y, const at::Tensor& x, int64_t layer, const std::vector<std::string>& modules) {
  if (!lora_ || !adapter_on_) return y;
  std::vector<at::Tensor> deltas;
  bool any = false;
  for (const auto& m : modules) {
    deltas.push_back(LoraDelta(x, layer, m));
    any = any || deltas.back().defined();
  }
  if (!any) return y;
  if (modules.size() == 1) return y + deltas[0];
  // Projections without an adapter add zeros: one addition over the fused output.
  for (size_t j = 0; j < modules.size(); ++j) {
    if (deltas[j].defined()) continue;
    const int64_t out = LoraModuleShape(config_, LoraModulePath(layer, modules[j])).second;
    std::vector<int64_t> shape(y.sizes().begin(), y.sizes().end());
    shape.back() = out;
    deltas[j] = at::zeros(shape, y.options());
  }
  return y + at::cat(deltas, -1);
}

void Decoder::SetLora(const LoraOptions& options, std::map<std::string, at::Tensor> params) {
  if (params_.empty()) Fail("E_DISPOSED", "the model was disposed");
  const auto expected = ExpectedLoraParameters(config_, options);
  for (const auto& [name, shape] : expected) {
    auto it = params.find(name);
    if (it == params.end()) Fail("E_ARG", "LoRA: missing tensor '" + name + "'");
    if (it->second.sizes() != at::IntArrayRef(shape)) {
      std::string want = "[" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + "]";
      Fail("E_ARG", "LoRA: tensor '" + name + "' has the wrong shape (expected " + want + " for r = " + std::to_string(options.r) + ")");
    }
    if (!at::isFloatingType(it->second.scalar_type())) Fail("E_ARG", "LoRA: tensor '" + name + "' is not floating point");
    if (it->second.device() != device_)
      Fail("E_ARG", "LoRA: tensor '" + name + "' is on " + it->second.device().str() + ", the model on " + device_.str());
  }
  if (params.size() != expected.size()) {
    for (const auto& [name, t] : params) {
      bool known = false;
      for (const auto& e : expected) known = known || e.first == name;
      if (!known) Fail("E_ARG", "LoRA: unexpected tensor '" + name + "' (not an adapter of the modules given)");
    }
  }
  for (auto& [name, t] : params) {
    if (t.requires_grad() || !t.is_leaf()) t = t.detach();
  }
  // Copies made from an adapter before are stale: drop them (and tell captured graphs).
  for (const auto& [name, t] : lora_params_) compute_cache_.erase(name);
  merged_.clear();
  lora_ = std::make_shared<LoraOptions>(options);
  lora_params_ = std::move(params);
  adapter_on_ = true;
  ++version_;
  ++storage_version_;
}

void Decoder::MergeLora() {
  if (!lora_) Fail("E_ARG", "mergeLora: this model carries no LoRA adapter");
  c10::NoGradGuard no_grad;
  const double scale = lora_->scale();
  for (const auto& path : lora_->modules) {
    at::Tensor& w = params_.at(path + ".weight");
    const at::Tensor a = lora_params_.at(LoraKey(path, 'A')).to(at::kDouble);
    const at::Tensor b = lora_params_.at(LoraKey(path, 'B')).to(at::kDouble);
    // In the weight's own storage (a view of a fused buffer for q/k/v and gate/up), computed in fp64.
    w.copy_(w.to(at::kDouble) + at::mm(b, a) * scale);
  }
  for (const auto& [name, t] : lora_params_) compute_cache_.erase(name);
  lora_.reset();
  lora_params_.clear();
  merged_.clear();
  ++storage_version_;
  ParametersChanged();
}

const char* Decoder::LmHeadName() const { return config_.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight"; }

at::Tensor Decoder::LmHeadWeight() { return W(LmHeadName()); }

std::pair<at::Tensor, at::Tensor> Decoder::Rope(const at::Tensor& position_ids) {
  // freqs[b, t, i] = position[b, t] * inv_freq[i], in fp32; the two halves of head_dim share a frequency.
  // rotate_half(x) = [-x2, x1] = roll(x, half) * [-1, 1]: the sign goes into sin.
  const at::Tensor freqs = position_ids.to(at::kFloat).unsqueeze(-1) * inv_freq_;
  const at::Tensor emb = at::cat({freqs, freqs}, -1).unsqueeze(2);  // [B, T, 1, head_dim]
  const at::Tensor s = freqs.sin();
  const at::Tensor signed_sin = at::cat({-s, s}, -1).unsqueeze(2);
  return {emb.cos().to(compute_dtype_), signed_sin.to(compute_dtype_)};
}

std::pair<at::Tensor, at::Tensor> Decoder::QkNormRows() {
  // [layers, q_heads + kv_heads, head_dim]: each layer's q_norm weight once per q head, then its k_norm weight once
  // per kv head; and the same rolled by half a head (where RoPE's rotation moves them). Kept without gradients and
  // refreshed in place by ParametersChanged; with gradients on, built from the parameters for every forward.
  const DecoderConfig& c = config_;
  const bool grad = at::GradMode::is_enabled();
  if (!grad && qk_rows_.defined()) return {qk_rows_, qk_rows_rolled_};
  std::vector<at::Tensor> layers;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = LayerPrefix(i) + "self_attn.";
    const at::Tensor q = W(p + "q_norm.weight"), k = W(p + "k_norm.weight");
    layers.push_back(
        at::cat({q.unsqueeze(0).expand({c.num_attention_heads, c.head_dim}), k.unsqueeze(0).expand({c.num_key_value_heads, c.head_dim})}));
  }
  const at::Tensor rows = at::stack(layers);
  const at::Tensor rolled = at::roll(rows, {c.head_dim / 2}, {-1});
  if (grad) return {rows, rolled};
  qk_rows_ = rows;
  qk_rows_rolled_ = rolled;
  return {qk_rows_, qk_rows_rolled_};
}

// What every layer of one forward shares.
struct Decoder::Forward {
  int64_t B, T, S, groups;
  bool slot, causal_only;
  double scale;
  KvCache* cache;
  const TreeAttention* tree;     // a packed prefix tree's attention (B = 1), or null
  at::Tensor allowed, cos, sin;  // cos/sin [B, T, 1, head_dim]
  // Qwen3: the q/k norm weights (QkNormRows), and for a decode step RoPE's factors with them folded in for every
  // layer, [layers, B, 1, heads, head_dim] (a longer forward folds them layer by layer: they would be large).
  at::Tensor qk_rows, qk_rows_rolled, layer_cos, layer_sin;
  // A decode step over the slot cache: the live key counts and offsets DecodeAttention takes on CUDA (else empty).
  std::vector<at::Tensor> live;
};

at::Tensor Decoder::Layer(int64_t i, const at::Tensor& x_in, const Forward& f) {
  const DecoderConfig& c = config_;
  const int64_t B = f.B, T = f.T, S = f.S;
  const int64_t Hq = c.num_attention_heads, Hk = c.num_key_value_heads, D = c.head_dim;
  const std::string p = LayerPrefix(i), a = p + "self_attn.";
  at::Tensor x = x_in;
  const at::Tensor h = RmsNorm(x, p + "input_layernorm.weight");
  // q, k and v from one multiply by the layer's q/k/v buffer.
  const at::Tensor qkv_w = Fused(QkvName(i, "weight"), {a + "q_proj.weight", a + "k_proj.weight", a + "v_proj.weight"});
  const std::optional<at::Tensor> qkv_b =
      c.qkv_bias ? std::optional<at::Tensor>(Fused(QkvName(i, "bias"), {a + "q_proj.bias", a + "k_proj.bias", a + "v_proj.bias"}))
                 : std::nullopt;
  static const std::vector<std::string> kQkv = {"q_proj", "k_proj", "v_proj"};
  const at::Tensor qkv = WithLora(at::linear(h, qkv_w, qkv_b), h, i, kQkv).view({B, T, Hq + 2 * Hk, D});
  at::Tensor qk = qkv.narrow(2, 0, Hq + Hk);
  at::Tensor v = qkv.narrow(2, Hq + Hk, Hk);  // [B, T, kv_heads, head_dim]
  // Qwen3's per-head norms before RoPE, q's and k's together: the normalisation as one operator, the weights folded
  // into RoPE's factors (RoPE(n * w) = n * (w cos) + roll(n) * (roll(w) sin), the roll moving w with the halves).
  if (c.qk_norm) qk = at::rms_norm(qk, {D}, std::nullopt, c.rms_norm_eps);
  at::Tensor cos = f.cos, sin = f.sin;
  if (f.layer_cos.defined()) {
    cos = f.layer_cos[i];
    sin = f.layer_sin[i];
  } else if (c.qk_norm) {
    cos = cos * f.qk_rows[i];
    sin = sin * f.qk_rows_rolled[i];
  }
  // Without gradients (generation, scoring) the fused operators (model/fused_ops.h): one kernel each on a GPU.
  const bool fused = !at::GradMode::is_enabled();
  qk = fused ? Rotary(qk, cos, sin) : RotaryReference(qk, cos, sin);
  const at::Tensor q = qk.narrow(2, 0, Hq).transpose(1, 2);  // [B, heads, T, head_dim]
  at::Tensor k = qk.narrow(2, Hq, Hk);
  KvCache* cache = f.cache;
  if (f.slot) {
    if (fused) {
      KvWrite_(cache->k[i], cache->v[i], k, v, cache->write_at);
    } else {
      KvWriteReference(cache->k[i], cache->v[i], k, v, cache->write_at);
    }
    k = cache->k[i].narrow(2, 0, S);
    v = cache->v[i].narrow(2, 0, S);
  } else {
    k = k.transpose(1, 2);
    v = v.transpose(1, 2);
    if (cache) {
      if (cache->k[i].defined()) {
        k = at::cat({cache->k[i], k}, 2);
        v = at::cat({cache->v[i], v}, 2);
      }
      cache->k[i] = k;
      cache->v[i] = v;
    }
  }
  const int64_t groups = f.groups;
  at::Tensor attn;
  if (f.slot && T == 1) {
    // A decode step: the `groups` query heads of one key/value head become that head's query rows, so attention is
    // plain multi-head over the kv heads (no GQA expansion of the cache); the row mask [B, 1, 1, S] applies to every
    // query row alike, and on CUDA the kernel stops at each row's length instead.
    attn = DecodeAttention(q.reshape({B, Hk, groups, D}), cache->k[i], cache->v[i], f.allowed, S, f.scale, f.live).reshape({B, Hq, 1, D});
  } else if (f.tree) {
    // A packed prefix tree: each block of queries with the keys/values of its tokens' path, gathered from the packed
    // tokens (gradients flow back through the gathers to every row's share of a common prefix).
    const TreeAttention& t = *f.tree;
    const at::Tensor qb = q.transpose(1, 2)[0].index_select(0, t.queries).view({t.blocks, t.block, Hq, D}).transpose(1, 2);
    const at::Tensor kb = k[0].transpose(0, 1).index_select(0, t.keys).view({t.blocks, t.key_width, Hk, D}).transpose(1, 2);
    const at::Tensor vb = v[0].transpose(0, 1).index_select(0, t.keys).view({t.blocks, t.key_width, Hk, D}).transpose(1, 2);
    const at::Tensor out = SequenceAttention(qb, kb, vb, t.allowed, false, f.scale, groups);  // [blocks, Hq, block, D]
    attn = out.transpose(1, 2).reshape({t.blocks * t.block, Hq, D}).index_select(0, t.order).view({1, T, Hq, D}).transpose(1, 2);
  } else {
    // A prompt, a scored sequence, the train step: causal attention when there is no padding and no past (sdpa's
    // flash kernel), else with the mask; the key/value heads passed as model/attention.h chooses, so that masked
    // grouped-query attention stays on a fused kernel on every torch this builds against.
    attn = SequenceAttention(q, k, v, f.causal_only ? at::Tensor() : f.allowed, f.causal_only, f.scale, groups);
  }
  attn = attn.transpose(1, 2).reshape({B, T, Hq * D});
  // The residual adds in place where nothing else holds x: under inference mode (the engine; no gradient
  // checkpointing keeps a layer's input there) the layer's input, and without gradients the sum this layer made.
  x = ResidualLinear(x, attn, a + "o_proj", c.o_bias, c10::InferenceMode::is_enabled());
  if (const at::Tensor d = LoraDelta(attn, i, "o_proj"); d.defined()) x = x + d;

  const std::string m = p + "mlp.";
  const at::Tensor post = RmsNorm(x, p + "post_attention_layernorm.weight");
  const at::Tensor gu_w = Fused(GateUpName(i, "weight"), {m + "gate_proj.weight", m + "up_proj.weight"});
  const std::optional<at::Tensor> gu_b =
      c.mlp_bias ? std::optional<at::Tensor>(Fused(GateUpName(i, "bias"), {m + "gate_proj.bias", m + "up_proj.bias"})) : std::nullopt;
  static const std::vector<std::string> kGateUp = {"gate_proj", "up_proj"};
  const at::Tensor gu = WithLora(at::linear(post, gu_w, gu_b), post, i, kGateUp);
  const at::Tensor act = fused ? SwiGlu(gu) : SwiGluReference(gu);
  x = ResidualLinear(x, act, m + "down_proj", c.mlp_bias,
                     c10::InferenceMode::is_enabled() || (!at::GradMode::is_enabled() && !x.is_same(x_in)));
  if (const at::Tensor d = LoraDelta(act, i, "down_proj"); d.defined()) x = x + d;
  return x;
}

at::Tensor Decoder::Hidden(const at::Tensor& input_ids, const at::Tensor& position_ids, const at::Tensor& attention_mask, KvCache* cache,
                           const LayerRunner& runner, const TreeAttention* tree) {
  const DecoderConfig& c = config_;
  Forward f;
  f.tree = tree;
  if (tree && (cache || attention_mask.defined() || input_ids.size(0) != 1 || tree->order.size(0) != input_ids.size(1))) {
    Fail("E_ARG", "a prefix-tree forward takes one packed row of the tree's tokens, without a mask or a KV cache");
  }
  f.B = input_ids.size(0);
  f.T = input_ids.size(1);
  f.slot = cache && cache->write_at.defined();  // fixed-slot cache (see KvCache)
  const int64_t past = f.slot ? 0 : cache && !cache->k.empty() && cache->k[0].defined() ? cache->k[0].size(2) : 0;
  f.S = f.slot ? cache->width : past + f.T;
  const int64_t B = f.B, T = f.T, S = f.S;
  if (f.slot && (cache->k.size() != static_cast<size_t>(c.num_hidden_layers) || cache->k[0].size(2) < S || cache->k[0].size(0) != B)) {
    Fail("E_ARG", "fixed-slot KV cache: needs " + std::to_string(c.num_hidden_layers) + " layers of " + std::to_string(B) +
                      " rows and capacity >= " + std::to_string(S));
  }
  if (f.slot && attention_mask.defined()) Fail("E_ARG", "a fixed-slot KV cache takes no attention mask (write_at says what each row sees)");
  f.groups = c.num_attention_heads / c.num_key_value_heads;
  f.cache = cache;

  // allowed[b, 0, i, j]: query i (absolute position past + i) may see key j if j is not after it and is a real token.
  // A padded query row sees no real token before it; letting it see itself keeps its softmax finite (SPEC §9), and
  // nothing reads that row's result.
  const auto long_opts = at::TensorOptions().dtype(at::kLong).device(device_);
  if (f.slot && T == 1 && cache->live_keys)
    f.live = DecodeAttentionInputs(cache->write_at, c.num_key_value_heads, f.groups, cache->k[0].size(2));
  // A decode step whose attention reads live lengths (CUDA) needs no mask; float64 falls back to the masked form.
  const bool mask_unused = !f.live.empty() && compute_dtype_ != at::kDouble;
  const at::Tensor k_index = mask_unused ? at::Tensor() : at::arange(0, S, long_opts).view({1, S});
  if (f.slot && !mask_unused) {
    const at::Tensor q_column = cache->write_at.view({B, 1, 1}) + at::arange(0, T, long_opts).view({1, T, 1});  // [B, T, 1]
    f.allowed = (k_index.view({1, 1, S}) <= q_column).view({B, 1, T, S});
  }
  const at::Tensor q_index = f.slot || tree ? at::Tensor() : at::arange(past, S, long_opts).view({T, 1});
  if (!f.slot && !tree) f.allowed = (k_index <= q_index).view({1, 1, T, S});
  f.causal_only = !f.slot && !tree && !attention_mask.defined() && past == 0;
  if (attention_mask.defined()) {
    const at::Tensor key_real = attention_mask.to(device_).to(at::kBool).view({B, 1, 1, S});
    f.allowed = (f.allowed & key_real) | (k_index == q_index).view({1, 1, T, S});
  }
  if (cache && cache->k.size() != static_cast<size_t>(c.num_hidden_layers)) {
    cache->k.assign(c.num_hidden_layers, at::Tensor());
    cache->v.assign(c.num_hidden_layers, at::Tensor());
  }
  std::tie(f.cos, f.sin) = Rope(position_ids.to(device_));
  if (c.qk_norm) {
    // RoPE(n * w) = n * (w cos) + roll(n) * (roll(w) sin): the norm weights go into the factors, for every layer at
    // once (a few KB a row and layer).
    std::tie(f.qk_rows, f.qk_rows_rolled) = QkNormRows();
    if (T == 1) {
      const std::vector<int64_t> shape = {c.num_hidden_layers, 1, 1, f.qk_rows.size(1), c.head_dim};
      f.layer_cos = f.cos.unsqueeze(0) * f.qk_rows.view(shape);
      f.layer_sin = f.sin.unsqueeze(0) * f.qk_rows_rolled.view(shape);
    }
  }
  f.scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));

  at::Tensor x = at::embedding(W("model.embed_tokens.weight"), input_ids.to(device_));
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    // A training runner wraps each layer (gradient checkpointing recomputes it in backward; the lambda's captures
    // are what the recomputation needs).
    if (runner && !cache) {
      x = runner([this, i, f](const at::Tensor& in) { return Layer(i, in, f); }, x);
    } else {
      x = Layer(i, x, f);
    }
  }
  return RmsNorm(x, "model.norm.weight");
}

at::Tensor Decoder::Logits(const at::Tensor& hidden) { return at::linear(hidden, LmHeadWeight()).to(at::kFloat); }

at::Tensor Decoder::TokenLogprobs(const at::Tensor& hidden, const at::Tensor& targets, double temperature, int64_t chunk_bytes) {
  if (!(temperature > 0)) Fail("E_ARG", "temperature must be > 0, found " + std::to_string(temperature));
  const int64_t n = hidden.size(0);
  const int64_t rows = std::max<int64_t>(1, chunk_bytes / (config_.vocab_size * 4));
  const at::Tensor weight = LmHeadWeight();
  const at::Tensor targets_dev = targets.to(device_).to(at::kLong);
  std::vector<at::Tensor> parts;
  for (int64_t start = 0; start < n; start += rows) {
    const int64_t len = std::min(rows, n - start);
    at::Tensor logits = at::linear(hidden.narrow(0, start, len), weight).to(at::kFloat);
    if (temperature != 1.0) logits = logits / temperature;
    parts.push_back(at::log_softmax(logits, -1).gather(-1, targets_dev.narrow(0, start, len).unsqueeze(-1)).squeeze(-1));
  }
  if (parts.empty()) return at::empty({0}, at::TensorOptions().dtype(at::kFloat).device(device_));
  return at::cat(parts);
}

}  // namespace lamer::model
