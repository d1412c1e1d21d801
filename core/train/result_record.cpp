#include "train/result_record.hpp"

#include "comm/compute.hpp"

#include <wulf/build_info.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace wulf {

Json versions_json() {
  Json v = Json::object();
  v["wulf"] = build::version;
  v["build_type"] = build::build_type;
  v["compiler"] = build::compiler;
  v["eigen"] = build::eigen_version;
  v["boost"] = build::boost_version;
  v["simgrid"] = build::simgrid_version;
  v["mpi_standard"] = build::mpi_version;
  return v;
}

Json evaluation_json(const Evaluation& e) {
  Json j = {{"patterns", e.patterns}, {"mse", e.mse}, {"rmse", e.rmse}, {"loss", e.loss}};
  if (e.classifier) {
    j["class_errors"] = e.class_errors;
    j["accuracy"] = e.accuracy();
  }
  return j;
}

namespace {

double per_ms(double seconds, std::size_t count) {
  return count ? 1e3 * seconds / static_cast<double>(count) : 0.0;
}

}  // namespace

namespace {

// PhaseTimes as a flat array, to gather them from the ranks, and back.
std::array<double, 12> phase_array(const PhaseTimes& p) {
  return {p.forward, p.backward, p.update, p.test, p.comm, double(p.forward_patterns), double(p.backward_patterns),
          double(p.updates), double(p.test_patterns), double(p.comm_calls), p.poll, double(p.polls)};
}

PhaseTimes phase_times(std::span<const double> a) {
  PhaseTimes p;
  p.forward = a[0], p.backward = a[1], p.update = a[2], p.test = a[3], p.comm = a[4];
  p.forward_patterns = static_cast<std::size_t>(a[5]), p.backward_patterns = static_cast<std::size_t>(a[6]);
  p.updates = static_cast<std::size_t>(a[7]), p.test_patterns = static_cast<std::size_t>(a[8]);
  p.comm_calls = static_cast<std::size_t>(a[9]);
  p.poll = a[10], p.polls = static_cast<std::size_t>(a[11]);
  return p;
}

}  // namespace

std::vector<PhaseTimes> gather_phases(Comm& comm, const PhaseTimes& mine) {
  const std::array<double, 12> flat = phase_array(mine);
  std::vector<double> all(comm.rank() == 0 ? flat.size() * static_cast<std::size_t>(comm.size()) : 0);
  gather_for_record(comm, std::span<const double>(flat), std::span<double>(all));
  std::vector<PhaseTimes> out;
  if (comm.rank() != 0) return out;
  for (int r = 0; r < comm.size(); ++r)
    out.push_back(phase_times(std::span<const double>(all).subspan(flat.size() * static_cast<std::size_t>(r), flat.size())));
  return out;
}

Json phases_json(const PhaseTimes& p) {
  return {{"forward_s", p.forward},
          {"backward_s", p.backward},
          {"update_s", p.update},
          {"test_s", p.test},
          {"comm_s", p.comm},
          {"forward_patterns", p.forward_patterns},
          {"backward_patterns", p.backward_patterns},
          {"updates", p.updates},
          {"test_patterns", p.test_patterns},
          {"comm_calls", p.comm_calls},
          {"poll_s", p.poll},
          {"polls", p.polls}};
}

Performance training_performance(const std::vector<PhaseTimes>& per_rank, const KernelFlops& flops, double seconds,
                                 double machine_cost_usd) {
  Performance p;
  p.per_pattern = flops;
  for (const PhaseTimes& q : per_rank) {
    const auto f = static_cast<double>(q.forward_patterns), b = static_cast<double>(q.backward_patterns);
    p.flops += flops.forward * f + flops.backward * b;
    p.flops_6w += 2 * flops.weights * f + 4 * flops.weights * b;
  }
  p.seconds = seconds;
  p.flops_per_s = seconds > 0 ? p.flops / seconds : 0;
  // USD per MFlop/s, in cents: seed 002's 150 913 USD at 163.3 GFlop/s is 92.4.
  if (machine_cost_usd > 0 && p.flops_per_s > 0) p.cents_per_mflops = 100 * machine_cost_usd / (p.flops_per_s / 1e6);
  return p;
}

Json performance_json(const Performance& p, std::size_t ranks, double machine_cost_usd) {
  Json j = Json::object();
  j["counted"] = "the forward and backward flops the kernels perform per training pattern (multiply-add = 2: "
                 "each layer's product and bias addition forward; its weight gradient, bias sum and, for every "
                 "layer but the first, delta product backward), all ranks; updates, test passes and "
                 "communication not counted (seed 002 section 7.2)";
  j["forward_flops_per_pattern"] = p.per_pattern.forward;
  j["backward_flops_per_pattern"] = p.per_pattern.backward;
  j["flops"] = p.flops;
  j["seconds"] = p.seconds;
  j["gflops"] = p.flops_per_s * 1e-9;
  j["mflops_per_rank"] = ranks ? p.flops_per_s * 1e-6 / static_cast<double>(ranks) : 0.0;
  // Seed 002's convention, 6w per pattern (2w forward, 4w backward, input-layer deltas included).
  j["flops_6w"] = p.flops_6w;
  j["gflops_6w"] = p.seconds > 0 ? p.flops_6w / p.seconds * 1e-9 : 0.0;
  j["machine_cost_usd"] = machine_cost_usd > 0 ? Json(machine_cost_usd) : Json(nullptr);
  j["cents_per_mflops"] = p.cents_per_mflops > 0 ? Json(p.cents_per_mflops) : Json(nullptr);
  return j;
}

namespace {

// The final pass's errors under the names a history entry gives them (train_error and
// test_error in the run's metric, then the sets spelled out), and each set whole. A run
// without the arithmetic has no errors: null, never a 0 that reads as a perfect net.
void add_final_errors(Json& fin, const TrainResult& r, ErrorMetric metric) {
  const Evaluation& train = r.final_train;
  const bool evaluated = train.patterns > 0;  // every evaluated training set has patterns
  const auto value = [&](double v) { return evaluated ? Json(v) : Json(nullptr); };
  if (evaluated) fin["train"] = evaluation_json(train);
  fin["train_error"] = value(train.error(metric));
  fin["train_rmse"] = value(train.rmse);
  if (evaluated && train.classifier) {
    fin["train_class_errors"] = train.class_errors;
    fin["train_accuracy"] = train.accuracy();
  }
  if (!r.final_test) return;
  const Evaluation& test = *r.final_test;
  fin["test"] = evaluation_json(test);
  fin["test_error"] = test.error(metric);
  fin["test_rmse"] = test.rmse;
  fin["test_loss"] = test.loss;
  if (test.classifier) {
    fin["test_class_errors"] = test.class_errors;
    fin["test_accuracy"] = test.accuracy();
  }
}

}  // namespace

void add_train_result(Json& record, const TrainResult& r, std::size_t parameters, ErrorMetric metric,
                      const std::vector<PhaseTimes>& per_rank) {
  Json history = Json::array();
  for (const IterationRecord& h : r.history) {
    Json e = Json::object();
    e["iteration"] = h.iteration;
    e["time_s"] = h.time_s;
    e["train_error"] = h.train_error;  // running over the iteration, or exact (eval_train)
    if (h.test) {
      // test_error is in the unit of config.error_metric; the rest spell out the test set.
      e["test_error"] = h.test->error(metric);
      e["test_rmse"] = h.test->rmse;
      e["test_loss"] = h.test->loss;
      if (h.test->classifier) {
        e["test_class_errors"] = h.test->class_errors;
        e["test_accuracy"] = h.test->accuracy();
      }
    }
    if (h.train) {
      e["train_rmse"] = h.train->rmse;
      if (h.train->classifier) {
        e["train_class_errors"] = h.train->class_errors;
        e["train_accuracy"] = h.train->accuracy();
      }
    }
    for (const auto& [key, value] : h.notes) e[key] = value;  // the strategy's own (cg: step, slope)
    history.push_back(std::move(e));
  }
  record["history"] = std::move(history);

  Json fin = Json::object();
  fin["status"] = to_string(r.reason);
  fin["reason"] = r.reason_detail;
  fin["iterations"] = r.history.empty() ? 0 : r.history.back().iteration;
  fin["time_s"] = r.seconds;
  fin["parameters"] = parameters;
  if (r.best) {  // the lowest check error and when it came: what a target error is held against
    Json best = Json::object();
    best["check"] = r.best->on_test ? "test" : "train";
    best["error"] = r.best->error;
    best["iteration"] = r.best->iteration;
    best["time_s"] = r.best->time_s;
    fin["best"] = std::move(best);
  }
  if (!r.stats.empty()) {
    Json stats = Json::object();
    for (const auto& [key, value] : r.stats) stats[key] = value;
    fin["strategy"] = std::move(stats);
  }
  // After a fault there was no final pass: the history holds the errors up to the last good weights.
  if (!stopped_on_fault(r.reason)) add_final_errors(fin, r, metric);
  record["final"] = std::move(fin);

  const PhaseTimes& p = r.phases;
  Json ph = phases_json(p);
  // Seed 000's constants as this run measured them: Tf and Tb per pattern, Tu per update
  // (including the momentum step, which is seed 000's Tu + Tm), Ts per evaluated pattern.
  Json constants = Json::object();
  constants["Tf_ms"] = per_ms(p.forward, p.forward_patterns);
  constants["Tb_ms"] = per_ms(p.backward, p.backward_patterns);
  constants["Tu_ms"] = per_ms(p.update, p.updates);
  constants["Ts_ms"] = per_ms(p.test, p.test_patterns);
  ph["per_pattern"] = std::move(constants);
  // Each rank's phases. comm_s is the time inside the collectives, waiting for slower
  // ranks included; wait_s estimates the waiting as the rank's comm_s less the least comm_s
  // of any rank (the fastest rank's collectives are taken as pure transfer). poll_s is the
  // time in point-to-point polling (cg --load-balance). idle_s = comm_s + poll_s: the time
  // the rank spent communicating or waiting on other ranks instead of computing, which is
  // what load balancing cuts.
  double least_comm = per_rank.empty() ? 0.0 : per_rank.front().comm;
  for (const PhaseTimes& ph_q : per_rank) least_comm = std::min(least_comm, ph_q.comm);
  Json ranks = Json::array();
  for (std::size_t q = 0; q < per_rank.size(); ++q) {
    Json one = phases_json(per_rank[q]);
    one["rank"] = q;
    one["wait_s"] = per_rank[q].comm - least_comm;
    one["idle_s"] = per_rank[q].comm + per_rank[q].poll;
    const double busy = per_rank[q].forward + per_rank[q].backward + per_rank[q].update + per_rank[q].test;
    one["other_s"] = std::max(0.0, r.seconds - busy - per_rank[q].comm - per_rank[q].poll);  // e.g. To
    ranks.push_back(std::move(one));
  }
  ph["ranks"] = std::move(ranks);
  record["phases"] = std::move(ph);
}

std::vector<ComputeLedger> gather_ledgers(Comm& comm, const ComputeLedger& mine) {
  const auto flat = mine.flat();
  std::vector<double> all(comm.rank() == 0 ? flat.size() * static_cast<std::size_t>(comm.size()) : 0);
  gather_for_record(comm, std::span<const double>(flat), std::span<double>(all));
  std::vector<ComputeLedger> out;
  if (comm.rank() != 0) return out;
  for (int r = 0; r < comm.size(); ++r)
    out.push_back(ComputeLedger::from_flat(std::span<const double>(all).subspan(flat.size() * static_cast<std::size_t>(r), flat.size())));
  return out;
}

BudgetSummary summarize_budget(const std::vector<ComputeLedger>& per_rank) {
  BudgetSummary s;
  for (std::size_t r = 0; r < per_rank.size(); ++r)
    for (std::size_t i = 0; i < ComputeLedger::size; ++i) {
      const BudgetLine& line = per_rank[r].lines[i];
      s.kernels += line.kernels;
      s.overruns += line.overruns;
      if (line.worst_ratio > s.worst_ratio)
        s.worst_ratio = line.worst_ratio, s.worst_rank = static_cast<int>(r), s.worst_what = ComputeLedger::name(i);
    }
  return s;
}

Json ledger_json(const ComputeLedger& ledger, double dilation) {
  Json j = Json::object();
  double real = 0, charged = 0;
  long long overruns = 0;
  for (std::size_t i = 0; i < ComputeLedger::size; ++i) {
    const BudgetLine& line = ledger.lines[i];
    j[std::string(ComputeLedger::name(i))] = {{"kernels", line.kernels},         {"real_s", line.real_s},
                                              {"charged_s", line.charged_s},     {"charged_wall_s", line.charged_s * dilation},
                                              {"overruns", line.overruns},       {"worst_ratio", line.worst_ratio}};
    real += line.real_s, charged += line.charged_s, overruns += line.overruns;
  }
  j["real_s"] = real;
  j["charged_s"] = charged;
  j["overruns"] = overruns;
  return j;
}

std::string add_compute_budget(Json& record, const std::vector<ComputeLedger>& per_rank, double dilation,
                               const std::string& engine) {
  Json& ranks = record["phases"]["ranks"];
  for (std::size_t r = 0; r < per_rank.size() && r < ranks.size(); ++r)
    ranks[r]["compute_budget"] = ledger_json(per_rank[r], dilation);
  const BudgetSummary s = summarize_budget(per_rank);
  record["compute_budget"] = {
      {"dilation", dilation},
      {"padding", "each kernel sleeps until it has taken its charge x dilation in wall seconds"},
      {"kernels", s.kernels},
      {"overruns", s.overruns},
      {"worst", {{"what", s.worst_what.empty() ? Json(nullptr) : Json(s.worst_what)}, {"rank", s.worst_rank},
                 {"ratio", s.worst_ratio}}}};
  record["dilation_too_small"] = s.overruns > 0;
  if (s.overruns == 0) return "";
  const std::string cause = engine == "testbed" ? fmt::format("the dilation {:g} is too small for this machine's arithmetic",
                                                       dilation)
                                         : "the profile's times are shorter than this machine's arithmetic";
  return fmt::format("wulf train: warning: {} of {} kernels took longer than their budget (worst: {} on rank {}, "
                     "{:.1f} times it): {}",
                     s.overruns, s.kernels, s.worst_what, s.worst_rank, s.worst_ratio, cause);
}

}  // namespace wulf
