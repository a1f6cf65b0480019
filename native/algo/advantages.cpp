// CPU kernel of returns and advantages. It repeats the TS reference's arithmetic in the same order (sums in row
// order, the same recursions, double precision throughout), so the property tests can hold the two to 1e-5 even for
// extreme rewards, where std + eps amplifies rounding differences.
#include "advantages.h"

#include <cmath>
#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

// Fused multiply-add would round differently from the JS reference (which never fuses): keep every product and sum
// separately rounded.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace lamer::algo {
namespace {

// Maps 64-bit keys to dense slot ids (0, 1, 2, ... in order of first appearance). Open addressing with linear
// probing; the table doubles at half load, so a lookup touches about one cache line.
class SlotMap {
 public:
  SlotMap() { resize(64); }

  // The slot of `key`, creating it when new.
  int32_t slot(uint64_t key) {
    size_t i = bucket(key);
    while (true) {
      const int32_t stored = slots_[i];
      if (stored == 0) break;
      if (keys_[i] == key) return stored - 1;
      i = (i + 1) & mask_;
    }
    const int32_t id = static_cast<int32_t>(size_);
    keys_[i] = key;
    slots_[i] = id + 1;
    if (++size_ * 2 > slots_.size()) resize(slots_.size() * 2);
    return id;
  }

  bool contains(uint64_t key) const {
    for (size_t i = bucket(key); slots_[i] != 0; i = (i + 1) & mask_) {
      if (keys_[i] == key) return true;
    }
    return false;
  }

  size_t size() const { return size_; }

 private:
  size_t bucket(uint64_t key) const {
    key ^= key >> 29;  // fold the group half into the low bits before the multiplicative hash
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void resize(size_t capacity) {
    std::vector<uint64_t> old_keys = std::move(keys_);
    std::vector<int32_t> old_slots = std::move(slots_);
    keys_.assign(capacity, 0);
    slots_.assign(capacity, 0);  // 0 = empty, else slot id + 1
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    for (size_t j = 0; j < old_slots.size(); ++j) {
      if (old_slots[j] == 0) continue;
      size_t i = bucket(old_keys[j]);
      while (slots_[i] != 0) i = (i + 1) & mask_;
      keys_[i] = old_keys[j];
      slots_[i] = old_slots[j];
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<int32_t> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
};

inline uint64_t pair_key(int32_t high, int32_t low) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(high)) << 32) | static_cast<uint32_t>(low);
}

[[noreturn]] void fail(const std::string& message) { throw RowsError("row table: " + message); }

std::string num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void check_pointers(const RowView& r) {
  if (r.rows < 0) fail("negative row count");
  if (r.rows > INT32_MAX) fail("more than 2^31-1 rows");
  if (r.rows == 0) return;
  const std::pair<const void*, const char*> columns[] = {{r.group, "group"}, {r.trial, "trial"},      {r.episode, "episode"},
                                                         {r.turn, "turn"},   {r.phase, "phase"},      {r.reward, "reward"},
                                                         {r.valid, "valid"}, {r.step_key, "anchorId"}};
  for (const auto& [ptr, name] : columns) {
    if (ptr == nullptr) fail(std::string("column '") + name + "' is missing");
  }
}

// Per-group mean and divisor, accumulated in row order like the reference.
struct GroupStats {
  std::vector<double> sum;
  std::vector<double> squares;
  std::vector<int64_t> count;
  std::vector<double> mean;
  std::vector<double> scale_den;  // std + eps (or 1 when not dividing)

  // assign() keeps the capacity, so a reused workspace does not touch fresh pages.
  void reset(size_t groups) {
    sum.assign(groups, 0.0);
    squares.assign(groups, 0.0);
    count.assign(groups, 0);
    mean.assign(groups, 0.0);
    scale_den.assign(groups, 1.0);
  }
};

}  // namespace

void validate_rows(const RowView& r) {
  check_pointers(r);
  const int64_t n = r.rows;
  SlotMap finished_trials;
  int32_t prev_play_episode = -1;
  int32_t prev_play_turn = -1;
  bool reflect_since_play = false;
  for (int64_t i = 0; i < n; ++i) {
    // The row's label is only built on failure: formatting it per row would dominate the pass.
    const auto row = [i] { return std::to_string(i); };
    const uint8_t ph = r.phase[i];
    if (ph > 1) fail("column 'phase' row " + row() + ": expected 0 (play) or 1 (reflect), found " + std::to_string(ph));
    if (r.valid[i] > 1) fail("column 'valid' row " + row() + ": expected 0 or 1, found " + std::to_string(r.valid[i]));
    const float rw = r.reward[i];
    if (!std::isfinite(rw)) fail("column 'reward' row " + row() + ": rewards must be finite, found " + num(rw));
    if (ph == 1 && rw != 0.0f) fail("column 'reward' row " + row() + ": reflect rows carry reward 0, found " + num(rw));
    const int32_t ep = r.episode[i];
    if (ep < 0) fail("column 'episode' row " + row() + ": episode indices start at 0, found " + std::to_string(ep));

    const bool new_trial = i == 0 || r.group[i] != r.group[i - 1] || r.trial[i] != r.trial[i - 1];
    if (new_trial) {
      if (i > 0) finished_trials.slot(pair_key(r.group[i - 1], r.trial[i - 1]));
      if (finished_trials.contains(pair_key(r.group[i], r.trial[i]))) {
        fail("column 'trial' row " + row() + ": rows of trial " + std::to_string(r.trial[i]) + " (group " + std::to_string(r.group[i]) +
             ") are not contiguous; store each trial's rows together in chronological order");
      }
      prev_play_episode = -1;
      prev_play_turn = -1;
      reflect_since_play = false;
    } else if (ep < r.episode[i - 1]) {
      fail("column 'episode' row " + row() + ": episode goes backwards inside trial " + std::to_string(r.trial[i]) + " (" +
           std::to_string(r.episode[i - 1]) + " then " + std::to_string(ep) + "); rows of a trial must be chronological");
    }
    if (ph == 1) {
      reflect_since_play = true;
      continue;
    }
    if (ep == prev_play_episode) {
      if (reflect_since_play) {
        fail("column 'phase' row " + row() + ": a reflect row sits inside episode " + std::to_string(ep) + " of trial " +
             std::to_string(r.trial[i]) + "; reflections come between episodes");
      }
      if (r.turn[i] <= prev_play_turn) {
        fail("column 'turn' row " + row() + ": turn " + std::to_string(r.turn[i]) + " does not follow turn " +
             std::to_string(prev_play_turn) + " in episode " + std::to_string(ep) + " of trial " + std::to_string(r.trial[i]) +
             "; rows of a trial must be chronological");
      }
    }
    prev_play_episode = ep;
    prev_play_turn = r.turn[i];
    reflect_since_play = false;
  }
}

namespace {

inline bool same_trial(const RowView& r, int64_t a, int64_t b) { return r.group[a] == r.group[b] && r.trial[a] == r.trial[b]; }

// Undiscounted reward of each play row's episode (0 on reflect rows) into `out`, and the episode-level score
// (episode reward - penalty * (1 - valid)) into `score`. Validation guarantees that an episode's play rows form one run
// of consecutive rows, so each run is summed in row order and written back.
void episode_rewards(const RowView& r, double invalid_penalty, float* out, double* score) {
  const int64_t n = r.rows;
  int64_t run_start = -1;
  double run_sum = 0.0;
  auto close_run = [&](int64_t end) {
    for (int64_t j = run_start; j < end; ++j) {
      out[j] = static_cast<float>(run_sum);
      score[j] = run_sum - invalid_penalty * static_cast<double>(1 - r.valid[j]);
    }
    run_start = -1;
  };
  for (int64_t i = 0; i < n; ++i) {
    if (r.phase[i] != 0) {
      if (run_start >= 0) close_run(i);
      out[i] = 0.0f;
      score[i] = 0.0 - invalid_penalty * static_cast<double>(1 - r.valid[i]);
      continue;
    }
    if (run_start >= 0 && !(same_trial(r, i, run_start) && r.episode[i] == r.episode[run_start])) close_run(i);
    if (run_start < 0) {
      run_start = i;
      run_sum = 0.0;
    }
    run_sum += static_cast<double>(r.reward[i]);
  }
  if (run_start >= 0) close_run(n);
}

// G per row in one backward pass over all rows, restarting at each trial boundary.
void step_returns(const RowView& r, const AdvantageParams& p, double* out) {
  const int64_t n = r.rows;
  const double gs = p.gamma_step;
  const double gt = p.gamma_traj;
  if (p.returns == ReturnsFormula::kRecursive) {
    // SPEC §3 recursion: gamma_traj links the last turn of an episode to G_0 of the next.
    double running = 0.0;
    int32_t cur = 0;
    for (int64_t t = n - 1; t >= 0; --t) {
      if (t == n - 1 || !same_trial(r, t, t + 1)) {
        running = 0.0;
        cur = r.episode[t];
      }
      if (r.phase[t] == 0) {
        running = static_cast<double>(r.reward[t]) + (r.episode[t] == cur ? gs : gt) * running;
        cur = r.episode[t];
      }
      out[t] = running;  // a reflect row keeps G_0 of the episode after it
    }
    return;
  }
  // Paper: G_t(n) = g_t(n) + tail(n), tail(n) = gamma_traj * (g_0(n+1) + tail(n+1)) (the sum over later episodes in
  // Horner form); `within` is g of the last play row visited, i.e. g_0 of the following episode at a boundary.
  double within = 0.0;
  double tail = 0.0;
  bool seen_play = false;
  int32_t cur = 0;
  for (int64_t t = n - 1; t >= 0; --t) {
    if (t == n - 1 || !same_trial(r, t, t + 1)) {
      within = 0.0;
      tail = 0.0;
      seen_play = false;
    }
    if (r.phase[t] != 0) {
      out[t] = seen_play ? within + tail : 0.0;
      continue;
    }
    if (seen_play && r.episode[t] != cur) {
      tail = gt * (within + tail);
      within = 0.0;
    }
    within = static_cast<double>(r.reward[t]) + gs * within;
    out[t] = within + tail;
    cur = r.episode[t];
    seen_play = true;
  }
}

// Assigns rows to groups and computes each group's mean and (std + eps) divisor; two passes in row order, the same
// summation order as the reference.
void group_statistics(int64_t n, const int32_t* slot, size_t groups, const double* value, bool divide, double eps, GroupStats& s) {
  s.reset(groups);
  for (int64_t i = 0; i < n; ++i) {
    s.sum[slot[i]] += value[i];
    s.count[slot[i]] += 1;
  }
  for (size_t g = 0; g < groups; ++g) s.mean[g] = s.sum[g] / static_cast<double>(s.count[g]);
  if (!divide) return;
  for (int64_t i = 0; i < n; ++i) {
    const double d = value[i] - s.mean[slot[i]];
    s.squares[slot[i]] += d * d;
  }
  for (size_t g = 0; g < groups; ++g) {
    if (s.count[g] > 1) s.scale_den[g] = std::sqrt(s.squares[g] / static_cast<double>(s.count[g] - 1)) + eps;
  }
}


// Step-level slot of each row: one per distinct (group, step key). A hash lookup per row would be a cache miss per
// row once the table outgrows the cache (100k+ clusters). Interned anchor ids are dense and numbered in row order, so
// instead, when the keys are small non-negative integers, each key gets a direct-indexed entry that belongs to the
// first group using it (sequential, cache-friendly access); only keys shared by several groups (the `reflection`
// anchor, a start state that recurs across tasks) go through the hash map, which then stays small.
size_t assign_step_slots(const RowView& r, const int32_t* group_slot, int32_t* step_slot, std::vector<int32_t>& owner,
                         std::vector<int32_t>& direct) {
  const int64_t n = r.rows;
  int32_t lo = INT32_MAX, hi = INT32_MIN;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, r.step_key[i]);
    hi = std::max(hi, r.step_key[i]);
  }
  int32_t next = 0;
  SlotMap shared;
  std::vector<int32_t> shared_slot;  // SlotMap id -> step slot
  auto shared_lookup = [&](int32_t g, int32_t key) {
    const size_t id = static_cast<size_t>(shared.slot(pair_key(g, key)));
    if (id == shared_slot.size()) shared_slot.push_back(next++);
    return shared_slot[id];
  };
  if (n > 0 && lo >= 0 && static_cast<int64_t>(hi) <= 4 * n + 1024) {
    owner.assign(static_cast<size_t>(hi) + 1, -1);  // the group slot that owns each direct entry
    direct.resize(static_cast<size_t>(hi) + 1);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t key = r.step_key[i];
      const int32_t g = group_slot[i];
      if (owner[key] == g) {
        step_slot[i] = direct[key];
      } else if (owner[key] < 0) {  // direct[key] is only read once owned
        owner[key] = g;
        step_slot[i] = direct[key] = next++;
      } else {
        step_slot[i] = shared_lookup(g, key);
      }
    }
  } else {
    for (int64_t i = 0; i < n; ++i) step_slot[i] = shared_lookup(group_slot[i], r.step_key[i]);
  }
  return static_cast<size_t>(next);
}

// Scratch memory of one call, kept per thread and reused: fresh pages cost more than the whole computation (first-touch
// page faults of ~30 MB at a million rows), and a trainer calls this once per iteration with similar sizes.
constexpr int64_t kKeepWorkspaceRows = 4'000'000;

struct Workspace {
  std::vector<double> G, score;
  std::vector<int32_t> group_slot, step_slot, owner, direct;
  GroupStats episode_stats, step_stats;
};

}  // namespace

void compute_advantages(const RowView& r, const AdvantageParams& p, const AdvantageOutputs& out) {
  validate_rows(r);
  const int64_t n = r.rows;
  if (n == 0) return;
  if (out.episode_reward == nullptr || out.step_return == nullptr || out.advantage == nullptr) {
    throw std::invalid_argument("compute_advantages: an output pointer is null");
  }
  thread_local Workspace ws;
  ws.G.resize(n);
  ws.score.resize(n);
  ws.group_slot.resize(n);
  double* G = ws.G.data();
  double* score = ws.score.data();
  int32_t* group_slot = ws.group_slot.data();
  episode_rewards(r, p.invalid_penalty, out.episode_reward, score);
  step_returns(r, p, G);

  // Episode level: key = group. Rows of a group usually sit together, so the last lookup is cached.
  SlotMap groups;
  int32_t last_group = 0, last_slot = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (last_slot < 0 || r.group[i] != last_group) {
      last_group = r.group[i];
      last_slot = groups.slot(static_cast<uint32_t>(last_group));
    }
    group_slot[i] = last_slot;
  }
  GroupStats& episode_stats = ws.episode_stats;
  group_statistics(n, group_slot, groups.size(), score, p.divide_by_std, p.eps, episode_stats);

  GroupStats& step_stats = ws.step_stats;
  int32_t* step_slot = nullptr;
  const bool gigpo = p.estimator == Estimator::kGiGPO;
  if (gigpo) {
    // Step level: key = (group, step key); clusters never span groups.
    ws.step_slot.resize(n);
    step_slot = ws.step_slot.data();
    const size_t clusters = assign_step_slots(r, group_slot, step_slot, ws.owner, ws.direct);
    group_statistics(n, step_slot, clusters, G, p.divide_by_std, p.eps, step_stats);
  }

  for (int64_t i = 0; i < n; ++i) {
    const int32_t e = group_slot[i];
    // A lone trajectory keeps its raw score (mean 0, std 1).
    double a = score[i];
    if (episode_stats.count[e] > 1) {
      a = p.divide_by_std ? (score[i] - episode_stats.mean[e]) / episode_stats.scale_den[e] : score[i] - episode_stats.mean[e];
    }
    if (gigpo) {
      const int32_t s = step_slot[i];
      double a_step = 0.0;  // a singleton step cluster carries no step-level signal
      if (step_stats.count[s] > 1) {
        a_step = p.divide_by_std ? (G[i] - step_stats.mean[s]) / step_stats.scale_den[s] : G[i] - step_stats.mean[s];
      }
      a = a + p.omega * a_step;
    }
    out.step_return[i] = static_cast<float>(G[i]);
    out.advantage[i] = static_cast<float>(a);
  }
  // A one-off huge call (hundreds of MB of scratch) should not pin its memory for the life of the thread.
  if (n > kKeepWorkspaceRows) ws = Workspace{};
}

}  // namespace lamer::algo
