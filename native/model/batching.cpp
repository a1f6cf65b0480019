#include "model/batching.h"

#include <algorithm>
#include <limits>
#include <numeric>

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

namespace {

using Row = std::pair<const int64_t*, int64_t>;

// The rows' indices in lexicographic order of their ids (ties in index order).
std::vector<size_t> LexicographicOrder(const std::vector<Row>& rows) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::lexicographical_compare(rows[a].first, rows[a].first + rows[a].second, rows[b].first, rows[b].first + rows[b].second);
  });
  return order;
}

int64_t CommonPrefix(const Row& a, const Row& b) {
  const int64_t n = std::min(a.second, b.second);
  int64_t l = 0;
  while (l < n && a.first[l] == b.first[l]) ++l;
  return l;
}

}  // namespace

TreeAttention TreeAttention::To(at::Device device) const {
  TreeAttention t = *this;
  t.queries = queries.to(device);
  t.keys = keys.to(device);
  t.allowed = allowed.to(device);
  t.order = order.to(device);
  return t;
}

PrefixTree PackPrefixTree(const std::vector<Row>& rows, int64_t block) {
  PrefixTree tree;
  block = std::max<int64_t>(1, block);
  const std::vector<size_t> order = LexicographicOrder(rows);
  tree.path.resize(rows.size());
  std::vector<int64_t> ids, depth;
  // A row's tokens past what it shares with its predecessor: packed [begin, begin + length), after `shared` tokens
  // of its path that an earlier row packed.
  struct Segment {
    int64_t begin, length, shared;
    size_t row;
  };
  std::vector<Segment> segments;
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t r = order[k];
    const auto& [data, len] = rows[r];
    const int64_t shared = k > 0 ? CommonPrefix(rows[order[k - 1]], rows[r]) : 0;
    std::vector<int64_t>& path = tree.path[r];
    path.reserve(static_cast<size_t>(len));
    if (shared > 0) {
      const std::vector<int64_t>& before = tree.path[order[k - 1]];
      path.assign(before.begin(), before.begin() + shared);
    }
    if (shared < len) segments.push_back({static_cast<int64_t>(ids.size()), len - shared, shared, r});
    for (int64_t t = shared; t < len; ++t) {
      path.push_back(static_cast<int64_t>(ids.size()));
      ids.push_back(data[t]);
      depth.push_back(t);
    }
    tree.row_tokens += len;
  }
  const int64_t n = static_cast<int64_t>(ids.size());
  tree.tokens = n;
  tree.ids = at::tensor(ids, at::kLong).view({1, n});
  tree.positions = at::tensor(depth, at::kLong).view({1, n});

  TreeAttention& a = tree.attention;
  a.block = block;
  for (const Segment& s : segments) {
    a.blocks += (s.length + block - 1) / block;
    a.key_width = std::max(a.key_width, s.shared + s.length);
  }
  a.queries = at::zeros({a.blocks * block}, at::kLong);
  a.keys = at::zeros({a.blocks * a.key_width}, at::kLong);
  a.allowed = at::zeros({a.blocks, 1, block, a.key_width}, at::kBool);
  a.order = at::empty({n}, at::kLong);
  int64_t* queries = a.queries.data_ptr<int64_t>();
  int64_t* keys = a.keys.data_ptr<int64_t>();
  bool* allowed = a.allowed.data_ptr<bool>();
  int64_t* slot = a.order.data_ptr<int64_t>();
  int64_t b = 0;
  for (const Segment& s : segments) {
    const std::vector<int64_t>& path = tree.path[s.row];
    for (int64_t start = 0; start < s.length; start += block, ++b) {
      const int64_t count = std::min(block, s.length - start);
      // The block's keys: its tokens' path, root first, up to its last token; key column j is at depth j.
      std::copy(path.begin(), path.begin() + s.shared + start + count, keys + b * a.key_width);
      for (int64_t i = 0; i < block; ++i) {
        bool* row = allowed + (b * block + i) * a.key_width;
        if (i >= count) {
          row[0] = true;  // a padding query
          continue;
        }
        const int64_t token = s.begin + start + i;
        queries[b * block + i] = token;
        slot[token] = b * block + i;
        std::fill(row, row + s.shared + start + i + 1, true);  // its path up to itself
      }
    }
  }
  return tree;
}

int64_t TreeBlock(at::Device /*device*/) { return 64; }

std::vector<std::vector<size_t>> PrefixTreeGroups(const std::vector<Row>& rows, int64_t budget, int64_t block) {
  block = std::max<int64_t>(1, block);
  std::vector<std::vector<size_t>> groups;
  // The group's packed tokens, query blocks and longest row: blocks * longest bounds the keys/values its attention
  // gathers per layer, which is held to kGatherFactor times what a padded micro-batch of the budget holds.
  int64_t packed = 0, blocks = 0, longest = 0;
  const Row* previous = nullptr;
  for (const size_t r : LexicographicOrder(rows)) {
    const int64_t len = rows[r].second;
    if (len <= 0) continue;
    const int64_t added = len - (previous ? CommonPrefix(*previous, rows[r]) : 0);
    const int64_t added_blocks = (added + block - 1) / block;
    const bool fits = packed + added <= budget && (blocks + added_blocks) * std::max(longest, len) <= kGatherFactor * budget;
    if (groups.empty() || !fits) {
      groups.emplace_back();
      packed = len;
      blocks = (len + block - 1) / block;
      longest = len;
    } else {
      packed += added;
      blocks += added_blocks;
      longest = std::max(longest, len);
    }
    groups.back().push_back(r);
    previous = &rows[r];
  }
  return groups;
}

}  // namespace lamer::model
