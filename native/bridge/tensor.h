// The JS handle of a native tensor. Native owns the memory; JS gets a typed-array view over it (no copy) whose
// backing store holds its own reference to the tensor, so the memory outlives the view. dispose() detaches the
// view first, so JS can never read memory that was freed.
#pragma once
#include <ATen/ATen.h>
#include <napi.h>

#include <atomic>
#include <string>

namespace lamer {

class TensorWrap : public Napi::ObjectWrap<TensorWrap> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  // A new JS handle owning `t`.
  static Napi::Object Wrap(Napi::Env env, at::Tensor t);
  // The tensor behind a JS handle; throws E_ARG for a non-tensor and E_DISPOSED after dispose().
  static const at::Tensor& Get(const Napi::Value& value, const char* what = "tensor");
  static bool Is(const Napi::Value& value);
  // Handles alive now (created and neither disposed nor collected).
  static int64_t LiveCount();

  explicit TensorWrap(const Napi::CallbackInfo& info);
  ~TensorWrap() override;

 private:
  Napi::Value Shape(const Napi::CallbackInfo& info);
  Napi::Value DType(const Napi::CallbackInfo& info);
  Napi::Value Device(const Napi::CallbackInfo& info);
  Napi::Value Numel(const Napi::CallbackInfo& info);
  Napi::Value Data(const Napi::CallbackInfo& info);
  Napi::Value DataIsView(const Napi::CallbackInfo& info);
  Napi::Value Disposed(const Napi::CallbackInfo& info);
  Napi::Value Dispose(const Napi::CallbackInfo& info);

  void Release();

  at::Tensor tensor_;
  bool live_ = false;
  bool viewIsCopy_ = false;
  Napi::Reference<Napi::Value> view_;  // the typed array handed out by `data`, kept so it is created once
  // What the external buffer behind `view_` holds: a reference to the tensor (so its memory outlives the wrapper while
  // JS can still read it) and its size, which V8 is told about. Owned by the buffer's finalizer; dispose() empties it,
  // so the memory is freed at once rather than when the collector gets to the detached buffer.
  struct ViewKeep {
    at::Tensor tensor;
    int64_t bytes = 0;
  };
  ViewKeep* keep_ = nullptr;
};

// dtype names shared with src/tensor.ts.
at::ScalarType ParseDType(const std::string& name);
std::string DTypeName(at::ScalarType t);
// Parses "cpu", "cuda", "cuda:1"; throws E_ARG with the accepted forms otherwise.
at::Device ParseDevice(const std::string& name);

}  // namespace lamer
