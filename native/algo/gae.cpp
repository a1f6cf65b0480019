#include "algo/gae.h"

#include <cmath>
#include <vector>

namespace lamer::algo {

namespace {
// Inside the square root, so a batch of equal advantages stays finite (as in src/algo/gae.ts).
constexpr double kWhitenEps = 1e-8;
}  // namespace

void compute_gae(int64_t rows, const int64_t* lengths, const float* row_reward, const float* values, const GaeParams& params,
                 float* advantage, float* returns) {
  int64_t total = 0;
  for (int64_t r = 0; r < rows; ++r) total += lengths[r];
  // Raw advantages in double, as the reference keeps them, so that whitening sees the same numbers.
  std::vector<double> raw(static_cast<size_t>(total));
  int64_t offset = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t len = lengths[r];
    double last = 0;
    for (int64_t t = len - 1; t >= 0; --t) {
      const int64_t k = offset + t;
      const double reward = t == len - 1 ? static_cast<double>(row_reward[r]) : 0.0;
      const double next = t == len - 1 ? 0.0 : static_cast<double>(values[k + 1]);
      const double delta = reward + params.gamma * next - static_cast<double>(values[k]);
      last = delta + params.gamma * params.lambda * last;
      raw[k] = last;
      returns[k] = static_cast<float>(last + static_cast<double>(values[k]));
    }
    offset += len;
  }
  if (!params.whiten || total == 0) {
    for (int64_t k = 0; k < total; ++k) advantage[k] = static_cast<float>(raw[k]);
    return;
  }
  double sum = 0;
  for (int64_t k = 0; k < total; ++k) sum += raw[k];
  const double mean = sum / static_cast<double>(total);
  double squares = 0;
  for (int64_t k = 0; k < total; ++k) squares += (raw[k] - mean) * (raw[k] - mean);
  // Unbiased variance; a single token has none, so it is only centred.
  const double scale = total > 1 ? 1.0 / std::sqrt(squares / static_cast<double>(total - 1) + kWhitenEps) : 1.0;
  for (int64_t k = 0; k < total; ++k) advantage[k] = static_cast<float>((raw[k] - mean) * scale);
}

}  // namespace lamer::algo
