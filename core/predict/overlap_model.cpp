#include "predict/overlap_model.hpp"
#include "util/errors.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace wulf {

std::vector<double> allreduce_steps(NbAlgorithm algorithm, int p, std::size_t values, std::size_t value_bytes) {
  const double bytes = static_cast<double>(values) * static_cast<double>(value_bytes);
  std::vector<double> steps;
  if (p < 2) return steps;
  if (algorithm == NbAlgorithm::ring) {
    const double chunk = std::ceil(static_cast<double>(values) / p) * static_cast<double>(value_bytes);
    steps.assign(static_cast<std::size_t>(2 * (p - 1)), chunk);
    return steps;
  }
  int pow2 = 1;
  while (pow2 * 2 <= p) pow2 *= 2;
  if (pow2 < p) steps.push_back(bytes);  // the ranks beyond the power of two fold in
  if (algorithm == NbAlgorithm::rabenseifner && values >= static_cast<std::size_t>(pow2)) {
    // Halving: half, a quarter, ... of pow2 chunks of the longest size; then doubling back.
    const double chunk = std::ceil(static_cast<double>(values) / pow2) * static_cast<double>(value_bytes);
    std::vector<double> halving;
    for (int chunks = pow2 / 2; chunks >= 1; chunks /= 2) halving.push_back(chunks * chunk);
    steps.insert(steps.end(), halving.begin(), halving.end());
    steps.insert(steps.end(), halving.rbegin(), halving.rend());
  } else {
    for (int d = 1; d < pow2; d *= 2) steps.push_back(bytes);
  }
  if (pow2 < p) steps.push_back(bytes);  // and get the result back
  return steps;
}

StepNetwork ring_step_network(const PlatformNetwork& net) {
  const std::size_t p = net.hosts.size();
  if (p < 2) throw InputError("the overlap model needs two hosts or more");
  auto route = [&](std::size_t from, std::size_t to) -> const NetworkRoute& {
    for (const NetworkRoute& r : net.routes)
      if (r.from == from && r.to == to) return r;
    throw InputError("the overlap model: no route from " + net.hosts[from] + " to " + net.hosts[to]);
  };
  std::vector<double> load(net.links.size(), 0.0);
  for (std::size_t r = 0; r < p; ++r) {
    const std::size_t next = (r + 1) % p;
    for (std::size_t l : route(r, next).links) load[l] += 1;
    for (std::size_t l : route(next, r).links) load[l] += 0.05;
  }
  // A step is over when its slowest message is: the longest latency, the lowest rate.
  constexpr double tcp_gamma = 4194304;  // bytes, SimGrid's default network/TCP-gamma
  StepNetwork step;
  double slowest = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < p; ++r) {
    const NetworkRoute& message = route(r, (r + 1) % p);
    double rate = message.latency_s > 0 ? tcp_gamma / (2 * message.latency_s) : std::numeric_limits<double>::infinity();
    for (std::size_t l : message.links) {
      const NetworkLink& link = net.links[l];
      rate = std::min(rate, link.sharing == "fatpipe" ? link.bandwidth_Bps : link.bandwidth_Bps / load[l]);
    }
    slowest = std::min(slowest, rate);
    step.latency_s = std::max(step.latency_s, message.latency_s);
  }
  step.byte_s = 1 / slowest;
  step.bw = parse_size_factors(net.bw_factor, "smpi/bw-factor");
  step.lat = parse_size_factors(net.lat_factor, "smpi/lat-factor");
  return step;
}

namespace {

// The steps in flight on one rank's links, moved through time together: each waits out its
// latency, then the ones moving share the links equally.
class Pipeline {
 public:
  Pipeline(std::size_t buckets, const StepNetwork& net) : flows_(buckets), net_(net) {}

  double now() const { return t_; }
  bool in_flight(std::size_t i) const { return flows_[i].posted; }
  bool complete(std::size_t i) const {
    const Flow& f = flows_[i];
    return f.posted && f.latency_end <= t_ && f.bytes_left <= 0;
  }
  void post(std::size_t i, double bytes) {
    flows_[i] = {true, t_ + net_.latency_s * net_.lat.at(bytes), bytes, net_.bw.at(bytes)};
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
      const double per_byte = net_.byte_s * static_cast<double>(std::max<std::size_t>(moving, 1));
      auto end_of = [&](const Flow& f) { return t_ + f.bytes_left * per_byte / f.factor; };
      double next = until;
      for (const Flow& f : flows_) {
        if (!f.posted) continue;
        if (f.latency_end > t_) next = std::min(next, f.latency_end);
        else if (f.bytes_left > 0) next = std::min(next, end_of(f));
      }
      const double dt = next - t_;
      for (Flow& f : flows_)
        if (f.posted && f.latency_end <= t_ && f.bytes_left > 0)
          f.bytes_left = end_of(f) <= next ? 0 : f.bytes_left - dt * f.factor / per_byte;
      t_ = next;
    }
  }

 private:
  struct Flow {
    bool posted = false;
    double latency_end = 0, bytes_left = 0;
    double factor = 1;  // SMPI's bandwidth factor of its size
  };
  std::vector<Flow> flows_;
  StepNetwork net_;
  double t_ = 0;
};

// The iteration's test share and its errors' sums: a collective call and a small allreduce
// of 4 doubles each.
double test_and_errors(const OverlapWork& work, int p, const StepNetwork& net) {
  if (p < 2) return work.test_s;
  double sum = work.call_s;
  for (double bytes : allreduce_steps(work.sums_algorithm, p, 4, sizeof(double))) sum += net.seconds(bytes);
  return work.test_s + work.sums * sum;
}

double steps_alone(const std::vector<double>& steps, const StepNetwork& net) {
  double t = 0;
  for (double bytes : steps) t += net.seconds(bytes);
  return t;
}

}  // namespace

OverlapPrediction predict_overlap(const OverlapWork& work, const std::vector<BucketCut>& buckets,
                                  NbAlgorithm algorithm, int p, std::size_t value_bytes, const StepNetwork& net) {
  OverlapPrediction r;
  r.bucket_exposed_s.assign(buckets.size(), 0.0);
  std::vector<std::vector<double>> steps;
  for (const BucketCut& b : buckets) {
    steps.push_back(allreduce_steps(algorithm, p, b.values, value_bytes));
    r.comm_alone_s += work.call_s + steps_alone(steps.back(), net);
  }
  Pipeline pipe(buckets.size(), net);
  std::vector<std::size_t> posted(buckets.size(), 0);  // steps posted per bucket
  std::size_t next = 0;                                // the next bucket to start
  auto compute = [&](double seconds) { pipe.advance(pipe.now() + seconds); };
  // A bucket's step is complete: the next one posted, or the bucket is done.
  auto step_on = [&](std::size_t i) {
    if (posted[i] < steps[i].size()) pipe.post(i, steps[i][posted[i]++]);
    else pipe.clear(i);
  };
  auto progress = [&] {
    for (std::size_t i = 0; i < next; ++i)
      if (pipe.complete(i)) step_on(i);
    ++r.progress_points;
  };

  compute(work.forward_s);
  const int layers = static_cast<int>(work.backward_s.size());
  for (int l = layers; l >= 1; --l) {
    check_interrupt();  // a net of many layers: a signal ends the model here
    const int slices = std::max(1, work.slices.empty() ? 1 : work.slices[static_cast<std::size_t>(l - 1)]);
    for (int s = 0; s < slices; ++s) {
      if (s > 0 && p > 1 && next > 0) progress();
      compute(work.backward_s[static_cast<std::size_t>(l - 1)] / slices);
    }
    if (p < 2) continue;
    for (; next < buckets.size() && buckets[next].ready_after == l; ++next) {
      compute(work.call_s);
      step_on(next);
    }
    progress();
  }
  r.backward_end_s = pipe.now();
  for (std::size_t i = 0; i < buckets.size() && p > 1; ++i) {
    const double t0 = pipe.now();
    while (pipe.in_flight(i)) {
      pipe.advance(std::numeric_limits<double>::infinity(), static_cast<long>(i));
      step_on(i);
    }
    r.bucket_exposed_s[i] = pipe.now() - t0;
    r.exposed_s += r.bucket_exposed_s[i];
  }
  r.comm_end_s = pipe.now();
  r.update_s = r.comm_end_s + work.update_s;
  r.test_s = test_and_errors(work, p, net);
  return r;
}

OverlapPrediction predict_blocking(const OverlapWork& work, std::size_t values, NbAlgorithm algorithm, int p,
                                   std::size_t value_bytes, const StepNetwork& net) {
  OverlapPrediction r;
  r.backward_end_s = work.forward_s;
  for (double b : work.backward_s) r.backward_end_s += b;
  if (p > 1) r.exposed_s = r.comm_alone_s = work.call_s + steps_alone(allreduce_steps(algorithm, p, values, value_bytes), net);
  r.bucket_exposed_s = {r.exposed_s};
  r.comm_end_s = r.backward_end_s + r.exposed_s;
  r.update_s = r.comm_end_s + work.update_s;
  r.test_s = test_and_errors(work, p, net);
  return r;
}

}  // namespace wulf
