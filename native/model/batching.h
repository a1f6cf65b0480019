// Padded batching: items sorted widest first are cut into consecutive runs, and each forward runs one run padded to
// its first (widest) item. The train step, the log-prob pass and the engine's prefill all group their work this way.
#pragma once

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

}  // namespace lamer::model
