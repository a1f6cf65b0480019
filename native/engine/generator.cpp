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

bool IsStop(const Request& r, int64_t token) {
  return std::find(r.stop_ids.begin(), r.stop_ids.end(), token) != r.stop_ids.end();
}

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
    if (static_cast<double>(tokens) * static_cast<double>(c.hidden_size) * static_cast<double>(c.intermediate_size) >= kSmallForwardMacs) return;
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
    if (r) longest = std::max(longest, r->length);
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
    lengths[s] = rows_[s]->length;
    live[s] = 1;
  }
  // A free slot's length goes back to 0, so a step that computes it (below the highest live slot) writes inside it.
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

void Generator::Prefill(std::vector<Request> batch, std::vector<Emitted>& out) {
  model::Decoder& d = *decoder_;
  const model::DecoderConfig& c = d.config();
  const at::Device device = d.device();
  const int64_t N = static_cast<int64_t>(batch.size());

  // Per row: `reuse` leading prompt tokens come from the prefix cache (never the last one: its logits are needed),
  // the other `fresh` tokens are computed now.
  std::vector<PrefixMatch> match(N);
  std::vector<int64_t> lengths(N), reuse(N, 0), fresh(N);
  int64_t past = 0;  // the longest reuse
  int64_t T = 0;     // computed columns: the most fresh tokens
  int64_t P = 0;     // the longest prompt
  int64_t need = 0;  // the most columns a row will fill
  for (int64_t r = 0; r < N; ++r) {
    lengths[r] = static_cast<int64_t>(batch[r].prompt.size());
    if (options_.prefix_cache_tokens > 0) match[r] = LongestPrefix(batch[r].prompt);
    reuse[r] = Reuse(match[r], lengths[r]);
    if (reuse[r] > 0) match[r].entry->last_use = ++prefix_clock_;
    fresh[r] = lengths[r] - reuse[r];
    past = std::max(past, reuse[r]);
    T = std::max(T, fresh[r]);
    P = std::max(P, lengths[r]);
    need = std::max(need, lengths[r] + batch[r].max_new_tokens);
    last_reused_ += reuse[r];
    last_prefilled_ += fresh[r];
  }
  EnsureCapacity(need);

  // Computed tokens left-aligned in T columns (padding on the right, which no real token attends to); positions count
  // real tokens from the row's start, so a row sees the positions it would see alone.
  at::Tensor ids = at::zeros({N, T}, at::kLong);
  at::Tensor positions = at::zeros({N, T}, at::kLong);
  at::Tensor last = at::zeros({N}, at::kLong);  // the flat index of each row's last prompt token in [N * T]
  auto ids_a = ids.accessor<int64_t, 2>();
  auto pos_a = positions.accessor<int64_t, 2>();
  auto last_a = last.accessor<int64_t, 1>();
  std::vector<SamplingParams> params(N);
  std::vector<std::vector<double>> uniforms(1, std::vector<double>(N));
  for (int64_t r = 0; r < N; ++r) {
    const auto& prompt = batch[r].prompt;
    for (int64_t t = 0; t < T; ++t) {
      ids_a[r][t] = t < fresh[r] ? prompt[reuse[r] + t] : 0;
      pos_a[r][t] = reuse[r] + t;
    }
    last_a[r] = r * T + fresh[r] - 1;
    params[r] = batch[r].sampling;
    uniforms[0][r] = RequestUniform(batch[r].seed, 0);
  }

  last_padded_ += N * T;
  const SmallForwardThreads threads(d, N * T);
  // Without reuse the forward is plain causal attention (torch's fused kernels; the keys/values come out
  // left-aligned). With reuse, each row's cached keys/values fill its first columns of a fixed-slot cache and the
  // computed ones are written right after them, so every row's tokens are left-aligned there too.
  model::KvCache cache;
  if (past > 0) {
    const auto opts = at::TensorOptions().dtype(d.compute_dtype()).device(device);
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
      cache.k.push_back(at::zeros({N, c.num_key_value_heads, past + T, c.head_dim}, opts));
      cache.v.push_back(at::zeros({N, c.num_key_value_heads, past + T, c.head_dim}, opts));
      for (int64_t r = 0; r < N; ++r) {
        if (reuse[r] == 0) continue;
        cache.k[i][r].narrow(1, 0, reuse[r]).copy_(match[r].entry->k[i].narrow(1, 0, reuse[r]));
        cache.v[i][r].narrow(1, 0, reuse[r]).copy_(match[r].entry->v[i].narrow(1, 0, reuse[r]));
      }
    }
    cache.write_at = at::tensor(reuse, at::kLong).to(device);
    cache.width = past + T;
  }
  const at::Tensor hidden = d.Hidden(ids.to(device), positions.to(device), at::Tensor(), &cache);
  const at::Tensor logits = d.Logits(hidden.reshape({N * T, -1}).index_select(0, last.to(device)));
  const SamplerPlan plan(params, c.vocab_size, device);
  const auto [tokens_dev, logprobs_dev] = plan.Sample(logits, Uniforms(uniforms)[0]);

  if (options_.prefix_cache_tokens > 0) {
    for (int64_t r = 0; r < N; ++r) Remember(batch[r].prompt, match[r], cache.k, cache.v, r);
  }

  const at::Tensor tokens = tokens_dev.to(at::kCPU);
  const at::Tensor logprobs = logprobs_dev.to(at::kCPU);
  const int64_t* tok = tokens.data_ptr<int64_t>();
  const float* lp = logprobs.data_ptr<float>();

  std::vector<int64_t> keep, slots;
  int64_t next_free = 0;
  for (int64_t r = 0; r < N; ++r) {
    Emitted e;
    e.id = batch[r].id;
    e.tokens.push_back(static_cast<int32_t>(tok[r]));
    e.logprobs.push_back(lp[r]);
    e.finish = FinishAfter(batch[r], tok[r], 1);
    if (e.finish == Finish::kNone) {
      // The lowest free slot, so live rows stay packed at the bottom and steps compute few free ones.
      while (next_free < options_.slots && rows_[next_free]) ++next_free;
      if (next_free == options_.slots) {
        Fail("E_ARG", "engine: more live requests than its " + std::to_string(options_.slots) + " slots");
      }
      keep.push_back(r);
      slots.push_back(next_free);
      Row row;
      row.length = lengths[r];
      row.generated = 1;
      row.req = std::move(batch[r]);
      sampler_.Set(next_free, row.req.sampling);
      rows_[next_free] = std::move(row);
      ++live_;
      ++next_free;
    }
    out.push_back(std::move(e));
  }
  if (keep.empty()) return;
  slots_dirty_ = true;

  // Each continuing row's keys/values into its slot: one copy per layer of the first P columns (every row's real
  // tokens lie there; the rest of a shorter row's columns is finite padding, masked until overwritten).
  const bool all = static_cast<int64_t>(keep.size()) == N;
  const at::Tensor keep_index = at::tensor(keep, at::kLong).to(device);
  const at::Tensor slot_index = at::tensor(slots, at::kLong).to(device);
  for (auto [mine, theirs] : {std::pair{&store_.k, &cache.k}, std::pair{&store_.v, &cache.v}}) {
    for (size_t i = 0; i < theirs->size(); ++i) {
      const at::Tensor rows = (*theirs)[i].narrow(2, 0, P);
      (*mine)[i].narrow(2, 0, P).index_copy_(0, slot_index, all ? rows : rows.index_select(0, keep_index));
    }
  }
  next_.index_copy_(0, slot_index, all ? tokens_dev : tokens_dev.index_select(0, keep_index));
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

void Generator::Decode(int64_t max_steps, std::vector<Emitted>& out) {
  model::Decoder& d = *decoder_;
  const at::Device device = d.device();
  if (live_ == 0) return;
  int64_t steps = max_steps;
  int64_t rows = 0;
  int64_t longest = 0;
  for (int64_t s = 0; s < options_.slots; ++s) {
    if (!rows_[s]) continue;
    steps = std::min(steps, rows_[s]->req.max_new_tokens - rows_[s]->generated);
    rows = s + 1;
    longest = std::max(longest, rows_[s]->length);
  }
  if (steps <= 0) return;
  const bool cpu = device.is_cpu();
  // On a GPU a step costs about the same for any row count or width up to a point: round both up so a few graphs
  // serve every step. On the CPU every row and column costs: decode exactly what is live.
  if (!cpu) rows = std::min(options_.slots, PowerOfTwoAtLeast(rows, 1));
  SyncSlots();
  std::vector<bool> live(rows);
  for (int64_t s = 0; s < rows; ++s) live[s] = rows_[s].has_value();
  const SlotSampler::Shape shape = sampler_.ShapeOf(rows, live);
  const SmallForwardThreads threads(d, rows);
  last_rows_ = live_;

  int64_t done = 0;
  bool ended = false;  // a row finished: return, so its slot can be refilled
  while (done < steps && !ended) {
    const int64_t chunk = std::min(kStepChunk, steps - done);
    std::vector<std::vector<double>> host(chunk, std::vector<double>(options_.slots, 0.0));
    for (int64_t s = 0; s < rows; ++s) {
      if (!rows_[s]) continue;
      for (int64_t j = 0; j < chunk; ++j) host[j][s] = RequestUniform(rows_[s]->req.seed, rows_[s]->generated + j);
    }
    uniform_table_.narrow(0, 0, chunk).copy_(Uniforms(host), /*non_blocking=*/true);
    step_.zero_();
    int64_t ran = 0;
    if (cpu) {
      // Reading a token back is free here: stop as soon as a row samples a stop id, so its slot frees at once.
      for (; ran < chunk;) {
        DecodeStep(rows, longest + done + ran + 1, shape);
        ++ran;
        if (ran == chunk) break;
        const int64_t* t = out_tokens_[ran - 1].data_ptr<int64_t>();
        bool stopped = false;
        for (int64_t s = 0; s < rows && !stopped; ++s) stopped = rows_[s] && IsStop(rows_[s]->req, t[s]);
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
      if (!rows_[s]) continue;
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
    if (!add.empty()) {
      DropStalePrefixes();
      // Prompts sharing a longer opening with an earlier prompt of this call than with anything cached (trials of
      // one task starting together) wait for a second wave, which then finds that opening in the prefix cache.
      std::vector<Request> first, second;
      for (auto& r : add) {
        int64_t shared = 0;
        if (options_.prefix_cache_tokens > 0) {
          for (const Request& f : first) shared = std::max(shared, CommonPrefix(f.prompt, r.prompt));
        }
        const bool wait = shared >= kMinReuse && shared > LongestPrefix(r.prompt).common;
        (wait ? second : first).push_back(std::move(r));
      }
      for (auto* wave : {&first, &second}) {
        // Prompts with the most tokens to compute first (the prompt less what the prefix cache holds of it), cut into
        // prefill forwards where padding would cost more than another forward: a prompt that takes most of itself from
        // the cache is not padded to the width of one computed whole. On a GPU a forward's fixed cost (its kernel
        // launches) outweighs padding within the budget, so there the forwards are as few as the budget allows.
        std::vector<int64_t> fresh(wave->size());
        for (size_t i = 0; i < wave->size(); ++i) {
          const auto& prompt = (*wave)[i].prompt;
          const int64_t length = static_cast<int64_t>(prompt.size());
          fresh[i] = length - (options_.prefix_cache_tokens > 0 ? Reuse(LongestPrefix(prompt), length) : 0);
        }
        const double overhead = decoder_->device().is_cpu() ? model::ForwardOverhead(options_.prefill_tokens) : static_cast<double>(options_.prefill_tokens);
        for (const auto& group : model::WidestFirstGroups(fresh, options_.prefill_tokens, overhead)) {
          std::vector<Request> batch;
          for (size_t i : group) batch.push_back(std::move((*wave)[i]));
          Prefill(std::move(batch), out);
        }
      }
    }
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
