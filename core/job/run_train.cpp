#include "job/run_train.hpp"

#include "nn/mlp.hpp"
#include "nn/weights_file.hpp"
#include "train/result_record.hpp"
#include "train/session.hpp"
#include "train/trainer.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/json.hpp"
#include "util/random.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <ostream>
#include <string>
#include <functional>
#include <vector>

namespace wulf {
namespace {

std::string percent(double fraction) { return fmt::format("{:.2f}%", 100.0 * fraction); }

void print_evaluation(std::ostream& out, const char* what, const Evaluation& e) {
  fmt::print(out, "  {}: rmse {:g}, loss {:g}", what, e.rmse, e.loss);
  if (e.classifier) fmt::print(out, ", {} of {} wrong, accuracy {}", e.class_errors, e.patterns, percent(e.accuracy()));
  out << "\n";
}

// What is about to run: the problem, the net, the training and the engine.
void print_plan(std::ostream& out, const TrainJob& job, std::size_t weights, int ranks) {
  const Problem& p = job.problem;
  const TrainConfig& c = job.config;
  const char* precision = job.double_precision ? "double" : "float";
  fmt::print(out, "wulf train: {} ({})\n  {} training, {} test patterns; net {}, w = {}\n", p.name, p.description,
             p.train_total, p.test_total, job.spec.describe(), weights);
  if (job.strategy->plan) {
    fmt::print(out, "  {}, {}", precision, job.strategy->plan(c));
  } else if (c.learning == Learning::adam) {
    fmt::print(out, "  {}, learning by adam (b = {}), eta {:g}, betas {:g} {:g}, epsilon {:g}, {} of the block's gradients",
               precision, c.block, c.eta, c.adam.beta1, c.adam.beta2, c.adam.epsilon, to_string(c.block_step));
  } else {
    fmt::print(out, "  {}, learning by {}{}, eta {:g}, alpha {:g} ({}), {} of the block's updates", precision,
               to_string(c.learning), c.learning == Learning::block ? fmt::format(" (b = {})", c.block) : "", c.eta,
               c.alpha, to_string(c.momentum), to_string(c.block_step));
  }
  fmt::print(out, ", at most {} iterations, seed {}\n", c.max_iterations, c.seed);
  if (job.engine == Engine::seq) return;
  fmt::print(out, "  engine {}, {} ranks, strategy {}, allreduce {}{}", to_string(job.engine), ranks,
             to_string(job.strategy), job.allreduce,
             job.allreduce_chosen_by.rfind("default", 0) == 0 ? " (" + job.allreduce_chosen_by + ")" : "");
  if (job.engine == Engine::sim || job.engine == Engine::testbed)
    fmt::print(out, ", platform {}", job.platform);
  if (job.engine != Engine::real || job.compute.mode != ComputeMode::wall)
    fmt::print(out, ", compute {}{}", to_string(job.compute.mode), job.compute.numerics ? "" : ", numerics off");
  if (job.engine == Engine::testbed) fmt::print(out, ", dilation {:g}", job.compute.dilation);
  // The other collectives, named on every engine (issue 32): each a default resolved as the
  // allreduce, or the one asked for.
  const std::pair<const char*, const std::string*> others[] = {
      {"reduce", &job.reduce}, {"bcast", &job.bcast}, {"allgather", &job.allgather}, {"gather", &job.gather}};
  const std::string* chosen[] = {&job.reduce_chosen_by, &job.bcast_chosen_by, &job.allgather_chosen_by,
                                 &job.gather_chosen_by};
  fmt::print(out, "\n  collectives:");
  bool any_default = false;
  for (std::size_t i = 0; i < std::size(others); ++i) {
    const bool by_default = chosen[i]->rfind("default", 0) == 0;
    any_default = any_default || by_default;
    fmt::print(out, "{} {} {}{}", i == 0 ? "" : ",", others[i].first, *others[i].second, by_default ? "" : " (asked)");
  }
  if (any_default) out << " (defaults: Open MPI 4.1's choice at the run's sizes, each named in the record)";
  out << "\n";
}

// One line per iteration, flushed so that a long run shows its progress as it goes.
void print_progress(std::ostream& out, const IterationRecord& r, ErrorMetric metric) {
  fmt::print(out, "iter {:5}  {:8.2f} s", r.iteration, r.time_s);
  if (std::isfinite(r.train_error)) fmt::print(out, "  train {} {:.5g}", to_string(metric), r.train_error);
  if (r.test) {
    fmt::print(out, "  test {} {:.5g}", to_string(metric), r.test->error(metric));
    if (r.test->classifier)
      fmt::print(out, "  test errors {}/{} ({})", r.test->class_errors, r.test->patterns, percent(r.test->accuracy()));
  } else if (r.train && r.train->classifier) {
    fmt::print(out, "  train errors {}/{}", r.train->class_errors, r.train->patterns);
  }
  out << std::endl;
}

// Seed 002's figures of merit: the training flop rate and, with a machine cost, its price.
void print_rate(std::ostream& out, const Performance& rate, int ranks, double machine_cost_usd) {
  fmt::print(out, "rate: {:.4g} GFlop/s of forward and backward passes ({:.0f} MFlop/s per rank)",
             rate.flops_per_s * 1e-9, rate.flops_per_s * 1e-6 / ranks);
  if (rate.cents_per_mflops > 0)
    fmt::print(out, "; price/performance {:.3f} cents per MFlop/s of USD {:.10f}", rate.cents_per_mflops,
               machine_cost_usd);
  out << "\n";
}

// A session's row of the record: its settings, its result and its curve.
Json session_json(const SessionOutcome& s) {
  Json history = Json::array();  // the session's curve, as a run's history (NaN: null)
  for (const auto& h : s.history) {
    Json entry = {{"iteration", static_cast<long long>(h[0])}, {"time_s", h[1]}, {"train_error", h[2]},
                  {"test_error", h[3]}};
    if (!std::isnan(h[4])) entry["test_accuracy"] = h[4];
    history.push_back(std::move(entry));
  }
  return {{"index", s.index},
          {"rank", s.rank},
          {"eta", s.config.eta},
          {"alpha", s.config.alpha},
          {"block", s.config.block},
          {"seed", s.config.seed},
          {"iterations", s.iterations},
          {"time_s", s.seconds},
          {"status", s.status},
          {"train_error", s.train_error},
          {"test_error", s.test_error},
          {"test_accuracy", s.test_accuracy},
          {"history", std::move(history)}};
}

// The session strategy's record: one row per session, and every rank's phase times.
Json sessions_record(const TrainJob& job, const std::vector<SessionOutcome>& table,
                     const std::vector<PhaseTimes>& per_rank) {
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = job.config_json;
  Json sessions = Json::array();
  for (const SessionOutcome& s : table) sessions.push_back(session_json(s));
  record["sessions"] = std::move(sessions);
  record["history"] = Json::array();
  Json ranks = Json::array();
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    Json one = phases_json(per_rank[r]);
    one["rank"] = r;
    ranks.push_back(std::move(one));
  }
  record["phases"]["ranks"] = std::move(ranks);
  Json fin = Json::object();
  fin["status"] = "sessions";
  fin["sessions"] = table.size();
  fin["parameters"] = job.spec.parameter_count();
  record["final"] = std::move(fin);
  return record;
}

// The session strategy: the sweep's runs over the ranks, one table on rank 0.
template <class T>
int run_sessions(TrainJob& job, Comm& comm, Compute& compute, std::ostream& out, std::ostream& err,
                 const std::function<void()>& after_iteration) {
  PhaseTimes phases;
  const std::vector<SessionOutcome> table =
      train_sessions<T>(job.spec, job.problem.train, job.problem.test, job.sessions, comm, compute, phases,
                        after_iteration);
  const std::vector<PhaseTimes> per_rank = gather_phases(comm, phases);
  const std::vector<ComputeLedger> ledgers = compute.pads() ? gather_ledgers(comm, compute.ledger())
                                                            : std::vector<ComputeLedger>{};
  const std::vector<std::string> hosts = comm.hosts();
  if (comm.rank() != 0) return exit_ok;
  fmt::print(out, "sessions of the sweep, {} ranks (errors in {}):\n", comm.size(), to_string(job.config.metric));
  fmt::print(out, "    #  rank      eta    alpha  block   seed   iter     time_s  {:>11}{:>11}  status\n", "train", "test");
  for (const SessionOutcome& s : table)
    fmt::print(out, "{:5}{:6}{:9g}{:9g}{:7}{:7}{:7}{:11.5g}  {:11.5g}{:11.5g}  {}\n", s.index, s.rank, s.config.eta,
               s.config.alpha, s.config.block, s.config.seed, s.iterations, s.seconds, s.train_error, s.test_error,
               s.status);
  Json record = sessions_record(job, table, per_rank);
  record["hosts"] = hosts;
  if (!ledgers.empty())
    if (const std::string warning = add_compute_budget(record, ledgers, job.compute.dilation, std::string(to_string(job.engine)));
        !warning.empty())
      err << warning << "\n";
  if (!job.out_path.empty()) {
    write_file_atomically(job.out_path, record_text(record) + "\n");
    out << "record: " << job.out_path << "\n";
  }
  return exit_ok;
}

// Rank 0's end of a run: the record and the weights file written, the result printed.
template <class T>
int finish(const TrainJob& job, const Mlp<T>& net, const TrainResult& result, const std::vector<PhaseTimes>& per_rank,
           const std::vector<ComputeLedger>& ledgers, const std::vector<std::string>& hosts, const Compute& compute,
           std::ostream& out, std::ostream& err) {
  const bool numerics = compute.numerics();
  const int ranks = static_cast<int>(per_rank.size());
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = job.config_json;
  add_train_result(record, result, net.parameter_count(), job.config.metric, per_rank);
  const Performance rate =
      training_performance(per_rank, net.spec().flops(), result.seconds, job.machine_cost_usd);
  record["performance"] = performance_json(rate, per_rank.size(), job.machine_cost_usd);
  record["hosts"] = hosts;  // rank r's at r
  // What rank 0's host declares a framework's data parallelism costs (--framework ddp charges it).
  if (const ComputeConfig& c = compute.config(); !c.ddp.text.empty())
    record["framework_costs"] = {{"host", hosts.empty() ? "" : hosts[0]},
                                 {"from", "the platform's wulf:ddp of rank 0's host"},
                                 {"costs", c.ddp.to_json()},
                                 {"comm_steal", c.comm_steal}};
  // Padded kernels (real, testbed): what each really took beside its charge.
  if (!ledgers.empty())
    if (const std::string warning = add_compute_budget(record, ledgers, job.compute.dilation, std::string(to_string(job.engine)));
        !warning.empty())
      err << warning << "\n";
  if (!job.weights_path.empty()) {
    // The net holds the final weights, or after a fault the last good ones (Run).
    write_file_atomically(job.weights_path,
                          weights_text(net, std::string(to_string(result.reason)), result.weights_iteration));
    record["final"]["weights_file"] = job.weights_path;
    record["final"]["weights_iteration"] = result.weights_iteration;
  }
  if (!job.out_path.empty()) write_file_atomically(job.out_path, record_text(record) + "\n");

  if (!numerics) {
    const char* clock = job.engine == Engine::sim ? "simulated" : job.engine == Engine::testbed ? "of platform time" : "of padded time";
    fmt::print(out, "stopped: {}; {:g} s {}, {:g} s per iteration (numerics off: no errors)\n",
               result.reason_detail, result.seconds, clock,
               result.seconds / std::max(1.0, static_cast<double>(result.history.back().iteration)));
    print_rate(out, rate, ranks, job.machine_cost_usd);
    if (!job.out_path.empty()) out << "record: " << job.out_path << "\n";
    return exit_ok;
  }
  if (stopped_on_fault(result.reason)) {
    err << "wulf train: " << result.reason_detail << "\n";
    if (!job.out_path.empty()) err << "wulf train: the record up to that point is in " << job.out_path << "\n";
    if (!job.weights_path.empty())
      err << "wulf train: the last good weights (iteration " << result.weights_iteration << ") are in "
          << job.weights_path << "\n";
    return exit_diverged;
  }
  fmt::print(out, "stopped: {} in {:.2f} s\n", result.reason_detail, result.seconds);
  out << "final (w = " << net.parameter_count() << "):\n";
  print_evaluation(out, "train", result.final_train);
  if (result.final_test) print_evaluation(out, "test ", *result.final_test);
  print_rate(out, rate, ranks, job.machine_cost_usd);
  if (!job.out_path.empty()) out << "record: " << job.out_path << "\n";
  if (!job.weights_path.empty()) out << "weights: " << job.weights_path << "\n";
  return exit_ok;
}

template <class T>
int train(TrainJob& job, Comm& comm, Compute& compute, std::ostream& out, std::ostream& err,
          const std::function<void()>& after_iteration) {
  const bool lead = comm.rank() == 0;
  // The testbed's clock reads platform seconds (wall over the dilation; 1 elsewhere), before
  // anything is timed, so that the history, the phases and the final time are the platform's.
  comm.set_time_dilation(compute.config().dilation);
  // --numerics off: parameters, gradients and their sums in memory all simulated ranks share.
  const std::size_t w = job.spec.parameter_count();
  const bool no_storage = !compute.numerics() && job.spec.table && !job.strategy->moves_net_buffers;
  T* shared = no_storage ? nullptr : compute.net_storage<T>(w);
  // Their sums are never read, so the simulator need not compute them (the same messages).
  if (shared) comm.set_unread_storage(shared, Compute::net_storage_values(w) * sizeof(T));
  Mlp<T> net = no_storage ? Mlp<T>(job.spec, typename Mlp<T>::NoStorage{}) : Mlp<T>(job.spec, shared);
  Rng init_rng(job.config.seed);
  Rng weights_rng = init_rng.split(3);
  // Every rank draws the same weights from the same seed: seed 000 initialises on one
  // processor and distributes them, which ends in the same state.
  if (compute.numerics()) net.init_uniform(job.config.init_range, weights_rng);
  // --weights-in: every rank starts from the file's values instead (exact in the file's
  // precision; a double file read into a float net is rounded once).
  if (!job.initial_weights.empty())
    std::transform(job.initial_weights.begin(), job.initial_weights.end(), net.parameters().begin(),
                   [](double v) { return static_cast<T>(v); });
  if (!job.quiet && lead) print_plan(out, job, net.parameter_count(), comm.size());
  const ProgressFn progress = [&](const IterationRecord& r) {
    if (!job.quiet) print_progress(out, r, job.config.metric);
    if (after_iteration) after_iteration();  // --engine seq: a signal or --timeout ends the run here
  };

  const Problem& p = job.problem;
  if (job.strategy->sessions) return run_sessions<T>(job, comm, compute, out, err, after_iteration);
  const TrainResult result = train_strategy(net, p.train, p.test, GlobalSizes{p.train_total, p.test_total, p.classifier},
                                            job.config, comm, compute, progress);

  // Every rank's phase times (and padded kernels' ledgers) to rank 0, for the record.
  const std::vector<PhaseTimes> per_rank = gather_phases(comm, result.phases);
  const std::vector<ComputeLedger> ledgers = compute.pads() ? gather_ledgers(comm, compute.ledger())
                                                            : std::vector<ComputeLedger>{};
  const std::vector<std::string> hosts = comm.hosts();
  if (!lead) return stopped_on_fault(result.reason) ? exit_diverged : exit_ok;
  return finish(job, net, result, per_rank, ledgers, hosts, compute, out, err);
}

}  // namespace

int run_train(TrainJob& job, Comm& comm, Compute& compute, std::ostream& out, std::ostream& err,
              const std::function<void()>& after_iteration) {
  return job.double_precision ? train<double>(job, comm, compute, out, err, after_iteration)
                              : train<float>(job, comm, compute, out, err, after_iteration);
}

}  // namespace wulf
