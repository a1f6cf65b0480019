#include "model/scoring.h"

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <numeric>

#include "model/batching.h"

namespace lamer::model {

namespace {

// Left-pads `seqs[index[..]]` into one batch.
LeftPadded Pad(const std::vector<std::vector<int64_t>>& seqs, const std::vector<size_t>& index) {
  std::vector<std::pair<const int64_t*, int64_t>> rows;
  rows.reserve(index.size());
  for (size_t j : index) rows.emplace_back(seqs[j].data(), static_cast<int64_t>(seqs[j].size()));
  return LeftPad(rows);
}

// Groups sequence indices (longest first, empty ones left out) into micro-batches of padded rows.
std::vector<std::vector<size_t>> MicroBatches(const std::vector<std::vector<int64_t>>& seqs, int64_t budget) {
  std::vector<int64_t> widths(seqs.size());
  for (size_t j = 0; j < seqs.size(); ++j) widths[j] = static_cast<int64_t>(seqs[j].size());
  return WidestFirstGroups(widths, budget, ForwardOverhead(budget));
}

}  // namespace

std::vector<std::vector<float>> SequenceLogprobs(Decoder& d, const std::vector<std::vector<int64_t>>& seqs,
                                                 const std::vector<int64_t>& starts, double temperature, int64_t budget) {
  c10::InferenceMode guard;
  std::vector<std::vector<float>> result(seqs.size());
  for (const auto& index : MicroBatches(seqs, budget)) {
    const LeftPadded b = Pad(seqs, index);
    const at::Tensor hidden = d.Hidden(b.ids, b.positions, b.mask);
    const int64_t H = hidden.size(-1);
    // The hidden state at padded column c predicts the token at column c + 1.
    std::vector<int64_t> rows, targets;
    for (size_t r = 0; r < index.size(); ++r) {
      const auto& s = seqs[index[r]];
      const int64_t off = b.width - static_cast<int64_t>(s.size());
      for (int64_t t = starts[index[r]]; t < static_cast<int64_t>(s.size()); ++t) {
        rows.push_back(static_cast<int64_t>(r) * b.width + off + t - 1);
        targets.push_back(s[t]);
      }
    }
    if (rows.empty()) continue;
    const at::Tensor row_index = at::tensor(rows, at::kLong).to(d.device());
    const at::Tensor picked = hidden.reshape({-1, H}).index_select(0, row_index);
    const at::Tensor lp = d.TokenLogprobs(picked, at::tensor(targets, at::kLong), temperature).to(at::kCPU).contiguous();
    const float* p = lp.data_ptr<float>();
    for (size_t r = 0; r < index.size(); ++r) {
      const size_t n = seqs[index[r]].size() - starts[index[r]];
      result[index[r]].assign(p, p + n);
      p += n;
    }
  }
  return result;
}

at::Tensor SequenceLogits(Decoder& d, const std::vector<std::vector<int64_t>>& seqs) {
  c10::InferenceMode guard;
  std::vector<size_t> index(seqs.size());
  std::iota(index.begin(), index.end(), 0);
  const LeftPadded b = Pad(seqs, index);
  return d.Logits(d.Hidden(b.ids, b.positions, b.mask)).to(at::kCPU).contiguous();
}

}  // namespace lamer::model
