// The train step (SPEC §5): rows -> micro-batches by a token budget -> log-probs (and entropy, values) with gradient
// -> dual-clip PPO loss (or supervised cross-entropy) normalised over the whole mini-batch -> backward -> grad-norm
// clipping -> AdamW. All of it runs on the model's executor thread; nothing here touches N-API.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "distributed/group.h"
#include "model/decoder.h"
#include "train/adamw.h"
#include "train/losses.h"
#include "train/zero.h"

namespace lamer::train {

enum class Objective { kPolicy, kSft };

// Rows of one mini-batch. Row r is ids[row_begin[r] .. row_begin[r+1]); its scored tokens are positions
// starts[r] .. length-1 (the response; starts[r] >= 1 is the prompt length). Per-token columns hold one value per
// scored token, rows concatenated in order; empty when absent.
struct Batch {
  std::vector<int64_t> ids;
  std::vector<int64_t> row_begin;  // rows + 1 entries
  std::vector<int64_t> starts;
  std::vector<float> advantages, old_logprobs, ref_logprobs, returns, old_values;

  int64_t rows() const { return static_cast<int64_t>(starts.size()); }
  int64_t length(int64_t r) const { return row_begin[r + 1] - row_begin[r]; }
  int64_t scored(int64_t r) const { return length(r) - starts[r]; }
  int64_t total_scored() const;
  // Checks shapes and ranges; E_ARG naming the row and column.
  void Validate(int64_t vocab) const;
};

// The iteration's rows staged once in native memory (NativeOptimizer.stage): each mini-batch step then names its rows
// by index, and PPO's values and GAE are computed here, so nothing goes back to JS between the rollout and the update.
struct StagedBatch {
  Batch batch;
  std::vector<float> row_returns;  // per row: the return G that GAE places on the row's last token (PPO)
};

// The settings of a step (the loss's are LossOptions, train/losses.h).
struct StepOptions {
  Objective objective = Objective::kPolicy;
  LossOptions loss;
  int64_t micro_batch_tokens = 0;  // padded tokens per forward/backward
  double max_grad_norm = 0;        // <= 0: no clipping
  double lr = 0;
  bool update = true;         // false: loss, metrics (and gradients) only, parameters unchanged
  bool with_grad = true;      // false: no backward at all (loss evaluation)
  bool return_grads = false;  // hand the gradients back (tests)
  bool chunked = true;        // chunked log-prob function (false: plain autograd over whole logits)
  int64_t chunk_bytes = 0;    // logit-chunk budget in bytes (the device profile's, src/model/device.ts)
  bool gradient_checkpointing = false;
  // Rows that share a prefix of token ids compute it once, forward and backward (model/batching.h PackPrefixTree):
  // the same loss and gradients as padded rows, micro-batches cut by packed tokens instead of padded ones. Off with
  // LoRA dropout (a shared prefix would draw one mask for all its rows).
  bool share_prefix = false;
  // The frozen reference of the KL loss: its log-probs are computed per micro-batch, without gradient, when the
  // batch carries no ref_logprobs. Same device as the trained model.
  std::shared_ptr<model::Decoder> reference;
  // LoRA: the reference is the trained model's base, its adapter off (no second copy of the weights).
  bool reference_base = false;
  // Data parallel: this rank's rows are its share of one global mini-batch. The loss is normalised by the global
  // row and token counts, gradients and metric sums are all-reduced before clipping, so every rank takes the same
  // step as one process given all rows would. A rank may then have no rows of its own.
  std::shared_ptr<dist::Group> group;
};

// Bytes this optimizer's model holds for training (Optimizer::Memory).
struct MemoryBytes {
  int64_t parameters = 0;       // every parameter of the model (base, adapter, value head)
  int64_t trainable = 0;        // the trained ones among them
  int64_t trainable_count = 0;  // their elements
  int64_t gradients = 0;        // gradients held at the last update, before they were released
  int64_t optimizer_state = 0;  // AdamW's moments and master copies
};

struct StepResult {
  std::vector<std::pair<std::string, double>> metrics;
  std::map<std::string, at::Tensor> grads;
  std::vector<float> logprobs;  // per scored token, row order (the training forward's own log-probs)
};

// Groups the given rows of `batch` (longest first, stable) into micro-batches of at most `budget` padded tokens, cut
// where the padding saved outweighs a fixed per-forward overhead (budget / 64 tokens); a row longer than the budget
// gets a micro-batch of its own.
std::vector<std::vector<int64_t>> MicroBatches(const Batch& batch, const std::vector<int64_t>& rows, int64_t budget);

// The optimizer of one model (NativeOptimizer in JS): its AdamW state and PPO value head, and the train steps that
// update it. The training loop itself is TypeScript's (src/train/trainer.ts).
class Optimizer {
 public:
  // `zero` 1 or 2: the AdamW state (and at 2 the gradients) sharded over the steps' group (train/zero.h); 0: whole.
  Optimizer(std::shared_ptr<model::Decoder> decoder, AdamWOptions adam, bool value_head, int zero = 0);

  // One step over every row of `batch` (validated here).
  StepResult Step(const Batch& batch, const StepOptions& options);
  // One step over the rows `rows` of a staged batch (validated when it was staged); result log-probs are those rows'
  // tokens, in the order given.
  StepResult Step(const StagedBatch& staged, const std::vector<int64_t>& rows, const StepOptions& options);
  // Values (value head) per scored token, without gradient.
  std::vector<float> Values(const Batch& batch, int64_t micro_batch_tokens);
  // PPO: the value of every scored token of the staged batch, then GAE inside each row with the row's return on its
  // last token, advantages whitened over the batch (algo/gae.h). Fills the batch's advantages, returns and
  // old_values columns.
  void Gae(StagedBatch& staged, double gamma, double lambda, int64_t micro_batch_tokens);

  // Optimizer state (and the value head) in one safetensors file.
  // With ZeRO, Save is collective: every rank of `group` calls it, rank 0 with the path (the others with ""), and
  // Load reads this rank's shard, at any world size (train/zero.h).
  void Save(const std::string& path, const std::map<std::string, std::string>& extra_metadata, dist::Group* group = nullptr);
  void Load(const std::string& path, dist::Group* group = nullptr);
  int zero_stage() const { return zero_ ? zero_->stage() : 0; }

  // Updates taken (at every ZeRO stage: the one count of update_).
  int64_t step() const { return update_.step(); }
  MemoryBytes Memory();
  bool has_value_head() const { return value_head_; }
  const std::shared_ptr<model::Decoder>& decoder() const { return decoder_; }

 private:
  // The step: checks, row and token counts, one objective per micro-batch (SFT or policy), then the reduction over
  // the ranks, the metrics, and clipping and the update.
  StepResult StepRows(const Batch& batch, const std::vector<int64_t>& rows, const StepOptions& options);
  // Sums the loss parts over the ranks, and the gradients too unless `grads` is false (ZeRO stage 2 scatters them).
  void ReduceOverRanks(std::map<std::string, at::Tensor>& params, at::Tensor& sums, const StepOptions& options, bool grads = true);
  // The gradient norm (clipped when updating), the gradients themselves when asked, and the AdamW step.
  void ClipAndUpdate(std::map<std::string, at::Tensor>& params, const StepOptions& options, StepResult& out);
  // The decoder's parameters and the value head's, by name.
  std::map<std::string, at::Tensor> TrainableParameters();
  void EnsureValueHead();

  std::shared_ptr<model::Decoder> decoder_;
  // The AdamW update and its step count, whichever optimizer holds the state: the replicated one (adam_) or, with
  // ZeRO, the sharded one (zero_).
  AdamWUpdate update_;
  AdamW adam_;
  std::unique_ptr<ZeroAdamW> zero_;
  bool value_head_;
  std::map<std::string, at::Tensor> head_;  // value_head.weight [1, H], value_head.bias [1]
  int64_t gradient_bytes_ = 0;
};

}  // namespace lamer::train
