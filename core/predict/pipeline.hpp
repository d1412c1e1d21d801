// The steps of the collectives under way on one rank's links, as the models move them through
// time (issue 33's overlap model, issue 65's fsdp model): each step waits out its latency,
// then the steps moving share the links equally, each at its rate alone over their number
// (SimGrid's max-min sharing of a link among flows that cross the same links).
#pragma once

#include "predict/overlap_model.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace wulf {

// A flow a collective: its current step.
class Pipeline {
 public:
  explicit Pipeline(std::size_t buckets) : flows_(buckets) {}

  double now() const { return t_; }
  bool in_flight(std::size_t i) const { return flows_[i].posted; }
  bool complete(std::size_t i) const {
    const Flow& f = flows_[i];
    return f.posted && f.latency_end <= t_ && f.bytes_left <= 0;
  }
  // A step of `bytes` on net: its latency, then its bytes at net's rate over the flows moving.
  void post(std::size_t i, const StepNetwork& net, double bytes) {
    flows_[i] = {true, t_ + net.latency_s * net.lat.at(bytes), bytes, net.byte_s / net.bw.at(bytes)};
  }
  void clear(std::size_t i) { flows_[i].posted = false; }

  // Time moves on to `until`, or to when flow `watch` completes if that is sooner (-1: none).
  // Each turn of the loop ends at an event: a latency over, a flow done, or `until`; so a call
  // takes at most two turns a flow and one more. A flow that ends a turn is done whatever the
  // subtraction leaves of its bytes (far into a run, the round-off of the clock leaves a
  // remainder whose time no longer moves it).
  void advance(double until, long watch = -1) {
    const std::size_t most_turns = 2 * flows_.size() + 1;
    for (std::size_t turn = 0; t_ < until; ++turn) {
      if (watch >= 0 && complete(static_cast<std::size_t>(watch))) return;
      if (turn >= most_turns)
        throw std::logic_error("overlap model: the pipeline's clock stopped at " + std::to_string(t_) + " s");
      std::size_t moving = 0;
      for (const Flow& f : flows_) moving += f.posted && f.latency_end <= t_ && f.bytes_left > 0;
      const double sharing = static_cast<double>(std::max<std::size_t>(moving, 1));
      auto end_of = [&](const Flow& f) { return t_ + f.bytes_left * f.byte_s * sharing; };
      double next = until;
      for (const Flow& f : flows_) {
        if (!f.posted) continue;
        if (f.latency_end > t_) next = std::min(next, f.latency_end);
        else if (f.bytes_left > 0) next = std::min(next, end_of(f));
      }
      const double dt = next - t_;
      for (Flow& f : flows_)
        if (f.posted && f.latency_end <= t_ && f.bytes_left > 0)
          f.bytes_left = end_of(f) <= next ? 0 : f.bytes_left - dt / (f.byte_s * sharing);
      t_ = next;
    }
  }

 private:
  struct Flow {
    bool posted = false;
    double latency_end = 0, bytes_left = 0;
    double byte_s = 0;  // seconds a byte alone (SMPI's bandwidth factor of its size in it)
  };
  std::vector<Flow> flows_;
  double t_ = 0;
};

// Where a collective is in its plan: its phase, and the steps of it posted.
struct PlanAt {
  std::size_t phase = 0, posted = 0;
};

// The collective's step is complete (or it has not started): its next step posted as flow i,
// or, after its last, the flow cleared. False once the collective is done.
inline bool post_next(Pipeline& pipe, std::size_t i, const CommPlan& plan, const std::vector<StepNetwork>& patterns,
                      PlanAt& at) {
  while (at.phase < plan.phases.size() && at.posted == plan.phases[at.phase].count) ++at.phase, at.posted = 0;
  if (at.phase == plan.phases.size()) {
    pipe.clear(i);
    return false;
  }
  ++at.posted;
  const PlanPhase& f = plan.phases[at.phase];
  pipe.post(i, patterns[f.pattern], f.bytes);
  return true;
}

}  // namespace wulf
