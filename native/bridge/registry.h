// Each concern (tensor, ops, algo, model, ...) registers its exports from its own binding file:
//
//   void RegisterAlgo(Napi::Env env, Napi::Object exports) { exports.Set("computeAdvantages", ...); }
//   LAMER_REGISTER(algo, RegisterAlgo, 100)
//
// The addon's init calls every registered function in order of `priority` (lower first), so adding a concern
// never edits a central list.
#pragma once
#include <napi.h>

#include <vector>

namespace lamer {

using RegisterFn = void (*)(Napi::Env, Napi::Object);

struct Registration {
  const char* name;
  RegisterFn fn;
  int priority;
};

std::vector<Registration>& Registrations();

struct Registrar {
  Registrar(const char* name, RegisterFn fn, int priority) { Registrations().push_back({name, fn, priority}); }
};

}  // namespace lamer

#define LAMER_REGISTER(name, fn, priority) static ::lamer::Registrar lamer_registrar_##name(#name, fn, priority);
