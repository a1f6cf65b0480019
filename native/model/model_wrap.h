// The JS handle of a loaded decoder (`NativeModel`). Other concerns (the generation engine, the train step) take
// the decoder from a handle with ModelWrap::Get and run their own work on the model's device executor, so the
// parameters are shared, never copied, and every job on one model runs in order on one thread.
#pragma once
#include <napi.h>

#include <memory>
#include <string>

#include "model/decoder.h"

namespace lamer::model {

class ModelWrap : public Napi::ObjectWrap<ModelWrap> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  static Napi::Object Wrap(Napi::Env env, std::shared_ptr<Decoder> decoder);
  // The decoder behind a JS handle; throws E_ARG for a non-model and E_DISPOSED after dispose().
  static std::shared_ptr<Decoder> Get(const Napi::Value& value, const char* what = "model");
  // The executor name ("cpu", "cuda:0") of the decoder's device.
  static std::string ExecutorName(const Decoder& d);

  explicit ModelWrap(const Napi::CallbackInfo& info);

 private:
  Napi::Value Logprobs(const Napi::CallbackInfo& info);
  Napi::Value Forward(const Napi::CallbackInfo& info);
  Napi::Value Parameters(const Napi::CallbackInfo& info);
  Napi::Value SaveShard(const Napi::CallbackInfo& info);
  Napi::Value SetLora(const Napi::CallbackInfo& info);
  Napi::Value LoraParameters(const Napi::CallbackInfo& info);
  Napi::Value MergeLora(const Napi::CallbackInfo& info);
  Napi::Value SetLoraMerged(const Napi::CallbackInfo& info);
  Napi::Value Lora(const Napi::CallbackInfo& info);
  Napi::Value Dispose(const Napi::CallbackInfo& info);
  Napi::Value Disposed(const Napi::CallbackInfo& info);
  Napi::Value Device(const Napi::CallbackInfo& info);
  Napi::Value DType(const Napi::CallbackInfo& info);
  Napi::Value ParamDType(const Napi::CallbackInfo& info);

  std::shared_ptr<Decoder> decoder_;
};

}  // namespace lamer::model
