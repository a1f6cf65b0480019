#include "bridge/errors.h"

#include <c10/util/Exception.h>

#include <new>

namespace lamer {

namespace {

// c10 messages end with a C++ stack trace ("Exception raised from ..."); users need only the first part.
std::string Readable(const std::string& what) {
  std::string msg = what;
  auto cut = msg.find("\nException raised from");
  if (cut != std::string::npos) msg.resize(cut);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  return msg;
}

}  // namespace

ErrorInfo CurrentErrorInfo() {
  try {
    throw;
  } catch (const NativeError& e) {
    return {e.code(), e.what()};
  } catch (const c10::OutOfMemoryError& e) {
    return {"E_OOM", "out of memory: " + Readable(e.what_without_backtrace())};
  } catch (const c10::Error& e) {
    std::string msg = Readable(e.what_without_backtrace());
    // CPU allocations that fail inside torch surface as c10::Error with this wording.
    // (torch 2.13's allocator says "can't allocate memory", with errno 12, ENOMEM.)
    if (msg.find("DefaultCPUAllocator: not enough memory") != std::string::npos ||
        msg.find("DefaultCPUAllocator: can't allocate memory") != std::string::npos ||
        msg.find("Cannot allocate memory") != std::string::npos || msg.find("out of memory") != std::string::npos) {
      return {"E_OOM", msg};
    }
    return {"E_TORCH", msg};
  } catch (const std::bad_alloc&) {
    return {"E_OOM", "out of memory (host allocation failed)"};
  } catch (const std::exception& e) {
    return {"E_NATIVE", Readable(e.what())};
  } catch (...) {
    return {"E_NATIVE", "unknown native exception"};
  }
}

Napi::Error MakeError(Napi::Env env, const ErrorInfo& info) {
  Napi::Error err = Napi::Error::New(env, info.message);
  err.Set("code", Napi::String::New(env, info.code));
  return err;
}

}  // namespace lamer
