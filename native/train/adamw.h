// AdamW with weight-decay groups, fp32 master weights and state, gradient-norm clipping, and state files in
// safetensors. The arithmetic follows torch.optim.AdamW's single-tensor path and torch.nn.utils.clip_grad_norm_
// operation for operation, so a run here and a run in PyTorch with the same settings stay together.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace lamer::train {

// No defaults here: the binding requires every field, and the defaults live once, in TS (src/train/options.ts).
struct AdamWOptions {
  double beta1 = 0;
  double beta2 = 0;
  double eps = 0;
  double weight_decay = 0;
};

// Norm weights (every "*norm.weight") and biases get no weight decay; everything else does (embeddings included).
bool DecaysWeight(const std::string& name);

// bf16 and fp16: parameters of these dtypes are updated through an fp32 master copy.
bool LowPrecision(at::ScalarType dtype);

// AdamW's update and its step count, one object that the replicated optimizer (AdamW below: state per parameter) and
// the sharded one (ZeroAdamW, train/zero.h: state per slice of a flat shard) both hand their tensors to, so the two
// update the same way and count their steps in one place (the count seeds LoRA dropout and is what state files record).
class AdamWUpdate {
 public:
  explicit AdamWUpdate(AdamWOptions options) : options_(options) {}

  const AdamWOptions& options() const { return options_; }
  // Updates taken so far; the next one is step() + 1.
  int64_t step() const { return step_; }

  // One tensor's part of an update. `w` is updated in place: a parameter's own values, or the fp32 master copy of a
  // low-precision parameter, whose rounded values then go to `low`. `g` is the gradient in w's dtype, `m` and `v` the
  // moments; `decays` puts it in the weight-decay group.
  struct Slice {
    at::Tensor w, g, m, v;
    bool decays = true;
    at::Tensor low;
  };
  // The next update: the count goes up by one and every slice is updated. On CUDA the fp32 slices of each weight-decay
  // group go through torch's fused multi-tensor kernel (_fused_adamw_, the same update in fp32); the others through
  // the separate operators, whose results the default job's figures were measured with, a block of elements at a
  // time (the operators are elementwise, so blocks change no value).
  void Step(const std::vector<Slice>& slices, double lr);

  // The metadata of a state file: "optimizer" (adamw), "step", betas, eps and weight decay.
  std::map<std::string, std::string> Metadata() const;
  // Continues the count of a state file (StateFileStep).
  void Restore(int64_t step) { step_ = step; }

 private:
  AdamWOptions options_;
  int64_t step_ = 0;
};

// The replicated optimizer's state: AdamW's moments (and the fp32 master copy of a low-precision parameter) for every
// trained parameter, whole.
class AdamW {
 public:
  // One update of every parameter in `params` that has a gradient, by `update` (which counts it).
  void Step(std::map<std::string, at::Tensor>& params, AdamWUpdate& update, double lr);

  // The state as named tensors (exp_avg.<name>, exp_avg_sq.<name>, master.<name>).
  std::vector<std::pair<std::string, at::Tensor>> StateTensors() const;
  // Bytes of state held: moments and master copies.
  int64_t StateBytes() const;
  // Restores state from tensors read from a file; checks names and shapes against `params` in both directions (a
  // state for a parameter this model lacks, or, once the file holds any moments, a parameter without them, is
  // refused), dtypes and values (CheckStateTensor). E_CHECKPOINT naming `file` and the tensor. Master copies are
  // written into the parameters so they continue exactly.
  void Restore(const std::map<std::string, at::Tensor>& tensors, std::map<std::string, at::Tensor>& params, const std::string& file);

 private:
  struct State {
    at::Tensor exp_avg, exp_avg_sq;
    at::Tensor master;  // fp32 copy when the parameter itself is bf16/fp16; undefined otherwise
  };
  std::map<std::string, State> state_;
};

// The step count of an AdamW state file's metadata, after checking that it is one (E_CHECKPOINT naming `file`): a
// plain non-negative decimal integer ("1e9" and "-1" are refused, not read as 1 or wrapped).
int64_t StateFileStep(const std::map<std::string, std::string>& metadata, const std::string& file);

// One moment or master tensor `key` ("exp_avg_sq.<name>", "exp_avg.0", ...) read from `file`: floating point, every
// value finite, and a second moment (exp_avg_sq) never negative. E_CHECKPOINT naming the file and the tensor.
void CheckStateTensor(const std::string& file, const std::string& key, const at::Tensor& t);

// Global L2 norm of the gradients of `params` (as clip_grad_norm_ computes it: norm of the per-tensor norms), then
// scales every gradient by min(1, max_norm / (norm + 1e-6)) when max_norm > 0. Returns the norm before clipping.
double ClipGradNorm(std::map<std::string, at::Tensor>& params, double max_norm);

}  // namespace lamer::train
