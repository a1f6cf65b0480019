// The continuous-batching generator over a fixed-slot KV cache. The cache holds, per layer, keys and values for
// `slots` rows of `capacity` columns, allocated once: a request that joins takes the lowest free slot and writes its
// prompt's keys/values to that slot's first columns; each decode step writes every row's new key/value at the row's
// own length and attends to the columns below it; a request that leaves frees its slot. Nothing compacts or moves,
// so the addresses a decode step reads and writes stay the same for the engine's life (the capacity grows, moving
// the cache once, only when a request longer than any before arrives), and on CUDA each decode step is replayed from
// a captured CUDA graph: one per (rows, attended width, kinds of sampling present), rows and width rounded up to
// powers of two so a handful of graphs serve every step. Sampling and the chosen token's log-prob run inside the
// graph; tokens are read back once per call. A capture that fails (an op that cannot be captured, an old driver)
// turns graphs off for the engine and the same step runs eagerly, with a note of why.
//
// A step decodes slots [0, rows), rows = the highest decoding slot + 1 (rounded up on CUDA): free slots below it are
// computed and ignored, which the lowest-free-slot rule keeps rare. On the CPU, where every row costs and nothing is
// captured, the highest decoding row moves down into a slot freed below it instead (one row copy per departure).
//
// Prefill: each call computes at most `prefill_tokens` prompt tokens of the requests waiting for it, in arrival order; a
// prompt longer than what is left goes on in chunks over the next calls, each chunk attending to the keys/values its
// slot already holds, so decoding rows get a step between chunks instead of stalling behind a long prompt. Prompts of a
// call are prefilled together, padded on the right so plain causal attention (torch's fused kernels) serves prompts of
// different lengths; the keys/values land in the slots with one copy per layer.
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
#include <optional>
#include <string>
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

// How decoding rows sit in the slots: packed (moved down into slots freed below them; each step decodes exactly the
// decoding rows) or fixed (never moved; rows and attended width rounded up to powers of two, as CUDA graphs need).
// Which one is the device profile's (src/model/device.ts: packed on the CPU, fixed on a GPU).
enum class SlotLayout { kPacked, kFixed };

// Every field comes from the binding, which requires them all: the defaults live in TS (src/engine/engine.ts and the
// device profile).
struct GeneratorOptions {
  // Padded prompt tokens per prefill forward (prompts that join together are prefilled in micro-batches).
  int64_t prefill_tokens = 0;
  // Prompt tokens whose keys/values the prefix cache keeps; 0 turns it off.
  int64_t prefix_cache_tokens = 0;
  // Rows of the KV cache: requests decoding at once at most.
  int64_t slots = 0;
  // Capture decode steps as CUDA graphs (CUDA only; ignored on the CPU).
  bool cuda_graphs = false;
  SlotLayout layout = SlotLayout::kPacked;
};

// The uniform number in [0, 1) behind token `n` of the request seeded with `seed` (splitmix64 output n).
double RequestUniform(uint64_t seed, uint64_t n);

class Generator {
 public:
  Generator(std::shared_ptr<model::Decoder> decoder, GeneratorOptions options);
  ~Generator();

  // Drops the `cancel`led requests, gives the `add`ed ones slots, prefills up to `prefill_tokens` prompt tokens of
  // the waiting requests (a longer prompt goes on in chunks over the next calls; a prompt that completes samples
  // its first token), then decodes every row whose prompt is in together for up to `max_steps` tokens: fewer when a row reaches its token
  // limit within them, and, on CPU where reading a token back is free, as soon as a row samples a stop id (so its slot frees at once). On a
  // GPU the tokens are read back once per call, so rows that stop mid-call decode a few discarded tokens. Runs on the model's executor
  // thread. Live requests may never outnumber the slots. `clear_prefixes` empties the prefix cache first.
  std::vector<Emitted> Step(std::vector<Request> add, const std::vector<int64_t>& cancel, int64_t max_steps, bool clear_prefixes = false);

  int64_t active() const { return live_; }
  int64_t slots() const { return options_.slots; }
  // The longest live row, in tokens.
  int64_t columns() const;
  // Columns each slot holds now.
  int64_t capacity() const { return capacity_; }
  // Decode steps the last Step ran, and the live rows each of them decoded (for occupancy figures).
  int64_t last_steps() const { return last_steps_; }
  int64_t last_rows() const { return last_rows_; }
  // Of the last Step's decode steps, those replayed from a CUDA graph.
  int64_t last_graph_steps() const { return last_graph_steps_; }
  // CUDA graphs captured and held now; why capture was turned off (empty while graphs work or are not used).
  int64_t graphs() const;
  const std::string& graph_error() const { return graph_error_; }
  // Whether decode steps are captured as graphs on this engine (CUDA, option on, no failed capture).
  bool graphs_enabled() const;
  // Prompt tokens the last Step took from the prefix cache, and those it computed.
  int64_t last_reused() const { return last_reused_; }
  int64_t last_prefilled() const { return last_prefilled_; }
  // Prompt-token columns the last Step's prefill forwards ran, padding included (>= last_prefilled()).
  int64_t last_padded() const { return last_padded_; }
  // Prompts (and their tokens) the prefix cache holds now.
  int64_t prefix_entries() const { return static_cast<int64_t>(prefix_.size()); }
  int64_t prefix_tokens() const { return prefix_tokens_; }
  // Forgets every request and frees the cache, the prefix cache and the graphs too.
  void Clear();

 private:
  struct Row {
    Request req;
    int64_t prefilled = 0;  // prompt tokens whose keys/values are in the slot
    bool decoding = false;  // the prompt is in and its first token sampled
    int64_t length = 0;     // tokens in the cache (decoding rows)
    int64_t generated = 0;  // tokens sampled so far
  };
  // Up to this many of a prompt's tokens, starting where its slot has keys/values.
  struct Chunk {
    int64_t slot = 0;
    int64_t tokens = 0;
  };
  bool Decoding(int64_t slot) const { return rows_[slot] && rows_[slot]->decoding; }
  bool Packed() const;

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
  // Keeps `prompt`'s keys/values (row `row` of per-layer [N, kv, width, D] tensors, left-aligned), replacing an
  // entry the prompt extends, then drops least recently used entries down to the budget.
  void Remember(const std::vector<int64_t>& prompt, const PrefixMatch& match, const std::vector<at::Tensor>& k,
                const std::vector<at::Tensor>& v, int64_t row);
  void DropStalePrefixes();

  // Forgets every request (the prefix cache stays).
  void ClearRows();
  void ClearPrefixes();
  // Frees the slots of rows that finished or were cancelled.
  void Free(int64_t slot);
  // Allocates the slot store and step buffers on first use, and grows every slot to hold `columns` (moving the cache,
  // which makes captured graphs stale).
  void EnsureCapacity(int64_t columns);
  // Moves the highest decoding rows into free slots below them (CPU only), so a step computes no free rows.
  void Compact();
  // Sends slot lengths and the live mask to the device when a row joined or left.
  void SyncSlots();
  // Prefills this call's share of the waiting prompts (see Step), sampling the first token of each that completes.
  void PrefillPending(std::vector<Emitted>& out);
  // One prefill forward over `chunks` (rows of different slots), their keys/values written into the slots.
  void PrefillChunks(const std::vector<Chunk>& chunks, std::vector<Emitted>& out);
  // Uniform rows `host` [steps][rows] as a device tensor.
  at::Tensor Uniforms(const std::vector<std::vector<double>>& host) const;
  void Decode(int64_t max_steps, std::vector<Emitted>& out);
  // One decode step of slots [0, rows) attending to `width` columns: reads next_, lengths_, live_mask_, the uniform
  // table's row step_; writes the new keys/values, next_, lengths_ (live rows), out_tokens_/out_logprobs_ row step_,
  // and advances step_. Device work only: capturable.
  void DecodeStep(int64_t rows, int64_t width, const SlotSampler::Shape& shape);
  // Runs `steps` decode steps from a CUDA graph for the key, capturing it first when new; false when graphs are off
  // or capture failed (then nothing ran beyond a first eager step, counted in `ran`).
  bool ReplaySteps(int64_t rows, int64_t width, const SlotSampler::Shape& shape, int64_t steps, int64_t& ran);

  std::shared_ptr<model::Decoder> decoder_;
  GeneratorOptions options_;
  // Per slot: the request it holds, if any.
  std::vector<std::optional<Row>> rows_;
  // Slots whose prompts are waiting for (the rest of) their prefill, in arrival order.
  std::vector<int64_t> pending_;
  int64_t live_ = 0;
  bool slots_dirty_ = true;
  // The slot store: per layer [slots, kv heads, capacity, head_dim], allocated once (regrown only for a longer row).
  model::KvCache store_;
  int64_t capacity_ = 0;
  // Device buffers of the decode step, [slots] each: the input token, the tokens in the cache (= the position and
  // the column of the input), whether the slot is live.
  at::Tensor next_, lengths_, live_mask_;
  SlotSampler sampler_;
  // Uniforms of a call's steps [kStepChunk, slots] (fp64), the step counter [1], and each step's tokens and log-probs.
  at::Tensor uniform_table_, step_, out_tokens_, out_logprobs_;
  struct Graphs;
  std::unique_ptr<Graphs> graphs_;
  std::string graph_error_;
  int64_t last_steps_ = 0;
  int64_t last_rows_ = 0;
  int64_t last_graph_steps_ = 0;
  int64_t last_reused_ = 0;
  int64_t last_prefilled_ = 0;
  int64_t last_padded_ = 0;
  std::vector<std::shared_ptr<PrefixEntry>> prefix_;
  int64_t prefix_tokens_ = 0;
  uint64_t prefix_clock_ = 0;
  uint64_t prefix_version_ = 0;
};

}  // namespace lamer::engine
