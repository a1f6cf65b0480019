// N-API binding of the distributed concern: `new NativeDistGroup(options)` joins a c10d process group (blocking the
// calling thread until every rank joined or the timeout passed); its collectives run on the executor of the group's
// device (the same thread as the train step on that device, so collectives keep one order on every rank) and return
// Promises. The train step takes the group as its `group` option.
#include "distributed/binding.h"

#include <napi.h>

#include <ATen/core/grad_mode.h>

#include "bridge/args.h"
#include "bridge/errors.h"
#include "bridge/executor.h"
#include "bridge/registry.h"
#include "model/model_wrap.h"

namespace lamer::dist {

namespace {

Napi::FunctionReference* gGroupClass = nullptr;

class GroupWrap : public Napi::ObjectWrap<GroupWrap> {
 public:
  static void Init(Napi::Env env, Napi::Object exports) {
    Napi::Function fn = DefineClass(env, "NativeDistGroup",
                                    {
                                        InstanceMethod<&GroupWrap::AllReduce>("allReduce"),
                                        InstanceMethod<&GroupWrap::ReduceScatter>("reduceScatter"),
                                        InstanceMethod<&GroupWrap::AllGatherFlat>("allGatherFlat"),
                                        InstanceMethod<&GroupWrap::AllGather>("allGather"),
                                        InstanceMethod<&GroupWrap::BroadcastModel>("broadcastModel"),
                                        InstanceMethod<&GroupWrap::Barrier>("barrier"),
                                        InstanceMethod<&GroupWrap::Close>("close"),
                                        InstanceAccessor<&GroupWrap::Rank>("rank"),
                                        InstanceAccessor<&GroupWrap::Size>("size"),
                                        InstanceAccessor<&GroupWrap::Backend>("backend"),
                                    });
    gGroupClass = new Napi::FunctionReference(Napi::Persistent(fn));
    exports.Set("NativeDistGroup", fn);
    Napi::Array backends = Napi::Array::New(env);
    const auto names = AvailableBackends();
    for (size_t i = 0; i < names.size(); ++i) backends.Set(static_cast<uint32_t>(i), names[i]);
    exports.Set("distBackends", backends);
  }

  // new NativeDistGroup({rank, worldSize, localRank, masterAddr, masterPort, timeoutMs, backend, agentStore, restartCount})
  explicit GroupWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<GroupWrap>(info) {
    Guarded(info.Env(), [&]() {
      if (info.Length() < 1 || !info[0].IsObject()) Fail("E_ARG", "NativeDistGroup(options): options must be an object");
      const args::Fields f(info[0].As<Napi::Object>(), "distributed options");
      GroupOptions o;
      o.rank = static_cast<int>(f.Integer("rank", 0));
      o.world_size = static_cast<int>(f.Integer("worldSize", 1));
      // Every field is required: the defaults (and the collective timeout) live in TS, src/train/distributed.ts.
      o.local_rank = static_cast<int>(f.Integer("localRank", 0));
      o.master_addr = f.String("masterAddr");
      o.master_port = static_cast<int>(f.Integer("masterPort", 1));
      o.timeout = std::chrono::milliseconds(f.Integer("timeoutMs", 1));
      o.backend = f.Choice<std::string>("backend", {{"gloo", "gloo"}, {"nccl", "nccl"}});
      o.agent_store = f.Bool("agentStore");
      o.restart_count = static_cast<int>(f.Integer("restartCount", 0));
      group_ = std::make_shared<Group>(o);
      executor_ = group_->device().str();
      return 0;
    });
  }

  static std::shared_ptr<Group> Get(const Napi::Value& value, const char* what) {
    if (gGroupClass == nullptr || !value.IsObject() || !value.As<Napi::Object>().InstanceOf(gGroupClass->Value())) {
      Fail("E_ARG", std::string(what) + " must be a NativeDistGroup");
    }
    GroupWrap* w = GroupWrap::Unwrap(value.As<Napi::Object>());
    if (!w->group_) Fail("E_DIST", std::string(what) + ": the process group was closed");
    return w->group_;
  }

 private:
  std::shared_ptr<Group> Self() {
    if (!group_) Fail("E_DIST", "the process group was closed");
    return group_;
  }

  // allReduce(Float64Array) -> Promise<Float64Array>: the element-wise sum over the ranks.
  Napi::Value AllReduce(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto g = Self();
      if (info.Length() < 1 || !args::IsTypedArrayOf<double>(info[0])) Fail("E_ARG", "allReduce(values): values must be a Float64Array");
      auto values = std::make_shared<std::vector<double>>(args::CopyTypedArray<double>(info[0].As<Napi::Float64Array>()));
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [g, values]() -> Executor::Completion {
        at::Tensor t = at::tensor(*values, at::kDouble).to(g->device());
        g->AllReduceSum({t});
        const at::Tensor h = t.to(at::kCPU).contiguous();
        std::copy(h.data_ptr<double>(), h.data_ptr<double>() + values->size(), values->begin());
        return [values](Napi::Env env) -> Napi::Value {
          Napi::Float64Array a = Napi::Float64Array::New(env, values->size());
          std::copy(values->begin(), values->end(), a.Data());
          return a;
        };
      });
    });
  }

  // reduceScatter(values: Float64Array of size x n) -> Promise<Float64Array>: this rank's n elements of the sum over
  // the ranks (ZeRO stage 2's collective).
  Napi::Value ReduceScatter(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto g = Self();
      if (info.Length() < 1 || !args::IsTypedArrayOf<double>(info[0]))
        Fail("E_ARG", "reduceScatter(values): values must be a Float64Array");
      auto values = std::make_shared<std::vector<double>>(args::CopyTypedArray<double>(info[0].As<Napi::Float64Array>()));
      if (values->size() % static_cast<size_t>(g->size()) != 0)
        Fail("E_ARG", "reduceScatter: the length must be a multiple of the world size");
      auto mine = std::make_shared<std::vector<double>>(values->size() / g->size());
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [g, values, mine]() -> Executor::Completion {
        const at::Tensor in = at::tensor(*values, at::kDouble).to(g->device());
        at::Tensor out = at::empty({static_cast<int64_t>(mine->size())}, in.options());
        g->ReduceScatterSum(out, in);
        const at::Tensor h = out.to(at::kCPU).contiguous();
        std::copy(h.data_ptr<double>(), h.data_ptr<double>() + mine->size(), mine->begin());
        return [mine](Napi::Env env) -> Napi::Value {
          Napi::Float64Array a = Napi::Float64Array::New(env, mine->size());
          std::copy(mine->begin(), mine->end(), a.Data());
          return a;
        };
      });
    });
  }

  // allGatherFlat(values: Float64Array of n) -> Promise<Float64Array of size x n>: every rank's values in rank order
  // (ZeRO's all-gather of the updated shards).
  Napi::Value AllGatherFlat(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto g = Self();
      if (info.Length() < 1 || !args::IsTypedArrayOf<double>(info[0]))
        Fail("E_ARG", "allGatherFlat(values): values must be a Float64Array");
      auto values = std::make_shared<std::vector<double>>(args::CopyTypedArray<double>(info[0].As<Napi::Float64Array>()));
      auto all = std::make_shared<std::vector<double>>(values->size() * g->size());
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [g, values, all]() -> Executor::Completion {
        const at::Tensor in = at::tensor(*values, at::kDouble).to(g->device());
        at::Tensor out = at::empty({static_cast<int64_t>(all->size())}, in.options());
        g->AllGatherInto(out, in);
        const at::Tensor h = out.to(at::kCPU).contiguous();
        std::copy(h.data_ptr<double>(), h.data_ptr<double>() + all->size(), all->begin());
        return [all](Napi::Env env) -> Napi::Value {
          Napi::Float64Array a = Napi::Float64Array::New(env, all->size());
          std::copy(all->begin(), all->end(), a.Data());
          return a;
        };
      });
    });
  }

  // allGather(Uint8Array) -> Promise<Uint8Array[]>: every rank's bytes, in rank order.
  Napi::Value AllGather(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto g = Self();
      if (info.Length() < 1 || !args::IsTypedArrayOf<uint8_t>(info[0])) Fail("E_ARG", "allGather(bytes): bytes must be a Uint8Array");
      auto mine = std::make_shared<std::vector<uint8_t>>(args::CopyTypedArray<uint8_t>(info[0].As<Napi::Uint8Array>()));
      auto all = std::make_shared<std::vector<std::vector<uint8_t>>>();
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [g, mine, all]() -> Executor::Completion {
        *all = g->AllGatherBytes(*mine);
        return [all](Napi::Env env) -> Napi::Value {
          Napi::Array out = Napi::Array::New(env, all->size());
          for (size_t r = 0; r < all->size(); ++r) {
            Napi::Uint8Array a = Napi::Uint8Array::New(env, (*all)[r].size());
            std::copy((*all)[r].begin(), (*all)[r].end(), a.Data());
            out.Set(static_cast<uint32_t>(r), a);
          }
          return out;
        };
      });
    });
  }

  // broadcastModel(model, root = 0) -> Promise<void>: every parameter of the model becomes rank root's. Runs on the
  // model's executor, in order with its other jobs.
  Napi::Value BroadcastModel(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto g = Self();
      auto decoder = model::ModelWrap::Get(info.Length() > 0 ? info[0] : info.Env().Undefined(), "broadcastModel(model)");
      const int root = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : 0;
      if (root < 0 || root >= g->size()) Fail("E_ARG", "broadcastModel: root must be a rank of the group");
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, model::ModelWrap::ExecutorName(*decoder)).Submit(env, [g, decoder, root]() -> Executor::Completion {
        BroadcastParameters(*g, decoder->parameters(), root);
        if (decoder->lora()) BroadcastParameters(*g, decoder->lora_parameters(), root);
        decoder->ParametersChanged();
        return nullptr;
      });
    });
  }

  Napi::Value Barrier(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value {
      auto g = Self();
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [g]() -> Executor::Completion {
        g->Barrier();
        return nullptr;
      });
    });
  }

  // close(): leaves the group; pending jobs holding it finish first (they keep it alive).
  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (group_) {
      auto g = std::move(group_);
      Napi::Env env = info.Env();
      return Executor::ForDevice(env, executor_).Submit(env, [g]() -> Executor::Completion {
        g->Close();
        return nullptr;
      });
    }
    auto d = Napi::Promise::Deferred::New(info.Env());
    d.Resolve(info.Env().Undefined());
    return d.Promise();
  }

  Napi::Value Rank(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value { return Napi::Number::New(info.Env(), Self()->rank()); });
  }
  Napi::Value Size(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value { return Napi::Number::New(info.Env(), Self()->size()); });
  }
  Napi::Value Backend(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&]() -> Napi::Value { return Napi::String::New(info.Env(), Self()->options().backend); });
  }

  std::shared_ptr<Group> group_;
  std::string executor_;
};

void RegisterDist(Napi::Env env, Napi::Object exports) { GroupWrap::Init(env, exports); }

}  // namespace

void BroadcastParameters(Group& group, std::map<std::string, at::Tensor>& params, int root) {
  at::AutoGradMode no_grad(false);
  std::vector<at::Tensor> tensors;
  for (auto& [name, p] : params) tensors.push_back(p);
  group.Broadcast(tensors, root);
}

std::shared_ptr<Group> UnwrapGroup(const Napi::Value& value, const char* what) { return GroupWrap::Get(value, what); }

LAMER_REGISTER(dist, RegisterDist, 140)

}  // namespace lamer::dist
