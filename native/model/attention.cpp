#include "model/attention.h"

#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

namespace lamer::model {

namespace {

// sdpa's backend numbers (at::SDPBackend, torch.nn.attention.SDPBackend); as numbers, so this compiles against every
// torch 2.11 to 2.14 whatever header declares the enum.
constexpr int64_t kMath = 0, kFlash = 1, kEfficient = 2, kCudnn = 3, kOverrideable = 4;

std::optional<at::Tensor> Mask(const at::Tensor& allowed) { return allowed.defined() ? std::optional<at::Tensor>(allowed) : std::nullopt; }

// [B, Hk, S, D] -> [B, Hk * groups, S, D], key/value head h repeated for query heads h * groups ... (h + 1) * groups - 1,
// which is how sdpa's enable_gqa pairs them.
at::Tensor Repeat(const at::Tensor& x, int64_t groups) {
  const int64_t B = x.size(0), H = x.size(1), S = x.size(2), D = x.size(3);
  return x.unsqueeze(2).expand({B, H, groups, S, D}).reshape({B, H * groups, S, D});
}

struct Plan {
  KvHeads heads;
  int64_t backend;
};

// One decision per kind of call (a few, made once each): device, dtype, head size, groups, masked or causal, with gradients or not.
using PlanKey = std::tuple<int, int, int, int64_t, int64_t, bool, bool>;

Plan Choose(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed, bool causal, double scale,
            int64_t groups) {
  const bool grad = at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
  const PlanKey key{static_cast<int>(q.device().type()),
                    q.device().index(),
                    static_cast<int>(q.scalar_type()),
                    q.size(-1),
                    groups,
                    allowed.defined(),
                    grad};
  static std::mutex mu;
  static std::map<PlanKey, Plan> plans;
  {
    const std::lock_guard<std::mutex> lock(mu);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
  }
  const int64_t math = kMath;
  const int64_t shared = at::_fused_sdp_choice(q, k, v, Mask(allowed), 0.0, causal, scale, /*enable_gqa=*/true);
  Plan plan{KvHeads::kShared, shared};
  // On CUDA only: elsewhere the shared heads are what every earlier build ran (the CPU's flash kernel takes them).
  if (shared == math && q.device().is_cuda()) {
    // The repeated layout, asked on the same call (one copy of the keys/values, once per kind of call).
    const int64_t expanded = at::_fused_sdp_choice(q, Repeat(k, groups), Repeat(v, groups), Mask(allowed), 0.0, causal, scale, false);
    if (expanded != math) plan = {KvHeads::kExpanded, expanded};
  }
  const std::lock_guard<std::mutex> lock(mu);
  const bool fresh = plans.emplace(key, plan).second;
  if (fresh && q.device().is_cuda()) {
    std::fprintf(stderr, "[lamer] attention on %s (%s, %lld query heads per key/value head, head size %lld, %s, %s): %s%s\n",
                 q.device().str().c_str(), std::string(c10::toString(q.scalar_type())).c_str(), static_cast<long long>(groups),
                 static_cast<long long>(q.size(-1)), allowed.defined() ? "masked" : "causal", grad ? "with gradients" : "no gradients",
                 SdpBackendName(plan.backend).c_str(),
                 plan.heads == KvHeads::kExpanded ? " with keys/values repeated to the query heads (shared heads would run math)" : "");
  }
  return plan;
}

}  // namespace

std::string SdpBackendName(int64_t backend) {
  switch (backend) {
    case kMath:
      return "math";
    case kFlash:
      return "flash_attention";
    case kEfficient:
      return "efficient_attention";
    case kCudnn:
      return "cudnn_attention";
    case kOverrideable:
      return "overrideable";
    default:
      return "none (" + std::to_string(backend) + ")";
  }
}

at::Tensor SequenceAttentionWith(KvHeads heads, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed,
                                 bool causal, double scale, int64_t groups) {
  if (heads == KvHeads::kExpanded && groups > 1)
    return at::scaled_dot_product_attention(q, Repeat(k, groups), Repeat(v, groups), Mask(allowed), 0.0, causal, scale, false);
  return at::scaled_dot_product_attention(q, k, v, Mask(allowed), 0.0, causal, scale, /*enable_gqa=*/groups > 1);
}

at::Tensor SequenceAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed, bool causal,
                             double scale, int64_t groups) {
  if (groups <= 1) return SequenceAttentionWith(KvHeads::kShared, q, k, v, allowed, causal, scale, groups);
  return SequenceAttentionWith(Choose(q, k, v, allowed, causal, scale, groups).heads, q, k, v, allowed, causal, scale, groups);
}

AttentionCheck CheckSequenceAttention(at::Device device, at::ScalarType dtype, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const auto rand = [&](at::IntArrayRef shape) {
    return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)).to(device, dtype).requires_grad_(true);
  };
  const auto gap = [](const at::Tensor& a, const at::Tensor& b) {
    return (a.to(at::kFloat) - b.to(at::kFloat)).abs().max().item<double>();
  };
  AttentionCheck out;
  for (const int64_t groups : {2, 4}) {
    for (const bool causal : {false, true}) {
      const int64_t B = 3, Hk = 2, T = 13, D = 16, Hq = Hk * groups;
      const at::Tensor q = rand({B, Hq, T, D}), k = rand({B, Hk, T, D}), v = rand({B, Hk, T, D});
      at::Tensor allowed;
      if (!causal) {
        // Left padding of 0, 4 and 9 tokens; a padded query sees itself (as the decoder's mask does).
        const auto longs = at::TensorOptions().dtype(at::kLong).device(device);
        const at::Tensor index = at::arange(0, T, longs);
        const at::Tensor real = index.view({1, T}) >= at::tensor({0, 4, 9}, longs).view({B, 1});
        allowed = ((index.view({T, 1}) >= index.view({1, T})).view({1, 1, T, T}) & real.view({B, 1, 1, T})) |
                  (index.view({T, 1}) == index.view({1, T})).view({1, 1, T, T});
      }
      const double scale = 1.0 / std::sqrt(static_cast<double>(D));
      const at::Tensor weight = at::randn({B, Hq, T, D}, gen, at::TensorOptions().dtype(at::kFloat)).to(device, dtype);
      std::vector<at::Tensor> results[2];
      for (const KvHeads heads : {KvHeads::kShared, KvHeads::kExpanded}) {
        const at::Tensor o = SequenceAttentionWith(heads, q, k, v, allowed, causal, scale, groups);
        const auto grads = torch::autograd::grad({(o * weight).sum()}, {q, k, v});
        auto& r = results[heads == KvHeads::kShared ? 0 : 1];
        r = {o.detach(), grads[0], grads[1], grads[2]};
      }
      for (size_t j = 0; j < 4; ++j) out.gap = std::max(out.gap, gap(results[0][j], results[1][j]));
      const Plan plan = Choose(q, k, v, allowed, causal, scale, groups);
      (causal ? out.causal_heads : out.masked_heads) = plan.heads == KvHeads::kExpanded ? "expanded" : "shared";
      (causal ? out.causal_backend : out.masked_backend) = SdpBackendName(plan.backend);
    }
  }
  return out;
}

}  // namespace lamer::model
