#include "predict/fsdp_model.hpp"

#include "engine/process.hpp"
#include "predict/pipeline.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>

namespace wulf {
namespace {

// One rank's update, as train/strategies/fsdp.cpp's ShardRun runs it. Collective c is unit
// c / 2's gather (even) or reduction (odd), flow c of the pipeline.
class FsdpRun {
 public:
  FsdpRun(const FsdpWork& work, const std::vector<FsdpUnit>& units, const FsdpOptions& options,
          const std::vector<StepNetwork>& patterns, FsdpPrediction& out)
      : work_(work), units_(units), options_(options), patterns_(patterns), out_(out),
        pipe_(2 * units.size(), sharing_of(patterns)),
        at_(2 * units.size()), launched_(2 * units.size(), false), state_(units.size()) {
    for (std::size_t l = 0; l < units.size(); ++l)
      for (int layer = units[l].first; layer <= units[l].last; ++layer) {
        if (unit_of_.size() < static_cast<std::size_t>(layer)) unit_of_.resize(static_cast<std::size_t>(layer));
        unit_of_[static_cast<std::size_t>(layer - 1)] = l;
      }
    for (State& s : state_) s.gathered = !shards_parameters(options.sharding);
    for (auto* v : {&out.gather_issued_s, &out.gather_done_s, &out.reduce_issued_s, &out.reduce_done_s})
      v->assign(units.size(), -1.0);
  }

  void update() {
    const int layers = static_cast<int>(work_.forward_s.size());
    const std::size_t last_unit = units_.size() - 1;
    for (int l = 1; l <= layers; ++l) {
      check_interrupt();
      const std::size_t u = unit_of(l);
      if (l == units_[u].first) {
        ensure_gathered(u);
        if (options_.forward_prefetch) prefetch(u + 1);
      }
      sliced(work_.forward_s[index(l)], work_.forward_slices[index(l)]);
      progress();
      if (l == units_[u].last && frees_after_forward(options_.sharding) && u != last_unit) free(u);
    }
    out_.forward_end_s = pipe_.now();
    for (int l = layers; l >= 1; --l) {
      check_interrupt();
      const std::size_t u = unit_of(l);
      if (l == units_[u].last) {
        ensure_gathered(u);
        if (options_.backward_prefetch && u > 0) prefetch(u - 1);
      }
      compute(work_.recompute_s.empty() ? 0.0 : work_.recompute_s[index(l)]);
      sliced(work_.backward_s[index(l)], work_.backward_slices[index(l)]);
      if (l == units_[u].first) {
        issue(2 * u + 1);
        state_[u].reducing = true;
        ++out_.reductions;
        free(u);
      }
      progress();
    }
    out_.backward_end_s = pipe_.now();
    for (std::size_t u = 0; u < units_.size(); ++u) {
      if (!state_[u].reducing) continue;
      const double t0 = pipe_.now();
      complete(2 * u + 1);
      out_.reduce_wait_s += pipe_.now() - t0;
      state_[u].reducing = false;
    }
    compute(work_.update_s);
    out_.update_s = pipe_.now();
  }

 private:
  struct State {
    bool gathered = false, gathering = false, reducing = false;
  };
  static std::size_t index(int layer) { return static_cast<std::size_t>(layer - 1); }
  std::size_t unit_of(int layer) const { return unit_of_[index(layer)]; }
  const CommPlan& plan(std::size_t c) const { return c % 2 ? units_[c / 2].reduce : units_[c / 2].gather; }

  void compute(double seconds) { pipe_.advance(pipe_.now() + seconds); }
  void sliced(double seconds, int slices) {
    slices = std::max(1, slices);
    for (int s = 0; s < slices; ++s) {
      if (s > 0) progress();
      compute(seconds / slices);
    }
  }
  // Posts c's next step; false once it is done.
  bool step_on(std::size_t c) {
    if (post_next(pipe_, c, plan(c), patterns_, at_[c])) return true;
    done_at(c) = pipe_.now();
    return false;
  }
  double& done_at(std::size_t c) { return c % 2 ? out_.reduce_done_s[c / 2] : out_.gather_done_s[c / 2]; }
  double& issued_at(std::size_t c) { return c % 2 ? out_.reduce_issued_s[c / 2] : out_.gather_issued_s[c / 2]; }
  bool done(std::size_t c) const { return launched_[c] && !pipe_.in_flight(c); }
  void launch(std::size_t c) {
    launched_[c] = true;
    at_[c] = {};
    step_on(c);
  }
  void issue(std::size_t c) {
    compute(work_.call_s);
    issued_at(c) = pipe_.now();
    launched_[c] = false;
    if (!options_.one_stream) return launch(c);
    stream_.push_back(c);
    if (stream_.size() == 1) launch(c);
  }
  // Its remaining steps, each posted once the one before is complete.
  void wait_out(std::size_t c) {
    if (!pipe_.in_flight(c)) return;
    wulf::wait_out(pipe_, c, plan(c), patterns_, at_[c]);
    done_at(c) = pipe_.now();
  }
  void complete(std::size_t c) {
    if (!options_.one_stream) return wait_out(c);
    if (std::find(stream_.begin(), stream_.end(), c) == stream_.end()) return;  // done before
    while (!stream_.empty()) {
      const std::size_t first = stream_.front();
      wait_out(first);
      stream_.pop_front();
      if (!stream_.empty()) launch(stream_.front());
      if (first == c) return;
    }
  }
  void progress() {
    ++out_.progress_points;
    if (options_.one_stream) {
      while (!stream_.empty()) {
        const std::size_t first = stream_.front();
        if (pipe_.complete(first)) step_on(first);
        if (!done(first)) return;
        stream_.pop_front();
        if (!stream_.empty()) launch(stream_.front());
      }
      return;
    }
    for (std::size_t u = 0; u < units_.size(); ++u) {
      if (state_[u].gathering && pipe_.complete(2 * u)) step_on(2 * u);
      if (state_[u].reducing && pipe_.complete(2 * u + 1)) step_on(2 * u + 1);
    }
  }
  void start_gather(std::size_t u) {
    State& s = state_[u];
    if (s.gathered || s.gathering) return;
    issue(2 * u);
    s.gathering = true;
    ++out_.gathers;
  }
  void ensure_gathered(std::size_t u) {
    start_gather(u);
    State& s = state_[u];
    if (!s.gathering) return;
    const double t0 = pipe_.now();
    complete(2 * u);
    out_.gather_wait_s += pipe_.now() - t0;
    s.gathering = false;
    s.gathered = true;
  }
  void prefetch(std::size_t u) {
    if (u >= units_.size() || state_[u].gathered || state_[u].gathering) return;
    const auto under_way = static_cast<std::size_t>(std::count_if(state_.begin(), state_.end(),
                                                                  [](const State& s) { return s.gathering; }));
    if (options_.gather_limit > 0 && under_way >= options_.gather_limit) return;
    start_gather(u);
  }
  void free(std::size_t u) {
    if (shards_parameters(options_.sharding)) state_[u].gathered = false;
  }

  const FsdpWork& work_;
  const std::vector<FsdpUnit>& units_;
  const FsdpOptions& options_;
  const std::vector<StepNetwork>& patterns_;
  FsdpPrediction& out_;
  Pipeline pipe_;
  std::vector<PlanAt> at_;
  std::vector<bool> launched_;
  std::vector<State> state_;
  std::vector<std::size_t> unit_of_;
  std::deque<std::size_t> stream_;
};

}  // namespace

FsdpPrediction predict_fsdp(const FsdpWork& work, const std::vector<FsdpUnit>& units, const FsdpOptions& options,
                            const std::vector<StepNetwork>& patterns, const CommPlan& sums, int ranks) {
  if (units.empty()) throw std::logic_error("fsdp model: no units");
  FsdpPrediction r;
  for (const FsdpUnit& u : units)
    r.comm_alone_s += 2 * work.call_s + plan_seconds(u.gather, patterns) + plan_seconds(u.reduce, patterns);
  FsdpRun(work, units, options, patterns, r).update();
  r.test_s = work.test_s + (ranks > 1 ? work.sums * (work.call_s + plan_seconds(sums, patterns)) : 0.0);
  return r;
}

}  // namespace wulf
