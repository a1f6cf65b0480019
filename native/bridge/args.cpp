#include "bridge/args.h"

#include <cmath>
#include <sstream>

namespace lamer::args {

std::string String(const Napi::CallbackInfo& info, size_t i, const std::string& what) {
  if (info.Length() <= i || !info[i].IsString()) Fail("E_ARG", what + " must be a string");
  return info[i].As<Napi::String>();
}

double Number(const Napi::CallbackInfo& info, size_t i, const std::string& what) {
  if (info.Length() <= i || !info[i].IsNumber()) Fail("E_ARG", what + " must be a number");
  return info[i].As<Napi::Number>().DoubleValue();
}

std::vector<int64_t> Int64s(const Napi::Value& v, const std::string& what) {
  if (IsTypedArrayOf<int32_t>(v)) return CopyTypedArray<int64_t>(v.As<Napi::Int32Array>());
  if (!v.IsArray()) Fail("E_ARG", what + " must be an Int32Array or an array of numbers");
  const Napi::Array a = v.As<Napi::Array>();
  std::vector<int64_t> out;
  for (uint32_t i = 0; i < a.Length(); ++i) {
    const Napi::Value x = a.Get(i);
    if (!x.IsNumber()) Fail("E_ARG", what + " must hold numbers");
    out.push_back(x.As<Napi::Number>().Int64Value());
  }
  return out;
}

std::vector<int64_t> Shape(const Napi::Value& v, const std::string& what) {
  if (!v.IsArray()) Fail("E_ARG", what + " must be an array of non-negative integers");
  const Napi::Array arr = v.As<Napi::Array>();
  std::vector<int64_t> shape;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    const Napi::Value e = arr.Get(i);
    const double d = e.IsNumber() ? e.As<Napi::Number>().DoubleValue() : -1;
    if (!(d >= 0) || d != static_cast<double>(static_cast<int64_t>(d))) {
      Fail("E_ARG", what + "[" + std::to_string(i) + "] must be a non-negative integer");
    }
    shape.push_back(static_cast<int64_t>(d));
  }
  return shape;
}

std::map<std::string, std::string> StringMap(const Napi::Value& v, const std::string& what) {
  std::map<std::string, std::string> out;
  if (v.IsUndefined() || v.IsNull()) return out;
  if (!v.IsObject()) Fail("E_ARG", what + " must be an object of strings");
  const Napi::Object o = v.As<Napi::Object>();
  const Napi::Array keys = o.GetPropertyNames();
  for (uint32_t i = 0; i < keys.Length(); ++i) {
    const std::string k = keys.Get(i).As<Napi::String>();
    const Napi::Value value = o.Get(k);
    if (!value.IsString()) Fail("E_ARG", what + " '" + k + "' must be a string");
    out[k] = value.As<Napi::String>();
  }
  return out;
}

std::optional<Napi::Value> Fields::Present(const char* name) const {
  Napi::Value v = object_.Get(name);
  if (v.IsUndefined() || v.IsNull()) return std::nullopt;
  return v;
}

double Fields::AnyNumber(const char* name) const {
  const Napi::Value v = object_.Get(name);
  if (!v.IsNumber()) lamer::Fail(code_, Label(name) + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

double Fields::Number(const char* name) const {
  const double d = AnyNumber(name);
  if (!std::isfinite(d)) lamer::Fail(code_, Label(name) + " must be finite");
  return d;
}

double Fields::Number(const char* name, double fallback) const { return Present(name) ? Number(name) : fallback; }

int64_t Fields::Integer(const char* name, int64_t min) const {
  const double d = Number(name);
  if (d != std::floor(d) || d < static_cast<double>(min) || d > 9007199254740991.0) {
    lamer::Fail(code_, Label(name) + " must be an integer >= " + std::to_string(min) + ", found " + std::to_string(d));
  }
  return static_cast<int64_t>(d);
}

int64_t Fields::Integer(const char* name, int64_t min, int64_t fallback) const { return Present(name) ? Integer(name, min) : fallback; }

bool Fields::Bool(const char* name) const {
  const Napi::Value v = object_.Get(name);
  if (!v.IsBoolean()) lamer::Fail(code_, Label(name) + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

bool Fields::Bool(const char* name, bool fallback) const { return Present(name) ? Bool(name) : fallback; }

std::string Fields::String(const char* name) const {
  const Napi::Value v = object_.Get(name);
  if (!v.IsString()) lamer::Fail(code_, Label(name) + " must be a string");
  return v.As<Napi::String>();
}

std::string Fields::String(const char* name, const std::string& fallback) const { return Present(name) ? String(name) : fallback; }

double Fields::NumberIn(const char* name, double lo, Bound lo_bound, double hi, Bound hi_bound) const {
  const double d = Number(name);
  const bool above = lo_bound == Bound::kClosed ? d >= lo : d > lo;
  const bool below = hi_bound == Bound::kClosed ? d <= hi : d < hi;
  if (!above || !below) {
    auto bound = [](double b) {
      if (std::isinf(b)) return std::string(b < 0 ? "-inf" : "inf");
      std::ostringstream s;
      s << b;
      return s.str();
    };
    std::ostringstream found;
    found << d;
    lamer::Fail(code_, Label(name) + " must be in " + (lo_bound == Bound::kClosed ? "[" : "(") + bound(lo) + ", " + bound(hi) +
                           (hi_bound == Bound::kClosed ? "]" : ")") + ", found " + found.str());
  }
  return d;
}

Fields Fields::Object(const char* name) const {
  const Napi::Value v = object_.Get(name);
  if (!v.IsObject()) lamer::Fail(code_, Label(name) + " must be an object");
  return Fields(v.As<Napi::Object>(), where_ + "." + name, code_, separator_);
}

}  // namespace lamer::args
