#include "model/batching.h"

#include <algorithm>
#include <limits>

namespace lamer::model {

LeftPadded LeftPad(const std::vector<std::pair<const int64_t*, int64_t>>& rows) {
  LeftPadded b;
  for (const auto& [data, len] : rows) b.width = std::max(b.width, len);
  const int64_t B = static_cast<int64_t>(rows.size());
  b.ids = at::zeros({B, b.width}, at::kLong);
  b.mask = at::zeros({B, b.width}, at::kLong);
  auto ids = b.ids.accessor<int64_t, 2>();
  auto mask = b.mask.accessor<int64_t, 2>();
  for (int64_t r = 0; r < B; ++r) {
    const auto& [data, len] = rows[r];
    const int64_t off = b.width - len;
    b.padded = b.padded || off > 0;
    for (int64_t t = 0; t < len; ++t) {
      ids[r][off + t] = data[t];
      mask[r][off + t] = 1;
    }
  }
  b.positions = (b.mask.cumsum(1) - 1).clamp_min(0);
  return b;
}

std::vector<std::vector<size_t>> WidestFirstGroups(const std::vector<int64_t>& widths, int64_t budget, double overhead) {
  std::vector<size_t> order;
  for (size_t i = 0; i < widths.size(); ++i) {
    if (widths[i] > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return widths[a] > widths[b]; });
  const size_t n = order.size();
  std::vector<double> cost(n + 1, std::numeric_limits<double>::infinity());
  std::vector<size_t> cut(n + 1, 0);
  cost[0] = 0;
  for (size_t end = 1; end <= n; ++end) {
    for (size_t begin = end; begin-- > 0;) {
      const int64_t padded = static_cast<int64_t>(end - begin) * widths[order[begin]];
      if (padded > budget && end - begin > 1) break;  // longer runs only grow
      const double c = cost[begin] + static_cast<double>(padded) + overhead;
      if (c < cost[end]) {
        cost[end] = c;
        cut[end] = begin;
      }
    }
  }
  std::vector<std::vector<size_t>> groups;
  for (size_t end = n; end > 0; end = cut[end]) {
    groups.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(cut[end]), order.begin() + static_cast<std::ptrdiff_t>(end));
  }
  std::reverse(groups.begin(), groups.end());
  return groups;
}

}  // namespace lamer::model
