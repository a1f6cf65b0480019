// Every exception that crosses into JS becomes an Error with a stable `code` (see src/errors.ts).
#pragma once
#include <napi.h>

#include <stdexcept>
#include <string>

namespace lamer {

// An error raised deliberately by the addon, with the code JS sees.
class NativeError : public std::runtime_error {
 public:
  NativeError(std::string code, const std::string& message) : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

// Code and message of a caught exception; the message is made readable (torch's C++ backtrace is cut off).
struct ErrorInfo {
  std::string code;
  std::string message;
};

// Classifies the exception currently being handled. Call only inside a catch block.
ErrorInfo CurrentErrorInfo();

// A JS Error carrying `code`.
Napi::Error MakeError(Napi::Env env, const ErrorInfo& info);

// Runs `fn` and turns any C++ exception into a thrown JS Error with a code.
template <typename Fn>
auto Guarded(Napi::Env env, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Napi::Error&) {
    throw;
  } catch (...) {
    throw MakeError(env, CurrentErrorInfo());
  }
}

[[noreturn]] inline void Fail(const std::string& code, const std::string& message) { throw NativeError(code, message); }

}  // namespace lamer
