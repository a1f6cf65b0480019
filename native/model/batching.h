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

// Attention over a prefix tree of rows (PackPrefixTree): the packed tokens' queries in blocks of `block`, each block
// with the keys of its tokens' path from the root, in depth order. Query slot i of block b sees key column j when
// allowed[b, 0, i, j]; the tree's token n is query slot order[n]. Padding slots of either kind point at packed token
// 0 (a padding query sees one key, so its softmax stays finite; nothing reads it).
struct TreeAttention {
  at::Tensor queries;  // [blocks * block] int64: the packed token in each query slot
  at::Tensor keys;     // [blocks * key_width] int64: the packed token in each key column
  at::Tensor allowed;  // [blocks, 1, block, key_width] bool
  at::Tensor order;    // [N] int64: each packed token's query slot
  int64_t blocks = 0, block = 0, key_width = 0;
  // Query-key pairs scored (blocks * block * key_width): the attention's cost.
  int64_t pairs() const { return blocks * block * key_width; }
  TreeAttention To(at::Device device) const;
};

// Rows of token ids packed as a prefix tree: a prefix shared by several rows appears once, so one forward over the
// packed tokens computes it once, and every row's hidden states are those it would have alone (each token sees its
// own row's earlier tokens only, at the position it has in its row). Sharing is found from the ids alone: rows
// sorted lexicographically share with their predecessor the longest prefix they share with any row, so every shared
// prefix, nested to any depth (a run's rules, a task's first prompt, an episode's turns), is packed once.
struct PrefixTree {
  at::Tensor ids, positions;               // [1, N] on the CPU: the packed tokens, and each one's position in its rows
  std::vector<std::vector<int64_t>> path;  // per row (in the order given): the packed index of each of its tokens
  TreeAttention attention;                 // on the CPU
  int64_t tokens = 0;                      // N
  int64_t row_tokens = 0;                  // the rows' tokens without sharing (sum of their lengths)
};

// The rows (a pointer and a length each; none empty) as one prefix tree, queries in blocks of `block` tokens.
PrefixTree PackPrefixTree(const std::vector<std::pair<const int64_t*, int64_t>>& rows, int64_t block);

// The query block the train step uses on `device`: 64. A row's own tokens past its shared prefix are mostly longer
// than that (about 110 in the default job), so little of a block is padding, and fewer blocks gather fewer copies of
// the keys. On four recorded mini-batches of the default job (2 cores, under load) blocks of 16, 32 and 64 with
// gather factors 4, 16 and 64 ranged from 1.03x to 1.63x faster than padded rows, without an order the noise hid;
// 16 with factor 4 cut the mini-batches into the most micro-batches and shared least.
int64_t TreeBlock(at::Device device);

// Indices of `rows` in groups of one prefix-tree forward each (queries in blocks of `block`): lexicographic order (so
// rows that share a prefix share a group), cut where a group's packed tokens would pass `budget`, or the keys its
// attention gathers per layer (blocks times the longest row) kGatherFactor times the budget. A row longer than the
// budget gets its own group.
inline constexpr int64_t kGatherFactor = 16;
std::vector<std::vector<size_t>> PrefixTreeGroups(const std::vector<std::pair<const int64_t*, int64_t>>& rows, int64_t budget,
                                                  int64_t block);

}  // namespace lamer::model
