#include "engine/prefix_cache.h"

#include <algorithm>

namespace lamer::engine {

int64_t CommonPrefix(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t k = 0;
  while (k < n && a[k] == b[k]) ++k;
  return static_cast<int64_t>(k);
}

PrefixCache::Match PrefixCache::Longest(const std::vector<int64_t>& prompt) const {
  Match best;
  for (const auto& e : entries_) {
    if (static_cast<int64_t>(std::min(e->tokens.size(), prompt.size())) <= best.common) continue;
    const int64_t k = CommonPrefix(e->tokens, prompt);
    if (k > best.common) best = {e, k};
  }
  return best;
}

int64_t PrefixCache::Reuse(const Match& match, int64_t length) {
  const int64_t reuse = std::min(match.common, length - 1);
  return reuse < kMinReuse ? 0 : reuse;
}

void PrefixCache::Touch(const Match& match) {
  if (match.entry) match.entry->last_use = ++clock_;
}

void PrefixCache::Remember(const std::vector<int64_t>& prompt, const Match& match, const std::vector<at::Tensor>& k,
                           const std::vector<at::Tensor>& v, int64_t row) {
  const int64_t len = static_cast<int64_t>(prompt.size());
  if (budget_ <= 0 || len > budget_) return;
  if (match.entry && match.common == len) {
    Touch(match);  // already held whole (as itself or inside a longer prompt)
    return;
  }
  if (match.entry && match.common == static_cast<int64_t>(match.entry->tokens.size())) {
    // The new prompt extends this entry: it serves every prompt the entry served, and more.
    tokens_ -= match.common;
    entries_.erase(std::find(entries_.begin(), entries_.end(), match.entry));
  }
  auto e = std::make_shared<Entry>();
  e->tokens = prompt;
  std::vector<at::Tensor> parts;
  parts.reserve(2 * k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    parts.push_back(k[i][row].narrow(1, 0, len));
    parts.push_back(v[i][row].narrow(1, 0, len));
  }
  const std::vector<int64_t> shape = {static_cast<int64_t>(k.size()), 2, parts[0].size(0), len, parts[0].size(2)};
  e->kv = at::stack(parts).view(shape);
  e->last_use = ++clock_;
  entries_.push_back(std::move(e));
  tokens_ += len;
  while (tokens_ > budget_) {
    auto oldest =
        std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) { return a->last_use < b->last_use; });
    tokens_ -= static_cast<int64_t>((*oldest)->tokens.size());
    entries_.erase(oldest);
  }
}

void PrefixCache::DropIfStale(uint64_t version) {
  if (version == version_) return;
  Clear();
  version_ = version;
}

void PrefixCache::Clear() {
  entries_.clear();
  tokens_ = 0;
}

}  // namespace lamer::engine
