#include "engine/generator.h"

#include <algorithm>
#include <unordered_set>

#include <ATen/Parallel.h>

#include "bridge/errors.h"
#include "model/batching.h"

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

// Room to grow added when the row store is reallocated (rows, and columns on each side of the live window), so a
// reallocation happens once every many joins or steps rather than at each. A quarter each way keeps the store within
// about twice the live keys/values.
int64_t Slack(int64_t n) { return std::max<int64_t>(64, n / 4); }
int64_t RowSlack(int64_t n) { return std::max<int64_t>(4, n / 4); }

// Leading tokens `a` and `b` share.
int64_t CommonPrefix(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t k = 0;
  while (k < n && a[k] == b[k]) ++k;
  return static_cast<int64_t>(k);
}

}  // namespace

double RequestUniform(uint64_t seed, uint64_t n) {
  const uint64_t x = SplitMix(seed + (n + 1) * 0x9e3779b97f4a7c15ull);
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

Generator::Generator(std::shared_ptr<model::Decoder> decoder, GeneratorOptions options)
    : decoder_(std::move(decoder)), options_(options) {}

void Generator::Clear() {
  ClearPrefixes();
  ClearRows();
}

void Generator::ClearPrefixes() {
  prefix_.clear();
  prefix_tokens_ = 0;
}

void Generator::ClearRows() {
  rows_.clear();
  cache_ = model::KvCache();
  store_ = model::KvCache();
  left_ = 0;
  columns_ = 0;
  next_ = at::Tensor();
  lengths_ = at::Tensor();
  plan_ = SamplerPlan();
  plan_stale_ = true;
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

void Generator::Keep(const std::vector<int64_t>& keep) {
  if (keep.size() == rows_.size()) return;
  plan_stale_ = true;
  if (keep.empty()) {
    ClearRows();
    return;
  }
  // Rows leaving below the new count are refilled by the kept rows from the top (one row copy per hole), so a
  // departure moves at most as many rows as left, whatever the batch size.
  const int64_t K = static_cast<int64_t>(keep.size());
  std::vector<bool> kept(rows_.size(), false);
  for (int64_t i : keep) kept[i] = true;
  std::vector<int64_t> order(K);  // new row -> old row
  size_t mover = 0;
  while (mover < keep.size() && keep[mover] < K) ++mover;
  int64_t longest = 0;
  for (int64_t i : keep) longest = std::max(longest, rows_[i].length);
  // Columns left of the longest remaining row are holes in every row: the window starts after them.
  const int64_t cut = columns_ - longest;
  for (int64_t r = 0; r < K; ++r) {
    if (kept[r]) {
      order[r] = r;
      continue;
    }
    const int64_t from = keep[mover++];
    order[r] = from;
    for (auto* layers : {&store_.k, &store_.v}) {
      for (at::Tensor& t : *layers) t[r].narrow(1, left_ + cut, longest).copy_(t[from].narrow(1, left_ + cut, longest));
    }
  }
  std::vector<Row> rows;
  rows.reserve(keep.size());
  for (int64_t i : order) rows.push_back(std::move(rows_[i]));
  rows_ = std::move(rows);
  const at::Tensor index = at::tensor(order, at::kLong).to(decoder_->device());
  left_ += cut;
  columns_ = longest;
  next_ = next_.index_select(0, index);
  lengths_ = lengths_.index_select(0, index);
  Bind();
}

void Generator::Place(int64_t rows_needed, int64_t width, int64_t extra) {
  const model::Decoder& d = *decoder_;
  const model::DecoderConfig& c = d.config();
  const int64_t B = static_cast<int64_t>(rows_.size());
  const int64_t grow = width - columns_;  // columns the live rows gain on their left
  const bool fits = !store_.k.empty() && store_.k[0].size(0) >= rows_needed && left_ >= grow &&
                    left_ - grow + width + extra <= store_.k[0].size(2);
  if (fits) {
    left_ -= grow;
    if (B > 0 && grow > 0) {
      // New hole columns: masked out of attention, but a masked weight of 0 times a NaN left in memory is NaN.
      for (auto* layers : {&store_.k, &store_.v}) {
        for (at::Tensor& t : *layers) t.narrow(0, 0, B).narrow(2, left_, grow).zero_();
      }
    }
  } else {
    const int64_t left = Slack(width);
    const int64_t capacity = left + width + std::max(extra, Slack(width));
    const int64_t row_capacity = rows_needed + RowSlack(rows_needed);
    const auto opts = at::TensorOptions().dtype(d.compute_dtype()).device(d.device());
    if (store_.k.empty()) {
      store_.k.assign(c.num_hidden_layers, at::Tensor());
      store_.v.assign(c.num_hidden_layers, at::Tensor());
    }
    for (auto* layers : {&store_.k, &store_.v}) {
      for (at::Tensor& t : *layers) {
        // Columns right of the window need nothing: Hidden writes them before attention reads them.
        at::Tensor fresh = at::empty({row_capacity, c.num_key_value_heads, capacity, c.head_dim}, opts);
        if (B > 0) {
          at::Tensor live = fresh.narrow(0, 0, B);
          live.narrow(2, left + grow, columns_).copy_(t.narrow(0, 0, B).narrow(2, left_, columns_));
          if (grow > 0) live.narrow(2, left, grow).zero_();
        }
        t = fresh;
      }
    }
    left_ = left;
  }
  columns_ = width;
}

void Generator::Bind() {
  const int64_t B = static_cast<int64_t>(rows_.size());
  cache_.k.resize(store_.k.size());
  cache_.v.resize(store_.v.size());
  for (size_t i = 0; i < store_.k.size(); ++i) {
    const int64_t room = store_.k[i].size(2) - left_;
    cache_.k[i] = store_.k[i].narrow(0, 0, B).narrow(2, left_, room);
    cache_.v[i] = store_.v[i].narrow(0, 0, B).narrow(2, left_, room);
  }
  cache_.length = columns_;
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
  const int64_t width = k[0].size(2);
  for (size_t i = 0; i < k.size(); ++i) {
    e->k.push_back(k[i][row].narrow(1, width - len, len).clone());
    e->v.push_back(v[i][row].narrow(1, width - len, len).clone());
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
  int64_t P = 0;
  for (const auto& r : batch) P = std::max<int64_t>(P, static_cast<int64_t>(r.prompt.size()));

  // Per row: `reuse` leading prompt tokens come from the prefix cache (never the last one: its logits are needed),
  // the other `fresh` tokens are computed now.
  std::vector<PrefixMatch> match(N);
  std::vector<int64_t> lengths(N), reuse(N, 0);
  int64_t past = 0;  // cached columns: the longest reuse
  int64_t T = 0;     // computed columns: the most fresh tokens
  for (int64_t r = 0; r < N; ++r) {
    lengths[r] = static_cast<int64_t>(batch[r].prompt.size());
    if (options_.prefix_cache_tokens > 0) match[r] = LongestPrefix(batch[r].prompt);
    reuse[r] = Reuse(match[r], lengths[r]);
    if (reuse[r] > 0) match[r].entry->last_use = ++prefix_clock_;
    past = std::max(past, reuse[r]);
    T = std::max(T, lengths[r] - reuse[r]);
    last_reused_ += reuse[r];
    last_prefilled_ += lengths[r] - reuse[r];
  }

  // Computed tokens right-aligned in T columns; positions count real tokens from the row's start, so a row sees the
  // positions it would see alone. Key columns: `past` cached ones (each row's reuse right-aligned in them), then T.
  at::Tensor ids = at::zeros({N, T}, at::kLong);
  at::Tensor positions = at::zeros({N, T}, at::kLong);
  at::Tensor mask = at::zeros({N, past + T}, at::kLong);
  auto ids_a = ids.accessor<int64_t, 2>();
  auto pos_a = positions.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<int64_t, 2>();
  std::vector<SamplingParams> params(N);
  std::vector<std::vector<double>> uniforms(1, std::vector<double>(N));
  bool padded = past > 0;
  for (int64_t r = 0; r < N; ++r) {
    const auto& prompt = batch[r].prompt;
    const int64_t fresh = lengths[r] - reuse[r];
    const int64_t off = T - fresh;
    padded = padded || off > 0;
    for (int64_t t = 0; t < fresh; ++t) {
      ids_a[r][off + t] = prompt[reuse[r] + t];
      pos_a[r][off + t] = reuse[r] + t;
      mask_a[r][past + off + t] = 1;
    }
    for (int64_t t = past - reuse[r]; t < past; ++t) mask_a[r][t] = 1;
    params[r] = batch[r].sampling;
    uniforms[0][r] = RequestUniform(batch[r].seed, 0);
  }

  last_padded_ += N * T;
  const SmallForwardThreads threads(d, N * T);
  model::KvCache cache;
  if (past > 0) {
    // A preallocated cache holding the reused keys/values; the forward writes the computed ones after them.
    const auto opts = at::TensorOptions().dtype(d.compute_dtype()).device(device);
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
      cache.k.push_back(at::zeros({N, c.num_key_value_heads, past + T, c.head_dim}, opts));
      cache.v.push_back(at::zeros({N, c.num_key_value_heads, past + T, c.head_dim}, opts));
      for (int64_t r = 0; r < N; ++r) {
        if (reuse[r] == 0) continue;
        cache.k[i][r].narrow(1, past - reuse[r], reuse[r]).copy_(match[r].entry->k[i].narrow(1, 0, reuse[r]));
        cache.v[i][r].narrow(1, past - reuse[r], reuse[r]).copy_(match[r].entry->v[i].narrow(1, 0, reuse[r]));
      }
    }
    cache.length = past;
  }
  // Prompts of one length and no reuse need no padding mask: plain causal attention lets sdpa use its fused kernel.
  const at::Tensor hidden = d.Hidden(ids.to(device), positions.to(device), padded ? mask.to(device) : at::Tensor(), &cache);
  const at::Tensor logits = d.Logits(hidden.select(1, T - 1));
  const SamplerPlan plan(params, c.vocab_size, device);
  const auto [tokens_dev, logprobs_dev] = plan.Sample(logits, Uniforms(uniforms)[0]);

  if (past > 0 || T != P) {
    // Each row's real tokens as its rightmost `length` columns of P (the live cache's layout): the reused part and
    // the computed part are gathered together; the hole columns on the left take any finite value (masked later).
    at::Tensor index = at::zeros({N, P}, at::kLong);
    auto index_a = index.accessor<int64_t, 2>();
    for (int64_t r = 0; r < N; ++r) {
      const int64_t fresh = lengths[r] - reuse[r];
      for (int64_t j = P - lengths[r]; j < P; ++j) {
        const int64_t p = j - (P - lengths[r]);
        index_a[r][j] = p < reuse[r] ? past - reuse[r] + p : past + (T - fresh) + (p - reuse[r]);
      }
    }
    const at::Tensor gather = index.to(device).view({N, 1, P, 1}).expand({N, c.num_key_value_heads, P, c.head_dim});
    for (auto* layers : {&cache.k, &cache.v}) {
      for (at::Tensor& t : *layers) t = t.gather(2, gather);
    }
  }
  if (options_.prefix_cache_tokens > 0) {
    for (int64_t r = 0; r < N; ++r) Remember(batch[r].prompt, match[r], cache.k, cache.v, r);
  }

  const at::Tensor tokens = tokens_dev.to(at::kCPU);
  const at::Tensor logprobs = logprobs_dev.to(at::kCPU);
  const int64_t* tok = tokens.data_ptr<int64_t>();
  const float* lp = logprobs.data_ptr<float>();

  std::vector<int64_t> keep;
  for (int64_t r = 0; r < N; ++r) {
    Emitted e;
    e.id = batch[r].id;
    e.tokens.push_back(static_cast<int32_t>(tok[r]));
    e.logprobs.push_back(lp[r]);
    e.finish = FinishAfter(batch[r], tok[r], 1);
    if (e.finish == Finish::kNone) keep.push_back(r);
    out.push_back(std::move(e));
  }
  if (keep.empty()) return;

  // The continuing rows join the live ones in the row store, right-aligned to the wider of the two widths.
  const at::Tensor index = at::tensor(keep, at::kLong).to(device);
  const bool all = static_cast<int64_t>(keep.size()) == N;
  const int64_t K = static_cast<int64_t>(keep.size());
  const int64_t old_rows = static_cast<int64_t>(rows_.size());
  const bool had_rows = old_rows > 0;
  const int64_t width = std::max(columns_, P);
  Place(old_rows + K, width, 1);
  for (auto [mine, theirs] : {std::pair{&store_.k, &cache.k}, std::pair{&store_.v, &cache.v}}) {
    for (size_t i = 0; i < theirs->size(); ++i) {
      at::Tensor rows = (*mine)[i].narrow(0, old_rows, K).narrow(2, left_, width);
      rows.narrow(2, width - P, P).copy_(all ? (*theirs)[i] : (*theirs)[i].index_select(0, index));
      if (width > P) rows.narrow(2, 0, width - P).zero_();
    }
  }
  const at::Tensor new_next = tokens_dev.index_select(0, index);
  std::vector<int64_t> new_lengths;
  for (int64_t r : keep) new_lengths.push_back(lengths[r]);
  const at::Tensor new_len = at::tensor(new_lengths, at::kLong).to(device);
  next_ = had_rows ? at::cat({next_, new_next}) : new_next;
  lengths_ = had_rows ? at::cat({lengths_, new_len}) : new_len;
  for (int64_t r : keep) {
    Row row;
    row.length = lengths[r];
    row.generated = 1;
    row.req = std::move(batch[r]);
    rows_.push_back(std::move(row));
  }
  Bind();
  plan_stale_ = true;
}

void Generator::Decode(int64_t max_steps, std::vector<Emitted>& out) {
  model::Decoder& d = *decoder_;
  const at::Device device = d.device();
  const int64_t B = static_cast<int64_t>(rows_.size());
  int64_t steps = max_steps;
  for (const Row& r : rows_) steps = std::min(steps, r.req.max_new_tokens - r.generated);
  if (B == 0 || steps <= 0) return;
  if (plan_stale_) {
    std::vector<SamplingParams> params;
    for (const Row& r : rows_) params.push_back(r.req.sampling);
    plan_ = SamplerPlan(params, d.config().vocab_size, device);
    plan_stale_ = false;
  }
  std::vector<std::vector<double>> host(steps, std::vector<double>(B));
  for (int64_t s = 0; s < steps; ++s) {
    for (int64_t r = 0; r < B; ++r) host[s][r] = RequestUniform(rows_[r].req.seed, rows_[r].generated + s);
  }
  const at::Tensor uniforms = Uniforms(host);
  if (left_ + columns_ + steps > store_.k[0].size(2)) {
    Place(B, columns_, steps);
    Bind();
  }
  const bool read_each_step = device.is_cpu();
  const at::Tensor column = at::arange(0, columns_ + steps + 1, at::TensorOptions().dtype(at::kLong).device(device));

  std::vector<at::Tensor> tokens, logprobs;
  const SmallForwardThreads threads(d, B);
  for (int64_t s = 0; s < steps; ++s) {
    // Row r's real tokens are its rightmost lengths[r] columns, plus the new one at column `columns_`.
    const at::Tensor mask = column.narrow(0, 0, columns_ + 1).view({1, -1}) >= (columns_ - lengths_).view({-1, 1});
    const at::Tensor hidden = d.Hidden(next_.view({B, 1}), lengths_.view({B, 1}), mask, &cache_);
    const auto [tok, lp] = plan_.Sample(d.Logits(hidden.select(1, 0)), uniforms[s]);
    next_ = tok;
    lengths_ = lengths_ + 1;
    columns_ += 1;
    tokens.push_back(tok);
    logprobs.push_back(lp);
    if (read_each_step && s + 1 < steps) {
      const int64_t* t = tok.data_ptr<int64_t>();
      bool stopped = false;
      for (int64_t r = 0; r < B && !stopped; ++r) stopped = IsStop(rows_[r].req, t[r]);
      if (stopped) break;
    }
  }
  const int64_t done = static_cast<int64_t>(tokens.size());
  last_steps_ = done;
  last_rows_ = B;
  const at::Tensor tok_host = at::stack(tokens).to(at::kCPU).contiguous();  // [done, B]
  const at::Tensor lp_host = at::stack(logprobs).to(at::kCPU).contiguous();
  const int64_t* tp = tok_host.data_ptr<int64_t>();
  const float* lpp = lp_host.data_ptr<float>();

  std::vector<int64_t> keep;
  for (int64_t r = 0; r < B; ++r) {
    Row& row = rows_[r];
    Emitted e;
    e.id = row.req.id;
    for (int64_t s = 0; s < done && e.finish == Finish::kNone; ++s) {
      const int64_t token = tp[s * B + r];
      e.tokens.push_back(static_cast<int32_t>(token));
      e.logprobs.push_back(lpp[s * B + r]);
      e.finish = FinishAfter(row.req, token, row.generated + s + 1);
    }
    row.generated += done;
    row.length += done;
    if (e.finish == Finish::kNone) keep.push_back(r);
    out.push_back(std::move(e));
  }
  Keep(keep);
}

std::vector<Emitted> Generator::Step(std::vector<Request> add, const std::vector<int64_t>& cancel, int64_t max_steps, bool clear_prefixes) {
  std::vector<Emitted> out;
  last_steps_ = 0;
  last_rows_ = 0;
  last_reused_ = 0;
  last_prefilled_ = 0;
  last_padded_ = 0;
  if (clear_prefixes) ClearPrefixes();
  try {
    if (!cancel.empty()) {
      const std::unordered_set<int64_t> gone(cancel.begin(), cancel.end());
      std::vector<int64_t> keep;
      for (size_t r = 0; r < rows_.size(); ++r) {
        if (!gone.count(rows_[r].req.id)) keep.push_back(static_cast<int64_t>(r));
      }
      Keep(keep);
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
