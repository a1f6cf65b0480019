#include "bridge/tensor.h"

#include <cstdlib>
#include <cstring>

#include "bridge/args.h"
#include "bridge/errors.h"
#include "bridge/malloc.h"
#include "bridge/registry.h"

namespace lamer {

namespace {

std::atomic<int64_t> gLive{0};

struct TensorClass {
  Napi::FunctionReference ctor;
};

// The constructor is per JS environment (main thread and each Worker have their own).
thread_local TensorClass* gClass = nullptr;

// Set LAMER_NO_EXTERNAL_BUFFERS=1 to exercise the copying fallback used where V8 refuses external buffers.
bool ExternalBuffersDisabledByEnv() {
  const char* v = std::getenv("LAMER_NO_EXTERNAL_BUFFERS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

napi_typedarray_type TypedArrayTypeOf(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return napi_float32_array;
    case at::kDouble:
      return napi_float64_array;
    case at::kInt:
      return napi_int32_array;
    case at::kLong:
      return napi_bigint64_array;
    case at::kByte:
      return napi_uint8_array;
    case at::kBool:
      return napi_uint8_array;
    case at::kHalf:
      return napi_uint16_array;
    case at::kBFloat16:
      return napi_uint16_array;
    default:
      Fail("E_ARG", "no typed-array view for dtype " + DTypeName(t));
  }
}

}  // namespace

at::ScalarType ParseDType(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "float64") return at::kDouble;
  if (name == "int32") return at::kInt;
  if (name == "int64") return at::kLong;
  if (name == "uint8") return at::kByte;
  if (name == "bool") return at::kBool;
  if (name == "float16") return at::kHalf;
  if (name == "bfloat16") return at::kBFloat16;
  Fail("E_ARG", "unknown dtype '" + name + "'; expected one of float32, float64, int32, int64, uint8, bool, float16, bfloat16");
}

std::string DTypeName(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return "float32";
    case at::kDouble:
      return "float64";
    case at::kInt:
      return "int32";
    case at::kLong:
      return "int64";
    case at::kByte:
      return "uint8";
    case at::kBool:
      return "bool";
    case at::kHalf:
      return "float16";
    case at::kBFloat16:
      return "bfloat16";
    default:
      return std::string(c10::toString(t));
  }
}

at::Device ParseDevice(const std::string& name) {
  try {
    at::Device d(name);
    // One CPU: 'cpu:N' names no device the addon has.
    if ((d.is_cpu() && !d.has_index()) || d.is_cuda()) return d;
  } catch (const c10::Error&) {
  }
  Fail("E_ARG", "unknown device '" + name + "'; expected 'cpu', 'cuda' or 'cuda:N'");
}

void TensorWrap::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function fn = DefineClass(env, "NativeTensor",
                                  {
                                      InstanceAccessor<&TensorWrap::Shape>("shape"),
                                      InstanceAccessor<&TensorWrap::DType>("dtype"),
                                      InstanceAccessor<&TensorWrap::Device>("device"),
                                      InstanceAccessor<&TensorWrap::Numel>("numel"),
                                      InstanceAccessor<&TensorWrap::Data>("data"),
                                      InstanceAccessor<&TensorWrap::DataIsView>("dataIsView"),
                                      InstanceAccessor<&TensorWrap::Disposed>("disposed"),
                                      InstanceMethod<&TensorWrap::Dispose>("dispose"),
                                  });
  auto* cls = new TensorClass{Napi::Persistent(fn)};
  gClass = cls;
  env.AddCleanupHook([cls]() {
    if (gClass == cls) gClass = nullptr;
    delete cls;
  });
  exports.Set("NativeTensor", fn);
}

Napi::Object TensorWrap::Wrap(Napi::Env env, at::Tensor t) {
  if (gClass == nullptr) Fail("E_NATIVE", "tensor class used before the addon was initialised");
  // The constructor takes the tensor through an External so plain JS cannot make an empty handle.
  auto* holder = new at::Tensor(std::move(t));
  Napi::Object obj;
  try {
    obj = gClass->ctor.New({Napi::External<at::Tensor>::New(env, holder)});
  } catch (...) {
    delete holder;
    throw;
  }
  delete holder;
  return obj;
}

TensorWrap::TensorWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<TensorWrap>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw MakeError(info.Env(), {"E_ARG", "NativeTensor is created by the addon; use Tensor.from(...) in JS"});
  }
  tensor_ = std::move(*info[0].As<Napi::External<at::Tensor>>().Data());
  live_ = true;
  gLive.fetch_add(1, std::memory_order_relaxed);
}

TensorWrap::~TensorWrap() { Release(); }

void TensorWrap::Release() {
  if (!live_) return;
  live_ = false;
  // CPU memory this handle was the last owner of goes back to the heap now: counted toward the next trim.
  int64_t freed = 0;
  if (tensor_.defined() && tensor_.device().is_cpu() && tensor_.has_storage() && tensor_.storage().use_count() == 1) {
    freed = static_cast<int64_t>(tensor_.storage().nbytes());
  }
  tensor_ = at::Tensor();
  NoteDisposedBytes(freed);
  gLive.fetch_sub(1, std::memory_order_relaxed);
}

int64_t TensorWrap::LiveCount() { return gLive.load(std::memory_order_relaxed); }

bool TensorWrap::Is(const Napi::Value& value) {
  if (gClass == nullptr || !value.IsObject()) return false;
  return value.As<Napi::Object>().InstanceOf(gClass->ctor.Value());
}

const at::Tensor& TensorWrap::Get(const Napi::Value& value, const char* what) {
  if (!Is(value)) Fail("E_ARG", std::string(what) + " must be a Tensor");
  TensorWrap* w = Unwrap(value.As<Napi::Object>());
  if (!w->live_) Fail("E_DISPOSED", std::string(what) + " was disposed");
  return w->tensor_;
}

Napi::Value TensorWrap::Shape(const Napi::CallbackInfo& info) {
  const at::Tensor& t = Get(Value());
  Napi::Array arr = Napi::Array::New(info.Env(), t.dim());
  for (int64_t i = 0; i < t.dim(); ++i) arr.Set(static_cast<uint32_t>(i), Napi::Number::New(info.Env(), t.size(i)));
  return arr;
}

Napi::Value TensorWrap::DType(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), DTypeName(Get(Value()).scalar_type()));
}

Napi::Value TensorWrap::Device(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), Get(Value()).device().str()); }

Napi::Value TensorWrap::Numel(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(Get(Value()).numel()));
}

Napi::Value TensorWrap::Disposed(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), !live_); }

Napi::Value TensorWrap::DataIsView(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), !viewIsCopy_); }

Napi::Value TensorWrap::Data(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    const at::Tensor& t = Get(Value());
    if (!view_.IsEmpty()) return view_.Value();
    if (!t.device().is_cpu()) {
      Fail("E_ARG", "tensor is on " + t.device().str() + "; move it with .to('cpu') before reading .data");
    }
    if (!t.is_contiguous()) Fail("E_ARG", "tensor is not contiguous; .data needs a contiguous tensor");
    napi_typedarray_type kind = TypedArrayTypeOf(t.scalar_type());
    const size_t bytes = t.numel() * t.element_size();
    napi_value ab = nullptr;
    bool copied = false;
    if (bytes == 0) {
      ab = Napi::ArrayBuffer::New(env, 0);
    } else if (!ExternalBuffersDisabledByEnv()) {
      // The backing store keeps its own reference to the tensor: the memory stays valid for as long as V8 can
      // reach it, and is released when the buffer is collected or, earlier, at dispose(). V8 is told how much
      // memory the buffer holds, so a program that never disposes still gets collections when it should.
      auto* keep = new ViewKeep{t, static_cast<int64_t>(bytes)};
      napi_status st = napi_create_external_arraybuffer(
          env, t.data_ptr(), bytes,
          [](napi_env env, void*, void* hint) {
            auto* k = static_cast<ViewKeep*>(hint);
            if (k->tensor.defined()) {
              int64_t total = 0;
              napi_adjust_external_memory(env, -k->bytes, &total);
            }
            delete k;
          },
          keep, &ab);
      if (st == napi_ok) {
        keep_ = keep;
        int64_t total = 0;
        napi_adjust_external_memory(env, static_cast<int64_t>(bytes), &total);
      } else {
        delete keep;
        ab = nullptr;
        bool pending = false;
        napi_is_exception_pending(env, &pending);
        if (pending) {
          napi_value ignored;
          napi_get_and_clear_last_exception(env, &ignored);
        }
      }
    }
    if (ab == nullptr) {
      // External buffers refused (V8 sandbox builds): hand out a copy. JS is told through dataIsView.
      Napi::ArrayBuffer copy = Napi::ArrayBuffer::New(env, bytes);
      std::memcpy(copy.Data(), t.data_ptr(), bytes);
      ab = copy;
      copied = true;
    }
    napi_value typed = nullptr;
    napi_status st = napi_create_typedarray(env, kind, static_cast<size_t>(t.numel()), ab, 0, &typed);
    if (st != napi_ok) throw Napi::Error::New(env);
    viewIsCopy_ = copied;
    view_ = Napi::Persistent(Napi::Value(env, typed));
    return view_.Value();
  });
}

Napi::Value TensorWrap::Dispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!view_.IsEmpty()) {
    // Detach first: every typed array over this buffer now reads as length 0, never as freed memory.
    Napi::Value typed = view_.Value();
    napi_value ab = nullptr;
    napi_get_typedarray_info(env, typed, nullptr, nullptr, nullptr, &ab, nullptr);
    const bool detached = ab != nullptr && napi_detach_arraybuffer(env, ab) == napi_ok;
    view_.Reset();
    if (keep_ != nullptr && detached) {
      // Nothing can read the detached buffer: its reference to the tensor goes now, not when it is collected.
      keep_->tensor = at::Tensor();
      int64_t total = 0;
      napi_adjust_external_memory(env, -keep_->bytes, &total);
    }
    keep_ = nullptr;
  }
  Release();
  return env.Undefined();
}

namespace {

Napi::Value LiveTensors(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(TensorWrap::LiveCount()));
}

// tensorFromTypedArray(typed, shape, dtype): a new CPU tensor holding a copy of the typed array's elements
// (JS memory is only lent for the call, so native code takes a copy).
Napi::Value TensorFromTypedArray(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    if (info.Length() < 3 || !info[0].IsTypedArray() || !info[1].IsArray() || !info[2].IsString()) {
      Fail("E_ARG", "tensorFromTypedArray(typedArray, shape, dtype)");
    }
    Napi::TypedArray typed = info[0].As<Napi::TypedArray>();
    at::ScalarType dtype = ParseDType(info[2].As<Napi::String>());
    napi_typedarray_type expected = TypedArrayTypeOf(dtype);
    if (typed.TypedArrayType() != expected) {
      Fail("E_ARG", "dtype " + DTypeName(dtype) + " needs a " +
                        (expected == napi_float32_array    ? std::string("Float32Array")
                         : expected == napi_float64_array  ? std::string("Float64Array")
                         : expected == napi_int32_array    ? std::string("Int32Array")
                         : expected == napi_bigint64_array ? std::string("BigInt64Array")
                         : expected == napi_uint8_array    ? std::string("Uint8Array")
                                                           : std::string("Uint16Array")));
    }
    const std::vector<int64_t> shape = args::Shape(info[1], "shape");
    int64_t numel = 1;
    for (const int64_t n : shape) numel *= n;
    if (static_cast<size_t>(numel) != typed.ElementLength()) {
      Fail("E_ARG", "shape holds " + std::to_string(numel) + " elements but the array has " + std::to_string(typed.ElementLength()));
    }
    at::Tensor t = at::empty(shape, at::TensorOptions().dtype(dtype));
    const size_t bytes = static_cast<size_t>(numel) * t.element_size();
    if (bytes > 0) {
      const uint8_t* src = static_cast<const uint8_t*>(typed.ArrayBuffer().Data()) + typed.ByteOffset();
      if (dtype == at::kBool) {
        // Any non-zero byte is true; torch's bool must hold exactly 0 or 1.
        bool* dst = t.data_ptr<bool>();
        for (int64_t i = 0; i < numel; ++i) dst[i] = src[i] != 0;
      } else {
        std::memcpy(t.data_ptr(), src, bytes);
      }
    }
    return TensorWrap::Wrap(env, std::move(t));
  });
}

void RegisterTensor(Napi::Env env, Napi::Object exports) {
  TensorWrap::Init(env, exports);
  exports.Set("liveTensors", Napi::Function::New(env, LiveTensors, "liveTensors"));
  exports.Set("tensorFromTypedArray", Napi::Function::New(env, TensorFromTypedArray, "tensorFromTypedArray"));
}

LAMER_REGISTER(tensor, RegisterTensor, 0)

}  // namespace

}  // namespace lamer
