// N-API binding of the advantage kernel: reads the row columns and output arrays in place and runs the CPU kernel
// synchronously on the JS thread. Synchronous on purpose: the work is O(rows) arithmetic (a rollout of a few thousand
// rows takes well under a millisecond, a million rows tens of milliseconds), far less than copying the columns out of
// the JS heap and scheduling a worker would cost. The typed arrays are only lent for the duration of the call; no
// pointer is kept after it returns.
#include <napi.h>

#include <limits>

#include <string>
#include <vector>

#include "algo/advantages.h"
#include "algo/gae.h"
#include "algo/kernels/advantages_cuda.h"
#include "bridge/args.h"
#include "bridge/errors.h"
#include "bridge/registry.h"

namespace {

using lamer::Fail;
using lamer::algo::AdvantageOutputs;
using lamer::algo::AdvantageParams;
using lamer::algo::RowView;

// The data of `obj[name]`, which must be a typed array of T with `rows` elements (or sets `rows` when it is -1).
template <typename T>
T* Column(const Napi::Object& obj, const char* name, int64_t& rows) {
  Napi::Value v = obj.Get(name);
  if (!lamer::args::IsTypedArrayOf<T>(v)) {
    Fail("E_ROWS", std::string("row table: column '") + name + "' must be a " + lamer::args::TypedArrayKind<T>::name);
  }
  Napi::TypedArrayOf<T> typed = v.As<Napi::TypedArrayOf<T>>();
  const int64_t length = static_cast<int64_t>(typed.ElementLength());
  if (rows < 0) {
    rows = length;
  } else if (length != rows) {
    Fail("E_ROWS", std::string("row table: column '") + name + "' has " + std::to_string(length) + " rows but column 'group' has " +
                       std::to_string(rows) + "; all columns must have the same length");
  }
  return typed.Data();
}

// columns: { group, trial, episode, turn, phase, reward, valid, stepKey }, params: { estimator: 'gigpo' | 'grpo',
// returns: 'recursive' | 'paper', gammaStep, gammaTraj, invalidPenalty, divideByStd, omega, eps } (the ranges of
// src/algo/options.ts's schema),
// out: { episodeReward, stepReturn, advantage } (Float32Array, one per row, written in place).
void ReadArgs(const Napi::CallbackInfo& info, RowView& rows, AdvantageParams& params, AdvantageOutputs& out) {
  if (info.Length() < 3 || !info[0].IsObject() || !info[1].IsObject() || !info[2].IsObject()) {
    Fail("E_ARG", "computeAdvantages(columns, params, outputs): three objects expected");
  }
  Napi::Object columns = info[0].As<Napi::Object>();
  const lamer::args::Fields p(info[1].As<Napi::Object>(), "advantage option", "E_ROWS", " ");
  Napi::Object o = info[2].As<Napi::Object>();
  int64_t n = -1;
  rows.group = Column<int32_t>(columns, "group", n);
  rows.trial = Column<int32_t>(columns, "trial", n);
  rows.episode = Column<int32_t>(columns, "episode", n);
  rows.turn = Column<int32_t>(columns, "turn", n);
  rows.phase = Column<uint8_t>(columns, "phase", n);
  rows.reward = Column<float>(columns, "reward", n);
  rows.valid = Column<uint8_t>(columns, "valid", n);
  rows.step_key = Column<int32_t>(columns, "stepKey", n);
  rows.rows = n;
  out.episode_reward = Column<float>(o, "episodeReward", n);
  out.step_return = Column<float>(o, "stepReturn", n);
  out.advantage = Column<float>(o, "advantage", n);

  using Bound = lamer::args::Fields::Bound;
  using lamer::algo::Estimator;
  using lamer::algo::ReturnsFormula;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  params.estimator = p.Choice<Estimator>("estimator", {{"gigpo", Estimator::kGiGPO}, {"grpo", Estimator::kGRPO}});
  params.returns = p.Choice<ReturnsFormula>("returns", {{"recursive", ReturnsFormula::kRecursive}, {"paper", ReturnsFormula::kPaper}});
  params.gamma_step = p.NumberIn("gammaStep", 0, Bound::kClosed, 1, Bound::kClosed);
  params.gamma_traj = p.NumberIn("gammaTraj", 0, Bound::kClosed, 1, Bound::kClosed);
  params.invalid_penalty = p.NumberIn("invalidPenalty", 0, Bound::kClosed, kInf, Bound::kOpen);
  params.divide_by_std = p.Bool("divideByStd");
  params.omega = p.Number("omega");
  params.eps = p.NumberIn("eps", 0, Bound::kOpen, kInf, Bound::kOpen);
}

// Rows errors carry code E_ROWS; anything else goes through the bridge's classification.
template <typename Fn>
Napi::Value RowsGuarded(Napi::Env env, Fn&& fn) {
  return lamer::Guarded(env, [&]() -> Napi::Value {
    try {
      fn();
    } catch (const lamer::algo::RowsError& e) {
      Fail("E_ROWS", e.what());
    }
    return env.Undefined();
  });
}

Napi::Value ComputeAdvantages(const Napi::CallbackInfo& info) {
  return RowsGuarded(info.Env(), [&] {
    RowView rows;
    AdvantageParams params;
    AdvantageOutputs out;
    ReadArgs(info, rows, params, out);
    lamer::algo::compute_advantages(rows, params, out);
  });
}

// computeGae(lengths: Int32Array, rowReward: Float32Array, values: Float32Array, {gamma, lambda, whiten},
// {advantage, returns}: Float32Array written in place). The kernel the native trainer runs for PPO, exported so that
// tests compare it with src/algo/gae.ts.
Napi::Value ComputeGae(const Napi::CallbackInfo& info) {
  return lamer::Guarded(info.Env(), [&]() -> Napi::Value {
    if (info.Length() < 5 || !info[0].IsObject() || !info[3].IsObject() || !info[4].IsObject()) {
      Fail("E_ARG", "computeGae(lengths, rowReward, values, params, outputs): five arguments expected");
    }
    auto typed = [&](size_t i, const char* what) {
      if (!lamer::args::IsTypedArrayOf<float>(info[i])) Fail("E_ROWS", std::string("computeGae: '") + what + "' must be a Float32Array");
      return info[i].As<Napi::Float32Array>();
    };
    if (!lamer::args::IsTypedArrayOf<int32_t>(info[0])) Fail("E_ROWS", "computeGae: 'lengths' must be an Int32Array");
    const Napi::Int32Array lengths = info[0].As<Napi::Int32Array>();
    const Napi::Float32Array reward = typed(1, "rowReward");
    const Napi::Float32Array values = typed(2, "values");
    const lamer::args::Fields p(info[3].As<Napi::Object>(), "computeGae", "E_ROWS");
    const Napi::Object out = info[4].As<Napi::Object>();
    const int64_t rows = static_cast<int64_t>(lengths.ElementLength());
    if (static_cast<int64_t>(reward.ElementLength()) != rows) Fail("E_ROWS", "computeGae: 'rowReward' must have one value per row");
    std::vector<int64_t> lens(rows);
    int64_t total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const int32_t len = lengths[static_cast<size_t>(r)];
      if (len < 0) Fail("E_ROWS", "computeGae: row " + std::to_string(r) + " has a negative length");
      lens[r] = len;
      total += lens[r];
    }
    auto output = [&](const char* name) {
      const Napi::Value v = out.Get(name);
      if (!lamer::args::IsTypedArrayOf<float>(v) || static_cast<int64_t>(v.As<Napi::Float32Array>().ElementLength()) != total) {
        Fail("E_ROWS", std::string("computeGae: output '") + name + "' must be a Float32Array with one value per response token (" +
                           std::to_string(total) + ")");
      }
      return v.As<Napi::Float32Array>().Data();
    };
    float* advantage = output("advantage");
    float* returns = output("returns");
    if (static_cast<int64_t>(values.ElementLength()) != total)
      Fail("E_ROWS", "computeGae: 'values' must have one value per response token");
    lamer::algo::GaeParams params;
    params.gamma = p.Number("gamma");
    params.lambda = p.Number("lambda");
    params.whiten = p.Bool("whiten", true);
    if (params.gamma < 0 || params.gamma > 1 || params.lambda < 0 || params.lambda > 1)
      Fail("E_ROWS", "computeGae: gamma and lambda must be in [0, 1]");
    lamer::algo::compute_gae(rows, lens.data(), reward.Data(), values.Data(), params, advantage, returns);
    return info.Env().Undefined();
  });
}

#ifdef LAMER_WITH_CUDA_KERNELS
// The same computation on the GPU (kernels/advantages.cu), from and to host arrays: validates on the host, copies
// the columns to the device, runs, copies back. For checking the CUDA kernel against the CPU one.
Napi::Value ComputeAdvantagesCuda(const Napi::CallbackInfo& info) {
  return RowsGuarded(info.Env(), [&] {
    RowView rows;
    AdvantageParams params;
    AdvantageOutputs out;
    ReadArgs(info, rows, params, out);
    lamer::algo::validate_rows(rows);
    const std::string error = lamer::algo::cuda::compute_advantages_from_host(rows, params, out);
    if (!error.empty()) Fail("E_NATIVE", "CUDA advantage kernel: " + error);
  });
}
#endif

void RegisterAlgo(Napi::Env env, Napi::Object exports) {
  exports.Set("computeAdvantages", Napi::Function::New(env, ComputeAdvantages, "computeAdvantages"));
  exports.Set("computeGae", Napi::Function::New(env, ComputeGae, "computeGae"));
#ifdef LAMER_WITH_CUDA_KERNELS
  exports.Set("computeAdvantagesCuda", Napi::Function::New(env, ComputeAdvantagesCuda, "computeAdvantagesCuda"));
#endif
}

}  // namespace

LAMER_REGISTER(algo, RegisterAlgo, 100)
