#include "model/json.h"

#include <unordered_set>

namespace lamer::model {

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  Parser(const char* data, size_t size) : p_(data), begin_(data), end_(data + size) {}

  bool Parse(JsonValue& out, std::string& error) {
    SkipSpace();
    if (!Value(out, 0)) {
      error = error_;
      return false;
    }
    SkipSpace();
    if (p_ != end_) {
      error = "unexpected data after the JSON value at byte " + Offset();
      return false;
    }
    return true;
  }

 private:
  std::string Offset() const { return std::to_string(p_ - begin_); }

  bool Fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at byte " + Offset();
    return false;
  }

  void SkipSpace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  bool Literal(const char* word) {
    const char* q = p_;
    for (const char* w = word; *w; ++w, ++q) {
      if (q == end_ || *q != *w) return Fail(std::string("expected '") + word + "'");
    }
    p_ = q;
    return true;
  }

  bool Value(JsonValue& out, int depth) {
    if (depth > kMaxDepth) return Fail("JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (p_ == end_) return Fail("unexpected end of JSON");
    switch (*p_) {
      case '{':
        return Object(out, depth);
      case '[':
        return Array(out, depth);
      case '"':
        out.kind = JsonValue::Kind::kString;
        return String(out.text);
      case 't':
        out.kind = JsonValue::Kind::kBool;
        out.boolean = true;
        return Literal("true");
      case 'f':
        out.kind = JsonValue::Kind::kBool;
        out.boolean = false;
        return Literal("false");
      case 'n':
        out.kind = JsonValue::Kind::kNull;
        return Literal("null");
      default:
        return Number(out);
    }
  }

  bool Object(JsonValue& out, int depth) {
    out.kind = JsonValue::Kind::kObject;
    ++p_;
    SkipSpace();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    std::unordered_set<std::string> seen;
    for (;;) {
      SkipSpace();
      if (p_ == end_ || *p_ != '"') return Fail("expected a quoted object key");
      std::string key;
      if (!String(key)) return false;
      if (!seen.insert(key).second) return Fail("duplicate key \"" + key + "\"");
      SkipSpace();
      if (p_ == end_ || *p_ != ':') return Fail("expected ':' after an object key");
      ++p_;
      SkipSpace();
      out.members.emplace_back(std::move(key), JsonValue{});
      if (!Value(out.members.back().second, depth + 1)) return false;
      SkipSpace();
      if (p_ == end_) return Fail("unexpected end of JSON inside an object");
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ == '}') {
        ++p_;
        return true;
      }
      return Fail("expected ',' or '}' in an object");
    }
  }

  bool Array(JsonValue& out, int depth) {
    out.kind = JsonValue::Kind::kArray;
    ++p_;
    SkipSpace();
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      return true;
    }
    for (;;) {
      SkipSpace();
      out.items.emplace_back();
      if (!Value(out.items.back(), depth + 1)) return false;
      SkipSpace();
      if (p_ == end_) return Fail("unexpected end of JSON inside an array");
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ == ']') {
        ++p_;
        return true;
      }
      return Fail("expected ',' or ']' in an array");
    }
  }

  static void AppendUtf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool Hex4(uint32_t& out) {
    if (end_ - p_ < 4) return Fail("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      const char c = *p_;
      uint32_t d;
      if (c >= '0' && c <= '9')
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
      else
        return Fail("bad hex digit in a \\u escape");
      out = out * 16 + d;
    }
    return true;
  }

  bool String(std::string& out) {
    ++p_;  // opening quote
    out.clear();
    for (;;) {
      if (p_ == end_) return Fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return Fail("control character inside a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++p_;
        continue;
      }
      ++p_;
      if (p_ == end_) return Fail("unterminated escape");
      const char e = *p_++;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t low = 0;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return Fail("unpaired surrogate in a \\u escape");
            p_ += 2;
            if (!Hex4(low)) return false;
            if (low < 0xDC00 || low >= 0xE000) return Fail("unpaired surrogate in a \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            return Fail("unpaired surrogate in a \\u escape");
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          return Fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  bool Number(JsonValue& out) {
    const char* start = p_;
    auto digit = [&] { return p_ != end_ && *p_ >= '0' && *p_ <= '9'; };
    if (p_ != end_ && *p_ == '-') ++p_;
    if (!digit()) return Fail("expected a JSON value");
    if (*p_ == '0') {
      ++p_;
    } else {
      while (digit()) ++p_;
    }
    if (p_ != end_ && *p_ == '.') {
      ++p_;
      if (!digit()) return Fail("expected digits after '.'");
      while (digit()) ++p_;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digit()) return Fail("expected digits in an exponent");
      while (digit()) ++p_;
    }
    out.kind = JsonValue::Kind::kNumber;
    out.text.assign(start, p_);
    return true;
  }

  const char* p_;
  const char* begin_;
  const char* end_;
  std::string error_;
};

}  // namespace

const JsonValue* JsonValue::Find(const std::string& key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool JsonValue::AsUint64(uint64_t& out) const {
  if (kind != Kind::kNumber || text.empty()) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

std::string JsonValue::Describe() const {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return boolean ? "true" : "false";
    case Kind::kNumber:
      return "the number " + text;
    case Kind::kString:
      return "the string \"" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "\"";
    case Kind::kArray:
      return "an array of " + std::to_string(items.size());
    case Kind::kObject:
      return "an object";
  }
  return "?";
}

bool ParseJson(const char* data, size_t size, JsonValue& out, std::string& error) {
  out = JsonValue{};
  return Parser(data, size).Parse(out, error);
}

}  // namespace lamer::model
