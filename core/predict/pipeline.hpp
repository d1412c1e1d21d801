// The steps of the collectives under way on one rank's links, as the models move them through
// time (issue 33's overlap model, issue 65's fsdp model): each step waits out its latency,
// then the steps moving share the links equally, each at its rate alone over their number
// (SimGrid's max-min sharing of a link among flows that cross the same links).
#pragma once

#include "predict/overlap_model.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace wulf {

// A flow a collective: its current step. The flows posted are kept in a list, so that time
// moves at the cost of those, however many collectives the model holds.
class Pipeline {
 public:
  // shares: which patterns' steps slow which (sharing_of); empty: every step in flight shares
  // the rank's links with every other.
  explicit Pipeline(std::size_t flows, std::vector<std::vector<char>> shares = {})
      : flows_(flows), place_(flows, kNone), shares_(std::move(shares)) {}

  double now() const { return t_; }
  bool in_flight(std::size_t i) const { return flows_[i].posted; }
  bool complete(std::size_t i) const { return flows_[i].posted && done(flows_[i]); }
  // Whether every other flow posted is complete: nothing but flow i can move.
  bool alone(std::size_t i) const {
    for (const std::size_t j : live_)
      if (j != i && !done(flows_[j])) return false;
    return true;
  }
  // A step of `bytes` on net: its latency, then its bytes at net's rate over the flows moving.
  // pattern: the step's pattern, its row of shares.
  void post(std::size_t i, const StepNetwork& net, double bytes, std::size_t pattern = 0) {
    flows_[i] = {true, t_ + net.latency_s * net.lat.at(bytes), bytes, net.byte_s / net.bw.at(bytes), pattern};
    if (place_[i] == kNone) place_[i] = live_.size(), live_.push_back(i);
  }
  void clear(std::size_t i) {
    flows_[i].posted = false;
    if (place_[i] == kNone) return;
    const std::size_t last = live_.back();
    live_[place_[i]] = last, place_[last] = place_[i];
    live_.pop_back(), place_[i] = kNone;
  }
  // Time moves on by `seconds` where nothing moves meanwhile (each flow posted is complete):
  // steps that the caller counts by itself.
  void skip(double seconds) { t_ += seconds; }

  // Time moves on to `until`, or to when flow `watch` completes if that is sooner (-1: none).
  // Each turn of the loop ends at an event: a latency over, a flow done, or `until`; so a call
  // takes at most two turns a flow and one more. A flow that ends a turn is done whatever the
  // subtraction leaves of its bytes (far into a run, the round-off of the clock leaves a
  // remainder whose time no longer moves it).
  void advance(double until, long watch = -1) {
    const std::size_t most_turns = 2 * live_.size() + 1;
    for (std::size_t turn = 0; t_ < until; ++turn) {
      if (watch >= 0 && complete(static_cast<std::size_t>(watch))) return;
      if (turn >= most_turns)
        throw std::logic_error("the model's pipeline: its clock stopped at " + std::to_string(t_) + " s");
      // Each moving flow's share: 1 over itself and the others moving that slow it.
      moving_.clear();
      for (const std::size_t i : live_)
        if (moves(flows_[i])) moving_.push_back(i);
      for (const std::size_t i : moving_) {
        Flow& f = flows_[i];
        f.sharing = static_cast<double>(moving_.size());
        if (shares_.empty()) continue;
        f.sharing = 0;
        for (const std::size_t j : moving_) f.sharing += j == i || shares_[f.pattern][flows_[j].pattern];
      }
      auto end_of = [&](const Flow& f) { return t_ + f.bytes_left * f.byte_s * f.sharing; };
      double next = until;
      for (const std::size_t i : live_) {
        const Flow& f = flows_[i];
        if (f.latency_end > t_) next = std::min(next, f.latency_end);
        else if (f.bytes_left > 0) next = std::min(next, end_of(f));
      }
      const double dt = next - t_;
      for (const std::size_t i : moving_) {
        Flow& f = flows_[i];
        f.bytes_left = end_of(f) <= next ? 0 : f.bytes_left - dt / (f.byte_s * f.sharing);
      }
      t_ = next;
    }
  }

 private:
  struct Flow {
    bool posted = false;
    double latency_end = 0, bytes_left = 0;
    double byte_s = 0;  // seconds a byte alone (SMPI's bandwidth factor of its size in it)
    std::size_t pattern = 0;
    double sharing = 1;  // this turn's: the flows moving that slow it, itself included
  };
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  bool done(const Flow& f) const { return f.latency_end <= t_ && f.bytes_left <= 0; }
  bool moves(const Flow& f) const { return f.latency_end <= t_ && f.bytes_left > 0; }

  std::vector<Flow> flows_;
  std::vector<std::size_t> place_;  // each flow's place in live_ (kNone: not posted)
  std::vector<std::size_t> live_;   // the flows posted
  std::vector<std::size_t> moving_; // this turn's flows moving
  std::vector<std::vector<char>> shares_;
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
  pipe.post(i, patterns[f.pattern], f.bytes, f.pattern);
  return true;
}

// Flow i's collective waited out: each step posted once the one before is complete, the
// others in flight moving meanwhile but posting nothing. Where nothing else moves, the rest of
// a phase takes its steps' time alone one after another, counted at once.
inline void wait_out(Pipeline& pipe, std::size_t i, const CommPlan& plan, const std::vector<StepNetwork>& patterns,
                     PlanAt& at) {
  while (pipe.in_flight(i)) {
    pipe.advance(std::numeric_limits<double>::infinity(), static_cast<long>(i));
    if (at.phase < plan.phases.size() && pipe.alone(i)) {
      const PlanPhase& f = plan.phases[at.phase];
      pipe.skip(static_cast<double>(f.count - at.posted) * patterns[f.pattern].seconds(f.bytes));
      at.posted = f.count;
    }
    post_next(pipe, i, plan, patterns, at);
  }
}

}  // namespace wulf
