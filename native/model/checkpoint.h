// A decoder's parameters: read from a checkpoint folder and checked against the config, or drawn at random.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>

#include "model/decoder.h"

namespace lamer::model {

// The parameters of `dir` (model.safetensors or its shards), checked against the names and shapes `c` implies
// (E_CHECKPOINT naming the file, the tensor, what was expected and found) and converted to `param_dtype` on `device`.
// Same-dtype CPU tensors stay views of the mapped file (no copy).
std::map<std::string, at::Tensor> LoadParameters(const std::string& dir, const DecoderConfig& c, at::Device device,
                                                 at::ScalarType param_dtype);

// Random parameters as transformers initialises them: weights ~ N(0, std), biases 0, norm weights 1. Drawn on the
// CPU from one seeded generator in ExpectedParameters order, so a seed gives the same model on every device.
std::map<std::string, at::Tensor> InitParameters(const DecoderConfig& c, at::Device device, at::ScalarType param_dtype, uint64_t seed,
                                                 double std);

}  // namespace lamer::model
