#include "train/zero.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

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

std::vector<int64_t> ParseList(const std::string& s) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    out.push_back(std::stoll(s.substr(i, j - i)));
    i = j + 1;
  }
  return out;
}

std::string ShardPath(const std::string& path, int r, int world) {
  const std::string stem =
      path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0 ? path.substr(0, path.size() - 12) : path;
  char buf[64];
  std::snprintf(buf, sizeof buf, ".shard-%05d-of-%05d.safetensors", r, world);
  return stem + buf;
}

const char* kKinds[] = {"exp_avg", "exp_avg_sq", "master"};

}  // namespace

bool IsShardedState(const std::map<std::string, std::string>& metadata) { return metadata.count("zero_world") > 0; }

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
      std::map<std::string, std::string> shard_meta = {
          {"zero_rank", std::to_string(r)}, {"zero_world", std::to_string(world)}, {"zero_signature", layout_->signature}};
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
    old_world = static_cast<int>(std::stoll(meta("zero_world")));
    old_chunks = ParseList(meta("zero_chunks"));
    if (old_chunks.size() != layout_->spaces.size()) Fail("E_CHECKPOINT", path + ": metadata 'zero_chunks' does not match this model");
    shard_tensors.push_back(tensors);
    for (int r = 1; r < old_world; ++r) {
      const std::string sp = ShardPath(path, r, old_world);
      files.push_back(model::SafetensorsFile::Open(sp));
      const auto& f = files.back();
      auto sig = f.metadata().find("zero_signature");
      if (sig == f.metadata().end() || sig->second != layout_->signature) Fail("E_CHECKPOINT", sp + ": a shard of another optimizer state");
      std::map<std::string, at::Tensor> t;
      for (const auto& e : f.entries()) t[e.name] = f.Tensor(e);
      shard_tensors.push_back(std::move(t));
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
