#include "train/zero.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <random>
#include <set>

#include "bridge/errors.h"
#include "bridge/tensor.h"
#include "model/safetensors.h"

namespace lamer::train {

namespace {

// Elements per rank moved by one collective of the all-gather and the reduce-scatter: bounds the temporary buffers.
constexpr int64_t kBucketBytes = 64ll << 20;

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A metadata field of `file` as a plain decimal integer in [lo, hi]; E_CHECKPOINT naming the file and the field.
int64_t MetaInteger(const std::string& file, const std::string& key, const std::string& v, int64_t lo, int64_t hi) {
  const bool digits = !v.empty() && v.size() <= 15 && v.find_first_not_of("0123456789") == std::string::npos;
  const int64_t n = digits ? std::stoll(v) : -1;
  if (!digits || n < lo || n > hi) {
    Fail("E_CHECKPOINT",
         file + ": metadata '" + key + "' is '" + v + "', expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return n;
}

// A comma-separated list of such integers.
std::vector<int64_t> MetaList(const std::string& file, const std::string& key, const std::string& s) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    out.push_back(MetaInteger(file, key, s.substr(i, j - i), 1, int64_t{1} << 48));
    i = j + 1;
  }
  return out;
}

// One save's identity, written into its main file and every shard, so that a shard of another save (an earlier
// checkpoint, another run) is told apart even at the same step and parameter set.
std::string SaveId() {
  std::random_device rd;
  const uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return Hex(v ^ static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
}

constexpr int64_t kMaxWorld = 1 << 20;

std::string ShardPath(const std::string& path, int r, int world) {
  const std::string stem =
      path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0 ? path.substr(0, path.size() - 12) : path;
  char buf[64];
  std::snprintf(buf, sizeof buf, ".shard-%05d-of-%05d.safetensors", r, world);
  return stem + buf;
}

const char* kKinds[] = {"exp_avg", "exp_avg_sq", "master"};

}  // namespace

bool IsShardedState(const std::map<std::string, std::string>& metadata) {
  // Any ZeRO field marks it (a file whose 'zero_world' was removed is a damaged sharded state, not a stage-0 one).
  for (const auto& [key, value] : metadata) {
    if (key.compare(0, 5, "zero_") == 0) return true;
  }
  return false;
}

ZeroLayout ZeroLayout::Make(const std::map<std::string, at::Tensor>& params, int world, int rank) {
  ZeroLayout l;
  l.world = world;
  l.rank = rank;
  std::map<int, size_t> by_dtype;
  std::string sig;
  for (const auto& [name, p] : params) {
    const int key = static_cast<int>(p.scalar_type());
    if (!by_dtype.count(key)) {
      by_dtype[key] = l.spaces.size();
      l.spaces.push_back(ZeroLayout::Space{});
      l.spaces.back().dtype = p.scalar_type();
    }
    Space& s = l.spaces[by_dtype[key]];
    s.names.push_back(name);
    s.numel.push_back(p.numel());
    s.offset.push_back(s.total);
    s.total += p.numel();
    sig += name + "=" + std::to_string(p.numel()) + ":" + DTypeName(p.scalar_type()) + ";";
  }
  for (Space& s : l.spaces) s.chunk = std::max<int64_t>(1, (s.total + world - 1) / world);
  l.signature = Hex(Fnv1a(sig)) + "/" + std::to_string(params.size());
  return l;
}

std::vector<ZeroLayout::Piece> ZeroLayout::Pieces(size_t si, int64_t begin, int64_t end) const {
  const Space& s = spaces[si];
  std::vector<Piece> out;
  end = std::min(end, s.total);
  if (begin >= end) return out;
  // The first parameter that ends after `begin` (offsets ascend).
  size_t i = std::upper_bound(s.offset.begin(), s.offset.end(), begin) - s.offset.begin();
  i = i == 0 ? 0 : i - 1;
  for (; i < s.names.size() && s.offset[i] < end; ++i) {
    const int64_t a = std::max(begin, s.offset[i]), b = std::min(end, s.offset[i] + s.numel[i]);
    if (a < b) out.push_back({s.names[i], a - s.offset[i], b - a, a});
  }
  return out;
}

void ZeroAdamW::EnsureLayout(const std::map<std::string, at::Tensor>& params, dist::Group* group) {
  const int world = group ? group->size() : 1, rank = group ? group->rank() : 0;
  if (layout_) {
    if (layout_->world != world || layout_->rank != rank) {
      Fail("E_ARG", "ZeRO: this optimizer was sharded over " + std::to_string(layout_->world) + " ranks (this one rank " +
                        std::to_string(layout_->rank) + "); a step over " + std::to_string(world) + " ranks needs an optimizer of its own");
    }
    return;
  }
  layout_ = std::make_unique<ZeroLayout>(ZeroLayout::Make(params, world, rank));
}

std::pair<int64_t, int64_t> ZeroAdamW::Range(size_t s) const {
  const ZeroLayout::Space& sp = layout_->spaces[s];
  return {layout_->rank * sp.chunk, (layout_->rank + 1) * sp.chunk};
}

void ZeroAdamW::EnsureState(const std::map<std::string, at::Tensor>& params) {
  if (!shards_.empty()) return;
  at::NoGradGuard no_grad;
  for (size_t s = 0; s < layout_->spaces.size(); ++s) {
    const ZeroLayout::Space& sp = layout_->spaces[s];
    const at::Tensor& any = params.at(sp.names[0]);
    const bool low = LowPrecision(sp.dtype);
    const auto opts = any.options().dtype(low ? at::kFloat : sp.dtype);
    Shard sh;
    sh.exp_avg = at::zeros({sp.chunk}, opts);
    sh.exp_avg_sq = at::zeros({sp.chunk}, opts);
    if (low) {
      sh.master = at::zeros({sp.chunk}, opts);
      const auto [base, end] = Range(s);
      for (const auto& p : layout_->Pieces(s, base, end)) {
        sh.master.narrow(0, p.flat - base, p.length).copy_(params.at(p.name).detach().reshape({-1}).narrow(0, p.begin, p.length));
      }
    }
    shards_.push_back(std::move(sh));
  }
}

void ZeroAdamW::ReduceScatterGradients(std::map<std::string, at::Tensor>& params, dist::Group* group) {
  at::NoGradGuard no_grad;
  EnsureLayout(params, group);
  EnsureState(params);
  const int world = layout_->world;
  for (size_t s = 0; s < layout_->spaces.size(); ++s) {
    const ZeroLayout::Space& sp = layout_->spaces[s];
    const auto opts = params.at(sp.names[0]).options().dtype(sp.dtype);
    Shard& sh = shards_[s];
    sh.grad = at::zeros({sp.chunk}, opts);
    const int64_t elem = static_cast<int64_t>(c10::elementSize(sp.dtype));
    const int64_t b = std::max<int64_t>(1, std::min(sp.chunk, kBucketBytes / elem / world));
    // The bucket after which each parameter's gradient has been read completely (then it is released).
    std::map<std::string, int64_t> last;
    for (int r = 0; r < world; ++r) {
      for (const auto& p : layout_->Pieces(s, r * sp.chunk, (r + 1) * sp.chunk)) {
        const int64_t k = (p.flat + p.length - 1 - r * sp.chunk) / b;
        last[p.name] = std::max(last[p.name], k);
      }
    }
    for (int64_t k = 0; k * b < sp.chunk; ++k) {
      const int64_t len = std::min(b, sp.chunk - k * b);
      at::Tensor in = at::zeros({len * world}, opts);
      for (int r = 0; r < world; ++r) {
        const int64_t from = r * sp.chunk + k * b;
        for (const auto& p : layout_->Pieces(s, from, from + len)) {
          const at::Tensor& g = params.at(p.name).grad();
          if (!g.defined()) continue;
          in.narrow(0, r * len + (p.flat - from), p.length).copy_(g.reshape({-1}).narrow(0, p.begin, p.length));
        }
      }
      if (group) {
        group->ReduceScatterSum(sh.grad.narrow(0, k * b, len), in);
      } else {
        sh.grad.narrow(0, k * b, len).copy_(in);
      }
      for (const auto& [name, kk] : last) {
        if (kk == k) params.at(name).mutable_grad() = at::Tensor();
      }
    }
  }
}

double ZeroAdamW::ClipAndStep(std::map<std::string, at::Tensor>& params, AdamWUpdate& update, double lr, double max_norm,
                              dist::Group* group) {
  at::NoGradGuard no_grad;
  EnsureLayout(params, group);
  EnsureState(params);
  // The global norm (clipped): stage 1 from the full, all-reduced gradients, the same on every rank; stage 2 from the
  // shards' squared norms summed over the ranks.
  double norm = 0;
  if (stage_ == 1) {
    norm = ClipGradNorm(params, max_norm);
  } else {
    at::Tensor sq = at::zeros({1}, at::TensorOptions().dtype(at::kDouble).device(group ? group->device() : at::Device(at::kCPU)));
    for (auto& sh : shards_) {
      if (!sh.grad.defined()) Fail("E_TRAIN", "ZeRO stage 2: the update came before the gradients were reduce-scattered");
      sq += at::linalg_vector_norm(sh.grad, 2).to(at::kDouble).pow(2).to(sq.device());
    }
    if (group) group->AllReduceSum({sq});
    norm = std::sqrt(sq.to(at::kCPU).item<double>());
    if (max_norm > 0 && std::isfinite(norm)) {
      const double coef = std::min(1.0, max_norm / (norm + 1e-6));
      for (auto& sh : shards_) sh.grad.mul_(coef);
    }
  }
  if (!std::isfinite(norm)) return norm;  // the caller refuses the update

  // Per piece of this rank's shard, in every space: the values updated (the fp32 master of a low-precision parameter,
  // else the parameter's own elements), its gradient (stage 1: the parameter's; stage 2: the shard's) and its moments.
  std::vector<AdamWUpdate::Slice> slices;
  for (size_t s = 0; s < layout_->spaces.size(); ++s) {
    const ZeroLayout::Space& sp = layout_->spaces[s];
    Shard& sh = shards_[s];
    const auto [base, end] = Range(s);
    const bool low = LowPrecision(sp.dtype);
    const at::Tensor& any = params.at(sp.names[0]);
    for (const auto& p : layout_->Pieces(s, base, end)) {
      const int64_t at = p.flat - base;
      AdamWUpdate::Slice& x = slices.emplace_back();
      x.w = low ? sh.master.narrow(0, at, p.length) : params.at(p.name).detach().reshape({-1}).narrow(0, p.begin, p.length);
      if (stage_ == 1) {
        const at::Tensor& full = params.at(p.name).grad();
        x.g = full.defined() ? full.reshape({-1}).narrow(0, p.begin, p.length) : at::zeros({p.length}, any.options().dtype(sp.dtype));
      } else {
        x.g = sh.grad.narrow(0, at, p.length);
      }
      if (low) x.g = x.g.to(at::kFloat);
      x.m = sh.exp_avg.narrow(0, at, p.length);
      x.v = sh.exp_avg_sq.narrow(0, at, p.length);
      x.decays = DecaysWeight(p.name);
    }
  }
  update.Step(slices, lr);
  slices.clear();

  const int world = layout_->world;
  for (size_t s = 0; s < layout_->spaces.size(); ++s) {
    const ZeroLayout::Space& sp = layout_->spaces[s];
    Shard& sh = shards_[s];
    const int64_t base = Range(s).first;
    const bool low = LowPrecision(sp.dtype);
    const at::Tensor& any = params.at(sp.names[0]);
    // Every rank's updated shard into every rank's parameters, a bucket at a time.
    const int64_t elem = static_cast<int64_t>(c10::elementSize(sp.dtype));
    const int64_t b = std::max<int64_t>(1, std::min(sp.chunk, kBucketBytes / elem / world));
    const auto popts = any.options().dtype(sp.dtype);
    for (int64_t k = 0; k * b < sp.chunk; ++k) {
      const int64_t len = std::min(b, sp.chunk - k * b);
      at::Tensor in = at::zeros({len}, popts);
      for (const auto& p : layout_->Pieces(s, base + k * b, base + k * b + len)) {
        const at::Tensor src =
            low ? sh.master.narrow(0, p.flat - base, p.length) : params.at(p.name).detach().reshape({-1}).narrow(0, p.begin, p.length);
        in.narrow(0, p.flat - base - k * b, p.length).copy_(src);
      }
      at::Tensor out = at::empty({len * world}, popts);
      if (group) {
        group->AllGatherInto(out, in);
      } else {
        out.copy_(in);
      }
      for (int r = 0; r < world; ++r) {
        const int64_t from = r * sp.chunk + k * b;
        for (const auto& p : layout_->Pieces(s, from, from + len)) {
          params.at(p.name).detach().reshape({-1}).narrow(0, p.begin, p.length).copy_(out.narrow(0, r * len + (p.flat - from), p.length));
        }
      }
    }
    sh.grad = at::Tensor();
  }
  return norm;
}

std::map<std::string, at::Tensor> ZeroAdamW::PerParameterState(const std::map<std::string, at::Tensor>& params) const {
  std::map<std::string, at::Tensor> out;
  if (!layout_ || layout_->world != 1) Fail("E_ARG", "ZeRO: per-parameter state needs the whole state on one rank");
  for (size_t s = 0; s < layout_->spaces.size(); ++s) {
    const ZeroLayout::Space& sp = layout_->spaces[s];
    for (size_t i = 0; i < sp.names.size(); ++i) {
      const at::Tensor& p = params.at(sp.names[i]);
      for (int kind = 0; kind < 3; ++kind) {
        const at::Tensor& t = kind == 0 ? shards_[s].exp_avg : kind == 1 ? shards_[s].exp_avg_sq : shards_[s].master;
        if (t.defined()) out[std::string(kKinds[kind]) + "." + sp.names[i]] = t.narrow(0, sp.offset[i], sp.numel[i]).view(p.sizes());
      }
    }
  }
  return out;
}

int64_t ZeroAdamW::StateBytes() const {
  int64_t n = 0;
  for (const auto& sh : shards_) {
    for (const at::Tensor* t : {&sh.exp_avg, &sh.exp_avg_sq, &sh.master}) {
      if (t->defined()) n += static_cast<int64_t>(t->nbytes());
    }
  }
  return n;
}

int64_t ZeroAdamW::GradientBytes() const {
  int64_t n = 0;
  for (const auto& sh : shards_) {
    if (sh.grad.defined()) n += static_cast<int64_t>(sh.grad.nbytes());
  }
  return n;
}

void ZeroAdamW::Save(const std::string& path, const std::vector<std::pair<std::string, at::Tensor>>& extra,
                     const std::map<std::string, std::string>& metadata, const std::map<std::string, at::Tensor>& params,
                     dist::Group* group) {
  at::NoGradGuard no_grad;
  EnsureLayout(params, group);
  EnsureState(params);
  const int world = layout_->world, rank = layout_->rank;
  if (rank == 0 && path.empty()) Fail("E_ARG", "ZeRO save: rank 0 needs the path to write");
  std::map<std::string, std::string> meta = metadata;
  meta["zero_stage"] = std::to_string(stage_);
  meta["zero_world"] = std::to_string(world);
  meta["zero_signature"] = layout_->signature;
  std::string chunks, dtypes;
  for (size_t s = 0; s < layout_->spaces.size(); ++s) {
    chunks += (s ? "," : "") + std::to_string(layout_->spaces[s].chunk);
    dtypes += (s ? "," : "") + DTypeName(layout_->spaces[s].dtype);
  }
  meta["zero_chunks"] = chunks;
  meta["zero_dtypes"] = dtypes;
  meta["zero_rank"] = "0";
  meta["zero_save"] = SaveId();
  for (int r = 0; r < world; ++r) {
    // Rank r's shard reaches rank 0 (every rank receives it: a broadcast), one shard in memory at a time.
    std::vector<std::pair<std::string, at::Tensor>> items;
    for (size_t s = 0; s < layout_->spaces.size(); ++s) {
      const Shard& sh = shards_[s];
      for (int kind = 0; kind < 3; ++kind) {
        const at::Tensor& mine = kind == 0 ? sh.exp_avg : kind == 1 ? sh.exp_avg_sq : sh.master;
        if (!mine.defined()) continue;
        at::Tensor t = r == rank ? mine.clone() : at::empty_like(mine);
        if (group && world > 1) group->Broadcast({t}, r);
        items.emplace_back(std::string(kKinds[kind]) + "." + std::to_string(s), t);
      }
    }
    if (rank != 0) continue;
    if (r == 0) {
      for (const auto& e : extra) items.push_back(e);
      model::WriteSafetensors(path, items, at::ScalarType::Undefined, meta);
    } else {
      // What the main file says of the save, and this shard's rank: Restore checks each against the main file.
      std::map<std::string, std::string> shard_meta = {{"zero_rank", std::to_string(r)},
                                                       {"zero_world", std::to_string(world)},
                                                       {"zero_signature", layout_->signature},
                                                       {"zero_chunks", chunks},
                                                       {"zero_dtypes", dtypes},
                                                       {"zero_save", meta.at("zero_save")}};
      if (meta.count("step")) shard_meta["step"] = meta.at("step");
      model::WriteSafetensors(ShardPath(path, r, world), items, at::ScalarType::Undefined, shard_meta);
    }
  }
}

void ZeroAdamW::Restore(const std::string& path, const std::map<std::string, at::Tensor>& tensors,
                        const std::map<std::string, std::string>& metadata, std::map<std::string, at::Tensor>& params, dist::Group* group) {
  at::NoGradGuard no_grad;
  EnsureLayout(params, group);
  shards_.clear();
  EnsureState(params);
  auto meta = [&](const char* key) -> std::string {
    auto it = metadata.find(key);
    if (it == metadata.end()) Fail("E_CHECKPOINT", path + ": metadata '" + key + "' missing (not a sharded optimizer state?)");
    return it->second;
  };
  const bool sharded = IsShardedState(metadata);
  // Flat range [begin, end) of space s of one kind, from the file's layout into `dst`.
  std::vector<model::SafetensorsFile> files;
  std::vector<std::map<std::string, at::Tensor>> shard_tensors;
  std::vector<int64_t> old_chunks;
  int old_world = 1;
  if (sharded) {
    if (meta("zero_signature") != layout_->signature) {
      Fail("E_CHECKPOINT", path + ": this optimizer state is of other parameters (names, sizes or dtypes differ from this model's)");
    }
    old_world = static_cast<int>(MetaInteger(path, "zero_world", meta("zero_world"), 1, kMaxWorld));
    if (meta("zero_rank") != "0")
      Fail("E_CHECKPOINT", path + ": metadata 'zero_rank' is '" + meta("zero_rank") + "', the main file is rank 0's");
    old_chunks = MetaList(path, "zero_chunks", meta("zero_chunks"));
    if (old_chunks.size() != layout_->spaces.size()) {
      Fail("E_CHECKPOINT", path + ": metadata 'zero_chunks' lists " + std::to_string(old_chunks.size()) + " flat spaces, this model has " +
                               std::to_string(layout_->spaces.size()));
    }
    std::string dtypes;
    for (size_t s = 0; s < layout_->spaces.size(); ++s) {
      const ZeroLayout::Space& sp = layout_->spaces[s];
      // The chunking a save over old_world ranks makes (ZeroLayout::Make): anything else reads misaligned ranges.
      const int64_t want = std::max<int64_t>(1, (sp.total + old_world - 1) / old_world);
      if (old_chunks[s] != want) {
        Fail("E_CHECKPOINT", path + ": metadata 'zero_chunks' is '" + meta("zero_chunks") + "': space " + std::to_string(s) + " of " +
                                 std::to_string(sp.total) + " elements over zero_world " + std::to_string(old_world) +
                                 " ranks is cut in chunks of " + std::to_string(want));
      }
      dtypes += (s ? "," : "") + DTypeName(sp.dtype);
    }
    if (meta("zero_dtypes") != dtypes) {
      Fail("E_CHECKPOINT",
           path + ": metadata 'zero_dtypes' is '" + meta("zero_dtypes") + "', this model's flat spaces are '" + dtypes + "'");
    }
    const std::string save = meta("zero_save");
    const std::string step = meta("step");
    shard_tensors.push_back(tensors);
    for (int r = 1; r < old_world; ++r) {
      const std::string sp = ShardPath(path, r, old_world);
      files.push_back(model::SafetensorsFile::Open(sp));
      const auto& f = files.back();
      auto field = [&](const char* key) -> std::string {
        auto it = f.metadata().find(key);
        if (it == f.metadata().end()) Fail("E_CHECKPOINT", sp + ": metadata '" + key + "' missing (not a shard of " + path + ")");
        return it->second;
      };
      if (field("zero_signature") != layout_->signature)
        Fail("E_CHECKPOINT", sp + ": a shard of another optimizer state (other parameters)");
      if (field("zero_rank") != std::to_string(r)) {
        Fail("E_CHECKPOINT", sp + ": metadata 'zero_rank' is '" + field("zero_rank") + "', expected " + std::to_string(r) +
                                 " (shards swapped or copied over one another)");
      }
      if (field("zero_world") != std::to_string(old_world)) {
        Fail("E_CHECKPOINT",
             sp + ": metadata 'zero_world' is '" + field("zero_world") + "', " + path + " says " + std::to_string(old_world));
      }
      if (field("zero_chunks") != meta("zero_chunks")) {
        Fail("E_CHECKPOINT",
             sp + ": metadata 'zero_chunks' is '" + field("zero_chunks") + "', " + path + " says '" + meta("zero_chunks") + "'");
      }
      if (field("step") != step) {
        Fail("E_CHECKPOINT",
             sp + ": a shard of step " + field("step") + ", " + path + " is of step " + step + " (a shard of another checkpoint)");
      }
      if (field("zero_save") != save) {
        Fail("E_CHECKPOINT",
             sp + ": metadata 'zero_save' is '" + field("zero_save") + "', " + path + " says '" + save + "' (a shard of another save)");
      }
      std::map<std::string, at::Tensor> t;
      for (const auto& e : f.entries()) t[e.name] = f.Tensor(e);
      shard_tensors.push_back(std::move(t));
    }
    // Every shard's tensors: one per kind and space, of the chunk's length, floating point, finite.
    for (int r = 0; r < old_world; ++r) {
      const std::string file = r == 0 ? path : ShardPath(path, r, old_world);
      for (size_t s = 0; s < layout_->spaces.size(); ++s) {
        for (int kind = 0; kind < 3; ++kind) {
          const std::string key = std::string(kKinds[kind]) + "." + std::to_string(s);
          auto it = shard_tensors[r].find(key);
          if (it == shard_tensors[r].end()) {
            if (kind == 2) continue;  // no master saved: the parameters' values are kept
            Fail("E_CHECKPOINT", file + ": no tensor '" + key + "' (shard " + std::to_string(r) + " of " + std::to_string(old_world) + ")");
          }
          if (it->second.dim() != 1 || it->second.numel() != old_chunks[s]) {
            Fail("E_CHECKPOINT", file + ": tensor '" + key + "' has " + std::to_string(it->second.numel()) + " elements in " +
                                     std::to_string(it->second.dim()) + " dimension(s), expected one dimension of zero_chunks' " +
                                     std::to_string(old_chunks[s]));
          }
          CheckStateTensor(file, key, it->second);
        }
      }
    }
  } else {
    // A stage-0 file (AdamW's per-parameter tensors) at stage 1 or 2: the same checks as AdamW::Restore's, so that a
    // state of other parameters is refused here as it is at stage 0.
    std::set<std::string> with_state;
    for (const auto& [key, t] : tensors) {
      const size_t dot = key.find('.');
      const std::string kind = dot == std::string::npos ? key : key.substr(0, dot);
      if (kind != "exp_avg" && kind != "exp_avg_sq" && kind != "master") continue;  // other sections (value head)
      const std::string name = key.substr(dot + 1);
      auto p = params.find(name);
      if (p == params.end())
        Fail("E_CHECKPOINT", path + ": tensor '" + key + "' is for a parameter '" + name + "' this model does not have");
      if (t.sizes() != p->second.sizes())
        Fail("E_CHECKPOINT", path + ": tensor '" + key + "' has the wrong shape for parameter '" + name + "'");
      CheckStateTensor(path, key, t);
      if (kind != "master") with_state.insert(key);
    }
    if (!with_state.empty()) {
      for (const auto& [name, p] : params) {
        for (const char* kind : {"exp_avg.", "exp_avg_sq."}) {
          if (!with_state.count(kind + name)) {
            Fail("E_CHECKPOINT",
                 path + ": no '" + kind + name + "' for parameter '" + name + "' of this model (an optimizer state of other parameters)");
          }
        }
      }
    }
  }
  for (size_t s = 0; s < layout_->spaces.size(); ++s) {
    const auto [base, end] = Range(s);
    Shard& sh = shards_[s];
    for (int kind = 0; kind < 3; ++kind) {
      at::Tensor& dst = kind == 0 ? sh.exp_avg : kind == 1 ? sh.exp_avg_sq : sh.master;
      if (!dst.defined()) continue;
      const std::string k = kKinds[kind];
      if (sharded) {
        const int64_t oc = old_chunks[s];
        for (int r = 0; r < old_world; ++r) {
          const int64_t a = std::max(base, r * oc), b = std::min({end, (r + 1) * oc, layout_->spaces[s].total});
          if (a >= b) continue;
          auto it = shard_tensors[r].find(k + "." + std::to_string(s));
          if (it == shard_tensors[r].end()) {
            if (kind == 2) continue;  // no master saved: keep the parameters' values
            Fail("E_CHECKPOINT", path + ": shard " + std::to_string(r) + " has no '" + k + "." + std::to_string(s) + "'");
          }
          dst.narrow(0, a - base, b - a).copy_(it->second.narrow(0, a - r * oc, b - a));
        }
      } else {
        // A stage-0 file: one tensor per parameter (absent for one never stepped: zeros).
        for (const auto& p : layout_->Pieces(s, base, end)) {
          auto it = tensors.find(k + "." + p.name);
          if (it == tensors.end()) continue;
          if (it->second.numel() != params.at(p.name).numel())
            Fail("E_CHECKPOINT", path + ": tensor '" + k + "." + p.name + "' has the wrong size");
          dst.narrow(0, p.flat - base, p.length).copy_(it->second.reshape({-1}).narrow(0, p.begin, p.length));
        }
      }
    }
  }
  // Low-precision parameters continue from their masters: each rank's shard into every rank's parameters.
  for (size_t s = 0; s < layout_->spaces.size(); ++s) {
    const ZeroLayout::Space& sp = layout_->spaces[s];
    if (!shards_[s].master.defined()) continue;
    const at::Tensor mine = shards_[s].master.to(sp.dtype);
    at::Tensor out = at::empty({sp.chunk * layout_->world}, mine.options());
    if (group) {
      group->AllGatherInto(out, mine);
    } else {
      out.copy_(mine);
    }
    for (int r = 0; r < layout_->world; ++r) {
      for (const auto& p : layout_->Pieces(s, r * sp.chunk, (r + 1) * sp.chunk)) {
        params.at(p.name)
            .detach()
            .reshape({-1})
            .narrow(0, p.begin, p.length)
            .copy_(out.narrow(0, r * sp.chunk + (p.flat - r * sp.chunk), p.length));
      }
    }
  }
}

}  // namespace lamer::train
