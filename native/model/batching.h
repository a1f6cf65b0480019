// Padded batching: items sorted widest first are cut into consecutive runs, and each forward runs one run padded to
// its first (widest) item. The train step, the log-prob pass and the engine's prefill all group their work this way.
#pragma once

#include <ATen/ATen.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lamer::model {

// Indices of `widths` in groups of one padded forward each: widest first (ties in index order), items of width 0 left
// out, cut where they cost least. A group of n items costs n times its widest item's width in padded tokens plus
// `overhead` for its forward, and a group of more than one item stays within `budget` padded tokens. The cut is exact
// (dynamic programming over the cut points), so items of very different widths do not share a padded forward just
// because they fit in the budget.
std::vector<std::vector<size_t>> WidestFirstGroups(const std::vector<int64_t>& widths, int64_t budget, double overhead);

// The overhead the callers charge per forward on a CPU: a 64th of the budget.
inline double ForwardOverhead(int64_t budget) { return static_cast<double>(budget) / 64.0; }

// One padded forward's input: ids and mask [B, T] (0 past the left padding), positions counting real tokens only
// (cumsum(mask) - 1), so a padded row sees the positions it would alone.
struct LeftPadded {
  at::Tensor ids, mask, positions;
  int64_t width = 0;    // T
  bool padded = false;  // some row is shorter than T
};

// Left-pads rows of token ids (a pointer and a length each; none empty) into one batch on the CPU. The train step and
// the log-prob pass both build their micro-batches with it.
LeftPadded LeftPad(const std::vector<std::pair<const int64_t*, int64_t>>& rows);

}  // namespace lamer::model
