// The continuous-batching generator: one KV cache whose batch rows are the active requests (the slots), decoded
// together one token per step. Requests join between steps (their prompts are prefilled as a batch of their own and
// their cache rows merged in) and leave the moment they finish, so the batch is always just the live requests.
//
// Cache layout: every row's real tokens are the rightmost `length` columns of a shared width `columns`; the columns
// to their left are holes, masked out. A decode step appends one column for all rows. Merging pads the narrower side
// on the left; when the longest row leaves, the all-hole columns on the left are cut off, so the width is always the
// longest live row. The rows live in a store with spare rows and spare columns on both sides of that window, so a
// join writes only the new rows, a wider prompt and a cut only move the window's edge, and a departure copies only the
// rows that refill the leavers' places; the store is reallocated (with new room) only when it runs out.
//
// Prefix cache: the keys/values of recent prompts are kept (up to a token budget, least recently used dropped first).
// A new prompt that starts with tokens of a kept one takes their keys/values and prefills only the rest: a
// multi-turn agent re-sends a growing prompt every turn, and trials of one task share their opening. Keys/values of
// a prefix do not depend on what follows it (causal attention, positions from the row start), so reuse changes no
// result beyond floating-point rounding. The cache is dropped whenever the model's parameters change.
//
// Sampling: each request has its own counter-based generator (splitmix64 keyed by its seed): the uniform behind its
// n-th token is a function of (seed, n) alone, so its tokens do not depend on the batch, on when it joined, or on how
// steps were grouped into calls.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/sampler.h"
#include "model/decoder.h"

namespace lamer::engine {

struct Request {
  int64_t id = 0;
  std::vector<int64_t> prompt;
  SamplingParams sampling;
  int64_t max_new_tokens = 1;
  std::vector<int64_t> stop_ids;
  uint64_t seed = 0;
};

enum class Finish { kNone = 0, kStop = 1, kLength = 2 };

// What one Step produced for one request: the new tokens (a stop id that ended it included) and their log-probs.
struct Emitted {
  int64_t id = 0;
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  Finish finish = Finish::kNone;
};

struct GeneratorOptions {
  // Padded prompt tokens per prefill forward (prompts that join together are prefilled in micro-batches).
  int64_t prefill_tokens = 8192;
  // Prompt tokens whose keys/values the prefix cache keeps; 0 turns it off.
  int64_t prefix_cache_tokens = 0;
};

// The uniform number in [0, 1) behind token `n` of the request seeded with `seed` (splitmix64 output n).
double RequestUniform(uint64_t seed, uint64_t n);

class Generator {
 public:
  Generator(std::shared_ptr<model::Decoder> decoder, GeneratorOptions options);

  // Drops the `cancel`led requests, prefills the `add`ed ones (sampling their first token), then decodes every
  // active row together for up to `max_steps` tokens: fewer when a row reaches its token limit within them, and, on
  // CPU where reading a token back is free, as soon as a row samples a stop id (so its slot frees at once). On a GPU
  // the tokens are read back once per call, so rows that stop mid-call decode a few discarded tokens. Runs on the
  // model's executor thread.
  // `clear_prefixes` empties the prefix cache first.
  std::vector<Emitted> Step(std::vector<Request> add, const std::vector<int64_t>& cancel, int64_t max_steps, bool clear_prefixes = false);

  int64_t active() const { return static_cast<int64_t>(rows_.size()); }
  // Width of the cache (the longest live row, in tokens).
  int64_t columns() const { return columns_; }
  // Decode steps the last Step ran, and the rows each of them decoded (for occupancy figures).
  int64_t last_steps() const { return last_steps_; }
  int64_t last_rows() const { return last_rows_; }
  // Prompt tokens the last Step took from the prefix cache, and those it computed.
  int64_t last_reused() const { return last_reused_; }
  int64_t last_prefilled() const { return last_prefilled_; }
  // Prompt-token columns the last Step's prefill forwards ran, padding included (>= last_prefilled()).
  int64_t last_padded() const { return last_padded_; }
  // Prompts (and their tokens) the prefix cache holds now.
  int64_t prefix_entries() const { return static_cast<int64_t>(prefix_.size()); }
  int64_t prefix_tokens() const { return prefix_tokens_; }
  // Forgets every request and frees the cache, the prefix cache too.
  void Clear();

 private:
  struct Row {
    Request req;
    int64_t length = 0;     // tokens in the cache
    int64_t generated = 0;  // tokens sampled so far
  };

  // One kept prompt: its tokens and, per layer, keys and values [kv_heads, tokens, head_dim].
  struct PrefixEntry {
    std::vector<int64_t> tokens;
    std::vector<at::Tensor> k, v;
    uint64_t last_use = 0;
  };
  struct PrefixMatch {
    std::shared_ptr<PrefixEntry> entry;
    int64_t common = 0;  // tokens the prompt shares with the entry
  };
  PrefixMatch LongestPrefix(const std::vector<int64_t>& prompt) const;
  // Leading tokens of a `length`-token prompt taken from the cache for `match` (never the last; none below a minimum).
  static int64_t Reuse(const PrefixMatch& match, int64_t length);
  // Keeps `prompt`'s keys/values (row `row` of per-layer [N, kv, width, D] tensors, right-aligned), replacing an
  // entry the prompt extends, then drops least recently used entries down to the budget.
  void Remember(const std::vector<int64_t>& prompt, const PrefixMatch& match, const std::vector<at::Tensor>& k,
                const std::vector<at::Tensor>& v, int64_t row);
  void DropStalePrefixes();

  // Forgets every request (the prefix cache stays).
  void ClearRows();
  void ClearPrefixes();
  // Keeps only rows `keep` (indices into rows_, ascending; the rows may be reordered), then trims hole columns.
  void Keep(const std::vector<int64_t>& keep);
  // Makes the row store hold `rows_needed` rows and a window `width` columns wide (the live rows right-aligned in it)
  // with `extra` free columns on its right: in place when there is room, else in a larger store.
  void Place(int64_t rows_needed, int64_t width, int64_t extra);
  // Points cache_ (what the decoder reads and appends to) at the live rows' window of the store.
  void Bind();
  void Prefill(std::vector<Request> batch, std::vector<Emitted>& out);
  void Decode(int64_t max_steps, std::vector<Emitted>& out);
  at::Tensor Uniforms(const std::vector<std::vector<double>>& host) const;

  std::shared_ptr<model::Decoder> decoder_;
  GeneratorOptions options_;
  std::vector<Row> rows_;
  // The row store: per layer [row capacity, kv heads, column capacity, head_dim]. Row r of the batch is store row r;
  // the live window is columns [left_, left_ + columns_), with free columns on both sides, so joining rows, growing
  // the width and cutting hole columns move no data; decode steps append right of the window.
  model::KvCache store_;
  int64_t left_ = 0;
  // The live rows' window of store_ (views), with length columns_.
  model::KvCache cache_;
  int64_t columns_ = 0;
  at::Tensor next_;     // [B] int64: each row's last sampled token, the input of the next decode step
  at::Tensor lengths_;  // [B] int64: tokens in the cache per row (= the position of the next input)
  SamplerPlan plan_;
  bool plan_stale_ = true;
  int64_t last_steps_ = 0;
  int64_t last_rows_ = 0;
  int64_t last_reused_ = 0;
  int64_t last_prefilled_ = 0;
  int64_t last_padded_ = 0;
  std::vector<std::shared_ptr<PrefixEntry>> prefix_;
  int64_t prefix_tokens_ = 0;
  uint64_t prefix_clock_ = 0;
  uint64_t prefix_version_ = 0;
};

}  // namespace lamer::engine
