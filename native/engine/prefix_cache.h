// The engine's prefix cache: the keys/values of recent prompts, up to a token budget (least recently used dropped
// first). A new prompt that starts with tokens of a kept one takes their keys/values and prefills only the rest: a
// multi-turn agent re-sends a growing prompt every turn, and trials of one task share their opening. Keys/values of a
// prefix do not depend on what follows it (causal attention, positions from the row start), so reuse changes no
// result beyond floating-point rounding. The owner drops the cache whenever the model's parameters change.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace lamer::engine {

// Leading tokens `a` and `b` share.
int64_t CommonPrefix(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

class PrefixCache {
 public:
  // Fewer shared leading tokens than this are computed again rather than taken from the cache.
  static constexpr int64_t kMinReuse = 4;

  // One kept prompt: its tokens and every layer's keys and values in one tensor [layers, 2, kv_heads, tokens,
  // head_dim] (one allocation and one copy per finished prompt, not two per layer).
  struct Entry {
    std::vector<int64_t> tokens;
    at::Tensor kv;
    uint64_t last_use = 0;
    at::Tensor k(int64_t layer) const { return kv[layer][0]; }  // [kv_heads, tokens, head_dim]
    at::Tensor v(int64_t layer) const { return kv[layer][1]; }
  };
  struct Match {
    std::shared_ptr<Entry> entry;
    int64_t common = 0;  // tokens the prompt shares with the entry
  };

  // `budget` prompt tokens at most (0: the cache is off and keeps nothing).
  explicit PrefixCache(int64_t budget = 0) : budget_(budget) {}

  bool enabled() const { return budget_ > 0; }
  // The kept prompt sharing the most leading tokens with `prompt`.
  Match Longest(const std::vector<int64_t>& prompt) const;
  // Leading tokens of a `length`-token prompt taken from the cache for `match` (never the last, whose logits are
  // needed; none below kMinReuse).
  static int64_t Reuse(const Match& match, int64_t length);
  // Marks the match's entry used now (it served a prompt).
  void Touch(const Match& match);
  // Keeps `prompt`'s keys/values (row `row` of per-layer [N, kv, width, D] tensors, left-aligned), replacing an entry
  // the prompt extends, then drops least recently used entries down to the budget.
  void Remember(const std::vector<int64_t>& prompt, const Match& match, const std::vector<at::Tensor>& k, const std::vector<at::Tensor>& v,
                int64_t row);
  // Empties the cache when `version` (the model's parameters version) differs from the one its entries were made at.
  void DropIfStale(uint64_t version);
  void Clear();

  int64_t entries() const { return static_cast<int64_t>(entries_.size()); }
  int64_t tokens() const { return tokens_; }

 private:
  int64_t budget_;
  std::vector<std::shared_ptr<Entry>> entries_;
  int64_t tokens_ = 0;
  uint64_t clock_ = 0;
  uint64_t version_ = 0;
};

}  // namespace lamer::engine
