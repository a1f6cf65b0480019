// Standalone check of the CUDA advantage kernel against the CPU kernel, for machines with a GPU (no torch, no node):
//   nvcc -std=c++17 -O2 -o /tmp/adv_check test/native/algo/cuda_kernel_check.cu native/algo/kernels/advantages.cu \
//        native/algo/advantages.cpp && /tmp/adv_check
// Random tables like test/native/algo/random-tables.ts (groups of random size, 1..3 episodes, reflect rows, anchors
// repeated across trials and groups, extreme rewards), every option combination; exits 1 on any gap above 1e-5.
// (The addon's own test, "CUDA kernel == CPU kernel" in native.test.ts, covers the same through N-API in CUDA builds.)
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "../../../native/algo/advantages.h"
#include "../../../native/algo/kernels/advantages_cuda.h"

using namespace lamer::algo;

struct Table {
  std::vector<int32_t> group, trial, episode, turn, key;
  std::vector<uint8_t> phase, valid;
  std::vector<float> reward;
  RowView view() const {
    return RowView{static_cast<int64_t>(group.size()),
                   group.data(),
                   trial.data(),
                   episode.data(),
                   turn.data(),
                   phase.data(),
                   reward.data(),
                   valid.data(),
                   key.data()};
  }
};

Table random_table(std::mt19937& rng, int groups) {
  auto u = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const float extremes[] = {0.f, -0.1f, 1.f, 10.f, 1e4f, -1e6f, 3.4e7f, 1e-7f};
  Table t;
  int trial_id = 0;
  for (int g = 0; g < groups; ++g) {
    const int size = u(4) == 0 ? 1 : 1 + u(8);
    for (int k = 0; k < size; ++k, ++trial_id) {
      const int episodes = 1 + u(3);
      for (int ep = 0; ep < episodes; ++ep) {
        auto push = [&](int turn, uint8_t phase, float reward, int32_t key) {
          t.group.push_back(g * 7919 - 3);
          t.trial.push_back(trial_id);
          t.episode.push_back(ep);
          t.turn.push_back(turn);
          t.phase.push_back(phase);
          t.reward.push_back(reward);
          t.valid.push_back(u(8) ? 1 : 0);
          t.key.push_back(key);
        };
        if (ep > 0 && u(5)) push(0, 1, 0.f, 0);  // key 0: the `reflection` anchor, shared by every group
        const int turns = 1 + u(5);
        for (int turn = 0; turn < turns; ++turn) {
          const float r = u(3) ? extremes[u(8)] : static_cast<float>(u(2000)) / 100.f - 10.f;
          push(turn, 0, r, turn == 0 ? 1 + g : (u(6) == 0 ? 100000 + u(3) : 1000 + g * 10 + u(6)));
        }
      }
    }
  }
  return t;
}

int main() {
  std::mt19937 rng(20251216);
  int failures = 0, tables = 0;
  double worst = 0;
  for (int k = 0; k < 3000; ++k) {
    const Table t = random_table(rng, 1 + static_cast<int>(rng() % 6));
    for (int combo = 0; combo < 8; ++combo) {
      AdvantageParams p;
      p.estimator = combo & 1 ? Estimator::kGRPO : Estimator::kGiGPO;
      p.returns = combo & 2 ? ReturnsFormula::kPaper : ReturnsFormula::kRecursive;
      p.divide_by_std = (combo & 4) != 0;
      p.gamma_step = 0.95;
      p.gamma_traj = combo & 2 ? 0.6 : 0.9;
      p.invalid_penalty = 0.5;
      p.omega = 1.0;
      p.eps = 1e-6;
      const size_t n = t.group.size();
      std::vector<float> cpu[3], gpu[3];
      for (int j = 0; j < 3; ++j) cpu[j].assign(n, 0.f), gpu[j].assign(n, -1.f);
      compute_advantages(t.view(), p, {cpu[0].data(), cpu[1].data(), cpu[2].data()});
      const std::string err = cuda::compute_advantages_from_host(t.view(), p, {gpu[0].data(), gpu[1].data(), gpu[2].data()});
      if (!err.empty()) {
        std::printf("CUDA error: %s\n", err.c_str());
        return 1;
      }
      for (int j = 0; j < 3; ++j) {
        for (size_t i = 0; i < n; ++i) {
          const double gap = std::fabs(gpu[j][i] - cpu[j][i]) / std::fmax(1.0, std::fabs(cpu[j][i]));
          if (!(gap <= 1e-5)) {
            if (failures++ < 10)
              std::printf("table %d combo %d output %d row %zu: gpu %.9g cpu %.9g\n", k, combo, j, i, gpu[j][i], cpu[j][i]);
          }
          if (gap > worst) worst = gap;
        }
      }
      ++tables;
    }
  }
  std::printf("%d table/option runs, worst relative gap %.3g, %d mismatches\n", tables, worst, failures);
  return failures == 0 ? 0 : 1;
}
