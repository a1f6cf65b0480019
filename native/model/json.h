// A small strict JSON reader for checkpoint headers (safetensors headers, model.safetensors.index.json).
// Strict on purpose: JSON.parse and most libraries keep the last of two equal keys, but a safetensors header with a
// tensor named twice is corrupt and must be rejected, so objects keep their members in order and refuse duplicates.
// Nesting is bounded so a corrupt header cannot overflow the stack.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lamer::model {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::string text;                                        // kString: the decoded string; kNumber: the number exactly as written
  std::vector<JsonValue> items;                            // kArray
  std::vector<std::pair<std::string, JsonValue>> members;  // kObject, in file order, keys unique

  bool IsObject() const { return kind == Kind::kObject; }
  bool IsArray() const { return kind == Kind::kArray; }
  bool IsString() const { return kind == Kind::kString; }
  bool IsNumber() const { return kind == Kind::kNumber; }
  // The member `key` of an object, or nullptr.
  const JsonValue* Find(const std::string& key) const;
  // The number as an unsigned 64-bit integer; false when it is negative, fractional, has an exponent or overflows.
  bool AsUint64(uint64_t& out) const;
  // A short description for error messages: "a string", "the number 3.5", ...
  std::string Describe() const;
};

// Parses `text` as one JSON value (whitespace around it allowed). On failure returns false and sets `error` to a
// message naming the byte offset.
bool ParseJson(const char* data, size_t size, JsonValue& out, std::string& error);

}  // namespace lamer::model
