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
// Prefix cache (engine/prefix_cache.h): prompts that start like a recent one take its keys/values. It is dropped
// whenever the model's parameters change. CUDA graphs: engine/decode_graphs.h.
//
// Decode attention (model/fused_ops.h, DecodeAttention): on CUDA each row reads only its live columns (its length
// + 1) through torch's memory-efficient kernel, the graphs' width bounding the grid alone; on the CPU, and with
// `live_attention` off, the first `width` columns with a mask.
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

#include "engine/decode_graphs.h"
#include "engine/prefix_cache.h"
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
  // Decode attention reads each row's live columns only, where the device has such a kernel (CUDA).
  bool live_attention = true;
};

// What the last Step did, for the engine's stats.
struct StepStats {
  int64_t steps = 0;        // decode steps run
  int64_t rows = 0;         // live rows each of them decoded
  int64_t graph_steps = 0;  // of the steps, those replayed from a CUDA graph
  int64_t reused = 0;       // prompt tokens taken from the prefix cache
  int64_t prefilled = 0;    // prompt tokens computed
  int64_t padded = 0;       // prompt-token columns the prefill forwards ran, padding included (>= prefilled)
  // Bytes of keys/values the decode steps' attention read (every layer, keys and values), and the bytes of the
  // decoding rows' live columns alone (what attention over live lengths reads at least).
  double kv_bytes_read = 0;
  double kv_bytes_live = 0;
  // Wall seconds of the call's prefill forwards and of its decode steps (each ends reading its tokens back to the
  // host, so on CUDA the device work is inside them too).
  double prefill_seconds = 0;
  double decode_seconds = 0;
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
  // What the last Step did.
  const StepStats& last() const { return last_; }
  // CUDA graphs captured and held now; why capture was turned off (empty while graphs work or are not used).
  int64_t graphs() const { return graphs_.size(); }
  int64_t graph_nodes() const { return graphs_.nodes(); }
  const std::string& graph_error() const { return graphs_.error(); }
  // Whether decode steps are captured as graphs on this engine (CUDA, option on, no failed capture).
  bool graphs_enabled() const { return graphs_.enabled(); }
  // Prompts (and their tokens) the prefix cache holds now.
  int64_t prefix_entries() const { return prefix_.entries(); }
  int64_t prefix_tokens() const { return prefix_.tokens(); }
  // Captures the decode graphs of every bucket (rows and widths, powers of two up to the slots and to `columns`; with
  // attention over live lengths one width, the capacity) for rows sampling with `sampling`, so that no capture happens while requests wait.
  // The engine must hold no request. Returns the graphs held after; 0 where graphs are off (the CPU).
  int64_t CaptureBuckets(const SamplingParams& sampling, int64_t columns);
  // Forgets every request and frees the cache, the prefix cache and the graphs too.
  void Clear();
  // Frees the slot store, the step buffers, the CUDA graphs (and their memory pool) and the prefix cache of an engine
  // that holds no request (E_ARG otherwise); the next request allocates them again. On CUDA the caching allocator's
  // unused blocks then go back to the device, so that what runs next (a train step) has that memory.
  void Release();

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

  // Forgets every request (the prefix cache stays).
  void ClearRows();
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
  // Whether decode attention reads each row's live columns (liveAttention on a device that can): the width of a step
  // then bounds nothing but the shapes a CUDA graph fixes, so every step uses the capacity as its width and the graphs
  // are keyed on rows (and sampling) alone, not multiplied by width buckets.
  bool LiveWidth() const;
  // Forgets the graphs when the weights they read have moved (the decoder's storage version changed).
  void DropStaleGraphs();
  // Runs `steps` decode steps of the fixed layout: from a CUDA graph where graphs are on, else eagerly.
  void FixedSteps(int64_t rows, int64_t width, const SlotSampler::Shape& shape, int64_t steps);
  // Adds a decode step's attention reads to the stats (the columns the attention kernel is given).
  // `base`: each computed row's columns when the call's decoding began; `step`: the steps run since.
  void CountKvReads(int64_t rows, int64_t width, const std::vector<int64_t>& base, int64_t step, const std::vector<bool>& live);

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
  DecodeGraphs graphs_;
  // The weights' storage version the graphs were captured against.
  uint64_t graphs_storage_version_ = 0;
  StepStats last_;
  PrefixCache prefix_;
};

}  // namespace lamer::engine
