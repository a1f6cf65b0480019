#include "model/batching.h"

#include <algorithm>
#include <limits>

namespace lamer::model {

std::vector<Run> CheapestRuns(const std::vector<int64_t>& widths, int64_t budget, double overhead) {
  const size_t n = widths.size();
  std::vector<double> cost(n + 1, std::numeric_limits<double>::infinity());
  std::vector<size_t> cut(n + 1, 0);
  cost[0] = 0;
  for (size_t end = 1; end <= n; ++end) {
    for (size_t begin = end; begin-- > 0;) {
      const int64_t padded = static_cast<int64_t>(end - begin) * widths[begin];
      if (padded > budget && end - begin > 1) break;  // longer runs only grow
      const double c = cost[begin] + static_cast<double>(padded) + overhead;
      if (c < cost[end]) {
        cost[end] = c;
        cut[end] = begin;
      }
    }
  }
  std::vector<Run> out;
  for (size_t end = n; end > 0; end = cut[end]) out.push_back({cut[end], end});
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace lamer::model
