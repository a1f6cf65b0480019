// AdamW with weight-decay groups, fp32 master weights and state, gradient-norm clipping, and state files in
// safetensors. The arithmetic follows torch.optim.AdamW's single-tensor path and torch.nn.utils.clip_grad_norm_
// operation for operation, so a run here and a run in PyTorch with the same settings stay together.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>

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

class AdamW {
 public:
  explicit AdamW(AdamWOptions options) : options_(options) {}

  const AdamWOptions& options() const { return options_; }
  int64_t step() const { return step_; }

  // One update of every parameter in `params` that has a gradient. Parameters kept in a low-precision dtype are
  // updated through an fp32 master copy that lives here, then written back rounded.
  void Step(std::map<std::string, at::Tensor>& params, double lr);

  // The state as named tensors (exp_avg.<name>, exp_avg_sq.<name>, master.<name>) and metadata.
  std::vector<std::pair<std::string, at::Tensor>> StateTensors() const;
  std::map<std::string, std::string> StateMetadata() const;
  // Bytes of state held: moments and master copies.
  int64_t StateBytes() const;
  // Restores state from tensors read from a file; checks names and shapes against `params` (E_CHECKPOINT naming
  // `file` and the tensor). Master copies are written into the parameters so they continue exactly.
  void Restore(const std::map<std::string, at::Tensor>& tensors, const std::map<std::string, std::string>& metadata,
               std::map<std::string, at::Tensor>& params, const std::string& file);

 private:
  struct State {
    at::Tensor exp_avg, exp_avg_sq;
    at::Tensor master;  // fp32 copy when the parameter itself is bf16/fp16; undefined otherwise
  };
  AdamWOptions options_;
  int64_t step_ = 0;
  std::map<std::string, State> state_;
};

// The step count of an AdamW state file's metadata, after checking that it is one (E_CHECKPOINT naming `file`).
int64_t StateFileStep(const std::map<std::string, std::string>& metadata, const std::string& file);

// Global L2 norm of the gradients of `params` (as clip_grad_norm_ computes it: norm of the per-tensor norms), then
// scales every gradient by min(1, max_norm / (norm + 1e-6)) when max_norm > 0. Returns the norm before clipping.
double ClipGradNorm(std::map<std::string, at::Tensor>& params, double max_norm);

}  // namespace lamer::train
