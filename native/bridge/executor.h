// One worker thread per device with a job queue. Heavy native calls run there and settle a JS Promise, so the
// JS event loop keeps moving while libtorch works.
#pragma once
#include <napi.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "bridge/errors.h"

namespace lamer {

class Executor {
 public:
  // Runs on the JS thread after the work finished: turns the work's result into the Promise's value.
  using Completion = std::function<Napi::Value(Napi::Env)>;
  // Runs on the worker thread. Must not touch any N-API value.
  using Work = std::function<Completion()>;

  // The executor of `device` ("cpu", "cuda:0", ...) for this JS environment; created on first use.
  static Executor& ForDevice(Napi::Env env, const std::string& device);

  // Queues `work`; the Promise resolves with its completion's value, or rejects with an Error with a code.
  Napi::Promise Submit(Napi::Env env, Work work);

  Executor(Napi::Env env, std::string device);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Stops the worker after the queued jobs; called when the JS environment shuts down.
  void Shutdown();

 private:
  struct Job {
    Work work;
    Napi::Promise::Deferred deferred;
    Completion completion;
    bool failed = false;
    ErrorInfo error;
    explicit Job(Napi::Env env, Work w) : work(std::move(w)), deferred(Napi::Promise::Deferred::New(env)) {}
  };
  static void Settle(Napi::Env env, Napi::Function, Executor* self, Job* job);
  using Tsfn = Napi::TypedThreadSafeFunction<Executor, Job, &Executor::Settle>;

  void Loop();

  std::string device_;
  Tsfn tsfn_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job*> queue_;
  bool stopping_ = false;
  size_t pending_ = 0;  // jobs submitted and not yet settled; touched on the JS thread only
  std::thread thread_;
};

}  // namespace lamer
