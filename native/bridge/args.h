// The one set of argument readers of the addon: every binding converts its JS arguments with these, so a wrong
// argument gets the same kind of error (code E_ARG unless said otherwise, naming the call or object and the field)
// wherever it is passed. Readers copy out of JS memory or read it in place for the call only; none keeps a pointer.
//
//   const args::Fields f(options, "train options");       // errors read "train options: 'lr' must be a number"
//   s.lr = f.NumberIn("lr", 0, Bound::kClosed, kInf, Bound::kOpen);  // required, in [0, inf)
//   r.id = f.Integer("id", 0);                             // required integer >= 0
// An option is required: its default lives once, in the TS schema beside its concern, never here as well. The
// readers with a fallback are for a call's own switches (whether a step updates, say), not for options.
#pragma once
#include <napi.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "bridge/errors.h"

namespace lamer::args {

// ---- typed arrays ----------------------------------------------------------------------------------------------------

// The N-API kind and JS name of the typed array holding T.
template <typename T>
struct TypedArrayKind;
template <>
struct TypedArrayKind<int32_t> {
  static constexpr napi_typedarray_type type = napi_int32_array;
  static constexpr const char* name = "Int32Array";
};
template <>
struct TypedArrayKind<uint8_t> {
  static constexpr napi_typedarray_type type = napi_uint8_array;
  static constexpr const char* name = "Uint8Array";
};
template <>
struct TypedArrayKind<float> {
  static constexpr napi_typedarray_type type = napi_float32_array;
  static constexpr const char* name = "Float32Array";
};
template <>
struct TypedArrayKind<double> {
  static constexpr napi_typedarray_type type = napi_float64_array;
  static constexpr const char* name = "Float64Array";
};

// True when `v` is a typed array of T (an Int32Array for int32_t, ...).
template <typename T>
bool IsTypedArrayOf(const Napi::Value& v) {
  return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == TypedArrayKind<T>::type;
}

// The elements of a typed array of T, copied (JS memory is only lent for the call). Check IsTypedArrayOf first.
template <typename Out, typename T>
std::vector<Out> CopyTypedArray(const Napi::TypedArrayOf<T>& a) {
  return std::vector<Out>(a.Data(), a.Data() + a.ElementLength());
}

// ---- positional arguments --------------------------------------------------------------------------------------------

// info[i] as a string; "<what> must be a string" otherwise.
std::string String(const Napi::CallbackInfo& info, size_t i, const std::string& what);
// info[i] as a number; "<what> must be a number" otherwise.
double Number(const Napi::CallbackInfo& info, size_t i, const std::string& what);
// An Int32Array or an array of numbers, copied as int64 (token ids): "<what> must be an Int32Array or an array of
// numbers" or "<what> must hold numbers" otherwise.
std::vector<int64_t> Int64s(const Napi::Value& v, const std::string& what);
// A shape: an array of non-negative integers; "<what> must be an array of non-negative integers" or
// "<what>[i] must be a non-negative integer" otherwise.
std::vector<int64_t> Shape(const Napi::Value& v, const std::string& what);
// An object of string values (safetensors metadata); undefined or null is empty. "<what> must be an object of strings"
// or "<what> 'key' must be a string" otherwise.
std::map<std::string, std::string> StringMap(const Napi::Value& v, const std::string& what);

// ---- fields of an options object -------------------------------------------------------------------------------------

// Reads the fields of one JS object. Every error names the object (`where`) and the field:
// "<where><separator>'<name>' must be ...", with the given code. A field that is undefined or null is absent:
// the readers with a fallback return it, the others fail with "must be a ...".
class Fields {
 public:
  Fields(Napi::Object object, std::string where, std::string code = "E_ARG", std::string separator = ": ")
      : object_(std::move(object)), where_(std::move(where)), code_(std::move(code)), separator_(std::move(separator)) {}

  // A finite number.
  double Number(const char* name) const;
  double Number(const char* name, double fallback) const;
  // A number, finite or not (the reader of fields that were validated as such before, e.g. a parsed config).
  double AnyNumber(const char* name) const;
  // An integer in [min, 2^53): "must be an integer >= min, found x" otherwise.
  int64_t Integer(const char* name, int64_t min) const;
  int64_t Integer(const char* name, int64_t min, int64_t fallback) const;
  bool Bool(const char* name) const;
  bool Bool(const char* name, bool fallback) const;
  std::string String(const char* name) const;
  std::string String(const char* name, const std::string& fallback) const;

  // A finite number within bounds, each included (kClosed) or not (kOpen); an infinite bound is no bound:
  // "<label> must be in [lo, hi), found x". The ranges are the config schema's (src/train/options.ts,
  // src/algo/options.ts), so a value the config accepts is never refused here.
  enum class Bound { kClosed, kOpen };
  double NumberIn(const char* name, double lo, Bound lo_bound, double hi, Bound hi_bound) const;

  // One of the names in `choices`, as its value: "<label> must be one of a, b, found 'x'". The vocabularies are
  // declared once in src/native/types.ts; each binding maps them here, in one place.
  template <typename E>
  E Choice(const char* name, std::initializer_list<std::pair<const char*, E>> choices) const {
    const std::string s = String(name);
    std::string names;
    for (const auto& [n, e] : choices) {
      if (s == n) return e;
      names += (names.empty() ? "" : ", ") + std::string(n);
    }
    lamer::Fail(code_, Label(name) + " must be one of " + names + ", found '" + s + "'");
  }

  // The object in field `name`, read with the same code; its errors name it "<where>.<name>".
  Fields Object(const char* name) const;

  // A typed array of T copied into `out` (as Out). Absent: E_ARG "'<name>' is required (<type>)" when `required`,
  // else `out` is left as it is and the result is false.
  template <typename T, typename Out>
  bool TypedArray(const char* name, bool required, std::vector<Out>& out) const {
    const Napi::Value v = object_.Get(name);
    if (v.IsUndefined() || v.IsNull()) {
      if (required) lamer::Fail(code_, Label(name) + " is required (" + TypedArrayKind<T>::name + ")");
      return false;
    }
    if (!IsTypedArrayOf<T>(v)) lamer::Fail(code_, Label(name) + " must be a " + TypedArrayKind<T>::name);
    out = CopyTypedArray<Out>(v.As<Napi::TypedArrayOf<T>>());
    return true;
  }

  // "<where><separator>'<name>'", for the caller's own checks of a field's value.
  std::string Label(const char* name) const { return where_ + separator_ + "'" + name + "'"; }

 private:
  // The field's value; nullopt when it is undefined or null.
  std::optional<Napi::Value> Present(const char* name) const;

  Napi::Object object_;
  std::string where_;
  std::string code_;
  std::string separator_;
};

}  // namespace lamer::args
