// Log-probs and entropy of target tokens with gradient, at a temperature, in bounded memory (SPEC §5).
//
// A 151,936-token vocabulary makes the logits the largest activation of a training step: 600 KB per scored token in
// fp32, and plain autograd keeps several copies of them (logits, log_softmax output, their gradients). The chunked
// version is one autograd node that never stores logits: forward computes them a chunk of rows at a time and keeps
// only log-sum-exp per row; backward recomputes each chunk's logits and turns them into the gradients of the hidden
// states and the head weight at once. Peak extra memory is about `chunk_bytes` whatever the number of tokens.
#pragma once

#include <ATen/ATen.h>

#include <functional>

namespace lamer::train {

struct TokenScores {
  at::Tensor logprobs;  // [N] log softmax(h W^T / T)[target]
  at::Tensor entropy;   // [N] entropy of softmax(h W^T / T); undefined unless asked for
};

// The dtype the scores are computed in: fp32 for fp32/bf16/fp16 models, fp64 for fp64 models (gradient checks).
at::ScalarType ScoreDType(at::ScalarType compute_dtype);

// hidden [N, H] and weight [V, H] in the model's compute dtype, targets [N] int64. Differentiable with respect to
// hidden and weight. At most about `chunk_bytes` of logit-sized buffers exist at once.
TokenScores ChunkedTokenScores(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, double temperature,
                               bool with_entropy, int64_t chunk_bytes);

// The same with plain autograd over the whole [N, V] logits: the reference the chunked version is tested against, and
// the "without chunking" side of the memory benchmark.
TokenScores FullTokenScores(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, double temperature,
                            bool with_entropy);

// Gradient checkpointing: y = fn(x) without keeping fn's intermediate activations; backward runs fn again with
// gradients on and backpropagates through that recomputation. `fn` must be deterministic (but for `random`) and must not capture
// references to locals that end before the backward pass.
using LayerFn = std::function<at::Tensor(const at::Tensor&)>;
// `random` (the layer draws random numbers: LoRA dropout): the device's default generator is put back to its state at
// the forward for the recomputation, so backward sees the forward's masks, then moved on as if it had not been.
// An input without gradient (a frozen embedding under LoRA) is given one, so gradients still reach the parameters
// inside the layer.
at::Tensor Checkpointed(const LayerFn& fn, const at::Tensor& x, bool random = false);

}  // namespace lamer::train
