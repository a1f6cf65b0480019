// safetensors files: memory-mapped, strictly validated reading (tensors are views of the mapping, no copy) and
// atomic writing. Format (SPEC §9): 8-byte little-endian header length N, N bytes of JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {str: str}}, then the data buffer; offsets are
// relative to the start of the buffer. Every malformed file is rejected with E_CHECKPOINT naming the file, the
// tensor, what was expected and what was found.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lamer::model {

// A read-only file mapped into memory. Tensors viewing it hold a shared_ptr, so the mapping lives as long as the
// last view. Mapped copy-on-write (MAP_PRIVATE, writable): a parameter that training updates in place gets private
// pages, never a write into the file and never a fault on a read-only page.
class MappedFile {
 public:
  static std::shared_ptr<MappedFile> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  std::string path_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

struct SafetensorsEntry {
  std::string name;
  at::ScalarType dtype;
  std::string dtype_name;  // as written in the file: "BF16", "F32", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets relative to the data buffer
  uint64_t end = 0;
};

class SafetensorsFile {
 public:
  // Maps and validates `path`; throws E_CHECKPOINT (or E_IO when the file cannot be opened).
  static SafetensorsFile Open(const std::string& path);

  const std::string& path() const { return map_->path(); }
  // Entries in header order.
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The tensor of `entry` as a view of the mapping; a copy only when its bytes are not aligned for its dtype.
  at::Tensor Tensor(const SafetensorsEntry& entry) const;

 private:
  std::shared_ptr<MappedFile> map_;
  uint64_t data_start_ = 0;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// The tensors of a checkpoint folder: `model.safetensors`, or every shard listed by `model.safetensors.index.json`.
// The index's weight_map must name exactly the tensors its shards hold; a tensor found twice is rejected.
struct CheckpointTensors {
  std::map<std::string, at::Tensor> tensors;
  std::map<std::string, std::string> file_of;  // tensor name -> file it came from (for error messages)
  std::vector<std::string> files;
};
CheckpointTensors ReadCheckpointTensors(const std::string& dir);

// Writes `tensors` (any device; converted to `dtype` unless it is Undefined) to `path` atomically: the bytes go to a
// temporary file in the same folder, which is flushed and renamed over `path` only when complete.
void WriteSafetensors(const std::string& path, const std::vector<std::pair<std::string, at::Tensor>>& tensors, at::ScalarType dtype,
                      const std::map<std::string, std::string>& metadata);

// Writes `text` to `path` atomically (temporary name, then rename).
void WriteFileAtomic(const std::string& path, const std::string& text);

// The safetensors name of a dtype ("F32", ...); throws E_ARG for dtypes safetensors cannot hold.
std::string SafetensorsDTypeName(at::ScalarType t);

}  // namespace lamer::model
