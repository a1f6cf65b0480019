#include "engine/generator.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_set>

#include <ATen/Parallel.h>

#include "bridge/errors.h"
#include "model/batching.h"

#ifdef LAMER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#endif

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
// on one thread: waking the other threads for every small op costs more than it saves (batch-16 decode steps of a
// hidden-256 model: 6.5 -> 4.7 ms; the b32 engine bench's decode steps 4413-4568 -> 4490-4772 tokens/s).
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

// Fewer shared leading tokens than this are computed again rather than taken from the prefix cache.
constexpr int64_t kMinReuse = 4;

// Leading tokens `a` and `b` share.
int64_t CommonPrefix(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t k = 0;
  while (k < n && a[k] == b[k]) ++k;
  return static_cast<int64_t>(k);
}

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

// The captured decode steps. Key: (rows, width, kinds of sampling, top-k width).
struct Generator::Graphs {
  using Key = std::tuple<int64_t, int64_t, int, int64_t>;
#ifdef LAMER_WITH_CUDA
  std::map<Key, std::unique_ptr<at::cuda::CUDAGraph>> graphs;
  // One memory pool for all of them: they replay one at a time on one stream, so their scratch can overlap.
  at::cuda::MempoolId_t pool = {0, 0};
#endif
  uint64_t storage_version = 0;
  int64_t size() const {
#ifdef LAMER_WITH_CUDA
    return static_cast<int64_t>(graphs.size());
#else
    return 0;
#endif
  }
};

Generator::Generator(std::shared_ptr<model::Decoder> decoder, GeneratorOptions options)
    : decoder_(std::move(decoder)), options_(options), graphs_(std::make_unique<Graphs>()) {
  if (options_.slots < 1) Fail("E_ARG", "engine: slots must be >= 1, found " + std::to_string(options_.slots));
  rows_.resize(static_cast<size_t>(options_.slots));
}

Generator::~Generator() = default;

int64_t Generator::graphs() const { return graphs_ ? graphs_->size() : 0; }

bool Generator::Packed() const { return options_.layout == SlotLayout::kPacked; }

bool Generator::graphs_enabled() const {
#ifdef LAMER_WITH_CUDA
  return options_.cuda_graphs && decoder_->device().is_cuda() && graph_error_.empty();
#else
  return false;
#endif
}

int64_t Generator::columns() const {
  int64_t longest = 0;
  for (const auto& r : rows_) {
    if (r) longest = std::max(longest, r->decoding ? r->length : r->prefilled);
  }
  return longest;
}

void Generator::Clear() {
  ClearPrefixes();
  ClearRows();
}

void Generator::ClearPrefixes() {
  prefix_.clear();
  prefix_tokens_ = 0;
}

void Generator::ClearRows() {
  // Graphs first: they reference the buffers below.
  graphs_ = std::make_unique<Graphs>();
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
  graphs_ = std::make_unique<Graphs>();  // they read the old store
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

int64_t Generator::Reuse(const PrefixMatch& match, int64_t length) {
  const int64_t reuse = std::min(match.common, length - 1);
  return reuse < kMinReuse ? 0 : reuse;
}

Generator::PrefixMatch Generator::LongestPrefix(const std::vector<int64_t>& prompt) const {
  PrefixMatch best;
  for (const auto& e : prefix_) {
    if (static_cast<int64_t>(std::min(e->tokens.size(), prompt.size())) <= best.common) continue;
    const int64_t k = CommonPrefix(e->tokens, prompt);
    if (k > best.common) best = {e, k};
  }
  return best;
}

void Generator::Remember(const std::vector<int64_t>& prompt, const PrefixMatch& match, const std::vector<at::Tensor>& k,
                         const std::vector<at::Tensor>& v, int64_t row) {
  const int64_t len = static_cast<int64_t>(prompt.size());
  if (options_.prefix_cache_tokens <= 0 || len > options_.prefix_cache_tokens) return;
  if (match.entry && match.common == len) {
    match.entry->last_use = ++prefix_clock_;  // already held whole (as itself or inside a longer prompt)
    return;
  }
  if (match.entry && match.common == static_cast<int64_t>(match.entry->tokens.size())) {
    // The new prompt extends this entry: it serves every prompt the entry served, and more.
    prefix_tokens_ -= match.common;
    prefix_.erase(std::find(prefix_.begin(), prefix_.end(), match.entry));
  }
  auto e = std::make_shared<PrefixEntry>();
  e->tokens = prompt;
  for (size_t i = 0; i < k.size(); ++i) {
    e->k.push_back(k[i][row].narrow(1, 0, len).clone());
    e->v.push_back(v[i][row].narrow(1, 0, len).clone());
  }
  e->last_use = ++prefix_clock_;
  prefix_.push_back(std::move(e));
  prefix_tokens_ += len;
  while (prefix_tokens_ > options_.prefix_cache_tokens) {
    auto oldest = std::min_element(prefix_.begin(), prefix_.end(), [](const auto& a, const auto& b) { return a->last_use < b->last_use; });
    prefix_tokens_ -= static_cast<int64_t>((*oldest)->tokens.size());
    prefix_.erase(oldest);
  }
}

void Generator::DropStalePrefixes() {
  const uint64_t version = decoder_->parameters_version();
  if (version == prefix_version_) return;
  ClearPrefixes();
  prefix_version_ = version;
}

void Generator::PrefillPending(std::vector<Emitted>& out) {
  DropStalePrefixes();
  const bool prefix = options_.prefix_cache_tokens > 0;
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
      const PrefixMatch cached = LongestPrefix(prompt);
      wait = shared >= kMinReuse && shared > cached.common;
      remaining = length - (wait ? std::min(shared, length - 1) : Reuse(cached, length));
      if (!wait) starting.push_back(&row.req);
    }
    const int64_t chunk = std::min(remaining, budget);
    budget -= chunk;
    (wait ? second : first).push_back({slot, chunk});
  }
  for (auto* wave : {&first, &second}) {
    // Prompts with the most tokens to compute first, cut into prefill forwards where padding would cost more than
    // another forward: a prompt that takes most of itself from the cache is not padded to the width of one computed
    // whole. On a GPU a forward's fixed cost (its kernel launches) outweighs padding within the budget, so there the
    // forwards are as few as the budget allows.
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
  std::vector<PrefixMatch> match(N);
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
    } else if (options_.prefix_cache_tokens > 0) {
      match[r] = LongestPrefix(row.req.prompt);
      past[r] = Reuse(match[r], lengths[r]);
      if (past[r] > 0) match[r].entry->last_use = ++prefix_clock_;
      last_reused_ += past[r];
    }
    fresh[r] = std::min(lengths[r] - past[r], chunks[r].tokens);
    complete[r] = past[r] + fresh[r] == lengths[r];
    most_past = std::max(most_past, past[r]);
    T = std::max(T, fresh[r]);
    W = std::max(W, past[r] + fresh[r]);
    last_prefilled_ += fresh[r];
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

  last_padded_ += N * T;
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
        const at::Tensor& k = own[r] ? store_.k[i][slots[r]] : match[r].entry->k[i];
        const at::Tensor& v = own[r] ? store_.v[i][slots[r]] : match[r].entry->v[i];
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
  if (options_.prefix_cache_tokens > 0) {
    for (int64_t r : done) Remember(rows_[slots[r]]->req.prompt, match[r], cache.k, cache.v, r);
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
  const at::Tensor hidden = d.Hidden(next_.narrow(0, 0, rows).view({rows, 1}), lengths.view({rows, 1}), at::Tensor(), &view);
  const at::Tensor uniforms = uniform_table_.index_select(0, step_).view({-1}).narrow(0, 0, rows);
  const auto [tok, lp] = sampler_.Sample(d.Logits(hidden.select(1, 0)), uniforms, shape);
  next_.narrow(0, 0, rows).copy_(tok);
  lengths.add_(live_mask_.narrow(0, 0, rows).to(at::kLong));
  out_tokens_.narrow(1, 0, rows).index_copy_(0, step_, tok.view({1, rows}));
  out_logprobs_.narrow(1, 0, rows).index_copy_(0, step_, lp.view({1, rows}));
  step_.add_(1);
}

bool Generator::ReplaySteps(int64_t rows, int64_t width, const SlotSampler::Shape& shape, int64_t steps, int64_t& ran) {
  ran = 0;
#ifdef LAMER_WITH_CUDA
  if (!graphs_enabled()) return false;
  const uint64_t version = decoder_->storage_version();
  if (graphs_->storage_version != version) {
    graphs_ = std::make_unique<Graphs>();  // the weights they read have moved
    graphs_->storage_version = version;
  }
  const Graphs::Key key{rows, width, shape.kinds, shape.filtered_width};
  auto it = graphs_->graphs.find(key);
  if (it == graphs_->graphs.end()) {
    // A first step eagerly on the current stream: it warms what capture cannot create (library handles, workspaces,
    // the compute-dtype weight copies) and counts as a real step.
    DecodeStep(rows, width, shape);
    ran = 1;
    if (steps == 1) return true;
    const c10::cuda::CUDAGuard device_guard(decoder_->device());
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream();
    const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
    current.synchronize();
    try {
      const c10::cuda::CUDAStreamGuard on_side(side);
      if (graphs_->pool == at::cuda::MempoolId_t{0, 0}) graphs_->pool = at::cuda::graph_pool_handle();
      graph->capture_begin(graphs_->pool, cudaStreamCaptureModeThreadLocal);
      try {
        DecodeStep(rows, width, shape);
      } catch (...) {
        try {
          graph->capture_end();
        } catch (...) {
        }
        throw;
      }
      graph->capture_end();
    } catch (const std::exception& e) {
      graph.reset();
      (void)cudaGetLastError();  // the failed capture's error must not surface in a later, unrelated check
      graph_error_ = std::string("CUDA graph capture failed; decoding eagerly from now on: ") + e.what();
      graphs_ = std::make_unique<Graphs>();
      return false;
    }
    it = graphs_->graphs.emplace(key, std::move(graph)).first;
  }
  for (; ran < steps; ++ran) it->second->replay();
  last_graph_steps_ += ran;
  return true;
#else
  (void)rows;
  (void)width;
  (void)shape;
  (void)steps;
  return false;
#endif
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
  last_rows_ = decoding;

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
      const int64_t width = std::min(capacity_, PowerOfTwoAtLeast(longest + done + chunk, 64));
      int64_t first = 0;
      if (!ReplaySteps(rows, width, shape, chunk, first)) {
        for (ran = first; ran < chunk; ++ran) DecodeStep(rows, width, shape);
      }
      ran = chunk;
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
  last_steps_ = done;
}

std::vector<Emitted> Generator::Step(std::vector<Request> add, const std::vector<int64_t>& cancel, int64_t max_steps, bool clear_prefixes) {
  std::vector<Emitted> out;
  last_steps_ = 0;
  last_rows_ = 0;
  last_graph_steps_ = 0;
  last_reused_ = 0;
  last_prefilled_ = 0;
  last_padded_ = 0;
  if (clear_prefixes) ClearPrefixes();
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
    if (!pending_.empty()) PrefillPending(out);
    Decode(max_steps, out);
  } catch (...) {
    // A failed step (out of memory, ...) leaves the cache in an unknown state: forget every request, so the
    // caller can fail them all and start clean.
    Clear();
    throw;
  }
  return out;
}

}  // namespace lamer::engine
