// Counting the ATen operators a piece of work dispatches (for the bench and tests: how many operators one decode
// step runs, which bounds its kernel launches). A RecordFunction observer, installed on first use, counts every
// operator call while counting is on, in any thread:
//   top     operators called from outside any other operator (what lamer's code dispatches itself)
//   leaves  operators that call no other operator (where the work, and on a GPU the kernel launches, happen)
//   views   the top-level ones that only make a view (view, narrow, transpose, ...: no kernel, no memory traffic)
//
//   opCounterStart()  resets the counts and starts counting
//   opCounterStop()   stops and returns { top, leaves, views, byName: { 'aten::mm': n, ... } (top-level) }
#include <ATen/record_function.h>
#include <napi.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "bridge/errors.h"
#include "bridge/registry.h"

namespace lamer {
namespace {

std::atomic<bool> gCounting{false};
std::mutex gMutex;
int64_t gTop = 0, gLeaves = 0, gViews = 0;
std::map<std::string, int64_t> gByName;
// Per thread: for each operator in progress, whether it has called another.
thread_local std::vector<bool> tCalledOther;

const std::set<std::string>& ViewOps() {
  static const std::set<std::string> ops = {
      "aten::view",   "aten::narrow",    "aten::transpose",      "aten::unsqueeze",  "aten::squeeze", "aten::expand",
      "aten::slice",  "aten::select",    "aten::permute",        "aten::as_strided", "aten::alias",   "aten::reshape",
      "aten::t",      "aten::split",     "aten::chunk",          "aten::unflatten",  "aten::flatten", "aten::view_as",
      "aten::unbind", "aten::expand_as", "aten::_reshape_alias", "aten::detach"};
  return ops;
}

std::unique_ptr<at::ObserverContext> OnStart(const at::RecordFunction& fn) {
  if (!gCounting.load(std::memory_order_relaxed)) return nullptr;
  const bool top = tCalledOther.empty();
  if (!top) tCalledOther.back() = true;
  tCalledOther.push_back(false);
  if (top) {
    const std::string name = fn.name();
    std::lock_guard<std::mutex> lock(gMutex);
    ++gTop;
    if (ViewOps().count(name)) ++gViews;
    ++gByName[name];
  }
  return nullptr;
}

void OnEnd(const at::RecordFunction&, at::ObserverContext*) {
  if (tCalledOther.empty()) return;  // started before counting was on
  const bool leaf = !tCalledOther.back();
  tCalledOther.pop_back();
  if (leaf) {
    std::lock_guard<std::mutex> lock(gMutex);
    ++gLeaves;
  }
}

void EnsureObserver() {
  static std::once_flag once;
  std::call_once(once, [] { at::addGlobalCallback(at::RecordFunctionCallback(OnStart, OnEnd).scopes({at::RecordScope::FUNCTION})); });
}

Napi::Value Start(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    EnsureObserver();
    {
      std::lock_guard<std::mutex> lock(gMutex);
      gTop = gLeaves = gViews = 0;
      gByName.clear();
    }
    gCounting.store(true);
    return info.Env().Undefined();
  });
}

Napi::Value Stop(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&]() -> Napi::Value {
    gCounting.store(false);
    std::lock_guard<std::mutex> lock(gMutex);
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("top", Napi::Number::New(info.Env(), static_cast<double>(gTop)));
    out.Set("leaves", Napi::Number::New(info.Env(), static_cast<double>(gLeaves)));
    out.Set("views", Napi::Number::New(info.Env(), static_cast<double>(gViews)));
    Napi::Object names = Napi::Object::New(info.Env());
    for (const auto& [name, n] : gByName) names.Set(name, Napi::Number::New(info.Env(), static_cast<double>(n)));
    out.Set("byName", names);
    return out;
  });
}

void RegisterOpCounter(Napi::Env env, Napi::Object exports) {
  exports.Set("opCounterStart", Napi::Function::New(env, Start, "opCounterStart"));
  exports.Set("opCounterStop", Napi::Function::New(env, Stop, "opCounterStop"));
}

LAMER_REGISTER(op_counter, RegisterOpCounter, 12)

}  // namespace
}  // namespace lamer
