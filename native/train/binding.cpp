// N-API binding of the train concern: `new NativeOptimizer(model, options)` holds the optimizer state (and the PPO value
// head) of one model; its step/values/save/load run on the model's device executor, in order with every other job on
// that model, and return Promises.
#include <napi.h>

#include <atomic>
#include <limits>
#include <memory>

#include "bridge/args.h"
#include "bridge/errors.h"
#include "bridge/executor.h"
#include "bridge/registry.h"
#include "bridge/tensor.h"
#include "distributed/binding.h"
#include "model/model_wrap.h"
#include "train/optimizer.h"

namespace lamer::train {

namespace {

// {ids: Int32Array, lengths: Int32Array, starts: Int32Array, advantages?, oldLogprobs?, refLogprobs?, returns?,
// oldValues?: Float32Array}, copied out of JS memory (only lent for the call).
Batch ReadBatch(const Napi::Value& value) {
  if (!value.IsObject()) Fail("E_ARG", "train batch must be an object");
  const args::Fields f(value.As<Napi::Object>(), "train batch");
  Batch b;
  std::vector<int64_t> lengths;
  f.TypedArray<int32_t>("ids", true, b.ids);
  f.TypedArray<int32_t>("lengths", true, lengths);
  f.TypedArray<int32_t>("starts", true, b.starts);
  if (lengths.size() != b.starts.size()) Fail("E_ARG", "train batch: 'lengths' and 'starts' differ in length");
  b.row_begin.assign(lengths.size() + 1, 0);
  for (size_t r = 0; r < lengths.size(); ++r) {
    if (lengths[r] < 0) Fail("E_ARG", "train batch: negative length in row " + std::to_string(r));
    b.row_begin[r + 1] = b.row_begin[r] + lengths[r];
  }
  f.TypedArray<float>("advantages", false, b.advantages);
  f.TypedArray<float>("oldLogprobs", false, b.old_logprobs);
  f.TypedArray<float>("refLogprobs", false, b.ref_logprobs);
  f.TypedArray<float>("returns", false, b.returns);
  f.TypedArray<float>("oldValues", false, b.old_values);
  return b;
}

// Every loss and optimizer field is required: their defaults live once, in the config schema (src/train/options.ts),
// whose ranges these are (a value the config accepts is never refused here); the flags below are the binding's own
// (tests and diagnostics).
StepOptions ReadStepOptions(const Napi::Value& value) {
  using Bound = args::Fields::Bound;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  StepOptions s;
  if (!value.IsObject()) Fail("E_ARG", "train options must be an object");
  const args::Fields o(value.As<Napi::Object>(), "train options");
  s.objective = o.Choice<Objective>("objective", {{"policy", Objective::kPolicy}, {"sft", Objective::kSft}});
  const args::Fields l = o.Object("loss");
  LossOptions& L = s.loss;
  const std::string policy_loss = l.String("policyLoss");
  L.policy_loss = FindPolicyLoss(policy_loss);
  if (!L.policy_loss) {
    std::string names;
    for (const auto& [n, fn] : PolicyLosses()) names += (names.empty() ? "" : ", ") + n;
    Fail("E_ARG", l.Label("policyLoss") + " must be one of " + names + ", found '" + policy_loss + "'");
  }
  L.clip_low = l.NumberIn("clipLow", 0, Bound::kClosed, 1, Bound::kOpen);
  L.clip_high = l.NumberIn("clipHigh", 0, Bound::kClosed, kInf, Bound::kOpen);
  L.dual_clip = l.NumberIn("dualClip", 1, Bound::kOpen, kInf, Bound::kOpen);
  L.aggregation = l.Choice<Aggregation>("aggregation", {{"token-mean", Aggregation::kTokenMean},
                                                        {"seq-mean-token-sum", Aggregation::kSeqMeanTokenSum},
                                                        {"seq-mean-token-mean", Aggregation::kSeqMeanTokenMean}});
  L.entropy_coef = l.NumberIn("entropyCoef", 0, Bound::kClosed, kInf, Bound::kOpen);
  const args::Fields kl = l.Object("kl");
  L.kl = kl.Choice<KlType>("type", {{"none", KlType::kNone}, {"low_var_kl", KlType::kLowVar}, {"kl", KlType::kK1}, {"mse", KlType::kMse}});
  L.kl_coef = kl.NumberIn("coef", 0, Bound::kClosed, kInf, Bound::kOpen);
  L.value_clip = l.NumberIn("valueClip", 0, Bound::kOpen, kInf, Bound::kOpen);
  L.value_coef = l.NumberIn("valueCoef", 0, Bound::kClosed, kInf, Bound::kOpen);
  L.temperature = l.NumberIn("temperature", 0, Bound::kOpen, kInf, Bound::kOpen);
  s.micro_batch_tokens = o.Integer("microBatchTokens", 1);
  s.max_grad_norm = o.NumberIn("maxGradNorm", 0, Bound::kClosed, kInf, Bound::kOpen);
  s.lr = o.NumberIn("lr", 0, Bound::kClosed, kInf, Bound::kOpen);
  s.update = o.Bool("update", true);
  s.with_grad = o.Bool("withGrad", true);
  s.return_grads = o.Bool("returnGrads", false);
  s.chunked = o.Bool("chunked", true);
  s.chunk_bytes = o.Integer("chunkBytes", 1);
  s.gradient_checkpointing = o.Bool("gradientCheckpointing");
  s.share_prefix = o.Bool("sharePrefix", false);
  s.reference_base = o.Bool("referenceBase", false);
  const Napi::Object obj = value.As<Napi::Object>();
  const Napi::Value group = obj.Get("group");
  if (!group.IsUndefined() && !group.IsNull()) s.group = dist::UnwrapGroup(group, "train options: 'group'");
  const Napi::Value reference = obj.Get("reference");
  if (!reference.IsUndefined() && !reference.IsNull()) s.reference = model::ModelWrap::Get(reference, "train options: 'reference'");
  return s;
}

Napi::Float32Array ToFloat32Array(Napi::Env env, const std::vector<float>& v) {
  Napi::Float32Array a = Napi::Float32Array::New(env, v.size());
  std::copy(v.begin(), v.end(), a.Data());
  return a;
}

// {metrics, logprobs, grads?} of a step, on the JS thread.
Napi::Value StepResultObject(Napi::Env env, const StepResult& result) {
  Napi::Object out = Napi::Object::New(env);
  Napi::Object metrics = Napi::Object::New(env);
  for (const auto& [k, v] : result.metrics) metrics.Set(k, v);
  out.Set("metrics", metrics);
  out.Set("logprobs", ToFloat32Array(env, result.logprobs));
  if (!result.grads.empty()) {
    Napi::Object grads = Napi::Object::New(env);
    for (const auto& [k, g] : result.grads) grads.Set(k, TensorWrap::Wrap(env, g.to(at::kCPU)));
    out.Set("grads", grads);
  }
  return out;
}

class OptimizerWrap : public Napi::ObjectWrap<OptimizerWrap> {
 public:
  static void Init(Napi::Env env, Napi::Object exports) {
    Napi::Function fn = DefineClass(env, "NativeOptimizer",
                                    {
                                        InstanceMethod<&OptimizerWrap::Step>("step"),
                                        InstanceMethod<&OptimizerWrap::Stage>("stage"),
                                        InstanceMethod<&OptimizerWrap::StepStaged>("stepStaged"),
                                        InstanceMethod<&OptimizerWrap::Gae>("gae"),
                                        InstanceMethod<&OptimizerWrap::Values>("values"),
                                        InstanceMethod<&OptimizerWrap::Save>("save"),
                                        InstanceMethod<&OptimizerWrap::Load>("load"),
                                        InstanceMethod<&OptimizerWrap::Memory>("memory"),
                                        InstanceMethod<&OptimizerWrap::Dispose>("dispose"),
                                        InstanceAccessor<&OptimizerWrap::StepCount>("stepCount"),
                                        InstanceAccessor<&OptimizerWrap::HasValueHead>("hasValueHead"),
                                    });
    exports.Set("NativeOptimizer", fn);
  }

  // new NativeOptimizer(model, {beta1, beta2, eps, weightDecay, valueHead})
  explicit OptimizerWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<OptimizerWrap>(info) {
    Guarded(info.Env(), [&]() {
      auto decoder = model::ModelWrap::Get(info.Length() > 0 ? info[0] : info.Env().Undefined(), "NativeOptimizer(model, options): model");
      // Every field is required: the defaults live in TS (src/train/options.ts, src/train/optimizer.ts).
      if (info.Length() < 2 || !info[1].IsObject()) Fail("E_ARG", "NativeOptimizer(model, options): options must be an object");
      const args::Fields o(info[1].As<Napi::Object>(), "optimizer options");
      using Bound = args::Fields::Bound;
      constexpr double kInf = std::numeric_limits<double>::infinity();
      AdamWOptions adam;
      adam.beta1 = o.NumberIn("beta1", 0, Bound::kClosed, 1, Bound::kOpen);
      adam.beta2 = o.NumberIn("beta2", 0, Bound::kClosed, 1, Bound::kOpen);
      adam.eps = o.NumberIn("eps", 0, Bound::kOpen, kInf, Bound::kOpen);
      adam.weight_decay = o.NumberIn("weightDecay", 0, Bound::kClosed, kInf, Bound::kOpen);
      const bool value_head = o.Bool("valueHead");
      const int zero = static_cast<int>(o.Integer("zero", 0));
      if (zero > 2) Fail("E_ARG", "optimizer options: 'zero' must be 0, 1 or 2");
      executor_ = model::ModelWrap::ExecutorName(*decoder);
      optimizer_ = std::make_shared<Optimizer>(std::move(decoder), adam, value_head, zero);
      return 0;
    });
  }

 private:
  std::shared_ptr<Optimizer> Get() {
    if (!optimizer_) Fail("E_DISPOSED", "this optimizer was disposed");
    return optimizer_;
  }

  // step(batch, options) -> Promise<{metrics, logprobs, grads?}>
  Napi::Value Step(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto t = Get();
      Batch batch = ReadBatch(info[0]);
      const StepOptions options = ReadStepOptions(info.Length() > 1 ? info[1] : info.Env().Undefined());
      auto result = std::make_shared<StepResult>();
      auto count = step_count_;
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_)
          .Submit(env, [t, batch = std::move(batch), options, result, count]() -> Executor::Completion {
            *result = t->Step(batch, options);
            count->store(t->step());
            return [result](Napi::Env env) -> Napi::Value { return StepResultObject(env, *result); };
          });
    });
  }

  // stage(batch, rowReturns?) -> Promise<void>: the iteration's rows, copied once into native memory and validated;
  // later stepStaged/gae calls name them by index. Replaces the batch staged before (steps already queued keep theirs).
  Napi::Value Stage(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto t = Get();
      auto staged = std::make_shared<StagedBatch>();
      staged->batch = ReadBatch(info[0]);
      if (info.Length() > 1 && !info[1].IsUndefined()) {
        if (!args::IsTypedArrayOf<float>(info[1])) Fail("E_ARG", "stage(batch, rowReturns): rowReturns must be a Float32Array");
        staged->row_returns = args::CopyTypedArray<float>(info[1].As<Napi::Float32Array>());
        if (static_cast<int64_t>(staged->row_returns.size()) != staged->batch.rows())
          Fail("E_ARG", "stage: rowReturns must have one value per row");
      }
      staged_ = staged;
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [t, staged]() -> Executor::Completion {
        staged->batch.Validate(t->decoder()->config().vocab_size);
        return nullptr;
      });
    });
  }

  std::shared_ptr<StagedBatch> Staged() const {
    if (!staged_) Fail("E_ARG", "no batch is staged: call stage(batch) first");
    return staged_;
  }

  // stepStaged(rows: Int32Array, options) -> Promise<{metrics, logprobs}>: one step over those rows of the staged batch.
  Napi::Value StepStaged(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto t = Get();
      auto staged = Staged();
      if (info.Length() < 1 || !args::IsTypedArrayOf<int32_t>(info[0]))
        Fail("E_ARG", "stepStaged(rows, options): rows must be an Int32Array");
      std::vector<int64_t> rows = args::CopyTypedArray<int64_t>(info[0].As<Napi::Int32Array>());
      const StepOptions options = ReadStepOptions(info.Length() > 1 ? info[1] : info.Env().Undefined());
      auto result = std::make_shared<StepResult>();
      auto count = step_count_;
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_)
          .Submit(env, [t, staged, rows = std::move(rows), options, result, count]() -> Executor::Completion {
            *result = t->Step(*staged, rows, options);
            count->store(t->step());
            return [result](Napi::Env env) -> Napi::Value { return StepResultObject(env, *result); };
          });
    });
  }

  // gae(gamma, lambda, microBatchTokens) -> Promise<void>: PPO's values and GAE over the staged batch (which must carry
  // row returns); fills its advantages, returns and oldValues.
  Napi::Value Gae(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto t = Get();
      auto staged = Staged();
      const double gamma = args::Number(info, 0, "gae(gamma, lambda, microBatchTokens): gamma");
      const double lambda = args::Number(info, 1, "gae(gamma, lambda, microBatchTokens): lambda");
      const double budget = args::Number(info, 2, "gae(gamma, lambda, microBatchTokens): microBatchTokens");
      if (!(budget >= 1)) Fail("E_ARG", "gae: microBatchTokens must be >= 1");
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [t, staged, gamma, lambda, budget]() -> Executor::Completion {
        t->Gae(*staged, gamma, lambda, static_cast<int64_t>(budget));
        return nullptr;
      });
    });
  }

  // values(batch, microBatchTokens) -> Promise<Float32Array> (one value per response token)
  Napi::Value Values(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto t = Get();
      Batch batch = ReadBatch(info[0]);
      const double tokens = args::Number(info, 1, "values(batch, microBatchTokens): microBatchTokens");
      if (!(tokens >= 1)) Fail("E_ARG", "values: microBatchTokens must be >= 1");
      const int64_t budget = static_cast<int64_t>(tokens);
      auto values = std::make_shared<std::vector<float>>();
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [t, batch = std::move(batch), budget, values]() -> Executor::Completion {
        *values = t->Values(batch, budget);
        return [values](Napi::Env env) -> Napi::Value { return ToFloat32Array(env, *values); };
      });
    });
  }

  static std::shared_ptr<dist::Group> OptionalGroup(const Napi::CallbackInfo& info, size_t i, const char* what) {
    if (info.Length() <= i || info[i].IsUndefined() || info[i].IsNull()) return nullptr;
    return dist::UnwrapGroup(info[i], what);
  }

  // save(path, metadata, group?) -> Promise<void>. With ZeRO over a group every rank calls it, the others with path "".
  Napi::Value Save(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto t = Get();
      if (info.Length() < 1 || !info[0].IsString()) Fail("E_ARG", "save(path, metadata, group): path must be a string");
      const std::string path = info[0].As<Napi::String>();
      const auto metadata = args::StringMap(info.Length() > 1 ? info[1] : info.Env().Undefined(), "save: metadata");
      auto group = OptionalGroup(info, 2, "save: group");
      if (path.empty() && !(group && t->zero_stage() > 0 && group->rank() != 0)) Fail("E_ARG", "save: path must not be empty");
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [t, path, metadata, group]() -> Executor::Completion {
        t->Save(path, metadata, group.get());
        return nullptr;
      });
    });
  }

  // load(path, group?) -> Promise<void>
  Napi::Value Load(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto t = Get();
      const std::string path = args::String(info, 0, "load(path, group): path");
      auto group = OptionalGroup(info, 1, "load: group");
      auto count = step_count_;
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [t, path, count, group]() -> Executor::Completion {
        t->Load(path, group.get());
        count->store(t->step());
        return nullptr;
      });
    });
  }

  // memory() -> Promise<{parameters, trainable, trainableCount, gradients, optimizerState}>: bytes held (Optimizer::Memory).
  Napi::Value Memory(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto t = Get();
      auto m = std::make_shared<MemoryBytes>();
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [t, m]() -> Executor::Completion {
        *m = t->Memory();
        return [m](Napi::Env env) -> Napi::Value {
          Napi::Object out = Napi::Object::New(env);
          out.Set("parameters", static_cast<double>(m->parameters));
          out.Set("trainable", static_cast<double>(m->trainable));
          out.Set("trainableCount", static_cast<double>(m->trainable_count));
          out.Set("gradients", static_cast<double>(m->gradients));
          out.Set("optimizerState", static_cast<double>(m->optimizer_state));
          return out;
        };
      });
    });
  }

  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    optimizer_.reset();
    staged_.reset();
    return info.Env().Undefined();
  }

  // Optimizer steps taken so far (as of the last settled job).
  Napi::Value StepCount(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), static_cast<double>(step_count_->load())); }

  Napi::Value HasValueHead(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value { return Napi::Boolean::New(info.Env(), Get()->has_value_head()); });
  }

  std::shared_ptr<Optimizer> optimizer_;
  std::shared_ptr<StagedBatch> staged_;
  std::string executor_;
  std::shared_ptr<std::atomic<int64_t>> step_count_ = std::make_shared<std::atomic<int64_t>>(0);
};

void RegisterTrain(Napi::Env env, Napi::Object exports) { OptimizerWrap::Init(env, exports); }

}  // namespace

LAMER_REGISTER(train, RegisterTrain, 130)

}  // namespace lamer::train
