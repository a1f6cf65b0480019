#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "bridge/errors.h"
#include "model/json.h"

namespace lamer::model {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian; a big-endian host needs byte swaps");

namespace {

// safetensors' own reader refuses headers above 100 MB; a bigger length is a corrupt file, not a huge model.
constexpr uint64_t kMaxHeader = 100ull * 1000 * 1000;

[[noreturn]] void Bad(const std::string& file, const std::string& message) { Fail("E_CHECKPOINT", file + ": " + message); }

struct DTypeInfo {
  const char* name;
  at::ScalarType type;
  size_t size;
};

// The dtypes libtorch can view directly. Others (F8 variants, U16..U64) are reported as unsupported.
constexpr DTypeInfo kDTypes[] = {
    {"F64", at::kDouble, 8}, {"F32", at::kFloat, 4}, {"F16", at::kHalf, 2}, {"BF16", at::kBFloat16, 2}, {"I64", at::kLong, 8},
    {"I32", at::kInt, 4},    {"I16", at::kShort, 2}, {"I8", at::kChar, 1},  {"U8", at::kByte, 1},       {"BOOL", at::kBool, 1},
};

const DTypeInfo* FindDType(const std::string& name) {
  for (const auto& d : kDTypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

std::shared_ptr<MappedFile> MappedFile::Open(const std::string& path) {
  // O_NONBLOCK: opening a named pipe must not wait for a writer (it is refused below as not a regular file).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) Fail("E_CHECKPOINT", path + ": file not found");
    Fail("E_IO", path + ": cannot open: " + ErrnoText());
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const std::string err = ErrnoText();
    ::close(fd);
    Fail("E_IO", path + ": cannot stat: " + err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    Fail("E_CHECKPOINT", path + ": not a regular file");
  }
  std::shared_ptr<MappedFile> m(new MappedFile());
  m->path_ = path;
  m->size_ = static_cast<size_t>(st.st_size);
  if (m->size_ > 0) {
    void* p = ::mmap(nullptr, m->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const std::string err = ErrnoText();
      ::close(fd);
      Fail("E_IO", path + ": cannot memory-map " + std::to_string(m->size_) + " bytes: " + err);
    }
    m->data_ = static_cast<uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file referenced
  return m;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

SafetensorsFile SafetensorsFile::Open(const std::string& path) {
  SafetensorsFile f;
  f.map_ = MappedFile::Open(path);
  const uint64_t size = f.map_->size();
  if (size < 8) {
    Bad(path, "truncated: expected at least the 8-byte header length, found a file of " + std::to_string(size) + " bytes");
  }
  uint64_t n = 0;
  std::memcpy(&n, f.map_->data(), 8);
  // The length's value is not printed: a file that is not a safetensors file keeps its bytes out of error messages.
  if (n > size - 8) {
    Bad(path, "the header length field runs past the end of the file (" + std::to_string(size) +
                  " bytes): not a safetensors file, or a truncated one");
  }
  if (n > kMaxHeader) Bad(path, "the header length field exceeds the 100 MB limit: not a safetensors file");
  if (n < 2) Bad(path, "header of " + std::to_string(n) + " bytes cannot hold a JSON object");

  JsonValue header;
  std::string error;
  if (!ParseJson(reinterpret_cast<const char*>(f.map_->data() + 8), n, header, error)) {
    Bad(path, "header is not valid JSON: " + error);
  }
  if (!header.IsObject()) Bad(path, "header: expected a JSON object, found " + header.Describe());
  f.data_start_ = 8 + n;
  const uint64_t buffer = size - f.data_start_;

  for (const auto& [name, value] : header.members) {
    if (name == "__metadata__") {
      if (!value.IsObject()) Bad(path, "__metadata__: expected an object of strings, found " + value.Describe());
      for (const auto& [k, v] : value.members) {
        if (!v.IsString()) Bad(path, "__metadata__." + k + ": expected a string, found " + v.Describe());
        f.metadata_[k] = v.text;
      }
      continue;
    }
    const std::string where = "tensor '" + name + "'";
    if (!value.IsObject()) Bad(path, where + ": expected an object {dtype, shape, data_offsets}, found " + value.Describe());
    for (const auto& [k, v] : value.members) {
      if (k != "dtype" && k != "shape" && k != "data_offsets") Bad(path, where + ": unexpected field '" + k + "'");
    }
    const JsonValue* dtype = value.Find("dtype");
    const JsonValue* shape = value.Find("shape");
    const JsonValue* offsets = value.Find("data_offsets");
    if (!dtype || !dtype->IsString()) Bad(path, where + ": expected a string 'dtype'");
    if (!shape || !shape->IsArray()) Bad(path, where + ": expected an array 'shape'");
    if (!offsets || !offsets->IsArray() || offsets->items.size() != 2) {
      Bad(path, where + ": expected 'data_offsets' as [begin, end]");
    }
    const DTypeInfo* info = FindDType(dtype->text);
    if (!info) {
      Bad(path, where + ": unknown or unsupported dtype '" + dtype->text +
                    "' (expected one of F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)");
    }
    SafetensorsEntry e;
    e.name = name;
    e.dtype = info->type;
    e.dtype_name = info->name;
    // numel with overflow checks: a corrupt shape must not wrap around to a small size.
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& dim : shape->items) {
      uint64_t d;
      if (!dim.AsUint64(d) || d > static_cast<uint64_t>(INT64_MAX)) {
        Bad(path, where + ": shape entries must be non-negative integers, found " + dim.Describe());
      }
      e.shape.push_back(static_cast<int64_t>(d));
      if (d != 0 && numel > UINT64_MAX / d) overflow = true;
      numel *= d;
    }
    if (!offsets->items[0].AsUint64(e.begin) || !offsets->items[1].AsUint64(e.end)) {
      Bad(path, where + ": data_offsets must be non-negative integers");
    }
    if (e.begin > e.end) {
      Bad(path, where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] end before they begin");
    }
    if (e.end > buffer) {
      Bad(path, where + ": data_offsets end at byte " + std::to_string(e.end) + " but the data buffer holds " + std::to_string(buffer) +
                    " bytes");
    }
    const uint64_t bytes = e.end - e.begin;
    if (overflow || numel > UINT64_MAX / info->size || numel * info->size != bytes) {
      Bad(path, where + ": shape " + ShapeText(e.shape) + " x " + info->name + " needs " +
                    (overflow || numel > UINT64_MAX / info->size ? std::string("more than 2^64") : std::to_string(numel * info->size)) +
                    " bytes, but data_offsets span " + std::to_string(bytes));
    }
    f.entries_.push_back(std::move(e));
  }

  // The tensors must tile the buffer exactly: sorted by offset, each starts where the previous ended, the last ends
  // at the end of the file. Anything else is overlap (two tensors sharing bytes) or a hole (bytes nobody owns).
  std::vector<const SafetensorsEntry*> order;
  for (const auto& e : f.entries_) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t expected = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const SafetensorsEntry* e : order) {
    if (e->begin < expected) {
      Bad(path, "tensor '" + e->name + "': data_offsets begin at byte " + std::to_string(e->begin) + ", overlapping tensor '" + prev->name +
                    "' which ends at byte " + std::to_string(expected));
    }
    if (e->begin > expected) {
      Bad(path, "tensor '" + e->name + "': data_offsets begin at byte " + std::to_string(e->begin) + ", expected " +
                    std::to_string(expected) +
                    (prev ? " (where tensor '" + prev->name + "' ends)" : std::string(" (the start of the buffer)")) + ": a gap of " +
                    std::to_string(e->begin - expected) + " bytes");
    }
    expected = e->end;
    prev = e;
  }
  if (expected != buffer) {
    Bad(path, "the data buffer holds " + std::to_string(buffer) + " bytes but the tensors cover " + std::to_string(expected) +
                  " (expected the last tensor to end at the end of the file)");
  }
  return f;
}

at::Tensor SafetensorsFile::Tensor(const SafetensorsEntry& entry) const {
  uint8_t* ptr = map_->data() + data_start_ + entry.begin;
  const auto options = at::TensorOptions().dtype(entry.dtype).device(at::kCPU);
  const size_t item = at::elementSize(entry.dtype);
  if (entry.end == entry.begin) return at::empty(entry.shape, options);
  if (reinterpret_cast<uintptr_t>(ptr) % item != 0) {
    // safetensors does not promise alignment; an odd offset gets its own aligned copy.
    at::Tensor t = at::empty(entry.shape, options);
    std::memcpy(t.data_ptr(), ptr, entry.end - entry.begin);
    return t;
  }
  std::shared_ptr<MappedFile> keep = map_;
  return at::from_blob(
      ptr, entry.shape, [keep](void*) mutable { keep.reset(); }, options);
}

CheckpointTensors ReadCheckpointTensors(const std::string& dir) {
  namespace fs = std::filesystem;
  CheckpointTensors out;
  const fs::path single = fs::path(dir) / "model.safetensors";
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  auto add = [&](const SafetensorsFile& file, const std::set<std::string>* allowed) {
    for (const auto& e : file.entries()) {
      if (allowed && !allowed->count(e.name)) {
        Bad(file.path(), "tensor '" + e.name + "' is not listed for this file in " + index.string());
      }
      auto [it, inserted] = out.file_of.emplace(e.name, file.path());
      if (!inserted) {
        Bad(file.path(), "tensor '" + e.name + "' is also stored in " + it->second + " (expected each tensor once)");
      }
      out.tensors.emplace(e.name, file.Tensor(e));
    }
    out.files.push_back(file.path());
  };

  if (fs::exists(index)) {
    // Refused before it is opened: reading a named pipe would wait for a writer.
    if (!fs::is_regular_file(index)) Bad(index.string(), "expected a regular file");
    std::ifstream in(index, std::ios::binary);
    if (!in) Fail("E_IO", index.string() + ": cannot read");
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    JsonValue root;
    std::string error;
    if (!ParseJson(text.data(), text.size(), root, error)) Bad(index.string(), "not valid JSON: " + error);
    const JsonValue* map = root.IsObject() ? root.Find("weight_map") : nullptr;
    if (!map || !map->IsObject()) Bad(index.string(), "expected an object 'weight_map' {tensor name: shard file}");
    if (map->members.empty()) Bad(index.string(), "weight_map lists no tensors");
    std::map<std::string, std::set<std::string>> by_file;
    for (const auto& [name, file] : map->members) {
      if (!file.IsString()) Bad(index.string(), "weight_map['" + name + "']: expected a file name, found " + file.Describe());
      const fs::path rel(file.text);
      if (file.text.empty() || rel.is_absolute() || rel.has_parent_path()) {
        Bad(index.string(), "weight_map['" + name + "']: expected a file name inside the checkpoint folder, found \"" + file.text + "\"");
      }
      by_file[file.text].insert(name);
    }
    for (const auto& [file, names] : by_file) {
      const SafetensorsFile shard = SafetensorsFile::Open((fs::path(dir) / file).string());
      add(shard, &names);
      for (const auto& name : names) {
        if (!out.tensors.count(name)) {
          Bad(shard.path(), "tensor '" + name + "' is listed in the index for this file but not stored in it");
        }
      }
    }
  } else if (fs::exists(single)) {
    add(SafetensorsFile::Open(single.string()), nullptr);
  } else {
    Fail("E_CHECKPOINT", dir + ": no model.safetensors or model.safetensors.index.json");
  }
  return out;
}

std::string SafetensorsDTypeName(at::ScalarType t) {
  for (const auto& d : kDTypes) {
    if (d.type == t) return d.name;
  }
  Fail("E_ARG", std::string("safetensors cannot store dtype ") + c10::toString(t));
}

namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"')
      out += "\\\"";
    else if (c == '\\')
      out += "\\\\";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string TempPath(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// Writes through `fn(FILE*)` to a temporary file, flushes it to disk, then renames it over `path`.
template <typename Fn>
void WriteAtomic(const std::string& path, Fn&& fn) {
  const std::string tmp = TempPath(path);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) Fail("E_IO", path + ": cannot create " + tmp + ": " + ErrnoText());
  try {
    fn(f);
    if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0) Fail("E_IO", path + ": flush failed: " + ErrnoText());
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fclose(f) != 0) {
    std::remove(tmp.c_str());
    Fail("E_IO", path + ": close failed: " + ErrnoText());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = ErrnoText();
    std::remove(tmp.c_str());
    Fail("E_IO", path + ": rename from " + tmp + " failed: " + err);
  }
}

void WriteAll(FILE* f, const void* data, size_t n, const std::string& path) {
  if (n > 0 && std::fwrite(data, 1, n, f) != n) Fail("E_IO", path + ": write failed: " + ErrnoText());
}

}  // namespace

void WriteFileAtomic(const std::string& path, const std::string& text) {
  WriteAtomic(path, [&](FILE* f) { WriteAll(f, text.data(), text.size(), path); });
}

void WriteSafetensors(const std::string& path, const std::vector<std::pair<std::string, at::Tensor>>& tensors, at::ScalarType dtype,
                      const std::map<std::string, std::string>& metadata) {
  std::set<std::string> names;
  std::string header = "{";
  header += "\"__metadata__\":{";
  bool first = true;
  for (const auto& [k, v] : metadata) {
    header += (first ? "" : ",") + JsonString(k) + ":" + JsonString(v);
    first = false;
  }
  header += "}";
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__" || !names.insert(name).second) Fail("E_ARG", path + ": tensor name '" + name + "' used twice or reserved");
    const at::ScalarType type = dtype == at::ScalarType::Undefined ? t.scalar_type() : dtype;
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * at::elementSize(type);
    header += "," + JsonString(name) + ":{\"dtype\":\"" + SafetensorsDTypeName(type) + "\",\"shape\":[";
    for (int64_t i = 0; i < t.dim(); ++i) header += (i ? "," : "") + std::to_string(t.size(i));
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  // Pad with spaces so the data buffer starts 8-byte aligned, as the reference writer does: mapped tensors can then
  // be viewed in place.
  while ((8 + header.size()) % 8 != 0) header += ' ';
  WriteAtomic(path, [&](FILE* f) {
    const uint64_t n = header.size();
    WriteAll(f, &n, 8, path);
    WriteAll(f, header.data(), header.size(), path);
    for (const auto& [name, t] : tensors) {
      // One tensor at a time on the host, so a model on the GPU never needs a full second copy in host memory.
      at::Tensor host = t.detach().to(at::kCPU, dtype == at::ScalarType::Undefined ? t.scalar_type() : dtype).contiguous();
      WriteAll(f, host.data_ptr(), host.numel() * host.element_size(), path);
    }
  });
}

}  // namespace lamer::model
