#include "model/fused_ops.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <cmath>
#include <chrono>
#include <limits>
#include <torch/library.h>

#include "bridge/errors.h"

#ifdef LAMER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#endif
#ifdef LAMER_WITH_CUDA_KERNELS

#include "model/kernels/fused_ops_cuda.h"
#endif

namespace lamer::model {

// ---- composite forms: the CPU implementations (bit for bit what the training forward computes) and the reference --

at::Tensor RotaryReference(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  return at::addcmul(x * cos, at::roll(x, {x.size(-1) / 2}, {-1}), sin);
}

at::Tensor SwiGluReference(const at::Tensor& gate_up) {
  const int64_t half = gate_up.size(-1) / 2;
  return at::silu(gate_up.narrow(-1, 0, half)) * gate_up.narrow(-1, half, half);
}

void KvWriteReference(at::Tensor& k_cache, at::Tensor& v_cache, const at::Tensor& k, const at::Tensor& v, const at::Tensor& write_at) {
  const int64_t B = k.size(0), T = k.size(1), H = k.size(2), D = k.size(3);
  const auto long_opts = at::TensorOptions().dtype(at::kLong).device(k.device());
  const at::Tensor columns = (write_at.view({B, 1, 1, 1}) + at::arange(0, T, long_opts).view({1, 1, T, 1})).expand({B, H, T, D});
  k_cache.scatter_(2, columns, k.transpose(1, 2));
  v_cache.scatter_(2, columns, v.transpose(1, 2));
}

at::Tensor DecodeAttentionReference(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache, const at::Tensor& allowed,
                                    int64_t width, double scale) {
  return at::scaled_dot_product_attention(q, k_cache.narrow(2, 0, width), v_cache.narrow(2, 0, width), allowed, 0.0, false, scale);
}

namespace {

void CheckRows(const char* op, const at::Tensor& x, int64_t dims) {
  if (x.dim() != dims) Fail("E_ARG", std::string(op) + ": expected a tensor of " + std::to_string(dims) + " dimensions");
  if (x.stride(-1) != 1) Fail("E_ARG", std::string(op) + ": the last dimension must be contiguous");
}

at::Tensor RotaryComposite(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  CheckRows("lamer::rotary", x, 4);
  return RotaryReference(x, cos, sin);
}

at::Tensor SwiGluComposite(const at::Tensor& gate_up) { return SwiGluReference(gate_up); }

at::Tensor DecodeAttentionComposite(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache, const at::Tensor& allowed,
                                    int64_t width, double scale, at::TensorList /*live: CUDA only*/) {
  return DecodeAttentionReference(q, k_cache, v_cache, allowed, width, scale);
}

void KvWriteComposite(at::Tensor& k_cache, at::Tensor& v_cache, const at::Tensor& k, const at::Tensor& v, const at::Tensor& write_at) {
  KvWriteReference(k_cache, v_cache, k, v, write_at);
}

}  // namespace

TORCH_LIBRARY(lamer, m) {
  m.def("rotary(Tensor x, Tensor cos, Tensor sin) -> Tensor");
  m.def("swiglu(Tensor gate_up) -> Tensor");
  m.def("kv_write_(Tensor(a!) k_cache, Tensor(b!) v_cache, Tensor k, Tensor v, Tensor write_at) -> ()");
  m.def("decode_attention(Tensor q, Tensor k_cache, Tensor v_cache, Tensor allowed, int width, float scale, Tensor[] live) -> Tensor");
}

TORCH_LIBRARY_IMPL(lamer, CPU, m) {
  m.impl("rotary", &RotaryComposite);
  m.impl("swiglu", &SwiGluComposite);
  m.impl("kv_write_", &KvWriteComposite);
  m.impl("decode_attention", &DecodeAttentionComposite);
}

#ifdef LAMER_WITH_CUDA
namespace {

// The memory-efficient kernel in its variable-length form: every (row, kv head) is one sequence of G queries and of
// lengths + 1 keys starting at its own block of `capacity` columns; the cache [B, Hk, capacity, D] read as one
// sequence of B * Hk * capacity keys of one head, so nothing is copied.
at::Tensor DecodeAttentionCuda(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache, const at::Tensor& allowed,
                               int64_t width, double scale, at::TensorList live) {
  // float64 has no such kernel: the composite form.
  if (live.size() != 3 || q.scalar_type() == at::kDouble) return DecodeAttentionReference(q, k_cache, v_cache, allowed, width, scale);
  const int64_t B = q.size(0), Hk = q.size(1), G = q.size(2), D = q.size(3), capacity = k_cache.size(2);
  if (!k_cache.is_contiguous() || !v_cache.is_contiguous()) Fail("E_ARG", "lamer::decode_attention: the caches must be contiguous");
  // Custom operators get no device guard from the dispatcher: the tensors' device, made current for the call.
  const c10::cuda::CUDAGuard device_guard(q.device());
  const at::Tensor query = q.reshape({1, B * Hk * G, 1, D});
  const at::Tensor key = k_cache.view({1, B * Hk * capacity, 1, D});
  const at::Tensor value = v_cache.view({1, B * Hk * capacity, 1, D});
  const at::Tensor out =
      std::get<0>(at::_efficient_attention_forward(query, key, value, std::nullopt, live[1], live[2], G, width, 0.0,
                                                   /*custom_mask_type=*/0, /*compute_log_sumexp=*/false, scale, live[0]));
  return out.view({B, Hk, G, D});
}

}  // namespace

TORCH_LIBRARY_IMPL(lamer, CUDA, m) { m.impl("decode_attention", &DecodeAttentionCuda); }
#endif

bool DecodeAttentionReadsLiveColumns(const at::Device& device) {
#ifdef LAMER_WITH_CUDA
  if (!device.is_cuda()) return false;
  return at::cuda::getDeviceProperties(device.index())->major >= 8;
#else
  (void)device;
  return false;
#endif
}

std::vector<at::Tensor> DecodeAttentionInputs(const at::Tensor& write_at, int64_t kv_heads, int64_t groups, int64_t capacity) {
  if (!DecodeAttentionReadsLiveColumns(write_at.device())) return {};
  const int64_t B = write_at.size(0), sequences = B * kv_heads;
  if (sequences * capacity > std::numeric_limits<int32_t>::max()) return {};  // offsets are int32
  const auto ints = at::TensorOptions().dtype(at::kInt).device(write_at.device());
  const at::Tensor starts = at::arange(0, sequences + 1, ints);
  return {(write_at.view({B, 1}) + 1).expand({B, kv_heads}).reshape({sequences}).to(at::kInt), starts * groups, starts * capacity};
}

#if defined(LAMER_WITH_CUDA) && !defined(LAMER_WITH_CUDA_KERNELS)
// A CUDA libtorch but no nvcc at build time: CUDA tensors take the composite forms (several kernels each).
TORCH_LIBRARY_IMPL(lamer, CUDA, m) {
  m.impl("rotary", &RotaryComposite);
  m.impl("swiglu", &SwiGluComposite);
  m.impl("kv_write_", &KvWriteComposite);
}
#endif

#ifdef LAMER_WITH_CUDA_KERNELS
namespace {

int CudaDType(const char* op, const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat:
      return 0;
    case at::kBFloat16:
      return 1;
    case at::kHalf:
      return 2;
    default:
      Fail("E_ARG", std::string(op) + ": the CUDA kernel takes float32, bfloat16 or float16 tensors");
  }
}

void Check(const char* op, const std::string& error) {
  if (!error.empty()) Fail("E_TORCH", std::string(op) + ": " + error);
}

// Each launch below runs on its tensor's device and that device's current stream: a custom operator gets no device
// guard from the dispatcher (ATen's own operators do), so on a model placed on cuda:1 the launch would otherwise go to
// whichever device is current on the calling thread.
at::Tensor RotaryCuda(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  CheckRows("lamer::rotary", x, 4);
  const c10::cuda::CUDAGuard device_guard(x.device());
  const at::Tensor c = cos.to(x.scalar_type()).expand(x.sizes()), s = sin.to(x.scalar_type()).expand(x.sizes());
  if (c.stride(-1) != 1 || s.stride(-1) != 1 || c.strides() != s.strides()) Fail("E_ARG", "lamer::rotary: cos and sin must share a layout");
  at::Tensor out = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  // Rows [B, T, H] of D, x read through its strides (a view of the fused q/k/v buffer).
  const cuda::RowLayout layout{x.size(0),   x.size(1),   x.size(2),   x.stride(0), x.stride(1),
                               x.stride(2), c.stride(0), c.stride(1), c.stride(2), x.size(3)};
  Check("lamer::rotary", cuda::rotary(x.data_ptr(), c.data_ptr(), s.data_ptr(), out.data_ptr(), layout, CudaDType("lamer::rotary", x),
                                      at::cuda::getCurrentCUDAStream(x.device().index()).stream()));
  return out;
}

at::Tensor SwiGluCuda(const at::Tensor& gate_up) {
  const c10::cuda::CUDAGuard device_guard(gate_up.device());
  const at::Tensor in = gate_up.contiguous();
  const int64_t half = in.size(-1) / 2;
  std::vector<int64_t> shape = in.sizes().vec();
  shape.back() = half;
  at::Tensor out = at::empty(shape, in.options());
  Check("lamer::swiglu", cuda::swiglu(in.data_ptr(), out.data_ptr(), in.numel() / in.size(-1), half, CudaDType("lamer::swiglu", in),
                                      at::cuda::getCurrentCUDAStream(in.device().index()).stream()));
  return out;
}

void KvWriteCuda(at::Tensor& k_cache, at::Tensor& v_cache, const at::Tensor& k, const at::Tensor& v, const at::Tensor& write_at) {
  CheckRows("lamer::kv_write_", k, 4);
  CheckRows("lamer::kv_write_", v, 4);
  if (!k_cache.is_contiguous() || !v_cache.is_contiguous()) Fail("E_ARG", "lamer::kv_write_: the caches must be contiguous");
  if (write_at.scalar_type() != at::kLong || !write_at.is_contiguous())
    Fail("E_ARG", "lamer::kv_write_: write_at must be contiguous int64");
  const c10::cuda::CUDAGuard device_guard(k_cache.device());
  const cuda::KvLayout layout{k.size(0),   k.size(1),   k.size(2),   k.size(3),   k_cache.size(2), k.stride(0),
                              k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2)};
  Check("lamer::kv_write_",
        cuda::kv_write(k_cache.data_ptr(), v_cache.data_ptr(), k.data_ptr(), v.data_ptr(), write_at.data_ptr<int64_t>(), layout,
                       CudaDType("lamer::kv_write_", k), at::cuda::getCurrentCUDAStream(k_cache.device().index()).stream()));
}

}  // namespace

TORCH_LIBRARY_IMPL(lamer, CUDA, m) {
  m.impl("rotary", &RotaryCuda);
  m.impl("swiglu", &SwiGluCuda);
  m.impl("kv_write_", &KvWriteCuda);
}
#endif

// ---- through the dispatcher, so that each is one operator wherever it runs -----------------------------------------

at::Tensor Rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("lamer::rotary", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
  return op.call(x, cos, sin);
}

at::Tensor SwiGlu(const at::Tensor& gate_up) {
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("lamer::swiglu", "").typed<at::Tensor(const at::Tensor&)>();
  return op.call(gate_up);
}

at::Tensor DecodeAttention(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache, const at::Tensor& allowed,
                           int64_t width, double scale, const std::vector<at::Tensor>& live) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("lamer::decode_attention", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t, double, at::TensorList)>();
  return op.call(q, k_cache, v_cache, allowed, width, scale, live);
}

void KvWrite_(at::Tensor& k_cache, at::Tensor& v_cache, const at::Tensor& k, const at::Tensor& v, const at::Tensor& write_at) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("lamer::kv_write_", "")
                             .typed<void(at::Tensor&, at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
  op.call(k_cache, v_cache, k, v, write_at);
}

double TimeDecodeAttention(at::Device device, at::ScalarType dtype, int64_t kv_heads, int64_t groups, int64_t head_dim, int64_t capacity,
                           const std::vector<int64_t>& lengths, int64_t iters) {
  if (lengths.empty() || iters < 1) Fail("E_ARG", "timeDecodeAttention: needs rows and iters >= 1");
  int64_t longest = 0;
  for (const int64_t n : lengths) {
    if (n < 1 || n > capacity) Fail("E_ARG", "timeDecodeAttention: every length must be in [1, capacity]");
    longest = std::max(longest, n);
  }
  at::NoGradGuard no_grad;
  const int64_t B = static_cast<int64_t>(lengths.size());
  const auto opts = at::TensorOptions().dtype(dtype).device(device);
  const at::Tensor q = at::randn({B, kv_heads, groups, head_dim}, opts);
  const at::Tensor kc = at::randn({B, kv_heads, capacity, head_dim}, opts), vc = at::randn({B, kv_heads, capacity, head_dim}, opts);
  std::vector<int64_t> last(lengths.begin(), lengths.end());
  for (auto& n : last) n -= 1;
  const at::Tensor write_at = at::tensor(last, at::TensorOptions().dtype(at::kLong)).to(device);
  int64_t width = 1;
  while (width < longest) width *= 2;
  width = std::min(width, capacity);
  const at::Tensor allowed = (at::arange(0, width, write_at.options()).view({1, width}) <= write_at.view({B, 1})).view({B, 1, 1, width});
  const std::vector<at::Tensor> live = DecodeAttentionInputs(write_at, kv_heads, groups, capacity);
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  const auto sync = [&] {
#ifdef LAMER_WITH_CUDA
    if (device.is_cuda()) c10::cuda::device_synchronize();
#endif
  };
  DecodeAttention(q, kc, vc, allowed, width, scale, live);
  sync();
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i) DecodeAttention(q, kc, vc, allowed, width, scale, live);
  sync();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / static_cast<double>(iters);
}

FusedOpGaps MeasureFusedOpGaps(at::Device device, at::ScalarType dtype, uint64_t seed) {
  at::NoGradGuard no_grad;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const auto rand = [&](at::IntArrayRef shape) { return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)).to(device, dtype); };
  const auto gap = [](const at::Tensor& a, const at::Tensor& b) {
    return (a.to(at::kFloat) - b.to(at::kFloat)).abs().max().item<double>();
  };
  FusedOpGaps g;
  // A view of a wider buffer, as the decoder passes its q|k part of the q/k/v projection.
  const at::Tensor buffer = rand({2, 3, 7, 8});
  for (const bool per_head : {false, true}) {
    const at::Tensor cos = rand({2, 3, per_head ? 5 : 1, 8}), sin = rand({2, 3, per_head ? 5 : 1, 8});
    const at::Tensor x = buffer.narrow(2, 0, 5);
    g.rotary = std::max(g.rotary, gap(Rotary(x, cos, sin), RotaryReference(x, cos, sin)));
  }
  const at::Tensor gu = rand({2, 3, 12});
  g.swiglu = gap(SwiGlu(gu), SwiGluReference(gu));
  const at::Tensor k = rand({2, 3, 4, 8}).narrow(2, 0, 2), v = rand({2, 3, 4, 8}).narrow(2, 2, 2);
  const at::Tensor write_at = at::tensor({1, 4}, at::TensorOptions().dtype(at::kLong)).to(device);
  at::Tensor kc = rand({2, 2, 9, 8}), vc = rand({2, 2, 9, 8});
  at::Tensor kr = kc.clone(), vr = vc.clone();
  KvWrite_(kc, vc, k, v, write_at);
  KvWriteReference(kr, vr, k, v, write_at);
  g.kv_write = std::max(gap(kc, kr), gap(vc, vr));
  // Decode attention over rows of different lengths (one of them the full width), against a softmax over each row's
  // own columns computed in float64.
  {
    const int64_t B = 3, Hk = 2, G = 3, D = 16, capacity = 40, width = 32;
    const at::Tensor q = rand({B, Hk, G, D}), kc2 = rand({B, Hk, capacity, D}), vc2 = rand({B, Hk, capacity, D});
    const at::Tensor write_at2 = at::tensor({5, 31, 0}, at::TensorOptions().dtype(at::kLong)).to(device);
    const double scale = 1.0 / std::sqrt(static_cast<double>(D));
    const at::Tensor allowed =
        (at::arange(0, width, write_at2.options()).view({1, width}) <= write_at2.view({B, 1})).view({B, 1, 1, width});
    const at::Tensor got = DecodeAttention(q, kc2, vc2, allowed, width, scale, DecodeAttentionInputs(write_at2, Hk, G, capacity));
    const std::vector<int64_t> lengths = {6, 32, 1};
    for (int64_t b = 0; b < B; ++b) {
      const at::Tensor qb = q[b].to(at::kDouble), kb = kc2[b].narrow(1, 0, lengths[b]).to(at::kDouble),
                       vb = vc2[b].narrow(1, 0, lengths[b]).to(at::kDouble);
      const at::Tensor want = at::matmul(at::softmax(at::matmul(qb, kb.transpose(1, 2)) * scale, -1), vb);
      g.decode_attention = std::max(g.decode_attention, gap(got[b], want));
    }
  }
  return g;
}

std::vector<std::pair<std::string, at::Tensor>> RunFusedOps(at::Device device, at::ScalarType dtype, uint64_t seed) {
  at::NoGradGuard no_grad;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const auto rand = [&](at::IntArrayRef shape) { return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)).to(device, dtype); };
  const auto long_opts = at::TensorOptions().dtype(at::kLong);
  std::vector<std::pair<std::string, at::Tensor>> out;
  // A copy (never an alias: the caches are written in place after they are kept), float64 on the CPU.
  const auto keep = [&](const std::string& name, const at::Tensor& t) {
    out.emplace_back(name, t.to(at::kCPU, at::kDouble, /*non_blocking=*/false, /*copy=*/true).contiguous());
  };
  // Rotary on a view of a wider buffer (the decoder passes the q|k part of its q/k/v projection), with cos and sin
  // shared by the heads and per head.
  const at::Tensor x = rand({2, 3, 7, 8}).narrow(2, 0, 5);
  keep("rotary.x", x);
  for (const bool per_head : {false, true}) {
    const std::string p = per_head ? "rotary.perHead." : "rotary.shared.";
    const at::Tensor cos = rand({2, 3, per_head ? 5 : 1, 8}), sin = rand({2, 3, per_head ? 5 : 1, 8});
    keep(p + "cos", cos);
    keep(p + "sin", sin);
    keep(p + "out", Rotary(x, cos, sin));
  }
  const at::Tensor gate_up = rand({2, 3, 12});
  keep("swiglu.gateUp", gate_up);
  keep("swiglu.out", SwiGlu(gate_up));
  // kv_write_ of k and v (views of wider tensors) into caches [2, 2, 9, 8] at columns 1.. and 4.. of the two rows.
  const at::Tensor k = rand({2, 3, 4, 8}).narrow(2, 0, 2), v = rand({2, 3, 4, 8}).narrow(2, 2, 2);
  const at::Tensor write_at = at::tensor({1, 4}, long_opts).to(device);
  at::Tensor k_cache = rand({2, 2, 9, 8}), v_cache = rand({2, 2, 9, 8});
  keep("kvWrite.k", k);
  keep("kvWrite.v", v);
  keep("kvWrite.writeAt", write_at);
  keep("kvWrite.kCache", k_cache);
  keep("kvWrite.vCache", v_cache);
  KvWrite_(k_cache, v_cache, k, v, write_at);
  keep("kvWrite.kCacheAfter", k_cache);
  keep("kvWrite.vCacheAfter", v_cache);
  // Decode attention over rows writing at columns 5, 31 (the last of the width) and 0 of caches of 40 columns.
  const int64_t B = 3, Hk = 2, G = 3, D = 16, capacity = 40, width = 32;
  const at::Tensor q = rand({B, Hk, G, D}), kc = rand({B, Hk, capacity, D}), vc = rand({B, Hk, capacity, D});
  const at::Tensor at_column = at::tensor({5, 31, 0}, long_opts).to(device);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  const at::Tensor allowed = (at::arange(0, width, at_column.options()).view({1, width}) <= at_column.view({B, 1})).view({B, 1, 1, width});
  keep("decodeAttention.q", q);
  keep("decodeAttention.kCache", kc);
  keep("decodeAttention.vCache", vc);
  keep("decodeAttention.writeAt", at_column);
  keep("decodeAttention.scale", at::scalar_tensor(scale, at::TensorOptions().dtype(at::kDouble)));
  keep("decodeAttention.out", DecodeAttention(q, kc, vc, allowed, width, scale, DecodeAttentionInputs(at_column, Hk, G, capacity)));
  return out;
}

}  // namespace lamer::model
