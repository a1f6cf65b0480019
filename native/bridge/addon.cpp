// Addon entry point: sets torch's thread count once, then lets every concern register its exports.
#include <ATen/Parallel.h>
#include <napi.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "bridge/registry.h"

namespace lamer {

std::vector<Registration>& Registrations() {
  static std::vector<Registration> all;
  return all;
}

namespace {

// Torch's intra-op pool is process-wide: size it to the machine's cores (or LAMER_THREADS) once.
void ConfigureThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
    int n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (const char* v = std::getenv("LAMER_THREADS")) {
      int requested = std::atoi(v);
      if (requested > 0) n = requested;
    }
    at::set_num_threads(n);
  });
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  ConfigureThreads();
  auto regs = Registrations();
  std::stable_sort(regs.begin(), regs.end(), [](const Registration& a, const Registration& b) { return a.priority < b.priority; });
  Napi::Array names = Napi::Array::New(env, regs.size());
  uint32_t i = 0;
  for (const auto& r : regs) {
    r.fn(env, exports);
    names.Set(i++, Napi::String::New(env, r.name));
  }
  exports.Set("concerns", names);
  return exports;
}

}  // namespace

}  // namespace lamer

static Napi::Object InitLamerAddon(Napi::Env env, Napi::Object exports) { return lamer::Init(env, exports); }

NODE_API_MODULE(lamer, InitLamerAddon)
