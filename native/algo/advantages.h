// Returns and advantages of a rollout (SPEC §3, §4) over raw column pointers: plain C++17, no torch, no N-API, so the
// kernel can be tested and benchmarked on its own and the binding stays a thin adapter. The CUDA version in
// kernels/advantages.cu computes the same numbers on the GPU.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace lamer::algo {

// One rollout, column by column (the TS RowTable). `step_key` is the step-level cluster key of each row: the
// interned anchor id (exact text equality) or a similarity cluster id; it is only compared for equality.
struct RowView {
  int64_t rows = 0;
  const int32_t* group = nullptr;
  const int32_t* trial = nullptr;
  const int32_t* episode = nullptr;
  const int32_t* turn = nullptr;
  const uint8_t* phase = nullptr;  // 0 play, 1 reflect
  const float* reward = nullptr;
  const uint8_t* valid = nullptr;
  const int32_t* step_key = nullptr;
};

enum class Estimator : int32_t { kGiGPO = 0, kGRPO = 1 };
enum class ReturnsFormula : int32_t { kRecursive = 0, kPaper = 1 };

// No defaults here: the binding requires every field, and the defaults live once, in src/algo/options.ts.
struct AdvantageParams {
  Estimator estimator = Estimator::kGiGPO;
  ReturnsFormula returns = ReturnsFormula::kRecursive;
  double gamma_step = 0;
  double gamma_traj = 0;
  double invalid_penalty = 0;
  // GiGPO: true for mean_std_norm. GRPO: normByStd.
  bool divide_by_std = false;
  double omega = 0;
  double eps = 0;
};

// Outputs, one value per row; caller-owned.
struct AdvantageOutputs {
  float* episode_reward = nullptr;
  float* step_return = nullptr;
  float* advantage = nullptr;
};

// A malformed row table; the message names the column and the row (the binding maps it to code E_ROWS).
class RowsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Checks what the computation relies on (the same checks and messages as validateRowColumns in
// src/rollout/rows.ts, except the string-only ones): phase 0/1, valid 0/1, finite rewards, zero reward on reflect
// rows, episode >= 0, rows of each (group, trial) contiguous, episodes never going backwards inside a trial, play turns
// strictly increasing inside an episode, no reflect row inside an episode. Throws RowsError.
void validate_rows(const RowView& rows);

// Validates, then fills the outputs. O(rows): one forward pass for episode rewards, one backward pass for returns,
// hash-grouped sums for the episode level (key: group) and the step level (key: group, step_key).
void compute_advantages(const RowView& rows, const AdvantageParams& params, const AdvantageOutputs& out);

}  // namespace lamer::algo
