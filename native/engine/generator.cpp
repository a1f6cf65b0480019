#include "engine/generator.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>
#include <unordered_set>

#include <ATen/Parallel.h>
#ifdef LAMER_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "bridge/errors.h"
#include "model/batching.h"
#include "model/fused_ops.h"

namespace lamer::engine {

namespace {

uint64_t SplitMix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

bool IsStop(const Request& r, int64_t token) { return std::find(r.stop_ids.begin(), r.stop_ids.end(), token) != r.stop_ids.end(); }

// The finish reason after a row's `generated`-th token `token`.
Finish FinishAfter(const Request& r, int64_t token, int64_t generated) {
  if (IsStop(r, token)) return Finish::kStop;
  if (generated >= r.max_new_tokens) return Finish::kLength;
  return Finish::kNone;
}

// On the CPU, a forward smaller than this (tokens x hidden x intermediate multiply-adds in the largest matmul) runs
// on one thread: waking the other threads for every small op costs more than it saves (measured on 2 cores when the
// threshold was set: batch-16 decode steps of a hidden-256 model 6.5 -> 4.7 ms; `npm run bench -- --filter engine`,
// batch 32, decode steps 4413-4568 -> 4490-4772 tokens/s).
constexpr double kSmallForwardMacs = 16e6;

// Sets torch's intra-op threads to 1 for its lifetime when the forward of `tokens` tokens is small (CPU only).
class SmallForwardThreads {
 public:
  SmallForwardThreads(const model::Decoder& d, int64_t tokens) {
    const auto& c = d.config();
    if (!d.device().is_cpu()) return;
    if (static_cast<double>(tokens) * static_cast<double>(c.hidden_size) * static_cast<double>(c.intermediate_size) >= kSmallForwardMacs)
      return;
    saved_ = at::get_num_threads();
    if (saved_ > 1) at::set_num_threads(1);
  }
  ~SmallForwardThreads() {
    if (saved_ > 1) at::set_num_threads(saved_);
  }
  SmallForwardThreads(const SmallForwardThreads&) = delete;
  SmallForwardThreads& operator=(const SmallForwardThreads&) = delete;

 private:
  int saved_ = 0;
};

// Decode steps whose uniforms, tokens and log-probs one upload and one read-back serve (a call of more steps runs in
// chunks of this many).
constexpr int64_t kStepChunk = 64;

// Slot columns are allocated in powers of two from this many.
constexpr int64_t kMinCapacity = 256;

int64_t PowerOfTwoAtLeast(int64_t n, int64_t floor) {
  int64_t p = floor;
  while (p < n) p *= 2;
  return p;
}

}  // namespace

double RequestUniform(uint64_t seed, uint64_t n) {
  const uint64_t x = SplitMix(seed + (n + 1) * 0x9e3779b97f4a7c15ull);
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

Generator::Generator(std::shared_ptr<model::Decoder> decoder, GeneratorOptions options)
    : decoder_(std::move(decoder)),
      options_(options),
      graphs_(decoder_->device(), options.cuda_graphs),
      prefix_(options.prefix_cache_tokens) {
  if (options_.slots < 1) Fail("E_ARG", "engine: slots must be >= 1, found " + std::to_string(options_.slots));
  rows_.resize(static_cast<size_t>(options_.slots));
}

Generator::~Generator() = default;

bool Generator::Packed() const { return options_.layout == SlotLayout::kPacked; }

int64_t Generator::columns() const {
  int64_t longest = 0;
  for (const auto& r : rows_) {
    if (r) longest = std::max(longest, r->decoding ? r->length : r->prefilled);
  }
  return longest;
}

void Generator::Clear() {
  prefix_.Clear();
  ClearRows();
}

void Generator::Release() {
  if (live_ > 0) Fail("E_ARG", "engine.release: the engine holds " + std::to_string(live_) + " requests (release an idle engine)");
  Clear();
#ifdef LAMER_WITH_CUDA
  if (decoder_->device().is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

void Generator::ClearRows() {
  // Graphs first: they reference the buffers below.
  graphs_.Clear();
  for (auto& r : rows_) r.reset();
  pending_.clear();
  live_ = 0;
  store_ = model::KvCache();
  capacity_ = 0;
  next_ = lengths_ = live_mask_ = at::Tensor();
  uniform_table_ = step_ = out_tokens_ = out_logprobs_ = at::Tensor();
  sampler_ = SlotSampler();
  slots_dirty_ = true;
}

void Generator::Free(int64_t slot) {
  if (!rows_[slot]) return;
  if (!rows_[slot]->decoding) pending_.erase(std::remove(pending_.begin(), pending_.end(), slot), pending_.end());
  rows_[slot].reset();
  --live_;
  slots_dirty_ = true;
}

void Generator::EnsureCapacity(int64_t columns) {
  const model::Decoder& d = *decoder_;
  const model::DecoderConfig& c = d.config();
  const at::Device device = d.device();
  const int64_t S = options_.slots;
  if (!next_.defined()) {
    const auto longs = at::TensorOptions().dtype(at::kLong).device(device);
    next_ = at::zeros({S}, longs);
    lengths_ = at::zeros({S}, longs);
    live_mask_ = at::zeros({S}, at::TensorOptions().dtype(at::kBool).device(device));
    step_ = at::zeros({1}, longs);
    uniform_table_ = at::zeros({kStepChunk, S}, at::TensorOptions().dtype(at::kDouble).device(device));
    out_tokens_ = at::zeros({kStepChunk, S}, longs);
    out_logprobs_ = at::zeros({kStepChunk, S}, at::TensorOptions().dtype(at::kFloat).device(device));
    sampler_ = SlotSampler(S, c.vocab_size, device);
    slots_dirty_ = true;
  }
  if (columns <= capacity_) return;
  const int64_t capacity = PowerOfTwoAtLeast(columns, kMinCapacity);
  // Zero-filled: a column no row has written is read masked, and a masked weight of 0 times a NaN left in memory is
  // NaN. Columns written since hold keys/values of real or padding tokens, always finite.
  const auto opts = at::TensorOptions().dtype(d.compute_dtype()).device(device);
  model::KvCache grown;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    for (auto [mine, theirs] : {std::pair{&grown.k, &store_.k}, std::pair{&grown.v, &store_.v}}) {
      at::Tensor t = at::zeros({S, c.num_key_value_heads, capacity, c.head_dim}, opts);
      if (!theirs->empty()) t.narrow(2, 0, capacity_).copy_((*theirs)[i]);
      mine->push_back(std::move(t));
    }
  }
  store_ = std::move(grown);
  capacity_ = capacity;
  graphs_.Clear();  // they read the old store
}

void Generator::SyncSlots() {
  if (!slots_dirty_) return;
  const int64_t S = options_.slots;
  std::vector<int64_t> lengths(S, 0);
  std::vector<uint8_t> live(S, 0);
  for (int64_t s = 0; s < S; ++s) {
    if (!rows_[s]) continue;
    if (!rows_[s]->decoding) {
      // Being prefilled: a step that computes this slot writes at the column its next chunk overwrites.
      lengths[s] = rows_[s]->prefilled;
      continue;
    }
    lengths[s] = rows_[s]->length;
    live[s] = 1;
  }
  // A free slot's length goes back to 0, so a step that computes it (below the highest live slot) writes inside it.
  // A slot being prefilled is computed the same way and must not lose its prompt's keys/values: see above.
  lengths_.copy_(at::tensor(lengths, at::kLong));
  live_mask_.copy_(at::tensor(live, at::kByte).to(at::kBool));
  sampler_.Upload();
  slots_dirty_ = false;
}

void Generator::PrefillPending(std::vector<Emitted>& out) {
  prefix_.DropIfStale(decoder_->parameters_version());
  const bool prefix = prefix_.enabled();
  // This call's share of the prefill: at most `prefill_tokens` computed tokens, taken by the waiting prompts in
  // arrival order; a prompt longer than what is left takes a chunk and goes on in the next call, so rows that are
  // decoding get a step between chunks instead of waiting for a long prompt whole.
  int64_t budget = options_.prefill_tokens;
  // Prompts sharing a longer opening with an earlier prompt starting in this call than with anything cached (trials
  // of one task starting together) wait for a second wave, which then finds that opening in the prefix cache.
  std::vector<Chunk> first, second;
  std::vector<const Request*> starting;
  for (int64_t slot : pending_) {
    if (budget <= 0) break;
    const Row& row = *rows_[slot];
    const std::vector<int64_t>& prompt = row.req.prompt;
    const int64_t length = static_cast<int64_t>(prompt.size());
    int64_t remaining = length - row.prefilled;
    bool wait = false;
    if (row.prefilled == 0 && prefix) {
      int64_t shared = 0;
      for (const Request* f : starting) shared = std::max(shared, CommonPrefix(f->prompt, prompt));
      const PrefixCache::Match cached = prefix_.Longest(prompt);
      wait = shared >= PrefixCache::kMinReuse && shared > cached.common;
      remaining = length - (wait ? std::min(shared, length - 1) : PrefixCache::Reuse(cached, length));
      if (!wait) starting.push_back(&row.req);
    }
    const int64_t chunk = std::min(remaining, budget);
    budget -= chunk;
    (wait ? second : first).push_back({slot, chunk});
  }
  for (auto* wave : {&first, &second}) {
    // Prompts with the most tokens to compute first, cut into prefill forwards where padding would cost more than
    // another forward: a prompt that takes most of itself from the cache is not padded to the width of one computed
    // whole. On a GPU the forwards are as few as the budget allows, on the reasoning that a forward's fixed cost (its
    // kernel launches) outweighs padding within the budget; not measured (no GPU has run this code).
    std::vector<int64_t> widths;
    for (const Chunk& c : *wave) widths.push_back(c.tokens);
    const double overhead =
        decoder_->device().is_cpu() ? model::ForwardOverhead(options_.prefill_tokens) : static_cast<double>(options_.prefill_tokens);
    for (const auto& group : model::WidestFirstGroups(widths, options_.prefill_tokens, overhead)) {
      std::vector<Chunk> batch;
      for (size_t i : group) batch.push_back((*wave)[i]);
      PrefillChunks(batch, out);
    }
  }
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [&](int64_t slot) { return !rows_[slot] || rows_[slot]->decoding; }),
                 pending_.end());
}

void Generator::PrefillChunks(const std::vector<Chunk>& chunks, std::vector<Emitted>& out) {
  model::Decoder& d = *decoder_;
  const model::DecoderConfig& c = d.config();
  const at::Device device = d.device();
  const int64_t N = static_cast<int64_t>(chunks.size());

  // Per row: `past` leading prompt tokens whose keys/values exist (in the row's own slot from an earlier chunk, or in
  // the prefix cache; never the last token, whose logits are needed), and `fresh` tokens computed now.
  std::vector<PrefixCache::Match> match(N);
  std::vector<int64_t> lengths(N), past(N, 0), fresh(N), slots(N);
  std::vector<bool> own(N, false), complete(N);
  int64_t most_past = 0;
  int64_t T = 0;  // computed columns: the most fresh tokens
  int64_t W = 0;  // columns of the rows after this chunk: the most past + fresh
  for (int64_t r = 0; r < N; ++r) {
    slots[r] = chunks[r].slot;
    Row& row = *rows_[slots[r]];
    lengths[r] = static_cast<int64_t>(row.req.prompt.size());
    if (row.prefilled > 0) {
      past[r] = row.prefilled;
      own[r] = true;
    } else if (prefix_.enabled()) {
      match[r] = prefix_.Longest(row.req.prompt);
      past[r] = PrefixCache::Reuse(match[r], lengths[r]);
      if (past[r] > 0) prefix_.Touch(match[r]);
      last_.reused += past[r];
    }
    fresh[r] = std::min(lengths[r] - past[r], chunks[r].tokens);
    complete[r] = past[r] + fresh[r] == lengths[r];
    most_past = std::max(most_past, past[r]);
    T = std::max(T, fresh[r]);
    W = std::max(W, past[r] + fresh[r]);
    last_.prefilled += fresh[r];
  }

  // Computed tokens left-aligned in T columns (padding on the right, which no real token attends to); positions count
  // real tokens from the row's start, so a row sees the positions it would see alone.
  at::Tensor ids = at::zeros({N, T}, at::kLong);
  at::Tensor positions = at::zeros({N, T}, at::kLong);
  auto ids_a = ids.accessor<int64_t, 2>();
  auto pos_a = positions.accessor<int64_t, 2>();
  std::vector<int64_t> last, done;  // completed rows: the flat index of their last prompt token in [N * T], the row
  std::vector<SamplingParams> params;
  std::vector<std::vector<double>> uniforms(1);
  for (int64_t r = 0; r < N; ++r) {
    const Request& req = rows_[slots[r]]->req;
    for (int64_t t = 0; t < T; ++t) {
      ids_a[r][t] = t < fresh[r] ? req.prompt[past[r] + t] : 0;
      pos_a[r][t] = past[r] + t;
    }
    if (!complete[r]) continue;
    done.push_back(r);
    last.push_back(r * T + fresh[r] - 1);
    params.push_back(req.sampling);
    uniforms[0].push_back(RequestUniform(req.seed, 0));
  }

  last_.padded += N * T;
  const SmallForwardThreads threads(d, N * T);
  // Without a past the forward is plain causal attention (torch's fused kernels; the keys/values come out
  // left-aligned). With one, each row's past keys/values fill its first columns of a fixed-slot cache and the
  // computed ones are written right after them, so every row's tokens are left-aligned there too.
  model::KvCache cache;
  if (most_past > 0) {
    const auto opts = at::TensorOptions().dtype(d.compute_dtype()).device(device);
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
      cache.k.push_back(at::zeros({N, c.num_key_value_heads, most_past + T, c.head_dim}, opts));
      cache.v.push_back(at::zeros({N, c.num_key_value_heads, most_past + T, c.head_dim}, opts));
      for (int64_t r = 0; r < N; ++r) {
        if (past[r] == 0) continue;
        const at::Tensor k = own[r] ? store_.k[i][slots[r]] : match[r].entry->k(i);
        const at::Tensor v = own[r] ? store_.v[i][slots[r]] : match[r].entry->v(i);
        cache.k[i][r].narrow(1, 0, past[r]).copy_(k.narrow(1, 0, past[r]));
        cache.v[i][r].narrow(1, 0, past[r]).copy_(v.narrow(1, 0, past[r]));
      }
    }
    cache.write_at = at::tensor(past, at::kLong).to(device);
    cache.width = most_past + T;
  }
  const at::Tensor hidden = d.Hidden(ids.to(device), positions.to(device), at::Tensor(), &cache);

  // Every row's keys/values into its slot: one copy per layer of the first W columns (each row's tokens lie there;
  // the rest of a shorter row's columns is finite padding, never read before it is overwritten).
  const at::Tensor slot_index = at::tensor(slots, at::kLong).to(device);
  for (auto [mine, theirs] : {std::pair{&store_.k, &cache.k}, std::pair{&store_.v, &cache.v}}) {
    for (size_t i = 0; i < theirs->size(); ++i) (*mine)[i].narrow(2, 0, W).index_copy_(0, slot_index, (*theirs)[i].narrow(2, 0, W));
  }
  for (int64_t r = 0; r < N; ++r) rows_[slots[r]]->prefilled = past[r] + fresh[r];
  slots_dirty_ = true;
  if (done.empty()) return;

  const at::Tensor logits = d.Logits(hidden.reshape({N * T, -1}).index_select(0, at::tensor(last, at::kLong).to(device)));
  const SamplerPlan plan(params, c.vocab_size, device);
  const auto [tokens_dev, logprobs_dev] = plan.Sample(logits, Uniforms(uniforms)[0]);
  if (prefix_.enabled()) {
    for (int64_t r : done) prefix_.Remember(rows_[slots[r]]->req.prompt, match[r], cache.k, cache.v, r);
  }
  const at::Tensor tokens = tokens_dev.to(at::kCPU);
  const at::Tensor logprobs = logprobs_dev.to(at::kCPU);
  const int64_t* tok = tokens.data_ptr<int64_t>();
  const float* lp = logprobs.data_ptr<float>();
  std::vector<int64_t> done_slots;
  for (size_t j = 0; j < done.size(); ++j) {
    const int64_t slot = slots[done[j]];
    Row& row = *rows_[slot];
    Emitted e;
    e.id = row.req.id;
    e.tokens.push_back(static_cast<int32_t>(tok[j]));
    e.logprobs.push_back(lp[j]);
    e.finish = FinishAfter(row.req, tok[j], 1);
    out.push_back(std::move(e));
    done_slots.push_back(slot);
    if (out.back().finish != Finish::kNone) {
      Free(slot);
      continue;
    }
    row.decoding = true;
    row.length = lengths[done[j]];
    row.generated = 1;
  }
  next_.index_copy_(0, at::tensor(done_slots, at::kLong).to(device), tokens_dev);
}

at::Tensor Generator::Uniforms(const std::vector<std::vector<double>>& host) const {
  const int64_t steps = static_cast<int64_t>(host.size());
  const int64_t rows = steps ? static_cast<int64_t>(host[0].size()) : 0;
  const bool cuda = decoder_->device().is_cuda();
  at::Tensor t = at::empty({steps, rows}, at::TensorOptions().dtype(at::kDouble).pinned_memory(cuda));
  double* p = t.data_ptr<double>();
  for (const auto& row : host) p = std::copy(row.begin(), row.end(), p);
  // Pinned memory and a non-blocking copy: the upload does not wait for the device to drain its queue.
  return cuda ? t.to(decoder_->device(), /*non_blocking=*/true) : t;
}

void Generator::DecodeStep(int64_t rows, int64_t width, const SlotSampler::Shape& shape) {
  model::Decoder& d = *decoder_;
  model::KvCache view;
  for (size_t i = 0; i < store_.k.size(); ++i) {
    view.k.push_back(store_.k[i].narrow(0, 0, rows));
    view.v.push_back(store_.v[i].narrow(0, 0, rows));
  }
  const at::Tensor lengths = lengths_.narrow(0, 0, rows);
  view.write_at = lengths;
  view.width = width;
  view.live_keys = options_.live_attention;
  const at::Tensor hidden = d.Hidden(next_.narrow(0, 0, rows).view({rows, 1}), lengths.view({rows, 1}), at::Tensor(), &view);
  const at::Tensor uniforms = uniform_table_.index_select(0, step_).view({-1}).narrow(0, 0, rows);
  const auto [tok, lp] = sampler_.Sample(d.Logits(hidden.select(1, 0)), uniforms, shape);
  next_.narrow(0, 0, rows).copy_(tok);
  lengths.add_(live_mask_.narrow(0, 0, rows).to(at::kLong));
  out_tokens_.narrow(1, 0, rows).index_copy_(0, step_, tok.view({1, rows}));
  out_logprobs_.narrow(1, 0, rows).index_copy_(0, step_, lp.view({1, rows}));
  step_.add_(1);
}

bool Generator::LiveWidth() const {
  return options_.live_attention && model::DecodeAttentionReadsLiveColumns(decoder_->device()) && decoder_->compute_dtype() != at::kDouble;
}

void Generator::DropStaleGraphs() {
  const uint64_t version = decoder_->storage_version();
  if (graphs_storage_version_ == version) return;
  graphs_.Clear();  // the weights they read have moved
  graphs_storage_version_ = version;
}

void Generator::FixedSteps(int64_t rows, int64_t width, const SlotSampler::Shape& shape, int64_t steps) {
  DropStaleGraphs();
  int64_t ran = 0, replayed = 0;
  graphs_.Run(
      {rows, width, shape.kinds, shape.filtered_width}, [&] { DecodeStep(rows, width, shape); }, steps, ran, replayed);
  last_.graph_steps += replayed;
  for (; ran < steps; ++ran) DecodeStep(rows, width, shape);
}

int64_t Generator::CaptureBuckets(const SamplingParams& sampling, int64_t columns) {
  if (live_ > 0) Fail("E_ARG", "engine.capture: the engine must hold no request (capture before the first generate)");
  if (columns < 1) Fail("E_ARG", "engine.capture: columns must be >= 1");
  EnsureCapacity(columns);
  if (!graphs_.enabled()) return graphs_.size();
  DropStaleGraphs();
  for (int64_t s = 0; s < options_.slots; ++s) sampler_.Set(s, sampling);
  slots_dirty_ = true;
  SyncSlots();  // no row is live: the steps below change no slot's length
  std::vector<int64_t> row_buckets;
  for (int64_t r = 1; r < options_.slots; r *= 2) row_buckets.push_back(r);
  row_buckets.push_back(options_.slots);
  std::vector<int64_t> widths;
  if (LiveWidth()) {
    widths.push_back(capacity_);
  } else {
    for (int64_t width = 64; width <= std::min(capacity_, PowerOfTwoAtLeast(columns, 64)); width *= 2) widths.push_back(width);
  }
  for (int64_t rows : row_buckets) {
    const SlotSampler::Shape shape = sampler_.ShapeOf(rows, std::vector<bool>(rows, true));
    for (int64_t width : widths) {
      step_.zero_();
      if (!graphs_.Capture({rows, width, shape.kinds, shape.filtered_width}, [&] { DecodeStep(rows, width, shape); })) return 0;
    }
  }
  return graphs_.size();
}

void Generator::CountKvReads(int64_t rows, int64_t width, const std::vector<int64_t>& base, int64_t step, const std::vector<bool>& live) {
  const model::DecoderConfig& c = decoder_->config();
  const double column_bytes = 2.0 * static_cast<double>(c.num_hidden_layers * c.num_key_value_heads * c.head_dim) *
                              static_cast<double>(c10::elementSize(decoder_->compute_dtype()));
  const bool by_length = options_.live_attention && model::DecodeAttentionReadsLiveColumns(decoder_->device());
  double read = 0, minimum = 0;
  for (int64_t s = 0; s < rows; ++s) {
    // A decoding row's `step`-th step of the chunk sees its length + step + 1 columns; any other computed row 1
    // column past what it holds (its length does not move).
    const int64_t seen = base[s] + (live[s] ? step : 0) + 1;
    if (live[s]) minimum += static_cast<double>(seen);
    read += static_cast<double>(by_length ? seen : width);
  }
  last_.kv_bytes_read += read * column_bytes;
  last_.kv_bytes_live += minimum * column_bytes;
}

void Generator::Compact() {
  int64_t free = 0;
  for (int64_t top = options_.slots - 1; top >= 0; --top) {
    if (!Decoding(top)) continue;
    while (free < top && rows_[free]) ++free;
    if (free >= top) return;
    // The highest decoding row moves down into the lowest free slot: its keys/values, input token and sampling.
    const int64_t length = rows_[top]->length;
    for (auto* layers : {&store_.k, &store_.v}) {
      for (at::Tensor& t : *layers) t[free].narrow(1, 0, length).copy_(t[top].narrow(1, 0, length));
    }
    next_[free].copy_(next_[top]);
    sampler_.Set(free, rows_[top]->req.sampling);
    rows_[free] = std::move(rows_[top]);
    rows_[top].reset();
    slots_dirty_ = true;
  }
}

void Generator::Decode(int64_t max_steps, std::vector<Emitted>& out) {
  model::Decoder& d = *decoder_;
  // Packed (the CPU's default): every computed row costs its share and nothing is captured, so the decoding rows are
  // kept at the bottom (one row copy per departure) and each step decodes exactly them over exactly the columns
  // they fill. Fixed (the GPU's): rows stay in their slots, and rows and width are rounded up so a few graphs serve
  // every step.
  const bool packed = Packed();
  if (packed) Compact();
  int64_t steps = max_steps;
  int64_t rows = 0;
  int64_t longest = 0;
  for (int64_t s = 0; s < options_.slots; ++s) {
    if (!Decoding(s)) continue;
    steps = std::min(steps, rows_[s]->req.max_new_tokens - rows_[s]->generated);
    rows = s + 1;
    longest = std::max(longest, rows_[s]->length);
  }
  if (rows == 0 || steps <= 0) return;
  if (!packed) rows = std::min(options_.slots, PowerOfTwoAtLeast(rows, 1));
  SyncSlots();
  std::vector<bool> live(rows);
  int64_t decoding = 0;
  for (int64_t s = 0; s < rows; ++s) {
    live[s] = Decoding(s);
    decoding += live[s];
  }
  const SlotSampler::Shape shape = sampler_.ShapeOf(rows, live);
  const SmallForwardThreads threads(d, rows);
  last_.rows = decoding;
  // Columns of each computed row at the chunk's start: its length (decoding), its prefilled tokens (being
  // prefilled: computed, its result ignored) or 0 (free).
  std::vector<int64_t> base(rows, 0);
  for (int64_t s = 0; s < rows; ++s) {
    if (rows_[s]) base[s] = rows_[s]->decoding ? rows_[s]->length : rows_[s]->prefilled;
  }

  int64_t done = 0;
  bool ended = false;  // a row finished: return, so its slot can be refilled
  while (done < steps && !ended) {
    const int64_t chunk = std::min(kStepChunk, steps - done);
    std::vector<std::vector<double>> host(chunk, std::vector<double>(options_.slots, 0.0));
    for (int64_t s = 0; s < rows; ++s) {
      if (!live[s]) continue;
      for (int64_t j = 0; j < chunk; ++j) host[j][s] = RequestUniform(rows_[s]->req.seed, rows_[s]->generated + j);
    }
    uniform_table_.narrow(0, 0, chunk).copy_(Uniforms(host), /*non_blocking=*/true);
    step_.zero_();
    int64_t ran = 0;
    if (packed) {
      // Reading a token back is free here: stop as soon as a row samples a stop id, so its slot frees at once.
      for (; ran < chunk;) {
        DecodeStep(rows, longest + done + ran + 1, shape);
        CountKvReads(rows, longest + done + ran + 1, base, done + ran, live);
        ++ran;
        if (ran == chunk) break;
        const at::Tensor last = out_tokens_[ran - 1].to(at::kCPU);
        const int64_t* t = last.data_ptr<int64_t>();
        bool stopped = false;
        for (int64_t s = 0; s < rows && !stopped; ++s) stopped = live[s] && IsStop(rows_[s]->req, t[s]);
        if (stopped) break;
      }
    } else {
      // Every column a row may see in this chunk lies below `width`.
      const int64_t width = LiveWidth() ? capacity_ : std::min(capacity_, PowerOfTwoAtLeast(longest + done + chunk, 64));
      FixedSteps(rows, width, shape, chunk);
      for (ran = 0; ran < chunk; ++ran) CountKvReads(rows, width, base, done + ran, live);
    }
    const at::Tensor tok_host = out_tokens_.narrow(0, 0, ran).narrow(1, 0, rows).to(at::kCPU).contiguous();  // [ran, rows]
    const at::Tensor lp_host = out_logprobs_.narrow(0, 0, ran).narrow(1, 0, rows).to(at::kCPU).contiguous();
    const int64_t* tp = tok_host.data_ptr<int64_t>();
    const float* lpp = lp_host.data_ptr<float>();
    for (int64_t s = 0; s < rows; ++s) {
      if (!live[s]) continue;
      Row& row = *rows_[s];
      Emitted e;
      e.id = row.req.id;
      for (int64_t j = 0; j < ran && e.finish == Finish::kNone; ++j) {
        const int64_t token = tp[j * rows + s];
        e.tokens.push_back(static_cast<int32_t>(token));
        e.logprobs.push_back(lpp[j * rows + s]);
        e.finish = FinishAfter(row.req, token, row.generated + j + 1);
      }
      row.generated += ran;
      row.length += ran;
      const bool finished = e.finish != Finish::kNone;
      out.push_back(std::move(e));
      if (finished) {
        Free(s);
        ended = true;
      }
    }
    done += ran;
    if (ran < chunk) ended = true;
  }
  last_.steps = done;
}

std::vector<Emitted> Generator::Step(std::vector<Request> add, const std::vector<int64_t>& cancel, int64_t max_steps, bool clear_prefixes) {
  std::vector<Emitted> out;
  last_ = StepStats();
  if (clear_prefixes) prefix_.Clear();
  try {
    if (!cancel.empty()) {
      const std::unordered_set<int64_t> gone(cancel.begin(), cancel.end());
      for (int64_t s = 0; s < options_.slots; ++s) {
        if (rows_[s] && gone.count(rows_[s]->req.id)) Free(s);
      }
    }
    if (live_ + static_cast<int64_t>(add.size()) > options_.slots) {
      Fail("E_ARG", "engine.step: " + std::to_string(live_ + add.size()) + " live requests would exceed the engine's " +
                        std::to_string(options_.slots) + " slots");
    }
    int64_t need = 0;
    for (const Request& r : add) need = std::max<int64_t>(need, static_cast<int64_t>(r.prompt.size()) + r.max_new_tokens);
    if (!add.empty()) EnsureCapacity(need);
    for (Request& r : add) {
      // The lowest free slot, so live rows stay packed at the bottom and steps compute few free ones.
      int64_t slot = 0;
      while (rows_[slot]) ++slot;
      sampler_.Set(slot, r.sampling);
      Row row;
      row.req = std::move(r);
      rows_[slot] = std::move(row);
      pending_.push_back(slot);
      ++live_;
    }
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    if (!pending_.empty()) PrefillPending(out);
    const auto t1 = Clock::now();
    Decode(max_steps, out);
    last_.prefill_seconds = std::chrono::duration<double>(t1 - t0).count();
    last_.decode_seconds = std::chrono::duration<double>(Clock::now() - t1).count();
  } catch (...) {
    // A failed step (out of memory, ...) leaves the cache in an unknown state: forget every request, so the
    // caller can fail them all and start clean.
    Clear();
    throw;
  }
  return out;
}

}  // namespace lamer::engine
