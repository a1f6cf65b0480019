// N-API binding of the generation engine.
//
//   createEngine(model, { prefillTokens, prefixCacheBytes, slots, cudaGraphs, slotLayout, liveAttention }) -> NativeEngine
//   engine.step(add: Request[], cancel: number[], maxSteps) -> Promise<{ results, active, columns, ... }>
//   engine.capture(sampling, columns) -> Promise<{ graphs }>            (CUDA graphs of every bucket, before requests)
//   engine.release() -> Promise<void>                                   (an idle engine frees its cache and graphs)
//   engine.dispose()
//   engineSample(logits, params[], uniforms) -> { tokens, logprobs }   (the sampler alone, for tests)
//   engineUniform(seed, n) -> number                                    (a request's n-th uniform, for tests)
//
// Steps run on the model's executor thread, in order with every other job on that model. One step at a time per
// engine: the TS engine (src/engine/engine.ts) awaits each before the next.
#include <c10/core/InferenceMode.h>
#include <napi.h>

#include <atomic>
#include <cmath>
#include <memory>

#include "bridge/args.h"
#include "bridge/errors.h"
#include "bridge/executor.h"
#include "bridge/registry.h"
#include "bridge/tensor.h"
#include "engine/generator.h"
#include "engine/sampler.h"
#include "model/model_wrap.h"

namespace lamer::engine {

namespace {

thread_local Napi::FunctionReference* gEngineClass = nullptr;

// Token ids, each in [0, vocab).
std::vector<int64_t> Ids(const Napi::Value& v, const std::string& what, int64_t vocab) {
  std::vector<int64_t> out = args::Int64s(v, what);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] < 0 || out[i] >= vocab) {
      Fail("E_ARG", what + "[" + std::to_string(i) + "] = " + std::to_string(out[i]) + " is outside the vocabulary [0, " +
                        std::to_string(vocab) + ")");
    }
  }
  return out;
}

SamplingParams ReadSampling(const Napi::Object& o, const std::string& where) {
  const args::Fields f(o, where);
  SamplingParams p;
  // Required: the defaults are the engine's, in TS (src/engine/engine.ts).
  p.temperature = f.Number("temperature");
  p.top_p = f.Number("topP");
  p.top_k = static_cast<int64_t>(f.Number("topK"));
  if (!(p.temperature >= 0)) Fail("E_ARG", where + ": temperature must be >= 0 (0 is greedy)");
  if (!(p.top_p > 0 && p.top_p <= 1)) Fail("E_ARG", where + ": topP must be in (0, 1]");
  return p;
}

Request ReadRequest(const Napi::Value& v, size_t index, int64_t vocab) {
  const std::string where = "engine.step: request " + std::to_string(index);
  if (!v.IsObject()) Fail("E_ARG", where + " must be an object");
  const Napi::Object o = v.As<Napi::Object>();
  const args::Fields f(o, where);
  Request r;
  r.id = f.Integer("id", 0);
  r.prompt = Ids(o.Get("prompt"), where + ": prompt", vocab);
  if (r.prompt.empty()) Fail("E_ARG", where + ": prompt must hold at least one token");
  r.sampling = ReadSampling(o, where);
  r.max_new_tokens = f.Integer("maxNewTokens", 1);
  const Napi::Value stops = o.Get("stopIds");
  if (!stops.IsUndefined()) r.stop_ids = Ids(stops, where + ": stopIds", vocab);
  r.seed = static_cast<uint64_t>(f.Integer("seed", 0));
  return r;
}

class EngineWrap : public Napi::ObjectWrap<EngineWrap> {
 public:
  static void Init(Napi::Env env, Napi::Object exports) {
    Napi::Function fn = DefineClass(env, "NativeEngine",
                                    {
                                        InstanceMethod<&EngineWrap::Step>("step"),
                                        InstanceMethod<&EngineWrap::Capture>("capture"),
                                        InstanceMethod<&EngineWrap::ReleaseMemory>("release"),
                                        InstanceMethod<&EngineWrap::Dispose>("dispose"),
                                        InstanceAccessor<&EngineWrap::Disposed>("disposed"),
                                    });
    auto* ref = new Napi::FunctionReference(Napi::Persistent(fn));
    gEngineClass = ref;
    env.AddCleanupHook([ref]() {
      if (gEngineClass == ref) gEngineClass = nullptr;
      delete ref;
    });
    exports.Set("NativeEngine", fn);
  }

  explicit EngineWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EngineWrap>(info) {
    Guarded(info.Env(), [&]() {
      if (info.Length() < 1) Fail("E_ARG", "createEngine(model, options)");
      decoder_ = model::ModelWrap::Get(info[0], "createEngine: model");
      // Every option is required: the defaults live in TS (src/engine/engine.ts, the device profile).
      if (info.Length() < 2 || !info[1].IsObject()) Fail("E_ARG", "createEngine(model, options): options must be an object");
      const args::Fields f(info[1].As<Napi::Object>(), "createEngine options");
      GeneratorOptions options;
      options.prefill_tokens = f.Integer("prefillTokens", 1);
      options.slots = f.Integer("slots", 1);
      options.cuda_graphs = f.Bool("cudaGraphs");
      options.layout = f.Choice<SlotLayout>("slotLayout", {{"packed", SlotLayout::kPacked}, {"fixed", SlotLayout::kFixed}});
      options.live_attention = f.Bool("liveAttention");
      // Bytes to tokens: keys and values of every layer, in the compute dtype.
      const model::DecoderConfig& c = decoder_->config();
      const int64_t token_bytes =
          2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * static_cast<int64_t>(c10::elementSize(decoder_->compute_dtype()));
      options.prefix_cache_tokens = f.Integer("prefixCacheBytes", 0) / token_bytes;
      executor_ = model::ModelWrap::ExecutorName(*decoder_);
      generator_ = std::make_shared<Generator>(decoder_, options);
      busy_ = std::make_shared<std::atomic<bool>>(false);
    });
  }

 private:
  Napi::Value Step(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      if (!generator_) Fail("E_DISPOSED", "engine was disposed");
      if (info.Length() < 3 || !info[0].IsArray() || !info[1].IsArray() || !info[2].IsNumber()) {
        Fail("E_ARG", "engine.step(add: Request[], cancel: number[], maxSteps: number)");
      }
      const int64_t vocab = decoder_->config().vocab_size;
      std::vector<Request> add;
      const Napi::Array adds = info[0].As<Napi::Array>();
      for (uint32_t i = 0; i < adds.Length(); ++i) add.push_back(ReadRequest(adds.Get(i), i, vocab));
      std::vector<int64_t> cancel;
      const Napi::Array cancels = info[1].As<Napi::Array>();
      for (uint32_t i = 0; i < cancels.Length(); ++i) {
        if (!cancels.Get(i).IsNumber()) Fail("E_ARG", "engine.step: cancel must hold request ids");
        cancel.push_back(cancels.Get(i).As<Napi::Number>().Int64Value());
      }
      const int64_t max_steps = info[2].As<Napi::Number>().Int64Value();
      const bool clear_prefixes = info.Length() > 3 && info[3].IsBoolean() && info[3].As<Napi::Boolean>().Value();
      if (max_steps < 0) Fail("E_ARG", "engine.step: maxSteps must be >= 0");
      if (busy_->exchange(true)) Fail("E_ARG", "engine.step: the previous step has not finished (await it first)");

      auto generator = generator_;
      auto busy = busy_;
      auto out = std::make_shared<std::vector<Emitted>>();
      struct After {
        StepStats last;
        int64_t active = 0, columns = 0, prefix_entries = 0, prefix_tokens = 0, graphs = 0, capacity = 0, graph_nodes = 0;
        bool graphs_enabled = false;
        std::string graph_error;
      };
      auto after = std::make_shared<After>();
      Napi::Env env = info.Env();
      try {
        return Executor::ForDevice(env, executor_).Submit(env, [=, add = std::move(add)]() mutable -> Executor::Completion {
          struct Release {
            std::shared_ptr<std::atomic<bool>> flag;
            ~Release() { flag->store(false); }
          } release{busy};
          c10::InferenceMode guard;
          *out = generator->Step(std::move(add), cancel, max_steps, clear_prefixes);
          *after = {generator->last(),           generator->active(),     generator->columns(),  generator->prefix_entries(),
                    generator->prefix_tokens(),  generator->graphs(),     generator->capacity(), generator->graph_nodes(),
                    generator->graphs_enabled(), generator->graph_error()};
          return [out, after](Napi::Env env) -> Napi::Value {
            Napi::Array results = Napi::Array::New(env, out->size());
            for (size_t i = 0; i < out->size(); ++i) {
              const Emitted& e = (*out)[i];
              Napi::Object o = Napi::Object::New(env);
              o.Set("id", Napi::Number::New(env, static_cast<double>(e.id)));
              Napi::Int32Array tokens = Napi::Int32Array::New(env, e.tokens.size());
              std::copy(e.tokens.begin(), e.tokens.end(), tokens.Data());
              Napi::Float32Array logprobs = Napi::Float32Array::New(env, e.logprobs.size());
              std::copy(e.logprobs.begin(), e.logprobs.end(), logprobs.Data());
              o.Set("tokens", tokens);
              o.Set("logprobs", logprobs);
              o.Set("finish", e.finish == Finish::kStop     ? Napi::Value(Napi::String::New(env, "stop"))
                              : e.finish == Finish::kLength ? Napi::Value(Napi::String::New(env, "length"))
                                                            : env.Null());
              results.Set(static_cast<uint32_t>(i), o);
            }
            Napi::Object r = Napi::Object::New(env);
            r.Set("results", results);
            const auto num = [&](const char* key, double v) { r.Set(key, Napi::Number::New(env, v)); };
            const StepStats& l = after->last;
            num("active", static_cast<double>(after->active));
            num("columns", static_cast<double>(after->columns));
            num("steps", static_cast<double>(l.steps));
            num("rows", static_cast<double>(l.rows));
            num("reused", static_cast<double>(l.reused));
            num("prefilled", static_cast<double>(l.prefilled));
            num("padded", static_cast<double>(l.padded));
            num("prefixEntries", static_cast<double>(after->prefix_entries));
            num("prefixTokens", static_cast<double>(after->prefix_tokens));
            num("graphSteps", static_cast<double>(l.graph_steps));
            num("graphs", static_cast<double>(after->graphs));
            num("graphNodes", static_cast<double>(after->graph_nodes));
            r.Set("graphsEnabled", Napi::Boolean::New(env, after->graphs_enabled));
            num("capacity", static_cast<double>(after->capacity));
            num("kvBytesRead", l.kv_bytes_read);
            num("kvBytesLive", l.kv_bytes_live);
            num("prefillSeconds", l.prefill_seconds);
            num("decodeSeconds", l.decode_seconds);
            if (!after->graph_error.empty()) r.Set("graphError", Napi::String::New(env, after->graph_error));
            return r;
          };
        });
      } catch (...) {
        busy_->store(false);
        throw;
      }
    });
  }

  // capture(sampling: { temperature, topP, topK }, columns) -> Promise<{ graphs, error? }>: Generator::CaptureBuckets.
  Napi::Value Capture(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      if (!generator_) Fail("E_DISPOSED", "engine was disposed");
      if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsNumber())
        Fail("E_ARG", "engine.capture(sampling: object, columns: number)");
      const SamplingParams sampling = ReadSampling(info[0].As<Napi::Object>(), "engine.capture: sampling");
      const double columns = info[1].As<Napi::Number>().DoubleValue();
      if (!(columns >= 1) || columns != std::floor(columns)) Fail("E_ARG", "engine.capture: columns must be an integer >= 1");
      if (busy_->exchange(true)) Fail("E_ARG", "engine.capture: a step has not finished (await it first)");
      auto generator = generator_;
      auto busy = busy_;
      Napi::Env env = info.Env();
      try {
        return Executor::ForDevice(env, executor_).Submit(env, [=]() -> Executor::Completion {
          struct Release {
            std::shared_ptr<std::atomic<bool>> flag;
            ~Release() { flag->store(false); }
          } release{busy};
          c10::InferenceMode guard;
          const int64_t graphs = generator->CaptureBuckets(sampling, static_cast<int64_t>(columns));
          const std::string error = generator->graph_error();
          return [graphs, error](Napi::Env env) -> Napi::Value {
            Napi::Object r = Napi::Object::New(env);
            r.Set("graphs", Napi::Number::New(env, static_cast<double>(graphs)));
            if (!error.empty()) r.Set("error", Napi::String::New(env, error));
            return r;
          };
        });
      } catch (...) {
        busy_->store(false);
        throw;
      }
    });
  }

  // release() -> Promise<void>: Generator::Release (an idle engine frees its cache, graphs and prefix cache).
  Napi::Value ReleaseMemory(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      if (!generator_) Fail("E_DISPOSED", "engine was disposed");
      if (busy_->exchange(true)) Fail("E_ARG", "engine.release: a step has not finished (await it first)");
      auto generator = generator_;
      auto busy = busy_;
      Napi::Env env = info.Env();
      try {
        return Executor::ForDevice(env, executor_).Submit(env, [=]() -> Executor::Completion {
          struct Release {
            std::shared_ptr<std::atomic<bool>> flag;
            ~Release() { flag->store(false); }
          } release{busy};
          generator->Release();
          return nullptr;
        });
      } catch (...) {
        busy_->store(false);
        throw;
      }
    });
  }

  // Drops the engine's state; a step in flight finishes on its own reference and its results are still delivered.
  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    generator_.reset();
    decoder_.reset();
    return info.Env().Undefined();
  }

  Napi::Value Disposed(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), !generator_); }

  std::shared_ptr<model::Decoder> decoder_;
  std::shared_ptr<Generator> generator_;
  std::shared_ptr<std::atomic<bool>> busy_;
  std::string executor_;
};

Napi::Value CreateEngine(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    if (gEngineClass == nullptr) Fail("E_NATIVE", "engine class used before the addon was initialised");
    std::vector<napi_value> args;
    for (size_t i = 0; i < info.Length(); ++i) args.push_back(info[i]);
    return gEngineClass->New(args);
  });
}

// engineSample(logits [B, V] fp32 tensor, params [{temperature, topP, topK}], uniforms Float64Array [B])
Napi::Value EngineSample(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    if (info.Length() < 3 || !info[1].IsArray() || !args::IsTypedArrayOf<double>(info[2])) {
      Fail("E_ARG", "engineSample(logits, params[], uniforms: Float64Array)");
    }
    const at::Tensor logits = TensorWrap::Get(info[0], "logits");
    if (logits.dim() != 2 || logits.scalar_type() != at::kFloat) Fail("E_ARG", "engineSample: logits must be fp32 [B, V]");
    const Napi::Array arr = info[1].As<Napi::Array>();
    const Napi::Float64Array u = info[2].As<Napi::Float64Array>();
    const int64_t B = logits.size(0);
    if (arr.Length() != static_cast<uint32_t>(B) || u.ElementLength() != static_cast<size_t>(B)) {
      Fail("E_ARG", "engineSample: one params object and one uniform per row expected");
    }
    std::vector<SamplingParams> params;
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      if (!arr.Get(i).IsObject()) Fail("E_ARG", "engineSample: params must be objects");
      params.push_back(ReadSampling(arr.Get(i).As<Napi::Object>(), "engineSample: params " + std::to_string(i)));
    }
    c10::InferenceMode guard;
    const at::Tensor uniforms =
        at::from_blob(const_cast<double*>(u.Data()), {B}, at::kDouble).to(logits.device(), at::kDouble, false, /*copy=*/true);
    const SamplerPlan plan(params, logits.size(1), logits.device());
    const auto [tokens, logprobs] = plan.Sample(logits, uniforms);
    const at::Tensor t = tokens.to(at::kCPU).to(at::kInt).contiguous();
    const at::Tensor l = logprobs.to(at::kCPU).contiguous();
    Napi::Env env = info.Env();
    Napi::Int32Array ta = Napi::Int32Array::New(env, B);
    std::copy(t.data_ptr<int32_t>(), t.data_ptr<int32_t>() + B, ta.Data());
    Napi::Float32Array la = Napi::Float32Array::New(env, B);
    std::copy(l.data_ptr<float>(), l.data_ptr<float>() + B, la.Data());
    Napi::Object o = Napi::Object::New(env);
    o.Set("tokens", ta);
    o.Set("logprobs", la);
    return o;
  });
}

Napi::Value EngineUniform(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) Fail("E_ARG", "engineUniform(seed, n)");
    const double seed = info[0].As<Napi::Number>().DoubleValue();
    const double n = info[1].As<Napi::Number>().DoubleValue();
    if (seed < 0 || n < 0 || seed != std::floor(seed) || n != std::floor(n)) Fail("E_ARG", "engineUniform: integers >= 0 expected");
    return Napi::Number::New(info.Env(), RequestUniform(static_cast<uint64_t>(seed), static_cast<uint64_t>(n)));
  });
}

void RegisterEngine(Napi::Env env, Napi::Object exports) {
  EngineWrap::Init(env, exports);
  exports.Set("createEngine", Napi::Function::New(env, CreateEngine));
  exports.Set("engineSample", Napi::Function::New(env, EngineSample));
  exports.Set("engineUniform", Napi::Function::New(env, EngineUniform));
}

}  // namespace

LAMER_REGISTER(engine, RegisterEngine, 120)

}  // namespace lamer::engine
