#include "predict/overlap_model.hpp"
#include "predict/pipeline.hpp"
#include "util/errors.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <cstdint>
#include <unordered_map>
#include <fmt/format.h>

namespace wulf {

std::vector<StepNetwork> pattern_networks(const RankRoutes& routes, const PatternBook& book) {
  const PlatformNetwork& net = routes.network();
  const std::size_t L = net.links.size();
  const SizeFactors bw = parse_size_factors(net.bw_factor, "smpi/bw-factor");
  const SizeFactors lat = parse_size_factors(net.lat_factor, "smpi/lat-factor");
  constexpr double tcp_gamma = 4194304;  // bytes, SimGrid's default network/TCP-gamma
  std::vector<StepNetwork> out;
  std::vector<double> load;             // by link instance
  std::vector<std::uint64_t> touched;    // the instances loaded by this pattern
  auto add = [&](double share) {
    return [&load, &touched, share](std::uint64_t l) {
      if (l >= load.size()) load.resize(std::max<std::size_t>(l + 1, 2 * load.size()), 0.0);
      if (load[l] == 0) touched.push_back(l);
      load[l] += share;
    };
  };
  for (std::size_t i = 0; i < book.size(); ++i) {
    check_interrupt();
    const Pattern& messages = book.at(i);
    for (const std::uint64_t l : touched) load[l] = 0;
    touched.clear();
    for (const auto& [from, to] : messages) {
      routes.visit(from, to, add(1));
      routes.visit(to, from, add(0.05));
    }
    // A step is over when its slowest message is: the longest latency, the lowest rate. The
    // links that give the slowest messages their rate limit the step.
    StepNetwork step;
    double slowest = std::numeric_limits<double>::infinity();
    std::vector<std::uint32_t> limits;
    std::vector<char> crossed(L, 0);
    auto near = [](double a, double b) {
      return std::isfinite(a) && std::isfinite(b) ? std::abs(a - b) <= 1e-9 * std::max(a, b) : a == b;
    };
    for (const auto& [from, to] : messages) {
      double rate = std::numeric_limits<double>::infinity();
      const double latency = routes.visit(from, to, [&](std::uint64_t l) {
        const NetworkLink& link = routes.link(l);
        crossed[l % L] = 1;
        rate = std::min(rate, link.sharing == "fatpipe" ? link.bandwidth_Bps : link.bandwidth_Bps / load[l]);
      });
      const double window = latency > 0 ? tcp_gamma / (2 * latency) : std::numeric_limits<double>::infinity();
      if (window < rate) rate = window;
      step.latency_s = std::max(step.latency_s, latency);
      if (rate > slowest && !near(rate, slowest)) continue;
      if (rate < slowest && !near(rate, slowest)) limits.clear(), slowest = rate;
      if (near(rate, window)) continue;  // the TCP window, no link, limits it
      routes.visit(from, to, [&](std::uint64_t l) {
        const NetworkLink& link = routes.link(l);
        if (near(link.sharing == "fatpipe" ? link.bandwidth_Bps : link.bandwidth_Bps / load[l], rate))
          limits.push_back(static_cast<std::uint32_t>(l % L));
      });
    }
    std::sort(limits.begin(), limits.end());
    limits.erase(std::unique(limits.begin(), limits.end()), limits.end());
    step.limits = std::move(limits);
    for (std::size_t l = 0; l < L; ++l)
      if (crossed[l]) step.crosses.push_back(static_cast<std::uint32_t>(l));
    step.byte_s = messages.empty() ? 0 : 1 / slowest;
    step.bw = bw, step.lat = lat;
    out.push_back(std::move(step));
  }
  return out;
}

std::vector<std::vector<char>> sharing_of(const std::vector<StepNetwork>& patterns) {
  std::vector<std::vector<char>> shares(patterns.size(), std::vector<char>(patterns.size(), 1));
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const std::vector<std::uint32_t>& limits = patterns[i].limits;
    if (limits.empty()) continue;
    for (std::size_t j = 0; j < patterns.size(); ++j) {
      const std::vector<std::uint32_t>& crosses = patterns[j].crosses;
      if (crosses.empty()) continue;
      std::size_t a = 0, b = 0;
      bool met = false;
      while (a < limits.size() && b < crosses.size() && !met) {
        if (limits[a] == crosses[b]) met = true;
        else if (limits[a] < crosses[b]) ++a;
        else ++b;
      }
      shares[i][j] = met;
    }
  }
  return shares;
}

double plan_seconds(const CommPlan& plan, const std::vector<StepNetwork>& patterns) {
  double t = 0;
  for (const PlanPhase& f : plan.phases) t += static_cast<double>(f.count) * patterns[f.pattern].seconds(f.bytes);
  return t;
}

namespace {

// The iteration's test share and its errors' sums: a collective call and a small allreduce
// of 4 doubles each.
double test_and_errors(const OverlapWork& work, const PlannedComm& comm) {
  if (comm.ranks < 2) return work.test_s;
  return work.test_s + work.sums * (work.call_s + comm.seconds(comm.sums));
}

// The plans of issue 33's model: every step on the one network.
PlannedComm one_network(const OverlapWork& work, const std::vector<std::size_t>& values, NbAlgorithm algorithm, int p,
                        std::size_t value_bytes, const StepNetwork& net) {
  PatternBook book(p);
  PlannedComm comm;
  comm.ranks = p;
  for (const std::size_t n : values) comm.buckets.push_back(allreduce_plan(book, algorithm, n, value_bytes));
  comm.sums = allreduce_plan(book, work.sums_algorithm, 4, sizeof(double));
  comm.patterns.assign(book.size(), net);
  return comm;
}

}  // namespace

OverlapPrediction predict_overlap(const OverlapWork& work, const std::vector<BucketCut>& buckets,
                                  const PlannedComm& comm) {
  if (comm.buckets.size() != buckets.size())
    throw std::logic_error("overlap model: " + std::to_string(comm.buckets.size()) + " plans for " +
                           std::to_string(buckets.size()) + " buckets");
  const bool many = comm.ranks > 1;
  OverlapPrediction r;
  r.bucket_exposed_s.assign(buckets.size(), 0.0);
  r.bucket_start_s.assign(buckets.size(), 0.0);
  r.bucket_end_s.assign(buckets.size(), 0.0);
  for (const CommPlan& plan : comm.buckets) r.comm_alone_s += work.call_s + comm.seconds(plan);
  Pipeline pipe(buckets.size(), sharing_of(comm.patterns));
  std::vector<PlanAt> at(buckets.size());  // each bucket's place in its plan
  std::size_t next = 0;                     // the next bucket to start
  auto compute = [&](double seconds) { pipe.advance(pipe.now() + seconds); };
  // A bucket's step is complete: the next one posted, or the bucket is done.
  auto step_on = [&](std::size_t i) {
    if (!post_next(pipe, i, comm.buckets[i], comm.patterns, at[i])) r.bucket_end_s[i] = pipe.now();
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
      if (s > 0 && many && next > 0) progress();
      compute(work.backward_s[static_cast<std::size_t>(l - 1)] / slices);
    }
    if (!many) continue;
    for (; next < buckets.size() && buckets[next].ready_after == l; ++next) {
      compute(work.call_s);
      r.bucket_start_s[next] = pipe.now();
      step_on(next);
    }
    progress();
  }
  r.backward_end_s = pipe.now();
  for (std::size_t i = 0; i < buckets.size() && many; ++i) {
    const double t0 = pipe.now();
    if (pipe.in_flight(i)) {
      wait_out(pipe, i, comm.buckets[i], comm.patterns, at[i]);
      r.bucket_end_s[i] = pipe.now();
    }
    r.bucket_exposed_s[i] = pipe.now() - t0;
    r.exposed_s += r.bucket_exposed_s[i];
  }
  r.comm_end_s = pipe.now();
  r.update_s = r.comm_end_s + work.update_s;
  r.test_s = test_and_errors(work, comm);
  return r;
}

OverlapPrediction predict_overlap(const OverlapWork& work, const std::vector<BucketCut>& buckets,
                                  NbAlgorithm algorithm, int p, std::size_t value_bytes, const StepNetwork& net) {
  std::vector<std::size_t> values;
  for (const BucketCut& b : buckets) values.push_back(b.values);
  return predict_overlap(work, buckets, one_network(work, values, algorithm, p, value_bytes, net));
}

OverlapPrediction predict_blocking(const OverlapWork& work, const PlannedComm& comm) {
  OverlapPrediction r;
  r.backward_end_s = work.forward_s;
  for (double b : work.backward_s) r.backward_end_s += b;
  if (comm.ranks > 1)
    for (const CommPlan& plan : comm.buckets) r.exposed_s += work.call_s + comm.seconds(plan);
  r.comm_alone_s = r.exposed_s;
  r.bucket_exposed_s = {r.exposed_s};
  r.comm_end_s = r.backward_end_s + r.exposed_s;
  r.update_s = r.comm_end_s + work.update_s;
  r.test_s = test_and_errors(work, comm);
  return r;
}

OverlapPrediction predict_blocking(const OverlapWork& work, std::size_t values, NbAlgorithm algorithm, int p,
                                   std::size_t value_bytes, const StepNetwork& net) {
  return predict_blocking(work, one_network(work, {values}, algorithm, p, value_bytes, net));
}

}  // namespace wulf
