// The decoder-only transformer of Qwen3, Qwen2 and Llama checkpoints (SPEC §9). Parameters live in one map keyed
// by the checkpoint's own tensor names, so loading, saving, the generation engine and the train step all address
// them the same way.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace lamer::model {

struct LoraOptions;    // model/lora.h
struct TreeAttention;  // model/batching.h

// The numbers the decoder needs, parsed and validated from config.json on the TS side (src/model/config.ts).
struct DecoderConfig {
  std::string model_type;  // "qwen3" | "qwen2" | "llama"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  bool tie_word_embeddings = false;
  bool qk_norm = false;   // Qwen3: per-head RMSNorm on q and k before RoPE
  bool qkv_bias = false;  // Qwen2 (always), Llama/Qwen3 with attention_bias
  bool o_bias = false;    // Llama/Qwen3 with attention_bias
  bool mlp_bias = false;  // Llama with mlp_bias
  // llama3 RoPE scaling (rope_type "llama3"); off when rope_factor == 0.
  double rope_factor = 0.0;
  double rope_low_freq_factor = 1.0;
  double rope_high_freq_factor = 4.0;
  int64_t rope_original_max_position_embeddings = 8192;
};

// The shape every parameter must have, by checkpoint name, in load order.
std::vector<std::pair<std::string, std::vector<int64_t>>> ExpectedParameters(const DecoderConfig& c);

// Per-layer keys and values for incremental decoding: [B, kv_heads, S, head_dim] each, in compute dtype. Two modes.
// Collecting (write_at undefined; a prompt's first forward): Hidden stores each layer's keys/values in k/v, appended
// after what they hold. Slot mode (the engine's fixed-slot cache, write_at defined: [B] int64 on the device): k/v are
// buffers [B, kv_heads, capacity, head_dim] whose addresses never change; row b's T new keys/values are written at
// columns write_at[b] + t, its query t attends to columns [0, write_at[b] + t], and attention reads the first `width`
// columns (every column it may see must lie below `width`). Nothing in a step depends on host values but `width`, so
// a decode step in this mode can be captured as a CUDA graph.
struct KvCache {
  std::vector<at::Tensor> k, v;
  at::Tensor write_at;
  int64_t width = 0;
  // Slot mode, one token a row: attention reads each row's live columns only where the device can (DecodeAttention
  // in model/fused_ops.h: CUDA); off, or elsewhere, it reads `width` columns with a mask.
  bool live_keys = false;
};

class Decoder {
 public:
  // `params` must hold exactly ExpectedParameters(config) (checked by the loader). They are kept in `param_dtype`
  // on `device`; the forward runs in `compute_dtype` (fp32 on CPU; bf16 on CUDA with fp32 master parameters).
  // Each layer's q/k/v projections share one buffer (so do gate/up): the parameters stay separate tensors under their
  // checkpoint names, views of that buffer, and a forward without gradients multiplies by the buffer at once.
  Decoder(DecoderConfig config, std::map<std::string, at::Tensor> params, at::Device device, at::ScalarType compute_dtype);

  const DecoderConfig& config() const { return config_; }
  at::Device device() const { return device_; }
  at::ScalarType compute_dtype() const { return compute_dtype_; }
  at::ScalarType param_dtype() const;
  // The parameters by checkpoint name (no lm_head.weight when the embeddings are tied). They are changed in place
  // only (never replaced by other tensors: the q/k/v and gate/up ones are views of shared buffers); whoever changes
  // them (the train step, a broadcast) must call ParametersChanged() so cached compute-dtype copies are refreshed.
  std::map<std::string, at::Tensor>& parameters() { return params_; }
  void ParametersChanged();
  // Grows by one on every ParametersChanged() and Clear(): whoever keeps results computed from the parameters (the
  // engine's prefix cache) compares it to know they are stale.
  uint64_t parameters_version() const { return version_; }
  // Grows by one whenever a tensor the forward reads may have moved to another address (Clear(), a compute-dtype copy
  // dropped): whoever captured forwards as CUDA graphs compares it to know the graphs are stale. ParametersChanged()
  // refreshes the compute-dtype copies in place, so an optimizer step that updates the parameters in place keeps it.
  uint64_t storage_version() const { return storage_version_; }

  // Final-norm hidden states [B, T, hidden] (compute dtype) for `input_ids` [B, T] (int64), `position_ids` [B, T]
  // and `attention_mask` [B, T] (1 = token, 0 = left padding; may be undefined for none). With `cache`, the new
  // keys/values are appended to it and queries attend to the cached ones too.
  // `runner` (training only, ignored with a cache): each layer runs as runner(layer, x) instead of layer(x), which
  // is how the train step applies gradient checkpointing.
  using LayerFn = std::function<at::Tensor(const at::Tensor&)>;
  using LayerRunner = std::function<at::Tensor(const LayerFn&, const at::Tensor&)>;
  // `tree` (model/batching.h; its tensors on this device): the input is one packed prefix tree [1, N] (PackPrefixTree:
  // ids and positions), no mask and no cache; each token attends to its path through the tree as `tree` says.
  at::Tensor Hidden(const at::Tensor& input_ids, const at::Tensor& position_ids, const at::Tensor& attention_mask, KvCache* cache = nullptr,
                    const LayerRunner& runner = {}, const TreeAttention* tree = nullptr);
  // fp32 logits [..., vocab] of hidden states.
  at::Tensor Logits(const at::Tensor& hidden);
  // log_softmax(logits / temperature)[target] for each row of `hidden` [N, hidden] and `targets` [N] (int64), in
  // chunks of rows so at most about `chunk_bytes` of fp32 logits exist at once (a 151,936 vocabulary is 600 KB a row).
  at::Tensor TokenLogprobs(const at::Tensor& hidden, const at::Tensor& targets, double temperature, int64_t chunk_bytes = 256ll << 20);

  // The output head's weight [vocab, hidden] (the embedding when tied), in compute dtype.
  at::Tensor LmHeadWeight();
  // The checkpoint name of the LM head's weight: the embeddings' when they are tied.
  const char* LmHeadName() const;

  // Releases the parameters (dispose).
  void Clear();

  // LoRA (model/lora.h). SetLora attaches adapters (`params` must hold exactly ExpectedLoraParameters(config,
  // options); E_ARG otherwise), replacing any before; every forward then adds scale * B (A x) to each adapted
  // projection, and the train step trains the adapter alone. The base parameters are left as they are: whoever
  // attaches an adapter keeps them frozen.
  void SetLora(const LoraOptions& options, std::map<std::string, at::Tensor> params);
  // The attached adapter's options, or null.
  const LoraOptions* lora() const { return lora_.get(); }
  // The adapter's tensors by peft key (empty without one); changed in place only, like parameters().
  std::map<std::string, at::Tensor>& lora_parameters() { return lora_params_; }
  // W += scale * B A for every adapted projection, then drops the adapter: the forward is unchanged, without it.
  void MergeLora();
  // Forwards without gradients (the engine, scoring) multiply by merged copies W + scale B A in the compute dtype,
  // kept beside the base and refreshed in place by ParametersChanged (so captured graphs stay valid), instead of
  // adding B (A x) per projection: faster decoding for a compute-dtype copy of every adapted weight. Off by default.
  void SetLoraMerged(bool merged);
  bool lora_merged() const { return lora_merged_; }
  // Training forwards for its lifetime (the train step with gradients): LoRA dropout applies, also inside a
  // checkpointed layer's first forward, which runs without gradients.
  class Training {
   public:
    explicit Training(Decoder& d) : d_(d), was_(d.training_) { d_.training_ = true; }
    ~Training() { d_.training_ = was_; }
    Training(const Training&) = delete;
    Training& operator=(const Training&) = delete;

   private:
    Decoder& d_;
    bool was_;
  };
  // Turns the adapter off for its lifetime (the KL loss's reference is the base alone).
  class AdapterOff {
   public:
    explicit AdapterOff(Decoder& d) : d_(d), was_(d.adapter_on_) { d_.adapter_on_ = false; }
    ~AdapterOff() { d_.adapter_on_ = was_; }
    AdapterOff(const AdapterOff&) = delete;
    AdapterOff& operator=(const AdapterOff&) = delete;

   private:
    Decoder& d_;
    bool was_;
  };

 private:
  struct Forward;  // what every layer of one forward shares (decoder.cpp)
  at::Tensor Layer(int64_t i, const at::Tensor& x, const Forward& f);

  // The parameter `name` in compute dtype (cached while the parameters do not change).
  at::Tensor W(const std::string& name);
  // scale * B (A x) for the module `module` of layer `layer` (dropout on x in training), or an undefined tensor when
  // no adapter is on there.
  at::Tensor LoraDelta(const at::Tensor& x, int64_t layer, const std::string& module);
  // `y` (the projections `modules` of one layer, their outputs side by side in its last dimension) plus their
  // adapters' deltas; `y` itself when none of them has one.
  at::Tensor WithLora(const at::Tensor& y, const at::Tensor& x, int64_t layer, const std::vector<std::string>& modules);
  // Whether this forward reads merged copies (SetLoraMerged): no gradients, adapter on.
  bool MergedForward() const;
  // The merged copy of the projections `parts` side by side (one weight, or a fused q/k/v or gate/up), keyed by
  // `key`; built on first use.
  at::Tensor MergedWeight(const std::string& key, const std::vector<std::string>& parts);
  at::Tensor BuildMerged(const std::vector<std::string>& parts);
  // Projections that share one input, as one weight [sum of outputs, in] (and bias): the shared buffer without
  // gradients; with them, the parameters concatenated so that gradients reach each.
  at::Tensor Fused(const std::string& fused, const std::vector<std::string>& parts);
  at::Tensor RmsNorm(const at::Tensor& x, const std::string& weight);
  at::Tensor Linear(const at::Tensor& x, const std::string& prefix, bool bias);
  // x + linear(in, prefix), in one multiply-add where there is no bias; with `in_place` (no bias, x contiguous),
  // accumulated into x itself, which the caller must own.
  at::Tensor ResidualLinear(const at::Tensor& x, const at::Tensor& in, const std::string& prefix, bool bias, bool in_place = false);
  // RoPE's factors for positions [B, T]: cos [B, T, 1, head_dim] and sin with rotate_half's sign folded in, so that
  // RoPE(x) = x * cos + roll(x, head_dim / 2) * sin.
  std::pair<at::Tensor, at::Tensor> Rope(const at::Tensor& position_ids);
  // Every layer's q_norm and k_norm weights, one row per q head then per kv head [layers, q_heads + kv_heads,
  // head_dim], and the same rolled by half a head.
  std::pair<at::Tensor, at::Tensor> QkNormRows();
  // The shared q/k/v and gate/up buffers, made once from the loaded parameters (which become views of them).
  void FuseProjections();

  DecoderConfig config_;
  std::map<std::string, at::Tensor> params_;
  // Fused name ("model.layers.3.self_attn.qkv_proj.weight") -> the buffer the parameters are views of.
  std::map<std::string, at::Tensor> fused_;
  std::map<std::string, at::Tensor> compute_cache_;
  at::Tensor qk_rows_, qk_rows_rolled_;  // QkNormRows() without gradients
  uint64_t version_ = 0;
  uint64_t storage_version_ = 0;
  at::Device device_;
  at::ScalarType compute_dtype_;
  at::Tensor inv_freq_;  // fp32 [head_dim / 2]
  std::shared_ptr<LoraOptions> lora_;
  std::map<std::string, at::Tensor> lora_params_;
  bool adapter_on_ = true;
  bool training_ = false;
  bool lora_merged_ = false;
  struct Merged {
    at::Tensor weight;
    std::vector<std::string> parts;
  };
  std::map<std::string, Merged> merged_;
};

// Builds inv_freq exactly as transformers does (float32 powers), with llama3 scaling when configured.
at::Tensor RopeInvFreq(const DecoderConfig& c);

}  // namespace lamer::model
