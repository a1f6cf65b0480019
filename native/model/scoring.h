// Scoring whole sequences with a decoder, without gradient: the log-prob of each given token, and the logits.
// Sequences of a call are grouped into left-padded micro-batches (model/batching.h), so a padded row sees the same
// positions as it would alone.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "model/decoder.h"

namespace lamer::model {

// result[j][t - starts[j]] = log softmax(logits / temperature) of token seqs[j][t] given seqs[j][0..t-1], for
// t >= starts[j] (1 <= starts[j] <= seqs[j].size()); micro-batches of at most about `budget` padded tokens.
std::vector<std::vector<float>> SequenceLogprobs(Decoder& d, const std::vector<std::vector<int64_t>>& seqs,
                                                 const std::vector<int64_t>& starts, double temperature, int64_t budget);

// fp32 logits [B, T, vocab] on the CPU of the sequences left-padded into one batch.
at::Tensor SequenceLogits(Decoder& d, const std::vector<std::vector<int64_t>>& seqs);

}  // namespace lamer::model
