// Host-callable entry points of kernels/advantages.cu. Plain C++ (no CUDA types), so the binding can include it
// whether or not the addon is built with CUDA; the functions exist only in CUDA builds (LAMER_WITH_CUDA).
#pragma once

#include <string>

#include "../advantages.h"

namespace lamer::algo::cuda {

// All pointers in `rows` and `out` are device pointers; `stream` is a cudaStream_t (nullptr: the default stream).
// The rows must already be validated (validate_rows on the host): the device code trusts their structure.
// Returns an empty string on success, else the CUDA error. Enqueued on `stream` and synchronised before returning.
std::string compute_advantages_device(const RowView& rows, const AdvantageParams& params, const AdvantageOutputs& out, void* stream);

// Convenience for tests: host columns in, host outputs out, through device copies.
std::string compute_advantages_from_host(const RowView& rows, const AdvantageParams& params, const AdvantageOutputs& out);

}  // namespace lamer::algo::cuda
