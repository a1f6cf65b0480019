// GAE of the PPO baseline (SPEC §4) over raw columns: plain C++17, no torch, no N-API. Each row is its own sequence of
// response tokens; the row's scalar reward lands on its last token; advantages are then whitened over every token of
// the batch. src/algo/gae.ts computes the same numbers in TypeScript and is the reference the tests compare with.
#pragma once

#include <cstdint>

namespace lamer::algo {

struct GaeParams {
  double gamma = 1.0;
  double lambda = 1.0;
  bool whiten = true;
};

// rows: number of rows; lengths[r]: response tokens of row r; row_reward[r]: its reward; values: one per token, rows
// concatenated. Writes advantage and returns (value targets: raw advantage + value), one per token. The caller checks
// that the arrays have these lengths and that gamma and lambda are in [0, 1].
void compute_gae(int64_t rows, const int64_t* lengths, const float* row_reward, const float* values, const GaeParams& params,
                 float* advantage, float* returns);

}  // namespace lamer::algo
