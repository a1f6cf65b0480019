// ZeRO stages 1 and 2 over the data-parallel group (docs/distributed.md). The trained parameters, flattened in name
// order, one flat space per dtype, are cut into one contiguous shard per rank (the last padded). Each rank keeps
// AdamW's moments (and the fp32 master copy of low-precision parameters) for its shard only, steps that shard, and
// all-gathers the updated values, so every rank ends the step with the same parameters. Stage 2 also reduce-scatters
// the gradients: each rank keeps only its shard's (the full gradients of the backward are released before the update).
//
// The update and its step count are AdamWUpdate's (train/adamw.h), the replicated optimizer's own, applied to the
// shard's slices, so a stage-1 or stage-2 step equals a stage-0 step to float rounding (a sum's order in the
// reductions).
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "distributed/group.h"
#include "train/adamw.h"

namespace lamer::train {

struct ZeroLayout {
  // Elements [begin, begin + length) of parameter `name` (flattened) lie at `flat` in their dtype's flat space.
  struct Piece {
    std::string name;
    int64_t begin = 0, length = 0, flat = 0;
  };
  struct Space {
    at::ScalarType dtype = at::kFloat;
    std::vector<std::string> names;  // flat order
    std::vector<int64_t> numel, offset;
    int64_t total = 0;
    int64_t chunk = 0;  // elements a rank holds: ceil(total / world)
  };
  int world = 1, rank = 0;
  std::vector<Space> spaces;
  // Names, sizes and dtypes of the parameters: state files record it, and a file of other parameters is refused.
  std::string signature;

  static ZeroLayout Make(const std::map<std::string, at::Tensor>& params, int world, int rank);
  // The pieces of flat range [begin, end) of space `s`.
  std::vector<Piece> Pieces(size_t s, int64_t begin, int64_t end) const;
};

class ZeroAdamW {
 public:
  explicit ZeroAdamW(int stage) : stage_(stage) {}

  int stage() const { return stage_; }

  // Stage 2, after the backward: every parameter's gradient reduce-scattered into this rank's shard, then released.
  void ReduceScatterGradients(std::map<std::string, at::Tensor>& params, dist::Group* group);
  // The gradient norm over all ranks (clipped when max_norm > 0), `update` on this rank's shard (which counts the
  // step), and the all-gather of the updated values into every parameter. Stage 1 reads the full (all-reduced)
  // gradients, stage 2 its shard's. A norm that is not finite is returned without an update.
  double ClipAndStep(std::map<std::string, at::Tensor>& params, AdamWUpdate& update, double lr, double max_norm, dist::Group* group);
  // The state as AdamW::StateTensors names it ("exp_avg.<name>", ...): for an optimizer of one rank (a sharded file
  // read whole, to continue at stage 0).
  std::map<std::string, at::Tensor> PerParameterState(const std::map<std::string, at::Tensor>& params) const;
  // Bytes held: moments and master copies of the shard; the shard's gradients (stage 2).
  int64_t StateBytes() const;
  int64_t GradientBytes() const;

  // Saves every rank's shard: rank r's state goes to rank 0 by a broadcast, one shard at a time, and rank 0 writes
  // `path` (`metadata`, which carries AdamWUpdate::Metadata, and the layout's; rank 0's shard; `extra` tensors) and
  // `path`.shard-<r>-of-<world>.safetensors for the others.
  // Collective: every rank calls it (the others with path ""); with one process only `path` is written.
  void Save(const std::string& path, const std::vector<std::pair<std::string, at::Tensor>>& extra,
            const std::map<std::string, std::string>& metadata, const std::map<std::string, at::Tensor>& params, dist::Group* group);
  // Reads this rank's shard of the state from a sharded save at any world size, or from a stage-0 file (per-parameter
  // tensors), re-sharding as needed; master copies go into the parameters. Checked first, E_CHECKPOINT naming the file
  // and the field or tensor: the parameter signature and flat-space dtypes; zero_world a plain integer; zero_chunks
  // the chunking that zero_world makes; each shard's zero_rank, zero_world, zero_chunks, step and zero_save (one id
  // per save) against the main file's; every moment one-dimensional of its chunk's length, floating point, finite,
  // second moments non-negative (CheckStateTensor). A stage-0 file is checked as AdamW::Restore checks it: no state of
  // a parameter this model lacks, and, once it holds any, state for every parameter. The step count is the caller's
  // to restore (AdamWUpdate::Restore).
  void Restore(const std::string& path, const std::map<std::string, at::Tensor>& tensors,
               const std::map<std::string, std::string>& metadata, std::map<std::string, at::Tensor>& params, dist::Group* group);

 private:
  struct Shard {
    at::Tensor exp_avg, exp_avg_sq, master, grad;  // [length of this rank's range]
  };
  void EnsureLayout(const std::map<std::string, at::Tensor>& params, dist::Group* group);
  // This rank's flat range of space s.
  std::pair<int64_t, int64_t> Range(size_t s) const;
  void EnsureState(const std::map<std::string, at::Tensor>& params);

  int stage_;
  std::unique_ptr<ZeroLayout> layout_;
  std::vector<Shard> shards_;  // per space
};

// Whether a state file was written by ZeroAdamW::Save: any 'zero_*' metadata field (one with 'zero_world' removed is a
// damaged sharded state, refused, not a stage-0 state read as all zeros).
bool IsShardedState(const std::map<std::string, std::string>& metadata);

}  // namespace lamer::train
