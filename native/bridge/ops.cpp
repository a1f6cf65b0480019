// General tensor operations exposed to JS: creation, device moves, and a few arithmetic ops used by tests and
// benchmarks of the bridge itself. Anything that can take long runs on the device's executor.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <napi.h>

#include "bridge/args.h"
#include "bridge/errors.h"
#include "bridge/executor.h"
#include "bridge/registry.h"
#include "bridge/tensor.h"

namespace lamer {
namespace {

Napi::Value Completed(Napi::Env env, at::Tensor t) { return TensorWrap::Wrap(env, std::move(t)); }

// full(shape, value, dtype, device)
Napi::Value Full(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    auto shape = args::Shape(info[0], "shape");
    double value = args::Number(info, 1, "value");
    auto opts = at::TensorOptions().dtype(ParseDType(args::String(info, 2, "dtype"))).device(ParseDevice(args::String(info, 3, "device")));
    return TensorWrap::Wrap(info.Env(), at::full(shape, value, opts));
  });
}

// randn(shape, dtype, device, seed): normal samples from a generator seeded for this call only.
Napi::Value Randn(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    auto shape = args::Shape(info[0], "shape");
    auto dtype = ParseDType(args::String(info, 1, "dtype"));
    auto device = ParseDevice(args::String(info, 2, "device"));
    auto seed = static_cast<uint64_t>(args::Number(info, 3, "seed"));
    at::Generator gen = at::detail::createCPUGenerator(seed);
    at::Tensor t = at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat));
    return TensorWrap::Wrap(info.Env(), t.to(device, dtype));
  });
}

Napi::Value Clone(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    return TensorWrap::Wrap(info.Env(), TensorWrap::Get(info[0]).clone(at::MemoryFormat::Contiguous));
  });
}

// alias(t): a second handle on the same tensor (same memory); disposing one leaves the other usable.
Napi::Value Alias(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value { return TensorWrap::Wrap(info.Env(), TensorWrap::Get(info[0])); });
}

// sum(t): the sum of all elements as a JS number (float64 accumulation).
Napi::Value Sum(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    const at::Tensor& t = TensorWrap::Get(info[0]);
    return Napi::Number::New(info.Env(), t.sum(at::kDouble).item<double>());
  });
}

// fill_(t, v) and mulScalar_(t, v): in place, so tests can see native writes through the JS view.
Napi::Value Fill(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    at::Tensor t = TensorWrap::Get(info[0]);
    t.fill_(args::Number(info, 1, "value"));
    return info.Env().Undefined();
  });
}

Napi::Value MulScalar(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    at::Tensor t = TensorWrap::Get(info[0]);
    t.mul_(args::Number(info, 1, "value"));
    return info.Env().Undefined();
  });
}

// toDevice(t, device, dtype?) -> Promise<Tensor>, on the executor of the destination (or source) device.
Napi::Value ToDevice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    at::Tensor t = TensorWrap::Get(info[0]);
    at::Device device = ParseDevice(args::String(info, 1, "device"));
    at::ScalarType dtype = t.scalar_type();
    if (info.Length() > 2 && info[2].IsString()) dtype = ParseDType(info[2].As<Napi::String>());
    const std::string execDevice = device.is_cuda() ? device.str() : t.device().str();
    return Executor::ForDevice(env, execDevice).Submit(env, [t, device, dtype]() -> Executor::Completion {
      at::Tensor out = t.to(device, dtype, /*non_blocking=*/false, /*copy=*/false).contiguous();
      return [out](Napi::Env e) { return Completed(e, out); };
    });
  });
}

// matmul(a, b) -> Promise<Tensor>
Napi::Value Matmul(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    at::Tensor a = TensorWrap::Get(info[0], "a");
    at::Tensor b = TensorWrap::Get(info[1], "b");
    return Executor::ForDevice(env, a.device().str()).Submit(env, [a, b]() -> Executor::Completion {
      c10::NoGradGuard noGrad;
      at::Tensor out = at::matmul(a, b);
      return [out](Napi::Env e) { return Completed(e, out); };
    });
  });
}

// matmulSync(a, b): the same on the JS thread (for comparing call paths).
Napi::Value MatmulSync(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    c10::NoGradGuard noGrad;
    return TensorWrap::Wrap(info.Env(), at::matmul(TensorWrap::Get(info[0], "a"), TensorWrap::Get(info[1], "b")));
  });
}

// noop() and noopAsync(device): the cost of crossing the boundary, synchronously and through the executor.
Napi::Value Noop(const Napi::CallbackInfo& info) { return info.Env().Undefined(); }

Napi::Value NoopAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    std::string device = info.Length() > 0 && info[0].IsString() ? std::string(info[0].As<Napi::String>()) : "cpu";
    ParseDevice(device);
    return Executor::ForDevice(env, device).Submit(env, []() -> Executor::Completion { return nullptr; });
  });
}

void RegisterOps(Napi::Env env, Napi::Object exports) {
  exports.Set("full", Napi::Function::New(env, Full, "full"));
  exports.Set("randn", Napi::Function::New(env, Randn, "randn"));
  exports.Set("clone", Napi::Function::New(env, Clone, "clone"));
  exports.Set("alias", Napi::Function::New(env, Alias, "alias"));
  exports.Set("sum", Napi::Function::New(env, Sum, "sum"));
  exports.Set("fill_", Napi::Function::New(env, Fill, "fill_"));
  exports.Set("mulScalar_", Napi::Function::New(env, MulScalar, "mulScalar_"));
  exports.Set("toDevice", Napi::Function::New(env, ToDevice, "toDevice"));
  exports.Set("matmul", Napi::Function::New(env, Matmul, "matmul"));
  exports.Set("matmulSync", Napi::Function::New(env, MatmulSync, "matmulSync"));
  exports.Set("noop", Napi::Function::New(env, Noop, "noop"));
  exports.Set("noopAsync", Napi::Function::New(env, NoopAsync, "noopAsync"));
}

LAMER_REGISTER(ops, RegisterOps, 10)

}  // namespace
}  // namespace lamer
