// The continuous-batching generator: one KV cache whose batch rows are the active requests (the slots), decoded
// together one token per step. Requests join between steps (their prompts are prefilled as a batch of their own and
// their cache rows merged in) and leave the moment they finish, so the batch is always just the live requests.
//
// Cache layout: every row's real tokens are the rightmost `length` columns of a shared width `columns`; the columns
// to their left are holes, masked out. A decode step appends one column for all rows. Merging pads the narrower side
// on the left; when the longest row leaves, the all-hole columns on the left are cut off, so the width is always the
// longest live row.
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
  std::vector<Emitted> Step(std::vector<Request> add, const std::vector<int64_t>& cancel, int64_t max_steps);

  int64_t active() const { return static_cast<int64_t>(rows_.size()); }
  // Width of the cache (the longest live row, in tokens).
  int64_t columns() const { return columns_; }
  // Decode steps the last Step ran, and the rows each of them decoded (for occupancy figures).
  int64_t last_steps() const { return last_steps_; }
  int64_t last_rows() const { return last_rows_; }
  // Forgets every request and frees the cache.
  void Clear();

 private:
  struct Row {
    Request req;
    int64_t length = 0;     // tokens in the cache
    int64_t generated = 0;  // tokens sampled so far
  };

  // Keeps only rows `keep` (indices into rows_, ascending), then trims hole columns.
  void Keep(const std::vector<int64_t>& keep);
  void Prefill(std::vector<Request> batch, std::vector<Emitted>& out);
  void Decode(int64_t max_steps, std::vector<Emitted>& out);
  at::Tensor Uniforms(const std::vector<std::vector<double>>& host) const;

  std::shared_ptr<model::Decoder> decoder_;
  GeneratorOptions options_;
  std::vector<Row> rows_;
  model::KvCache cache_;
  int64_t columns_ = 0;
  at::Tensor next_;     // [B] int64: each row's last sampled token, the input of the next decode step
  at::Tensor lengths_;  // [B] int64: tokens in the cache per row (= the position of the next input)
  SamplerPlan plan_;
  bool plan_stale_ = true;
  int64_t last_steps_ = 0;
  int64_t last_rows_ = 0;
};

}  // namespace lamer::engine
