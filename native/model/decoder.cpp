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

#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "bridge/errors.h"

namespace lamer::model {

namespace {

std::string Layer(int64_t i) { return "model.layers." + std::to_string(i) + "."; }

}  // namespace

std::vector<std::pair<std::string, std::vector<int64_t>>> ExpectedParameters(const DecoderConfig& c) {
  const int64_t q_out = c.num_attention_heads * c.head_dim;
  const int64_t kv_out = c.num_key_value_heads * c.head_dim;
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  out.push_back({"model.embed_tokens.weight", {c.vocab_size, c.hidden_size}});
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = Layer(i);
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
}

at::ScalarType Decoder::param_dtype() const {
  auto it = params_.find("model.embed_tokens.weight");
  return it == params_.end() ? compute_dtype_ : it->second.scalar_type();
}

void Decoder::ParametersChanged() {
  // In place, so captured CUDA graphs that read the copies see the new values (and no memory is reallocated). The
  // copies were made by engine steps under inference mode, and inference tensors may change only inside it.
  c10::InferenceMode inference;
  for (auto it = compute_cache_.begin(); it != compute_cache_.end();) {
    auto p = params_.find(it->first);
    if (p != params_.end() && p->second.sizes() == it->second.sizes()) {
      it->second.copy_(p->second);
      ++it;
    } else {
      it = compute_cache_.erase(it);
      ++storage_version_;
    }
  }
  ++version_;
}

void Decoder::ParametersReplaced() {
  compute_cache_.clear();
  ++version_;
  ++storage_version_;
}

void Decoder::Clear() {
  params_.clear();
  compute_cache_.clear();
  ++version_;
  ++storage_version_;
}

at::Tensor Decoder::W(const std::string& name) {
  auto it = params_.find(name);
  if (it == params_.end()) Fail("E_DISPOSED", "model parameter '" + name + "' is gone (the model was disposed)");
  const at::Tensor& p = it->second;
  if (p.scalar_type() == compute_dtype_) return p;
  // With gradients on, the cast must stay in the graph so gradients reach the fp32 master parameter.
  if (at::GradMode::is_enabled()) return p.to(compute_dtype_);
  auto cached = compute_cache_.find(name);
  if (cached == compute_cache_.end()) cached = compute_cache_.emplace(name, p.to(compute_dtype_)).first;
  return cached->second;
}

at::Tensor Decoder::RmsNorm(const at::Tensor& x, const std::string& weight) {
  // Normalise in fp32 whatever the compute dtype, then scale in compute dtype (transformers' order).
  // (fp64 models stay in fp64: gradient checks of the train step need a loss without fp32 rounding.)
  const at::Tensor xf = x.scalar_type() == at::kDouble ? x : x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + config_.rms_norm_eps);
  return W(weight) * normed.to(x.scalar_type());
}

at::Tensor Decoder::Linear(const at::Tensor& x, const std::string& prefix, bool bias) {
  return at::linear(x, W(prefix + ".weight"), bias ? std::optional<at::Tensor>(W(prefix + ".bias")) : std::nullopt);
}

const char* Decoder::LmHeadName() const { return config_.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight"; }

at::Tensor Decoder::LmHeadWeight() { return W(LmHeadName()); }

std::pair<at::Tensor, at::Tensor> Decoder::Rope(const at::Tensor& position_ids) {
  // freqs[b, t, i] = position[b, t] * inv_freq[i], in fp32; the two halves of head_dim share a frequency.
  const at::Tensor freqs = position_ids.to(at::kFloat).unsqueeze(-1) * inv_freq_;
  const at::Tensor emb = at::cat({freqs, freqs}, -1);
  return {emb.cos().to(compute_dtype_), emb.sin().to(compute_dtype_)};
}

namespace {

at::Tensor RotateHalf(const at::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

}  // namespace

at::Tensor Decoder::Hidden(const at::Tensor& input_ids, const at::Tensor& position_ids, const at::Tensor& attention_mask, KvCache* cache,
                           const LayerRunner& runner) {
  const DecoderConfig& c = config_;
  const int64_t B = input_ids.size(0);
  const int64_t T = input_ids.size(1);
  const bool slot = cache && cache->write_at.defined();         // fixed-slot cache (see KvCache)
  const bool in_place = slot || (cache && cache->length >= 0);  // preallocated cache (see KvCache)
  const int64_t past = slot ? 0 : in_place ? cache->length : cache && !cache->k.empty() && cache->k[0].defined() ? cache->k[0].size(2) : 0;
  const int64_t S = slot ? cache->width : past + T;
  if (in_place &&
      (cache->k.size() != static_cast<size_t>(c.num_hidden_layers) || cache->k[0].size(2) < S || (slot && cache->k[0].size(0) != B))) {
    Fail("E_ARG", "preallocated KV cache: needs " + std::to_string(c.num_hidden_layers) + " layers of " + std::to_string(B) +
                      " rows and capacity >= " + std::to_string(S));
  }
  if (slot && attention_mask.defined()) Fail("E_ARG", "a fixed-slot KV cache takes no attention mask (write_at says what each row sees)");
  const int64_t groups = c.num_attention_heads / c.num_key_value_heads;

  // allowed[b, 0, i, j]: query i (absolute position past + i) may see key j if j is not after it and is a real token.
  // A padded query row sees no real token before it; letting it see itself keeps its softmax finite (SPEC §9), and
  // nothing reads that row's result.
  const auto long_opts = at::TensorOptions().dtype(at::kLong).device(device_);
  const at::Tensor k_index = at::arange(0, S, long_opts).view({1, S});
  at::Tensor allowed;
  at::Tensor slot_columns;  // slot mode: [B, kv_heads, T, head_dim], the column each new key/value goes to
  if (slot) {
    const at::Tensor q_column = cache->write_at.view({B, 1, 1}) + at::arange(0, T, long_opts).view({1, T, 1});  // [B, T, 1]
    allowed = (k_index.view({1, 1, S}) <= q_column).view({B, 1, T, S});
    slot_columns = q_column.view({B, 1, T, 1}).expand({B, c.num_key_value_heads, T, c.head_dim});
  }
  const at::Tensor q_index = slot ? at::Tensor() : at::arange(past, S, long_opts).view({T, 1});
  if (!slot) allowed = (k_index <= q_index).view({1, 1, T, S});
  const bool causal_only = !slot && !attention_mask.defined() && past == 0;
  if (attention_mask.defined()) {
    const at::Tensor key_real = attention_mask.to(device_).to(at::kBool).view({B, 1, 1, S});
    allowed = (allowed & key_real) | (k_index == q_index).view({1, 1, T, S});
  }
  if (cache && cache->k.size() != static_cast<size_t>(c.num_hidden_layers)) {
    cache->k.assign(c.num_hidden_layers, at::Tensor());
    cache->v.assign(c.num_hidden_layers, at::Tensor());
  }

  const auto [cos, sin] = Rope(position_ids.to(device_));
  const at::Tensor cos4 = cos.unsqueeze(1);  // [B, 1, T, head_dim], broadcast over heads
  const at::Tensor sin4 = sin.unsqueeze(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));

  at::Tensor x = at::embedding(W("model.embed_tokens.weight"), input_ids.to(device_));
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    // One layer as a function of its input, so a training runner can wrap it (gradient checkpointing recomputes it
    // in backward; the captures are copies that outlive this call).
    const LayerFn layer = [this, i, cache, cos4, sin4, allowed, causal_only, B, T, S, groups, scale, in_place, slot, slot_columns,
                           past](const at::Tensor& x_in) -> at::Tensor {
      const DecoderConfig& c = config_;
      at::Tensor x = x_in;
      const std::string p = Layer(i);
      at::Tensor h = RmsNorm(x, p + "input_layernorm.weight");
      at::Tensor q = Linear(h, p + "self_attn.q_proj", c.qkv_bias).view({B, T, c.num_attention_heads, c.head_dim});
      at::Tensor k = Linear(h, p + "self_attn.k_proj", c.qkv_bias).view({B, T, c.num_key_value_heads, c.head_dim});
      at::Tensor v = Linear(h, p + "self_attn.v_proj", c.qkv_bias).view({B, T, c.num_key_value_heads, c.head_dim});
      if (c.qk_norm) {
        q = RmsNorm(q, p + "self_attn.q_norm.weight");
        k = RmsNorm(k, p + "self_attn.k_norm.weight");
      }
      q = q.transpose(1, 2);  // [B, heads, T, head_dim]
      k = k.transpose(1, 2);
      v = v.transpose(1, 2);
      q = q * cos4 + RotateHalf(q) * sin4;
      k = k * cos4 + RotateHalf(k) * sin4;
      if (slot) {
        cache->k[i].scatter_(2, slot_columns, k);
        cache->v[i].scatter_(2, slot_columns, v);
        k = cache->k[i].narrow(2, 0, S);
        v = cache->v[i].narrow(2, 0, S);
      } else if (in_place) {
        cache->k[i].narrow(2, past, T).copy_(k);
        cache->v[i].narrow(2, past, T).copy_(v);
        k = cache->k[i].narrow(2, 0, S);
        v = cache->v[i].narrow(2, 0, S);
      } else if (cache) {
        if (cache->k[i].defined()) {
          k = at::cat({cache->k[i], k}, 2);
          v = at::cat({cache->v[i], v}, 2);
        }
        cache->k[i] = k;
        cache->v[i] = v;
      }
      // (Without a mask, sdpa shares key/value heads itself as transformers does: no expanded copies.)
      if (groups > 1 && !in_place && !causal_only) {
        // GQA: each key/value head serves `groups` consecutive query heads.
        k = k.unsqueeze(2).expand({B, c.num_key_value_heads, groups, S, c.head_dim}).reshape({B, c.num_attention_heads, S, c.head_dim});
        v = v.unsqueeze(2).expand({B, c.num_key_value_heads, groups, S, c.head_dim}).reshape({B, c.num_attention_heads, S, c.head_dim});
      }
      // With a preallocated cache, sdpa shares each key/value head among its query heads itself (enable_gqa).
      // No padding and no past: plain causal attention, which lets sdpa pick its fused kernel instead of a masked one.
      at::Tensor attn;
      if (slot && T == 1 && groups > 1) {
        // A decode step: the `groups` query heads of one key/value head become that head's query rows, so attention
        // is plain multi-head over the kv heads (any sdpa kernel, no GQA expansion of the cache); the row mask
        // [B, 1, 1, S] applies to every query row alike.
        attn = at::scaled_dot_product_attention(q.reshape({B, c.num_key_value_heads, groups, c.head_dim}), k, v, allowed, 0.0, false, scale)
                   .reshape({B, c.num_attention_heads, 1, c.head_dim});
      } else {
        attn = causal_only ? at::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, /*is_causal=*/true, scale, groups > 1)
                           : at::scaled_dot_product_attention(q, k, v, allowed, 0.0, false, scale, /*enable_gqa=*/in_place && groups > 1);
      }
      attn = attn.transpose(1, 2).reshape({B, T, c.num_attention_heads * c.head_dim});
      x = x + Linear(attn, p + "self_attn.o_proj", c.o_bias);

      h = RmsNorm(x, p + "post_attention_layernorm.weight");
      const at::Tensor gate = at::silu(Linear(h, p + "mlp.gate_proj", c.mlp_bias));
      x = x + Linear(gate * Linear(h, p + "mlp.up_proj", c.mlp_bias), p + "mlp.down_proj", c.mlp_bias);
      return x;
    };
    x = runner && !cache ? runner(layer, x) : layer(x);
  }
  if (in_place && !slot) cache->length = S;
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
