// N-API binding of the model concern: reads the arguments, runs checkpoint loading and random initialisation
// (model/checkpoint.h), log-probs and logits (model/scoring.h) on the device executor, and gives parameter access and
// safetensors read/write.
#include <ATen/core/grad_mode.h>
#include <napi.h>

#include <algorithm>

#include "bridge/args.h"
#include "bridge/errors.h"
#include "bridge/executor.h"
#include "bridge/registry.h"
#include "bridge/tensor.h"
#include "model/attention.h"
#include "model/checkpoint.h"
#include "model/decoder.h"
#include "model/fused_ops.h"
#include "model/lora.h"
#include "model/model_wrap.h"
#include "model/safetensors.h"
#include "model/scoring.h"

namespace lamer::model {

namespace {

thread_local Napi::FunctionReference* gModelClass = nullptr;

// The plain config object built by src/model/config.ts (toNativeConfig).
DecoderConfig ReadConfig(const Napi::Value& value) {
  if (!value.IsObject()) Fail("E_ARG", "model config must be an object");
  const args::Fields o(value.As<Napi::Object>(), "model config");
  DecoderConfig c;
  c.model_type = o.Choice<std::string>("modelType", {{"qwen3", "qwen3"}, {"qwen2", "qwen2"}, {"llama", "llama"}});
  c.vocab_size = o.Integer("vocabSize", 1);
  c.hidden_size = o.Integer("hiddenSize", 1);
  c.intermediate_size = o.Integer("intermediateSize", 1);
  c.num_hidden_layers = o.Integer("numHiddenLayers", 0);
  c.num_attention_heads = o.Integer("numAttentionHeads", 1);
  c.num_key_value_heads = o.Integer("numKeyValueHeads", 1);
  c.head_dim = o.Integer("headDim", 2);
  c.rms_norm_eps = o.AnyNumber("rmsNormEps");
  c.rope_theta = o.AnyNumber("ropeTheta");
  c.tie_word_embeddings = o.Bool("tieWordEmbeddings");
  c.qk_norm = o.Bool("qkNorm");
  c.qkv_bias = o.Bool("qkvBias");
  c.o_bias = o.Bool("oBias");
  c.mlp_bias = o.Bool("mlpBias");
  c.rope_factor = o.AnyNumber("ropeFactor");
  c.rope_low_freq_factor = o.AnyNumber("ropeLowFreqFactor");
  c.rope_high_freq_factor = o.AnyNumber("ropeHighFreqFactor");
  c.rope_original_max_position_embeddings = o.Integer("ropeOriginalMaxPositionEmbeddings", 1);
  if (c.num_attention_heads % c.num_key_value_heads != 0) {
    Fail("E_ARG", "model config: numAttentionHeads must be a multiple of numKeyValueHeads");
  }
  if (c.head_dim % 2 != 0) Fail("E_ARG", "model config: headDim must be even (RoPE rotates pairs)");
  return c;
}

// "cuda" means "cuda:0", so a model and the tensors sent to it share one executor (one worker thread per GPU).
at::Device ModelDevice(const std::string& name) {
  at::Device d = ParseDevice(name);
  return d.is_cuda() && !d.has_index() ? at::Device(at::kCUDA, 0) : d;
}

Napi::Value ModelLoad(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    const std::string dir = args::String(info, 0, "modelLoad(dir, config, device, dtype, paramDtype): dir");
    const DecoderConfig config = ReadConfig(info[1]);
    const at::Device device = ModelDevice(args::String(info, 2, "device"));
    const at::ScalarType dtype = ParseDType(args::String(info, 3, "dtype"));
    const at::ScalarType param_dtype = ParseDType(args::String(info, 4, "paramDtype"));
    auto decoder = std::make_shared<std::shared_ptr<Decoder>>();
    Napi::Env env = info.Env();
    return Executor::ForDevice(env, device.str()).Submit(env, [=]() -> Executor::Completion {
      // No-grad, not inference mode: the parameters must stay usable by a later train step.
      at::NoGradGuard no_grad;
      *decoder = std::make_shared<Decoder>(config, LoadParameters(dir, config, device, param_dtype), device, dtype);
      return [decoder](Napi::Env env) -> Napi::Value { return ModelWrap::Wrap(env, std::move(*decoder)); };
    });
  });
}

// Random parameters (model/checkpoint.h InitParameters).
Napi::Value ModelInit(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    const DecoderConfig config = ReadConfig(info[0]);
    const at::Device device = ModelDevice(args::String(info, 1, "modelInit(config, device, dtype, paramDtype, seed, std): device"));
    const at::ScalarType dtype = ParseDType(args::String(info, 2, "dtype"));
    const at::ScalarType param_dtype = ParseDType(args::String(info, 3, "paramDtype"));
    if (info.Length() < 6 || !info[4].IsNumber() || !info[5].IsNumber()) Fail("E_ARG", "modelInit: seed and std must be numbers");
    const uint64_t seed = static_cast<uint64_t>(info[4].As<Napi::Number>().Int64Value());
    const double std = info[5].As<Napi::Number>().DoubleValue();
    auto decoder = std::make_shared<std::shared_ptr<Decoder>>();
    Napi::Env env = info.Env();
    return Executor::ForDevice(env, device.str()).Submit(env, [=]() -> Executor::Completion {
      at::NoGradGuard no_grad;
      *decoder = std::make_shared<Decoder>(config, InitParameters(config, device, param_dtype, seed, std), device, dtype);
      return [decoder](Napi::Env env) -> Napi::Value { return ModelWrap::Wrap(env, std::move(*decoder)); };
    });
  });
}

// { tensors: {name: NativeTensor}, metadata: {k: v}, order: [names in header order] }; tensors are views of the
// mapped file. Synchronous: mapping and validating a header is microseconds to milliseconds of work.
Napi::Value SafetensorsRead(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    const std::string path = args::String(info, 0, "safetensorsRead(path): path");
    const SafetensorsFile file = SafetensorsFile::Open(path);
    Napi::Env env = info.Env();
    Napi::Object out = Napi::Object::New(env);
    Napi::Object tensors = Napi::Object::New(env);
    Napi::Array order = Napi::Array::New(env, file.entries().size());
    uint32_t i = 0;
    for (const auto& e : file.entries()) {
      tensors.Set(e.name, TensorWrap::Wrap(env, file.Tensor(e)));
      order.Set(i++, e.name);
    }
    Napi::Object metadata = Napi::Object::New(env);
    for (const auto& [k, v] : file.metadata()) metadata.Set(k, v);
    out.Set("tensors", tensors);
    out.Set("metadata", metadata);
    out.Set("order", order);
    return out;
  });
}

// safetensorsWrite(path, names, tensors, dtype | null, metadata) -> Promise<void>, on the CPU executor.
Napi::Value SafetensorsWrite(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    const std::string path = args::String(info, 0, "safetensorsWrite(path, names, tensors, dtype, metadata): path");
    if (info.Length() < 3 || !info[1].IsArray() || !info[2].IsArray()) Fail("E_ARG", "safetensorsWrite: names and tensors must be arrays");
    const Napi::Array names = info[1].As<Napi::Array>();
    const Napi::Array tensors = info[2].As<Napi::Array>();
    if (names.Length() != tensors.Length()) Fail("E_ARG", "safetensorsWrite: names and tensors differ in length");
    std::vector<std::pair<std::string, at::Tensor>> items;
    for (uint32_t i = 0; i < names.Length(); ++i) {
      if (!names.Get(i).IsString()) Fail("E_ARG", "safetensorsWrite: names must be strings");
      items.emplace_back(names.Get(i).As<Napi::String>(), TensorWrap::Get(tensors.Get(i), "tensor"));
    }
    const at::ScalarType dtype =
        info.Length() > 3 && info[3].IsString() ? ParseDType(info[3].As<Napi::String>()) : at::ScalarType::Undefined;
    const auto metadata = args::StringMap(info.Length() > 4 ? info[4] : info.Env().Undefined(), "metadata");
    Napi::Env env = info.Env();
    return Executor::ForDevice(env, "cpu").Submit(env, [=]() -> Executor::Completion {
      WriteSafetensors(path, items, dtype, metadata);
      return nullptr;
    });
  });
}

// fusedOpGaps(device, dtype, seed) -> { rotary, swiglu, kvWrite, decodeAttention }: each fused operator against its composite form
// (model/fused_ops.h), for the tests; on the CPU the fused operators run the composite forms themselves.
Napi::Value FusedOpGapsExport(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    const at::Device device = ParseDevice(args::String(info, 0, "fusedOpGaps(device, dtype, seed): device"));
    const at::ScalarType dtype = ParseDType(args::String(info, 1, "fusedOpGaps: dtype"));
    const uint64_t seed = static_cast<uint64_t>(args::Number(info, 2, "fusedOpGaps: seed"));
    const FusedOpGaps g = MeasureFusedOpGaps(device, dtype, seed);
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("rotary", g.rotary);
    out.Set("swiglu", g.swiglu);
    out.Set("kvWrite", g.kv_write);
    out.Set("decodeAttention", g.decode_attention);
    return out;
  });
}

// fusedOpRun(device, dtype, seed) -> { [name]: { shape, data: Float64Array } }: the fused operators' inputs and
// outputs on seeded random inputs (model/fused_ops.h, RunFusedOps), for the tests' own references.
Napi::Value FusedOpRunExport(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    const at::Device device = ParseDevice(args::String(info, 0, "fusedOpRun(device, dtype, seed): device"));
    const at::ScalarType dtype = ParseDType(args::String(info, 1, "fusedOpRun: dtype"));
    const uint64_t seed = static_cast<uint64_t>(args::Number(info, 2, "fusedOpRun: seed"));
    Napi::Env env = info.Env();
    Napi::Object out = Napi::Object::New(env);
    for (const auto& [name, t] : RunFusedOps(device, dtype, seed)) {
      Napi::Array shape = Napi::Array::New(env, t.dim());
      for (int64_t d = 0; d < t.dim(); ++d) shape.Set(static_cast<uint32_t>(d), static_cast<double>(t.size(d)));
      Napi::Float64Array data = Napi::Float64Array::New(env, static_cast<size_t>(t.numel()));
      std::copy_n(t.data_ptr<double>(), t.numel(), data.Data());
      Napi::Object entry = Napi::Object::New(env);
      entry.Set("shape", shape);
      entry.Set("data", data);
      out.Set(name, entry);
    }
    return out;
  });
}

// attentionCheck(device, dtype, seed) -> { gap, masked: { heads, backend }, causal: { heads, backend } }: the two ways
// of passing grouped key/value heads to sdpa against each other (outputs and gradients), and what the decoder's
// sequence attention picks on that device (model/attention.h), for the tests.
Napi::Value AttentionCheckExport(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    const at::Device device = ParseDevice(args::String(info, 0, "attentionCheck(device, dtype, seed): device"));
    const at::ScalarType dtype = ParseDType(args::String(info, 1, "attentionCheck: dtype"));
    const uint64_t seed = static_cast<uint64_t>(args::Number(info, 2, "attentionCheck: seed"));
    const AttentionCheck c = CheckSequenceAttention(device, dtype, seed);
    Napi::Env env = info.Env();
    const auto plan = [&](const std::string& heads, const std::string& backend) {
      Napi::Object o = Napi::Object::New(env);
      o.Set("heads", heads);
      o.Set("backend", backend);
      return o;
    };
    Napi::Object out = Napi::Object::New(env);
    out.Set("gap", c.gap);
    out.Set("masked", plan(c.masked_heads, c.masked_backend));
    out.Set("causal", plan(c.causal_heads, c.causal_backend));
    return out;
  });
}

// timeDecodeAttention(device, dtype, { kvHeads, groups, headDim, capacity, lengths, iters }) -> seconds per call of
// decode attention alone (model/fused_ops.h), for the GPU bench.
Napi::Value TimeDecodeAttentionExport(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    const at::Device device = ParseDevice(args::String(info, 0, "timeDecodeAttention(device, dtype, shape): device"));
    const at::ScalarType dtype = ParseDType(args::String(info, 1, "timeDecodeAttention: dtype"));
    if (info.Length() < 3 || !info[2].IsObject()) Fail("E_ARG", "timeDecodeAttention: shape must be an object");
    const Napi::Object o = info[2].As<Napi::Object>();
    const auto integer = [&](const char* key) {
      const Napi::Value v = o.Get(key);
      if (!v.IsNumber()) Fail("E_ARG", std::string("timeDecodeAttention: ") + key + " must be a number");
      return static_cast<int64_t>(v.As<Napi::Number>().Int64Value());
    };
    const Napi::Value lv = o.Get("lengths");
    if (!lv.IsArray()) Fail("E_ARG", "timeDecodeAttention: lengths must be an array of numbers");
    const Napi::Array la = lv.As<Napi::Array>();
    std::vector<int64_t> lengths;
    for (uint32_t i = 0; i < la.Length(); ++i) lengths.push_back(static_cast<int64_t>(la.Get(i).As<Napi::Number>().Int64Value()));
    const double seconds = TimeDecodeAttention(device, dtype, integer("kvHeads"), integer("groups"), integer("headDim"),
                                               integer("capacity"), lengths, integer("iters"));
    return Napi::Number::New(info.Env(), seconds);
  });
}

void RegisterModel(Napi::Env env, Napi::Object exports) {
  ModelWrap::Init(env, exports);
  exports.Set("modelLoad", Napi::Function::New(env, ModelLoad));
  exports.Set("modelInit", Napi::Function::New(env, ModelInit));
  exports.Set("safetensorsRead", Napi::Function::New(env, SafetensorsRead));
  exports.Set("safetensorsWrite", Napi::Function::New(env, SafetensorsWrite));
  exports.Set("fusedOpGaps", Napi::Function::New(env, FusedOpGapsExport));
  exports.Set("fusedOpRun", Napi::Function::New(env, FusedOpRunExport));
  exports.Set("attentionCheck", Napi::Function::New(env, AttentionCheckExport));
  exports.Set("timeDecodeAttention", Napi::Function::New(env, TimeDecodeAttentionExport));
}

}  // namespace

void ModelWrap::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function fn = DefineClass(env, "NativeModel",
                                  {
                                      InstanceMethod<&ModelWrap::Logprobs>("logprobs"),
                                      InstanceMethod<&ModelWrap::Forward>("forward"),
                                      InstanceMethod<&ModelWrap::Parameters>("parameters"),
                                      InstanceMethod<&ModelWrap::SaveShard>("saveShard"),
                                      InstanceMethod<&ModelWrap::SetLora>("setLora"),
                                      InstanceMethod<&ModelWrap::LoraParameters>("loraParameters"),
                                      InstanceMethod<&ModelWrap::MergeLora>("mergeLora"),
                                      InstanceMethod<&ModelWrap::SetLoraMerged>("setLoraMerged"),
                                      InstanceAccessor<&ModelWrap::Lora>("lora"),
                                      InstanceMethod<&ModelWrap::Dispose>("dispose"),
                                      InstanceAccessor<&ModelWrap::Disposed>("disposed"),
                                      InstanceAccessor<&ModelWrap::Device>("device"),
                                      InstanceAccessor<&ModelWrap::DType>("dtype"),
                                      InstanceAccessor<&ModelWrap::ParamDType>("paramDtype"),
                                  });
  auto* ref = new Napi::FunctionReference(Napi::Persistent(fn));
  gModelClass = ref;
  env.AddCleanupHook([ref]() {
    if (gModelClass == ref) gModelClass = nullptr;
    delete ref;
  });
  exports.Set("NativeModel", fn);
}

Napi::Object ModelWrap::Wrap(Napi::Env env, std::shared_ptr<Decoder> decoder) {
  if (gModelClass == nullptr) Fail("E_NATIVE", "model class used before the addon was initialised");
  auto* holder = new std::shared_ptr<Decoder>(std::move(decoder));
  Napi::Object obj;
  try {
    obj = gModelClass->New({Napi::External<std::shared_ptr<Decoder>>::New(env, holder)});
  } catch (...) {
    delete holder;
    throw;
  }
  delete holder;
  return obj;
}

ModelWrap::ModelWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ModelWrap>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw MakeError(info.Env(), {"E_ARG", "NativeModel is created by modelLoad/modelInit; use Policy.load(...) in JS"});
  }
  decoder_ = std::move(*info[0].As<Napi::External<std::shared_ptr<Decoder>>>().Data());
}

std::shared_ptr<Decoder> ModelWrap::Get(const Napi::Value& value, const char* what) {
  if (gModelClass == nullptr || !value.IsObject() || !value.As<Napi::Object>().InstanceOf(gModelClass->Value())) {
    Fail("E_ARG", std::string(what) + " must be a NativeModel");
  }
  ModelWrap* w = ModelWrap::Unwrap(value.As<Napi::Object>());
  if (!w->decoder_) Fail("E_DISPOSED", std::string(what) + " was disposed");
  return w->decoder_;
}

std::string ModelWrap::ExecutorName(const Decoder& d) { return d.device().str(); }

namespace {

// Copies an array of Int32Array token sequences out of JS memory (only lent for the call).
std::vector<std::vector<int64_t>> ReadSequences(const Napi::Value& v, int64_t vocab) {
  if (!v.IsArray()) Fail("E_ARG", "sequences must be an array of Int32Array");
  const Napi::Array arr = v.As<Napi::Array>();
  std::vector<std::vector<int64_t>> seqs(arr.Length());
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    const Napi::Value item = arr.Get(i);
    if (!args::IsTypedArrayOf<int32_t>(item)) Fail("E_ARG", "sequence " + std::to_string(i) + " must be an Int32Array");
    seqs[i] = args::CopyTypedArray<int64_t>(item.As<Napi::Int32Array>());
    for (size_t t = 0; t < seqs[i].size(); ++t) {
      if (seqs[i][t] < 0 || seqs[i][t] >= vocab) {
        Fail("E_ARG", "sequence " + std::to_string(i) + " token " + std::to_string(t) + ": id " + std::to_string(seqs[i][t]) +
                          " outside the vocabulary [0, " + std::to_string(vocab) + ")");
      }
    }
  }
  return seqs;
}

}  // namespace

// logprobs(sequences: Int32Array[], starts: number[], temperature, tokenBudget) -> Promise<Float32Array[]>:
// result[j][t - starts[j]] = log softmax(logits / temperature) of token seq[t] given seq[0..t-1], for t >= starts[j].
Napi::Value ModelWrap::Logprobs(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    std::shared_ptr<Decoder> d = Get(Value());
    auto seqs = ReadSequences(info[0], d->config().vocab_size);
    if (info.Length() < 4 || !info[1].IsArray() || !info[2].IsNumber() || !info[3].IsNumber()) {
      Fail("E_ARG", "logprobs(sequences, starts, temperature, tokenBudget)");
    }
    const Napi::Array starts_arr = info[1].As<Napi::Array>();
    if (starts_arr.Length() != seqs.size()) Fail("E_ARG", "logprobs: one start per sequence expected");
    std::vector<int64_t> starts(seqs.size());
    for (size_t j = 0; j < seqs.size(); ++j) {
      const Napi::Value s = starts_arr.Get(static_cast<uint32_t>(j));
      if (!s.IsNumber()) Fail("E_ARG", "logprobs: starts must be numbers");
      starts[j] = s.As<Napi::Number>().Int64Value();
      if (starts[j] < 1 || starts[j] > static_cast<int64_t>(seqs[j].size())) {
        Fail("E_ARG", "logprobs: start " + std::to_string(starts[j]) + " of sequence " + std::to_string(j) + " must be in [1, " +
                          std::to_string(seqs[j].size()) + "] (the first token has no prediction)");
      }
    }
    const double temperature = info[2].As<Napi::Number>().DoubleValue();
    if (!(temperature > 0)) Fail("E_ARG", "logprobs: temperature must be > 0");
    const int64_t budget = std::max<int64_t>(1, info[3].As<Napi::Number>().Int64Value());
    auto result = std::make_shared<std::vector<std::vector<float>>>(seqs.size());
    Napi::Env env = info.Env();
    return Executor::ForDevice(env, ExecutorName(*d))
        .Submit(env, [d, seqs = std::move(seqs), starts, temperature, budget, result]() -> Executor::Completion {
          *result = SequenceLogprobs(*d, seqs, starts, temperature, budget);
          return [result](Napi::Env env) -> Napi::Value {
            Napi::Array out = Napi::Array::New(env, result->size());
            for (size_t j = 0; j < result->size(); ++j) {
              const auto& v = (*result)[j];
              Napi::Float32Array a = Napi::Float32Array::New(env, v.size());
              std::copy(v.begin(), v.end(), a.Data());
              out.Set(static_cast<uint32_t>(j), a);
            }
            return out;
          };
        });
  });
}

// forward(sequences: Int32Array[]) -> Promise<NativeTensor>: fp32 logits [B, T, vocab] of the left-padded batch.
Napi::Value ModelWrap::Forward(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    std::shared_ptr<Decoder> d = Get(Value());
    auto seqs = ReadSequences(info[0], d->config().vocab_size);
    if (seqs.empty()) Fail("E_ARG", "forward: at least one sequence expected");
    for (const auto& s : seqs) {
      if (s.empty()) Fail("E_ARG", "forward: sequences must not be empty");
    }
    auto logits = std::make_shared<at::Tensor>();
    Napi::Env env = info.Env();
    return Executor::ForDevice(env, ExecutorName(*d)).Submit(env, [d, seqs = std::move(seqs), logits]() -> Executor::Completion {
      *logits = SequenceLogits(*d, seqs);
      return [logits](Napi::Env env) -> Napi::Value { return TensorWrap::Wrap(env, std::move(*logits)); };
    });
  });
}

Napi::Value ModelWrap::Parameters(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    std::shared_ptr<Decoder> d = Get(Value());
    Napi::Object out = Napi::Object::New(info.Env());
    for (const auto& [name, t] : d->parameters()) out.Set(name, TensorWrap::Wrap(info.Env(), t));
    return out;
  });
}

// saveShard(path, names, dtype | null, metadata) -> Promise<void>: writes the named parameters, on the model's
// executor so a save never interleaves with a job that updates the parameters.
Napi::Value ModelWrap::SaveShard(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    std::shared_ptr<Decoder> d = Get(Value());
    const std::string path = args::String(info, 0, "saveShard(path, names, dtype, metadata): path");
    if (info.Length() < 2 || !info[1].IsArray()) Fail("E_ARG", "saveShard: names must be an array");
    const Napi::Array arr = info[1].As<Napi::Array>();
    std::vector<std::string> names;
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      if (!arr.Get(i).IsString()) Fail("E_ARG", "saveShard: names must be strings");
      names.push_back(arr.Get(i).As<Napi::String>());
      if (!d->parameters().count(names.back()) && !d->lora_parameters().count(names.back()))
        Fail("E_ARG", "saveShard: no parameter '" + names.back() + "'");
    }
    const at::ScalarType dtype =
        info.Length() > 2 && info[2].IsString() ? ParseDType(info[2].As<Napi::String>()) : at::ScalarType::Undefined;
    const auto metadata = args::StringMap(info.Length() > 3 ? info[3] : info.Env().Undefined(), "metadata");
    Napi::Env env = info.Env();
    return Executor::ForDevice(env, ExecutorName(*d)).Submit(env, [d, path, names, dtype, metadata]() -> Executor::Completion {
      at::NoGradGuard no_grad;
      std::vector<std::pair<std::string, at::Tensor>> items;
      for (const auto& n : names) {
        auto it = d->parameters().find(n);
        items.emplace_back(n, it != d->parameters().end() ? it->second : d->lora_parameters().at(n));
      }
      WriteSafetensors(path, items, dtype, metadata);
      return nullptr;
    });
  });
}

// setLora({r, alpha, dropout, rslora, modules}, tensors | null, seed, dtype) -> Promise<void>: attaches an adapter to
// the module paths given, its tensors copied from `tensors` (by peft key) or drawn as peft initialises them, kept in
// `dtype` on the model's device.
Napi::Value ModelWrap::SetLora(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    std::shared_ptr<Decoder> d = Get(Value());
    if (info.Length() < 4 || !info[0].IsObject()) Fail("E_ARG", "setLora(options, tensors, seed, dtype): options must be an object");
    const args::Fields o(info[0].As<Napi::Object>(), "LoRA options");
    LoraOptions lora;
    lora.r = o.Integer("r", 1);
    lora.alpha = o.AnyNumber("alpha");
    lora.dropout = o.AnyNumber("dropout");
    lora.rslora = o.Bool("rslora");
    const Napi::Value modules = info[0].As<Napi::Object>().Get("modules");
    if (!modules.IsArray()) Fail("E_ARG", "LoRA options: 'modules' must be an array of module paths");
    const Napi::Array arr = modules.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      if (!arr.Get(i).IsString()) Fail("E_ARG", "LoRA options: 'modules' must be an array of module paths");
      lora.modules.push_back(arr.Get(i).As<Napi::String>());
    }
    std::map<std::string, at::Tensor> tensors;
    const bool given = !info[1].IsNull() && !info[1].IsUndefined();
    if (given) {
      if (!info[1].IsObject()) Fail("E_ARG", "setLora: tensors must be an object of NativeTensor by name, or null");
      const Napi::Object obj = info[1].As<Napi::Object>();
      const Napi::Array keys = obj.GetPropertyNames();
      for (uint32_t i = 0; i < keys.Length(); ++i) {
        const std::string k = keys.Get(i).As<Napi::String>();
        tensors.emplace(k, TensorWrap::Get(obj.Get(k), ("LoRA tensor '" + k + "'").c_str()));
      }
    }
    const uint64_t seed = static_cast<uint64_t>(args::Number(info, 2, "setLora: seed"));
    const at::ScalarType dtype = ParseDType(args::String(info, 3, "setLora: dtype"));
    Napi::Env env = info.Env();
    return Executor::ForDevice(env, ExecutorName(*d)).Submit(env, [d, lora, tensors, given, seed, dtype]() -> Executor::Completion {
      at::NoGradGuard no_grad;
      std::map<std::string, at::Tensor> params;
      if (given) {
        for (const auto& [k, t] : tensors) {
          at::Tensor p = t.to(d->device(), dtype);
          if (p.is_alias_of(t)) p = p.clone();
          params.emplace(k, std::move(p));
        }
      } else {
        params = InitLoraParameters(d->config(), lora, d->device(), dtype, seed);
      }
      d->SetLora(lora, std::move(params));
      return nullptr;
    });
  });
}

Napi::Value ModelWrap::LoraParameters(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    std::shared_ptr<Decoder> d = Get(Value());
    Napi::Object out = Napi::Object::New(info.Env());
    for (const auto& [name, t] : d->lora_parameters()) out.Set(name, TensorWrap::Wrap(info.Env(), t));
    return out;
  });
}

// mergeLora() -> Promise<void>: the adapter folded into the base weights (Decoder::MergeLora).
Napi::Value ModelWrap::MergeLora(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    std::shared_ptr<Decoder> d = Get(Value());
    Napi::Env env = info.Env();
    return Executor::ForDevice(env, ExecutorName(*d)).Submit(env, [d]() -> Executor::Completion {
      d->MergeLora();
      return nullptr;
    });
  });
}

// setLoraMerged(on) -> Promise<void>: forwards without gradients read merged copies W + scale B A
// (Decoder::SetLoraMerged).
Napi::Value ModelWrap::SetLoraMerged(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    std::shared_ptr<Decoder> d = Get(Value());
    if (info.Length() < 1 || !info[0].IsBoolean()) Fail("E_ARG", "setLoraMerged(on): on must be a boolean");
    const bool on = info[0].As<Napi::Boolean>();
    Napi::Env env = info.Env();
    return Executor::ForDevice(env, ExecutorName(*d)).Submit(env, [d, on]() -> Executor::Completion {
      d->SetLoraMerged(on);
      return nullptr;
    });
  });
}

// lora: {r, alpha, dropout, rslora, modules} of the attached adapter, or null.
Napi::Value ModelWrap::Lora(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    std::shared_ptr<Decoder> d = Get(Value());
    const LoraOptions* l = d->lora();
    if (l == nullptr) return info.Env().Null();
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("r", static_cast<double>(l->r));
    out.Set("alpha", l->alpha);
    out.Set("dropout", l->dropout);
    out.Set("rslora", l->rslora);
    out.Set("merged", d->lora_merged());
    Napi::Array modules = Napi::Array::New(info.Env(), l->modules.size());
    for (size_t i = 0; i < l->modules.size(); ++i) modules.Set(static_cast<uint32_t>(i), l->modules[i]);
    out.Set("modules", modules);
    return out;
  });
}

// Drops this handle's reference; jobs already queued keep theirs, and the parameters (and the mapped file) are
// freed when the last of them finishes.
Napi::Value ModelWrap::Dispose(const Napi::CallbackInfo& info) {
  decoder_.reset();
  return info.Env().Undefined();
}

Napi::Value ModelWrap::Disposed(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), !decoder_); }

Napi::Value ModelWrap::Device(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value { return Napi::String::New(info.Env(), Get(Value())->device().str()); });
}

Napi::Value ModelWrap::DType(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value { return Napi::String::New(info.Env(), DTypeName(Get(Value())->compute_dtype())); });
}

Napi::Value ModelWrap::ParamDType(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value { return Napi::String::New(info.Env(), DTypeName(Get(Value())->param_dtype())); });
}

LAMER_REGISTER(model, RegisterModel, 110)

}  // namespace lamer::model
