#include "bridge/executor.h"

#include <map>
#include <utility>

#ifdef LAMER_WITH_CUDA
#include <c10/core/Device.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace lamer {

namespace {

// The executor of "cuda:N" makes device N current on its thread before its first job, so that whatever its jobs run
// that takes the current device (a custom operator's stream lookup, an allocation given no device, a CUDA graph's
// capture stream) lands on the model's GPU rather than on device 0. Throws when the device cannot be made current.
void MakeDeviceCurrent(const std::string& device) {
#ifdef LAMER_WITH_CUDA
  if (device.rfind("cuda", 0) != 0) return;
  const c10::Device d(device);
  if (d.has_index()) c10::cuda::set_device(d.index());
#else
  (void)device;
#endif
}

}  // namespace

Executor& Executor::ForDevice(Napi::Env env, const std::string& device) {
  // Executors live as long as their JS environment (main thread or a worker_threads Worker). Each registers its
  // cleanup hook after creating its thread-safe function, so (hooks run in reverse order) it shuts down and joins
  // its thread before Node finalizes that function.
  static thread_local std::map<std::pair<napi_env, std::string>, Executor*> executors;
  napi_env raw = env;
  auto key = std::make_pair(raw, device);
  auto it = executors.find(key);
  if (it != executors.end()) return *it->second;
  auto* ex = new Executor(env, device);
  executors.emplace(key, ex);
  env.AddCleanupHook([key, ex]() {
    executors.erase(key);
    delete ex;
  });
  return *ex;
}

Executor::Executor(Napi::Env env, std::string device) : device_(std::move(device)) {
  tsfn_ = Tsfn::New(env, "lamer-executor-" + device_, 0, 1, this);
  // An idle executor must not keep the process alive; Submit refs it while jobs are pending.
  tsfn_.Unref(env);
  thread_ = std::thread([this] { Loop(); });
}

Executor::~Executor() { Shutdown(); }

void Executor::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  tsfn_.Abort();
}

Napi::Promise Executor::Submit(Napi::Env env, Work work) {
  auto* job = new Job(env, std::move(work));
  Napi::Promise promise = job->deferred.Promise();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      delete job;
      throw NativeError("E_NATIVE", "the " + device_ + " executor is shut down");
    }
    queue_.push_back(job);
  }
  if (pending_++ == 0) tsfn_.Ref(env);
  cv_.notify_one();
  return promise;
}

void Executor::Loop() {
  // A device that cannot be made current fails every job with the reason (the thread itself must not throw).
  bool device_failed = false;
  ErrorInfo device_error;
  try {
    MakeDeviceCurrent(device_);
  } catch (...) {
    device_failed = true;
    device_error = CurrentErrorInfo();
  }
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      job = queue_.front();
      queue_.pop_front();
    }
    try {
      if (device_failed) throw NativeError(device_error.code, "the " + device_ + " executor: " + device_error.message);
      job->completion = job->work();
    } catch (...) {
      job->failed = true;
      job->error = CurrentErrorInfo();
    }
    job->work = nullptr;  // release captured tensors on this thread, before handing back
    if (tsfn_.NonBlockingCall(job) != napi_ok) {
      // The environment is gone; nobody can observe the result.
      delete job;
    }
  }
}

void Executor::Settle(Napi::Env env, Napi::Function, Executor* self, Job* job) {
  if (env != nullptr) {
    Napi::HandleScope scope(env);
    if (job->failed) {
      job->deferred.Reject(MakeError(env, job->error).Value());
    } else {
      try {
        job->deferred.Resolve(job->completion ? job->completion(env) : env.Undefined());
      } catch (const Napi::Error& e) {
        job->deferred.Reject(e.Value());
      } catch (...) {
        job->deferred.Reject(MakeError(env, CurrentErrorInfo()).Value());
      }
    }
    if (--self->pending_ == 0) self->tsfn_.Unref(env);
  }
  delete job;
}

}  // namespace lamer
