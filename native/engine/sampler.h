// Token sampling for a batch of rows, each with its own temperature, top-k and top-p (SPEC §5, §6).
//
// Every row draws from its own uniform number (the engine's per-request generator supplies it), and everything a row
// computes depends on its own logits only, so a row samples the same token whatever else shares its batch. Sampling
// is by inverse CDF over the row's kept probabilities, which costs one uniform per token and no host round trip: in
// descending probability for a row with a top-k or top-p cut (the cut needs that order anyway), in token-id order
// for a row without one (no sort over the vocabulary).
// The reported log-prob is log_softmax(logits / T)[token]: at the sampling temperature, without top-k/top-p.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace lamer::engine {

struct SamplingParams {
  double temperature = 1.0;  // 0: greedy (argmax; its log-prob is then taken at T = 1)
  double top_p = 1.0;        // in (0, 1]; 1 keeps everything
  int64_t top_k = 0;         // <= 0: no cut
};

// What a batch of rows needs to sample, prepared once per batch composition (index tensors on the device), so the
// per-token work launches only device ops.
class SamplerPlan {
 public:
  SamplerPlan() = default;
  SamplerPlan(const std::vector<SamplingParams>& rows, int64_t vocab, at::Device device);

  // tokens [B] (int64) and log-probs [B] (fp32) for fp32 `logits` [B, V] and `uniforms` [B] (fp64 in [0, 1)).
  std::pair<at::Tensor, at::Tensor> Sample(const at::Tensor& logits, const at::Tensor& uniforms) const;

  int64_t rows() const { return rows_; }

 private:
  int64_t rows_ = 0;
  int64_t vocab_ = 0;
  at::Tensor divisor_;  // [B, 1] fp32: T, or 1 for greedy rows
  // Row subsets by how they sample; undefined when empty.
  at::Tensor greedy_;           // argmax
  at::Tensor plain_;            // the full distribution (top_p = 1, no top-k)
  at::Tensor filtered_;         // top-k and/or top-p
  at::Tensor filtered_top_p_;   // [F] fp32
  at::Tensor filtered_top_k_;   // [F] int64, the cut per row (vocab when none)
  int64_t filtered_width_ = 0;  // candidates sorted per filtered row: max top-k, or the vocabulary when a row has none
};

// The sampler of the fixed-slot decode step: per-slot parameters live in device buffers [slots] whose addresses never
// change, and a step computes every kind of sampling present in the batch for all rows and picks each row's own with
// `where`, so its work depends only on (rows, kinds present, top-k width), never on which row samples how. That makes
// it capturable as part of a CUDA graph. A row gets exactly the token and log-prob SamplerPlan gives it.
class SlotSampler {
 public:
  SlotSampler() = default;
  SlotSampler(int64_t slots, int64_t vocab, at::Device device);

  // Sets slot `slot`'s parameters (host side; Upload() sends them to the device).
  void Set(int64_t slot, const SamplingParams& p);
  // Copies the parameters to the device buffers if any changed since the last upload.
  void Upload();

  // What the first `rows` slots need: a bit per kind (1 greedy, 2 plain, 4 filtered) and the top-k width of the
  // filtered rows (0 when none). Part of a captured graph's key.
  struct Shape {
    int kinds = 0;
    int64_t filtered_width = 0;
    bool operator<(const Shape& o) const { return kinds != o.kinds ? kinds < o.kinds : filtered_width < o.filtered_width; }
    bool operator==(const Shape& o) const { return kinds == o.kinds && filtered_width == o.filtered_width; }
  };
  Shape ShapeOf(int64_t rows, const std::vector<bool>& active) const;

  // tokens [rows] (int64) and log-probs [rows] (fp32) for fp32 `logits` [rows, V] and `uniforms` [rows] (fp64).
  std::pair<at::Tensor, at::Tensor> Sample(const at::Tensor& logits, const at::Tensor& uniforms, const Shape& shape) const;

 private:
  int64_t vocab_ = 0;
  at::Device device_ = at::kCPU;
  std::vector<SamplingParams> host_;
  bool dirty_ = true;
  at::Tensor divisor_;  // [slots, 1] fp32
  at::Tensor mode_;     // [slots] int64: 0 greedy, 1 plain, 2 filtered
  at::Tensor top_p_;    // [slots, 1] fp32
  at::Tensor top_k_;    // [slots, 1] int64
};

}  // namespace lamer::engine
