// `wulf recommend`'s report (cli/recommend_search.hpp): the tables of each phase, the
// recommendation with the command that repeats it, and the record.
#include "cli/recommend_search.hpp"

#include "train/result_record.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <string_view>

namespace wulf {
namespace {
std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

template <class T>
std::string join_numbers(const std::vector<T>& values) {
  std::vector<std::string> items;
  for (const T& v : values) {
    if constexpr (std::is_floating_point_v<T>)
      items.push_back(shortest(v));
    else
      items.push_back(std::to_string(v));
  }
  return join(items, ",");
}

std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

// A percentage with one decimal, and in 3 significant digits from a million on ("+1.5e+302%"
// for an epoch over a target of 1e-300 s, not 300 digits).
std::string percent(double pct) {
  return std::abs(pct) < 1e6 ? fixed(pct, 1) + "%" : fmt::format("{:.3g}%", pct);
}

// Simulated seconds with enough digits to compare runs: 4 significant digits, at least 3
// after the point.
std::string secs(double v) {
  if (!std::isfinite(v)) return "-";
  return fixed(v, std::max(3, 4 - static_cast<int>(std::floor(std::log10(std::max(std::abs(v), 1e-9)))) - 1));
}

// How far the confirmed time is from the estimate: "+1.3%", "0.0%".
std::string percent_change(double confirmed, double estimated) {
  const double pct = 100 * (confirmed / estimated - 1);
  if (std::abs(pct) < 0.05) return "0.0%";
  return (pct > 0 ? "+" : "") + percent(pct);
}

std::string never_text(const RunOutcome& r, long long max_epochs) {
  std::string s = r.status == "diverged" ? fmt::format("diverged in iteration {}", r.iterations)
                                         : fmt::format("not within {} iterations", max_epochs);
  if (std::isfinite(r.best_error)) s += fmt::format(" (best {:.5g} in iteration {})", r.best_error, r.best_iteration);
  return s;
}

std::string strategy_list(const SearchSpace& space) {
  std::vector<std::string> names;
  for (Strategy s : space.strategies) names.push_back(std::string(to_string(s)));
  return join(names, ",");
}

std::size_t count_skipped(const std::vector<Candidate>& candidates) {
  return static_cast<std::size_t>(
      std::count_if(candidates.begin(), candidates.end(), [](const Candidate& c) { return !c.skipped.empty(); }));
}

// The columns that name a candidate in the tables; the header passes their titles.
template <class P, class B>
std::string name_columns(std::string_view strategy, const P& p, const B& b, std::string_view eta,
                         std::string_view alpha) {
  return fmt::format("  {:<24}{:>4}{:>7}{:>7}{:>7}", strategy, p, b, eta, alpha);
}

std::string name_columns(const Candidate& c) {
  return name_columns(c.label(), c.p, c.b, shortest(c.eta), shortest(c.alpha));
}

Json config_json(const Request& r) {
  Json cfg = Json::object();
  cfg["command"] = "recommend";
  cfg["platform"] = r.platform;
  cfg["hosts"] = r.hosts;
  cfg["cores"] = r.cores;
  cfg["problem"] = r.problem.name;
  cfg["train_patterns"] = r.problem.train_total;
  cfg["test_patterns"] = r.problem.test_total;
  cfg["target"] = {{"kind", r.by_epoch() ? "epoch_seconds" : "error"}, {"value", r.target}};
  if (!r.by_epoch()) {
    cfg["target_error"] = r.target;
    cfg["error_metric"] = to_string(r.metric);
  }
  cfg["strategies"] = strategy_list(r.space);
  cfg["np"] = join_numbers(r.space.nps);
  cfg["blocks"] = join_numbers(r.space.blocks);
  if (!r.by_epoch()) {
    cfg["etas"] = join_numbers(r.space.etas);
    cfg["alphas"] = join_numbers(r.space.alphas);
    cfg["intervals"] = join_numbers(r.space.intervals);
  }
  cfg["allreduces"] = join(r.space.allreduces, ",");
  if (r.by_model) {
    cfg["screen"] = "model";
    cfg["confirm"] = r.confirm;
    cfg["batches"] = join_numbers(r.space.batches);
    cfg["shardings"] = join(r.space.shardings, ",");
    cfg["shard_algorithms"] = join(r.space.shard_algorithms, ",");
  }
  cfg["bucket_sizes"] = join_numbers(r.space.bucket_bytes);
  cfg["gradient_bytes"] = r.gradient_bytes();
  if (!r.by_epoch()) {
    cfg["finalists"] = r.finalists;
    cfg["max_epochs"] = r.max_epochs;
    cfg["prune"] = r.prune;
  }
  cfg["seed"] = r.seed;
  cfg["jobs"] = r.jobs;
  Json common_json = Json::array();
  for (std::size_t i = 1; i < r.common.size(); ++i) common_json.push_back(r.common[i]);
  cfg["train_args"] = std::move(common_json);
  Json sim_json = Json::array();
  for (const std::string& a : r.sim_args) sim_json.push_back(a);
  cfg["sim_args"] = std::move(sim_json);
  cfg["versions"] = versions_json();
  return cfg;
}

// No run reached the target: the lowest error any sequential run came to, and where.
void print_no_choice(const Request& r, const Search& s, std::ostream& out) {
  out << "no configuration reached " << r.metric_name() << " <= " << shortest(r.target) << " within " << r.max_epochs
      << " iterations";
  double best = std::numeric_limits<double>::quiet_NaN();
  std::size_t at = 0;
  for (std::size_t k = 0; k < s.points.size(); ++k)
    if (!(s.convergence[k].best_error >= best)) best = s.convergence[k].best_error, at = k;
  if (std::isfinite(best))
    fmt::print(out, "; the lowest error, {:.5g}, came from b {}, eta {}, alpha {} in iteration {}", best,
               s.points[at].b, shortest(s.points[at].eta), shortest(s.points[at].alpha),
               s.convergence[at].best_iteration);
  out << "\n";
}

// What was skipped and why; with learning, each one's eta and alpha.
void print_skipped(const std::vector<Candidate>& candidates, bool learning, std::ostream& out) {
  if (!count_skipped(candidates)) return;
  out << "skipped:\n";
  for (const Candidate& c : candidates) {
    if (c.skipped.empty()) continue;
    out << "  " << c.label() << ", p " << c.p << ", b " << c.b;
    if (learning) out << ", eta " << shortest(c.eta) << ", alpha " << shortest(c.alpha);
    out << ": " << c.skipped << "\n";
  }
}

// "yes", or "no" and how far over the target.
std::string meets_text(const Candidate& c, double target_s) {
  return c.meets ? "yes" : "no (+" + percent(100 * (c.epoch_s / target_s - 1)) + ")";
}

// The rules of a time per epoch, as the report prints them and the record keeps them.
constexpr const char* epoch_rule =
    "epoch = ceil(n / b) x the second update's simulated time (numerics off): the training pass of n samples in "
    "updates of b over all ranks, the last one counted whole where b does not divide n; the check pass of a wulf "
    "iteration left out; the second update = the simulated time of an epoch of 2b samples less that of b, the "
    "error sums and check pass after each cancelling (without a test set the check pass runs over the training "
    "set: its b more samples' time, rank 0's check time per sample x the growth of the largest rank share, is "
    "taken off); updates after the first each take the second's time, the first is taken as one of them";
constexpr const char* choice_rule =
    "of the candidates whose epoch is at most the target, the fewest processors, then the shorter epoch, then "
    "the list's order; when none is within it, none is chosen and the fastest is named";
constexpr const char* model_rule =
    "update = the platform model's (wulf model --overlap, --strategy fsdp: the compute the simulation charges, "
    "each collective's steps on the routes SimGrid reads); epoch = ceil(n / b) updates; the confirmed candidates "
    "simulated as a time per epoch is (epoch)";
constexpr const char* ranking_rule =
    "the candidates whose modelled epoch is at most the target first, on the fewest processors, then the shorter "
    "epoch; then the others by their epoch; at equal terms the list's order";

}  // namespace

std::string quoted_command(const std::vector<std::string>& args) {
  std::string s = "wulf";
  for (const std::string& a : args) {
    const bool plain = a.find_first_of(" \t\"'$;&|<>*?()") == std::string::npos && !a.empty();
    s += " " + (plain ? a : "'" + a + "'");
  }
  return s;
}

std::string Request::metric_name() const {
  return metric == ErrorMetric::classification ? "class error" : std::string(to_string(metric));
}

std::size_t Request::gradient_bytes() const {
  std::size_t values = 0;
  for (const GradientTensor& t : tensors) values += t.values;
  return values * value_bytes;
}

std::vector<std::string> Request::simulation_args(const Candidate& c) const {
  std::vector<std::string> a = common;
  a.insert(a.end(), sim_args.begin(), sim_args.end());
  const std::vector<std::string> own = candidate_args(c);
  a.insert(a.end(), own.begin(), own.end());
  return a;
}

std::vector<std::string> Request::confirm_args(const Candidate& c) const {
  std::vector<std::string> a = simulation_args(c);
  a.insert(a.end(), {"--epochs", epochs()});
  return a;
}

std::vector<std::string> Request::update_args(const Candidate& c, std::size_t samples) const {
  std::vector<std::string> a = common;
  a.insert(a.end(), sim_args.begin(), sim_args.end());
  const std::vector<std::string> own = candidate_args(c, false);
  a.insert(a.end(), own.begin(), own.end());
  a.insert(a.end(), {"--train-size", std::to_string(samples), "--epochs", "1"});
  return a;
}

std::vector<std::string> Request::epoch_args(const Candidate& c) const { return update_args(c, problem.train_total); }

Verdict decide(const std::vector<Candidate>& candidates) {
  Verdict v;
  v.estimate_reference = sequential_estimate_reference(candidates);
  v.reference = best_sequential(candidates);
  v.choice = best_confirmed(candidates);
  v.reference_s = v.reference >= 0 ? candidates[static_cast<std::size_t>(v.reference)].confirmed->time_s : 0;
  return v;
}

Json WallTimes::json() const {
  Json wall = Json::object();
  wall["timing_s"] = timing_s;
  wall["convergence_s"] = convergence_s;
  wall["screening_s"] = screening_s;
  wall["confirmation_s"] = confirmation_s;
  wall["total_s"] = total_s;
  wall["processes"] = processes;
  wall["runs_at_once"] = runs_at_once;
  return wall;
}

std::string wall_seconds(double s) { return fixed(s, 1) + " s"; }

void print_search(const Request& r, const std::vector<Candidate>& candidates, std::ostream& out) {
  const SearchSpace& space = r.space;
  const std::size_t skipped = count_skipped(candidates);
  out << "wulf recommend: " << r.problem.name << " (" << r.problem.train_total << " training, " << r.problem.test_total
      << " test patterns) on " << r.platform << " (" << r.hosts << " hosts, " << r.cores << " cores)\n";
  if (r.by_epoch())
    out << "  target: an epoch in at most " << shortest(r.target) << " s simulated: its training pass, ceil("
        << r.problem.train_total << " / b) updates of b samples over all ranks (the check pass left out)\n"
        << "  search: strategies " << strategy_list(space) << "; p " << join_numbers(space.nps)
        << (space.batches.empty() ? "; b " + join_numbers(space.blocks) : "; a GPU's batch " + join_numbers(space.batches));
  else
    out << "  target: " << r.metric_name() << " <= " << shortest(r.target) << " within " << r.max_epochs
        << " iterations, seed " << r.seed << "\n"
        << "  search: strategies " << strategy_list(space) << "; p " << join_numbers(space.nps) << "; b "
        << join_numbers(space.blocks) << "; eta " << join_numbers(space.etas) << "; alpha "
        << join_numbers(space.alphas);
  if (std::any_of(space.strategies.begin(), space.strategies.end(),
                  [](Strategy s) { return !s->search->interval_option.empty(); }))
    out << "; average intervals " << join_numbers(space.intervals);
  if (!space.allreduces.empty()) out << "; allreduce " << join(space.allreduces, ",");
  if (!space.shardings.empty()) out << "; sharding " << join(space.shardings, ",");
  if (!space.shard_algorithms.empty()) out << "; shard algorithm " << join(space.shard_algorithms, ",");
  if (!space.bucket_bytes.empty()) {
    std::vector<std::string> sizes;
    for (std::size_t k = 0; k < space.bucket_bytes.size(); ++k)
      sizes.push_back(std::to_string(space.bucket_bytes[k]) + " (" + std::to_string(space.bucket_counts[k]) + ")");
    out << "; overlap's bucket bytes (buckets of the " << human_bytes(static_cast<double>(r.gradient_bytes()))
        << " gradient) " << join(sizes, ", ");
  }
  out << ": " << candidates.size() - skipped << " candidates";
  if (skipped) out << " (" << skipped << " more skipped)";
  out << "\n" << std::flush;
}

void print_convergence(const Request& r, const Search& s, std::ostream& out) {
  fmt::print(out, "{:>8}{:>9}{:>8}   iterations to the target (sequential)\n", "b", "eta", "alpha");
  for (std::size_t k = 0; k < s.points.size(); ++k) {
    const RunOutcome& run = s.convergence[k];
    fmt::print(out, "{:>8}{:>9}{:>8}   {}\n", s.points[k].b, shortest(s.points[k].eta), shortest(s.points[k].alpha),
               run.reached ? std::to_string(run.iterations) : "never: " + never_text(run, r.max_epochs));
  }
}

void print_estimates(const Request& r, const std::vector<Candidate>& candidates, std::ostream& out) {
  const std::vector<std::size_t> ranked = rank_by_estimate(candidates);
  if (ranked.empty()) return;
  const double reference = sequential_estimate_reference(candidates);
  const std::size_t show = static_cast<std::size_t>(r.show);
  const bool hiding = std::any_of(ranked.begin(), ranked.end(), [&](std::size_t i) { return candidates[i].hides(); });
  out << "screening estimates (simulated time per iteration x sequential iterations), fastest first";
  if (hiding)
    out << "; overlap's communication per iteration after the backward pass (exposed), the same buckets started "
           "after it (alone) and the part hidden";
  out << ":\n";
  const std::string head = name_columns("strategy", "p", "b", "eta", "alpha") + fmt::format("{:>13}", "s/iteration") +
                           (hiding ? fmt::format("{:>11}{:>11}{:>8}", "exposed s", "alone s", "hidden") : "");
  fmt::print(out, "{}{:>12}{:>12}{:>10}\n", head, "iterations", "time_s", "speed-up");
  for (std::size_t k = 0; k < ranked.size() && k < show; ++k) {
    const Candidate& c = candidates[ranked[k]];
    std::string row = name_columns(c) + fmt::format("{:>13}", secs(c.iteration_s));
    if (hiding)
      row += fmt::format("{:>11}{:>11}{:>8}", secs(c.exposed_s), secs(c.alone_s),
                         std::isfinite(c.hidden) ? fixed(100 * c.hidden, 1) + "%" : "-");
    fmt::print(out, "{}{:>12}{:>12}{:>10}{}\n", row, c.estimate_iterations, secs(c.estimate_s),
               reference > 0 ? fixed(reference / c.estimate_s, 2) : "-",
               c.basis == ConvergenceBasis::assumed ? "  (iterations assumed)" : "");
  }
  if (ranked.size() > show) out << "  ... " << ranked.size() - show << " more in the record\n";
}

void print_confirmed(const Request& r, const Search& s, const Verdict& v, std::ostream& out) {
  if (s.finalists.empty()) return;
  out << "fastest configurations to the target, confirmed (simulated seconds on " << r.platform << "):\n";
  fmt::print(out, "{}{:>12}{:>12}{:>10}{:>11}\n", name_columns("strategy", "p", "b", "eta", "alpha"), "time_s",
             "iterations", "speed-up", "estimate");
  for (std::size_t i : order_by_confirmed(s.candidates, s.finalists)) {
    const Candidate& c = s.candidates[i];
    const RunOutcome& o = *c.confirmed;
    out << name_columns(c);
    if (o.reached)
      fmt::print(out, "{:>12}{:>12}{:>10}{:>10}\n", secs(o.time_s), o.iterations,
                 v.reference_s > 0 ? fixed(v.reference_s / o.time_s, 2) : "-",
                 c.estimate_s > 0 ? percent_change(o.time_s, c.estimate_s) : "-");
    else if (o.status == "time_limit")
      fmt::print(out, "  slower: stopped at {} s, iteration {}, error {:.5g} (the best before it took {} s)\n",
                 secs(o.time_s), o.iterations, o.final_error, secs(c.bound_s));
    else
      out << "  never: " << never_text(o, r.max_epochs) << "\n";
  }
}

// The learning points that never reached the target, and what was skipped.
void print_left_out(const Request& r, const Search& s, std::ostream& out) {
  std::vector<std::string> never;
  for (std::size_t k = 0; k < s.points.size(); ++k)
    if (!s.convergence[k].reached)
      never.push_back("b " + std::to_string(s.points[k].b) + ", eta " + shortest(s.points[k].eta) + ", alpha " +
                      shortest(s.points[k].alpha) + ": " + never_text(s.convergence[k], r.max_epochs));
  if (!never.empty()) {
    out << "never reached by the sequential run, so left out of the estimates:\n";
    for (const std::string& line : never) out << "  " << line << "\n";
  }
  print_skipped(s.candidates, true, out);
}

// The record without its wall times: every candidate, the screening and the confirmation,
// the reference and the choice.
Json search_record(const Request& r, const Search& s, const Verdict& v) {
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = config_json(r);
  Json conv = Json::array();
  for (std::size_t k = 0; k < s.points.size(); ++k) {
    Json e = outcome_json(s.convergence[k]);
    e["engine"] = "seq";  // time_s: wall seconds here; only iterations and errors matter
    e["b"] = s.points[k].b;
    e["eta"] = s.points[k].eta;
    e["alpha"] = s.points[k].alpha;
    conv.push_back(std::move(e));
  }
  record["convergence"] = std::move(conv);
  Json all = Json::array();
  for (const Candidate& c : s.candidates) all.push_back(candidate_json(c, v.estimate_reference, v.reference_s));
  record["candidates"] = std::move(all);
  if (v.reference >= 0)
    record["reference"] =
        candidate_json(s.candidates[static_cast<std::size_t>(v.reference)], v.estimate_reference, v.reference_s);
  else
    record["reference"] = nullptr;
  if (v.choice >= 0) {
    const Candidate& c = s.candidates[static_cast<std::size_t>(v.choice)];
    Json j = candidate_json(c, v.estimate_reference, v.reference_s);
    j["time_s"] = c.confirmed->time_s;
    j["iterations"] = c.confirmed->iterations;
    j["speedup"] = v.reference_s > 0 ? Json(v.reference_s / c.confirmed->time_s) : Json(nullptr);
    j["command"] = r.confirm_args(c);
    record["choice"] = std::move(j);
  } else {
    record["choice"] = nullptr;
  }
  return record;
}

void print_recommendation(const Request& r, const Search& s, const Verdict& v, std::ostream& out) {
  if (v.choice < 0) return print_no_choice(r, s, out);
  const Candidate& c = s.candidates[static_cast<std::size_t>(v.choice)];
  out << "recommended: " << c.label() << ", p " << c.p << ", b " << c.b << ", eta " << shortest(c.eta) << ", alpha "
      << shortest(c.alpha) << ": " << r.metric_name() << " <= " << shortest(r.target) << " in "
      << secs(c.confirmed->time_s) << " s simulated, " << c.confirmed->iterations << " iterations";
  if (v.reference == v.choice) {
    out << "; it is the fastest sequential configuration (speed-up 1)";
  } else if (v.reference_s > 0) {
    const Candidate& seq = s.candidates[static_cast<std::size_t>(v.reference)];
    out << "; speed-up " << fixed(v.reference_s / c.confirmed->time_s, 2)
        << " over the best sequential configuration (b " << seq.b << ", eta " << shortest(seq.eta) << ", alpha "
        << shortest(seq.alpha) << ": " << secs(v.reference_s) << " s)";
  }
  out << "\n  " << quoted_command(r.confirm_args(c)) << "\n";
}

void print_epochs(const Request& r, const std::vector<Candidate>& candidates, long choice, std::ostream& out) {
  const std::vector<std::size_t> order = order_by_processors(candidates);
  const bool hiding = std::any_of(order.begin(), order.end(), [&](std::size_t i) { return candidates[i].hides(); });
  if (!order.empty()) {
    out << "time per epoch, simulated: ceil(n / b) updates x the second update's time, fewest processors first";
    if (hiding)
      out << "; overlap's communication per update after the backward pass (exposed), the same buckets started "
             "after it (alone) and the part hidden";
    out << ":\n";
    std::string head =
        fmt::format("  {:<24}{:>5}{:>8}{:>9}{:>12}{:>12}", "strategy", "p", "b", "updates", "s/update", "epoch s");
    if (hiding) head += fmt::format("{:>12}{:>12}{:>8}", "exposed s", "alone s", "hidden");
    out << head << fmt::format("   meets {} s", shortest(r.target)) << "\n";
    for (std::size_t i : order) {
      const Candidate& c = candidates[i];
      std::string row = fmt::format("  {:<24}{:>5}{:>8}{:>9}{:>12}{:>12}", c.label(), c.p, c.b, c.updates,
                                    secs(c.update_s), secs(c.epoch_s));
      if (hiding)
        row += fmt::format("{:>12}{:>12}{:>8}", secs(c.exposed_s), secs(c.alone_s),
                           std::isfinite(c.hidden) ? fixed(100 * c.hidden, 1) + "%" : "-");
      out << row << "   " << meets_text(c, r.target) << (static_cast<long>(i) == choice ? "  <- recommended" : "")
          << "\n";
    }
  }
  print_skipped(candidates, false, out);
}

void print_epoch_recommendation(const Request& r, const std::vector<Candidate>& candidates, long choice,
                                std::ostream& out) {
  if (choice < 0) {
    out << "no configuration trains an epoch in at most " << shortest(r.target) << " s simulated";
    if (const long f = fastest_epoch(candidates); f >= 0) {
      const Candidate& c = candidates[static_cast<std::size_t>(f)];
      out << "; the fastest is " << c.label() << ", p " << c.p << ", b " << c.b << ": " << secs(c.epoch_s)
          << " s an epoch (" << c.updates << " updates of " << secs(c.update_s) << " s)";
    } else {
      out << "; no candidate could be timed";
    }
    out << "\n";
    return;
  }
  const Candidate& c = candidates[static_cast<std::size_t>(choice)];
  out << "recommended: " << c.label() << ", p " << c.p << ", b " << c.b << ": an epoch in " << secs(c.epoch_s)
      << " s simulated (" << c.updates << " updates of " << secs(c.update_s) << " s), within " << shortest(r.target)
      << " s on the fewest processors\n"
      << "  one epoch of it simulated whole, its check pass included:\n"
      << "  " << quoted_command(r.epoch_args(c)) << "\n";
}

Json epoch_record(const Request& r, const std::vector<Candidate>& candidates, long choice) {
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = config_json(r);
  record["rule"] = {{"epoch", epoch_rule}, {"choice", choice_rule}};
  Json all = Json::array();
  for (const Candidate& c : candidates) all.push_back(epoch_candidate_json(c));
  record["candidates"] = std::move(all);
  if (choice >= 0) {
    const Candidate& c = candidates[static_cast<std::size_t>(choice)];
    Json j = epoch_candidate_json(c);
    j["epoch_s"] = c.epoch_s;
    j["command"] = r.epoch_args(c);
    record["choice"] = std::move(j);
  } else {
    record["choice"] = nullptr;
  }
  const long f = fastest_epoch(candidates);
  record["fastest"] = f >= 0 ? epoch_candidate_json(candidates[static_cast<std::size_t>(f)]) : Json(nullptr);
  return record;
}

Json model_record(const Request& r, const std::vector<Candidate>& candidates, const std::vector<std::size_t>& ranking,
                  const std::vector<std::size_t>& confirmed, const std::vector<std::string>& passed_over) {
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = config_json(r);
  record["rule"] = {{"model", model_rule}, {"epoch", epoch_rule}, {"ranking", ranking_rule}};
  Json all = Json::array();
  for (const Candidate& c : candidates) all.push_back(model_candidate_json(c));
  record["candidates"] = std::move(all);
  record["ranking"] = ranking;
  record["confirmed"] = confirmed;
  record["passed_over"] = passed_over;
  if (!ranking.empty()) {
    record["choice"] = model_candidate_json(candidates[ranking.front()]);
    record["choice"]["command"] = r.epoch_args(candidates[ranking.front()]);
  } else {
    record["choice"] = nullptr;
  }
  return record;
}

void print_wall_times(const WallTimes& wall, std::ostream& out) {
  fmt::print(
      out,
      "wall time: screening {:.1f} s (timing {:.1f} s, convergence {:.1f} s), confirmation {:.1f} s, total {:.1f} s\n",
      wall.screening_s, wall.timing_s, wall.convergence_s, wall.confirmation_s, wall.total_s);
}

}  // namespace wulf
