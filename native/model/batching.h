// Padded batching: items sorted widest first are cut into consecutive runs, and each forward runs one run padded to
// its first (widest) item. The train step, the log-prob pass and the engine's prefill all cut their work this way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lamer::model {

struct Run {
  size_t begin = 0;
  size_t end = 0;  // exclusive
};

// The cheapest cut of `widths` (non-increasing) into runs: a run of n items costs n * widths[begin] padded tokens plus
// `overhead` for its forward, and a run of more than one item stays within `budget` padded tokens. Exact (dynamic
// programming over the cut points), so items of very different widths do not share a padded forward just because they
// fit in the budget.
std::vector<Run> CheapestRuns(const std::vector<int64_t>& widths, int64_t budget, double overhead);

// The overhead the callers charge per forward: a 64th of the budget.
inline double ForwardOverhead(int64_t budget) { return static_cast<double>(budget) / 64.0; }

}  // namespace lamer::model
