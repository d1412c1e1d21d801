// Master-worker batch training by Polak-Ribiere conjugate gradient (seed 002 sections 4.2,
// 4.3, 5.1 and 6.2; --strategy cg). The objective is the training loss per pattern,
//   f(w) = E(w) / P,   grad f = (sum over the patterns of dE/dw) / P,
// over the P patterns of a pass (all of them, or with load balancing those the ranks got
// through), for any net wulf builds (seed 002: tanh units and the mean squared error).
//
// Rank 0 is the master. The weights go to every rank ONCE, before the first iteration;
// after that each iteration (one CG step) moves
//   gradient pass   every rank: the error and gradient of its patterns at w; MPI_Reduce of
//                   the gradient (w values) and of [E, P] to the master (comm.reduce_sum, so
//                   --reduce picks the algorithm);
//   direction       the master: d by Polak-Ribiere, f'(0) = grad f . d;
//   line search     the master: line_search (cg.hpp); each probe of f'(s) is a broadcast of
//                   [command, s] (the first one followed by d, w values: the iteration's one
//                   large broadcast), a pass at w0 + s d on every rank and MPI_Reduce of the
//                   scalars [E, P, g . d];
//   step            a last broadcast [accept, s]: every rank sets w = w0 + s d itself, with
//                   the same arithmetic, so the weights stay the same everywhere.
// With one rank every collective is skipped: that is the sequential run. Without load
// balancing rank 0 computes its share of the patterns too, so no host stands idle.
//
// Faults: when a gradient pass gives an error or gradient that is not finite, or the line
// search fails (flat, rising, no sign change, a slope that is not finite), the master
// broadcasts [stop, 0, reason] instead of [accept, s]: every rank goes back to w0 and asks
// Run to stop, and Run puts the last good weights back (wulf train exits with 3).
// Without the arithmetic (--numerics off, time only) there is nothing to search with: each
// line search is charged as --cg-refinements probes at the previous step, which is the
// real run's time when its search brackets the minimum at the first probe. --cg-probes M
// charges M probes per search on average instead (iteration i brings the total to
// round(i M)): given a real run's mean, the time-only run takes that run's time.
//
// Load balancing (--load-balance FRACTION --chunk C, seed 002 section 6.2): rank 0 is a
// pure master that holds no data and computes nothing; ranks 1..p-1 share the data. In
// every pass (gradient or probe) a worker steps through its patterns, from its first, C at
// a time, and after each chunk polls the master (a message [patterns, exhausted] to rank 0,
// answered continue or stop). Once FRACTION of the training set has been consumed over all
// workers (or every worker has run out), each worker is told to stop at its next poll and
// returns what it has, so a fast worker waits at most one chunk of the slowest instead of
// the slowest's whole share. A worker that ran out of patterns waits for the stop. Passes
// may then cover different patterns; f and grad f are always per pattern of the pass.
#include "nn/cg.hpp"
#include "util/errors.hpp"
#include "data/partition.hpp"
#include "train/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

namespace wulf {
namespace {

// The cg settings of config (its options, wulf train --help's "conjugate gradient").
CgConfig cg_config(const TrainConfig& config) {
  CgConfig cg;
  cg.initial_step = setting(config, "cg-step");
  cg.max_expansions = static_cast<int>(std::clamp(setting(config, "cg-expansions"), -1.0, 1001.0));
  cg.refinements = static_cast<int>(std::clamp(setting(config, "cg-refinements"), 0.0, 1001.0));
  cg.flat_tolerance = setting(config, "cg-flat");
  cg.time_only_probes = setting(config, "cg-probes");
  cg.load_balance = setting(config, "load-balance");
  cg.chunk = setting_count(config, "chunk");
  return cg;
}

// Beyond each option's range (checked first, check_strategy): the rules between them.
void check_cg(const TrainConfig& config, int np, bool numerics) {
  const CgConfig cg = cg_config(config);
  if (cg.time_only_probes != 0 && numerics)
    throw InputError("--cg-probes is for --numerics off (a run with the arithmetic probes as its search needs)");
  if (cg.time_only_probes != 0 && !(cg.time_only_probes >= cg.refinements && cg.time_only_probes <= 1e6))
    throw InputError("--cg-probes: the mean probes per line search must be at least --cg-refinements (" +
                     std::to_string(cg.refinements) + "), the fewest a search takes, and at most 1e6");
  // Load balancing needs a master that polls and at least one worker.
  if (cg.load_balance > 0 && np < 2)
    throw InputError("--load-balance: needs at least 2 ranks, a master that polls and a worker (--np " +
                     std::to_string(np) + "; use --engine real or sim with --np 2 or more)");
}

// What the master tells the other ranks between passes: [command, step, stop reason].
enum class Command { first_probe, probe, accept, stop };
using Control = std::array<double, 3>;
// A worker's poll [patterns of the chunk, 1 if it has no patterns left] and the reply.
constexpr double reply_continue = 0, reply_stop = 1;


template <class T>
bool all_finite(std::span<const T> x) {
  for (T v : x)
    if (!std::isfinite(v)) return false;
  return true;
}

std::string text(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

template <class T>
class CgTrainer {
 public:
  using Vector = typename Mlp<T>::Vector;

  explicit CgTrainer(Run<T>& run)
      : run_(run),
        net_(run.net()),
        comm_(run.comm()),
        cg_(cg_config(run.config())),
        p_(run.comm().size()),
        master_(run.comm().rank() == 0),
        balance_(cg_.load_balance > 0),
        n_local_(run.local_count(run.train(), run.sizes().train)),
        order_(identity_order(run.numerics() ? run.train().size() : 0)),
        step_(cg_.initial_step) {
    if (balance_ && p_ < 2)
      throw InputError("--load-balance: needs at least 2 ranks, a master that polls and a worker (--np " +
                       std::to_string(p_) + ")");
    if (run.numerics()) {
      w0_ = Vector::Zero(static_cast<Eigen::Index>(run.weights()));
      d_ = Vector::Zero(static_cast<Eigen::Index>(run.weights()));
    }
    if (balance_) {
      const double n = static_cast<double>(run.sizes().train);
      target_ = std::max(1.0, std::ceil(cg_.load_balance * n - 1e-9));
    }
  }

  TrainResult train() {
    // The one broadcast of the parameters (seed 002 section 5.1).
    if (p_ > 1) run_.collective([&] { comm_.bcast(net_.parameters(), 0); });
    TrainResult result = run_.run([&](int it) { return iteration(it); });
    if (master_) result.stats = stats();
    return result;
  }

 private:
  // ---- one CG step -------------------------------------------------------------------
  ErrorSums iteration(int it) {
    if (run_.numerics()) std::copy(net_.parameters().begin(), net_.parameters().end(), w0_.data());
    const ErrorSums local = pass();
    std::array<double, 2> sums{local.loss, local.patterns};
    reduce(net_.gradients());
    reduce(std::span<double>(sums));
    ++gradient_passes_;
    if (master_) {
      patterns_ += sums[1];
      lead(it, sums[0], sums[1]);
    } else {
      follow();
    }
    return local;
  }

  // The master's part of an iteration: direction, line search, and the step it announces.
  void lead(int it, double loss_sum, double patterns) {
    Control done{static_cast<double>(Command::accept), step_, 0};
    run_.note("patterns", patterns);
    if (!run_.numerics()) {
      // No values to search with: the direction's time as with them, and the time of a line
      // search that brackets at its first probe and interpolates `refinements` times (a
      // real search may probe more: the one place where a time-only cg run can differ).
      run_.kernel(Phase::update, 1, 8.0 * static_cast<double>(run_.weights()), [] {});
      const double mean = cg_.time_only_probes > 0 ? cg_.time_only_probes : cg_.refinements;
      const double probes = std::round(it * mean) - probes_;
      for (int i = 0; i < static_cast<int>(probes); ++i) probe_slope(step_, i == 0);
      probes_ += probes;
      announce(done);
      return;
    }
    // grad f = (sum of dE/dw) / P, in the net's gradient buffer.
    const T inv = static_cast<T>(1.0 / patterns);
    for (T& g : net_.gradients()) g *= inv;
    const double f0 = loss_sum / patterns;
    if (!std::isfinite(f0) || !all_finite<T>(net_.gradients())) {
      fail(it, StopReason::gradient_not_finite,
           "the error or the gradient is not finite (NaN or Inf) in iteration " + std::to_string(it) + " (error " +
               text(f0) + " per pattern)");
      return;
    }
    typename PolakRibiere<T>::Update u;
    run_.kernel(Phase::update, 1, 8.0 * static_cast<double>(run_.weights()), [&] {
      u = pr_.next(std::span<const T>(net_.gradients()));
      std::copy(pr_.direction().begin(), pr_.direction().end(), d_.data());
    });
    restarts_ += u.restarted;
    run_.note("slope", u.slope);
    run_.note("beta", u.beta);
    run_.note("restarted", u.restarted ? 1 : 0);

    bool first = true;
    const LineSearchResult ls = line_search(u.slope, step_, [&](double s) {
      const double slope = probe_slope(s, first);
      first = false;
      return slope;
    }, cg_);
    probes_ += ls.probes;
    expansions_ += ls.expansions;
    run_.note("probes", ls.probes);
    run_.note("step", ls.step);
    if (ls.status != LineSearchStatus::ok) {
      const bool nan = ls.status == LineSearchStatus::not_finite;
      fail(it, nan ? StopReason::gradient_not_finite : StopReason::line_search_failed,
           std::string(nan ? "the gradient is not finite in the line search of iteration "
                           : "the line search of iteration ") +
               std::to_string(it) + (nan ? ": " : " failed (" + std::string(to_string(ls.status)) + "): ") +
               ls.detail);
      return;
    }
    step_ = ls.step;
    step_sum_ += ls.step;
    done[1] = ls.step;
    announce(done);
  }

  // The other ranks' part: passes at the steps the master names until it accepts or stops.
  void follow() {
    for (;;) {
      Control c{};
      broadcast(std::span<double>(c));
      switch (static_cast<Command>(static_cast<int>(c[0]))) {
        case Command::first_probe:
          broadcast(direction());
          [[fallthrough]];
        case Command::probe:
          probe_pass(c[1]);
          break;
        case Command::accept:
          set_weights(c[1]);
          return;
        case Command::stop:
          set_weights(0);
          run_.request_stop(static_cast<StopReason>(static_cast<int>(c[2])), "stopped by rank 0");
          return;
      }
    }
  }

  // Master: f'(s), from a pass of every rank at w0 + s d.
  double probe_slope(double s, bool first) {
    Control c{static_cast<double>(first ? Command::first_probe : Command::probe), s, 0};
    broadcast(std::span<double>(c));
    if (first) broadcast(direction());
    const std::array<double, 3> sums = probe_pass(s);
    return sums[2] / sums[1];
  }

  // Every rank: a pass at w0 + s d; returns [E, P, grad E . d] summed at the master.
  std::array<double, 3> probe_pass(double s) {
    set_weights(s);
    const ErrorSums local = pass();
    std::array<double, 3> sums{local.loss, local.patterns, 0};
    run_.kernel(Phase::update, 1, 2.0 * static_cast<double>(run_.weights()),
                [&] { sums[2] = dot_in_order<T>(net_.gradients(), direction()); });
    reduce(std::span<double>(sums));
    return sums;
  }

  // Master: ends the iteration with a fault; every rank goes back to w0.
  void fail(int, StopReason reason, const std::string& why) {
    announce({static_cast<double>(Command::stop), 0, static_cast<double>(static_cast<int>(reason))});
    run_.request_stop(reason, why);
  }

  // Master: the last word of an iteration (accept or stop), which it follows itself.
  void announce(Control c) {
    broadcast(std::span<double>(c));
    set_weights(static_cast<Command>(static_cast<int>(c[0])) == Command::accept ? c[1] : 0);
  }

  // w = w0 + s d, the same expression on every rank.
  void set_weights(double s) {
    run_.kernel(Phase::update, 1, 2.0 * static_cast<double>(run_.weights()), [&] {
      Eigen::Map<Vector> w(net_.parameters().data(), w0_.size());
      if (s == 0)
        w = w0_;
      else
        w = w0_ + static_cast<T>(s) * d_;
    });
  }

  // d, or without the arithmetic a stand-in of the same size (the parameters, which the
  // simulated ranks share), so that its broadcast costs the same.
  std::span<T> direction() {
    if (run_.numerics()) return {d_.data(), static_cast<std::size_t>(d_.size())};
    return net_.parameters();
  }

  // ---- one pass over this rank's patterns ----------------------------------------------
  // The error and gradient sums of the rank's patterns at the net's weights, the gradient
  // into net.gradients(). With load balancing the master serves the polls instead and the
  // workers stop when it says.
  ErrorSums pass() {
    ErrorSums sums = run_.empty_sums();
    if (run_.numerics()) net_.zero_gradients();
    if (!balance_) {
      for (std::size_t first = 0; first < n_local_; first += run_.config().eval_chunk)
        chunk(first, std::min(run_.config().eval_chunk, n_local_ - first), sums);
      return sums;
    }
    if (master_) {
      serve_polls();
      return sums;
    }
    for (std::size_t done = 0;;) {
      const std::size_t count = std::min(cg_.chunk, n_local_ - done);
      if (count > 0) chunk(done, count, sums);
      done += count;
      const std::array<double, 2> poll{static_cast<double>(count), done == n_local_ ? 1.0 : 0.0};
      std::array<double, 1> reply{};
      run_.poll([&] {
        comm_.send(std::span<const double>(poll), 0);
        comm_.recv(std::span<double>(reply), 0);
      });
      if (reply[0] == reply_stop) return sums;
    }
  }

  // Forward and backward of the rank's patterns [first, first + count), gradients added up.
  void chunk(std::size_t first, std::size_t count, ErrorSums& sums) {
    run_.kernel(Phase::forward, count, run_.flops().forward * static_cast<double>(count), [&] {
      net_.forward(run_.gather(run_.train(), order_, first, count).x);
    });
    run_.kernel(Phase::backward, count, run_.flops().backward * static_cast<double>(count), [&] {
      const auto block = run_.last_block();
      const double loss = static_cast<double>(net_.backward(block.t, true));
      sums.add(net_.outputs(), block.t, loss, block.labels.empty() ? nullptr : block.labels.data(),
               run_.train().decision_threshold);
    });
  }

  // Master: answers the workers' polls until every one of them has been told to stop.
  void serve_polls() {
    const int workers = p_ - 1;
    std::vector<char> waiting(static_cast<std::size_t>(p_), 0);  // ran out, waits for the stop
    int told = 0, exhausted = 0;
    double consumed = 0;
    bool stopping = false;
    const std::array<double, 1> go{reply_continue}, halt{reply_stop};
    run_.poll([&] {
      while (told < workers) {
        std::array<double, 2> msg{};
        const int from = comm_.recv(std::span<double>(msg), Comm::any_source);
        consumed += msg[0];
        ++chunks_;
        const bool out = msg[1] != 0;
        exhausted += out;
        if (!stopping && (consumed >= target_ || exhausted == workers)) {
          stopping = true;
          for (int r = 1; r < p_; ++r)
            if (waiting[static_cast<std::size_t>(r)]) comm_.send(std::span<const double>(halt), r), ++told;
        }
        if (stopping) {
          comm_.send(std::span<const double>(halt), from), ++told;
        } else if (out) {
          waiting[static_cast<std::size_t>(from)] = 1;
        } else {
          comm_.send(std::span<const double>(go), from);
        }
      }
    });
    if (consumed < static_cast<double>(run_.sizes().train)) ++early_stops_;
  }

  // ---- collectives (none with one rank) --------------------------------------------------
  template <class U>
  void reduce(std::span<U> data) {
    if (p_ > 1) run_.collective([&] { comm_.reduce_sum(data, 0); });
  }
  template <class U>
  void broadcast(std::span<U> data) {
    if (p_ > 1) run_.collective([&] { comm_.bcast(data, 0); });
  }

  std::vector<std::pair<std::string, double>> stats() const {
    std::vector<std::pair<std::string, double>> s{
        {"gradient_passes", gradient_passes_},
        {"line_search_probes", probes_},
        {"line_search_expansions", expansions_},
        {"restarts", restarts_},
        {"mean_step", gradient_passes_ > 0 ? step_sum_ / gradient_passes_ : 0},
        {"mean_patterns_per_gradient_pass", gradient_passes_ > 0 ? patterns_ / gradient_passes_ : 0}};
    if (balance_) {
      s.emplace_back("target_patterns_per_pass", target_);
      s.emplace_back("chunks", chunks_);
      s.emplace_back("passes_stopped_early", early_stops_);
    }
    return s;
  }

  Run<T>& run_;
  Mlp<T>& net_;
  Comm& comm_;
  const CgConfig cg_;
  const int p_;
  const bool master_, balance_;
  const std::size_t n_local_;           // this rank's training patterns
  const std::vector<std::size_t> order_;  // 0, 1, ...: a batch method needs no shuffle
  Vector w0_;                           // (w) the weights at the start of the iteration
  Vector d_;                            // (w) the search direction
  PolakRibiere<T> pr_;                  // master: the direction state
  double step_;                         // master: s0 of the next line search
  double target_ = 0;                   // master, load balancing: patterns per pass
  // Master's totals for the record.
  double gradient_passes_ = 0, probes_ = 0, expansions_ = 0, restarts_ = 0, step_sum_ = 0, patterns_ = 0;
  double chunks_ = 0, early_stops_ = 0;
};

}  // namespace

template <class T>
TrainResult train_cg(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                     const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  // With load balancing rank 0 only polls: it holds no data (DataLayout::workers).
  Run<T> run(net, train, test, sizes, config, comm, compute, progress,
             RunOptions{.check_target = true, .pure_master = cg_config(config).load_balance > 0});
  CgTrainer<T> trainer(run);
  return trainer.train();
}

WULF_INSTANTIATE_STRATEGY(train_cg);

namespace {

using Kind = StrategyOption::Kind;

// Seed 002's conjugate gradient: f is the training loss per pattern, f'(s) its slope along
// the search direction d at step s.
constexpr StrategyOption cg_options[] = {
    {.name = "cg-step",
     .key = "cg.initial_step",
     .kind = Kind::number,
     .help = "first step of the first line search (later ones start at the previous accepted step)",
     .default_value = 1.0,
     .range = {.lo = 0, .hi = 1e30, .lo_open = true}},
    {.name = "cg-expansions",
     .key = "cg.max_expansions",
     .help = "most doublings (or halvings) of the step in search of a sign change of f'",
     .default_value = 30,
     .range = {.lo = 0, .hi = 1000}},
    {.name = "cg-refinements",
     .key = "cg.refinements",
     .help = "quadratic interpolations in the bracket; all but the last are probed (>= 1)",
     .default_value = 2,
     .range = {.lo = 1, .hi = 1000}},
    {.name = "cg-probes",
     .key = "cg.time_only_probes",
     .kind = Kind::number,
     .help = "with --numerics off: mean line-search probes per iteration to charge, e.g. a real run's "
             "line_search_probes / iterations (0: --cg-refinements, the fewest a search takes)",
     .range = {.lo = 0, .hi = 1e6},
     .record_may_omit = true},
    {.name = "cg-flat",
     .key = "cg.flat_tolerance",
     .kind = Kind::number,
     .help = "|f'(0)| at or below this is a flat direction, which stops training (0: only an exact 0)",
     .range = {.lo = 0, .hi = 1e6}},
    {.name = "load-balance",
     .key = "cg.load_balance",
     .kind = Kind::number,
     .help = "FRACTION: rank 0 only polls, ranks 1.. end each pass once this fraction of the training set is "
             "consumed (0: off; needs --np >= 2)",
     .range = {.lo = 0, .hi = 1}},
    {.name = "chunk",
     .key = "cg.chunk",
     .help = "with --load-balance: patterns a rank takes between polls",
     .default_value = 64,
     .range = {.lo = 1, .hi = 2147483647},
     .record_may_omit = true},
};

}  // namespace

extern const StrategyDescriptor cg_strategy{
    .name = "cg",
    .help = "master-worker batch conjugate gradient, seed 002",
    .options_title = "conjugate gradient (--strategy cg, seed 002)",
    .options = cg_options,
    .learning = momentum_learning,
    .layout = [](const TrainConfig& c) {
      return cg_config(c).load_balance > 0 ? DataLayout::workers : DataLayout::shares;
    },
    .check = check_cg,
    .plan = [](const TrainConfig& c) {
      const CgConfig cg = cg_config(c);
      std::string plan = fmt::format("Polak-Ribiere conjugate gradient on the whole training set, line search from "
                                     "step {:g} with {} interpolation(s)", cg.initial_step, cg.refinements);
      if (cg.load_balance > 0)
        plan += fmt::format(", load balancing: passes end at {:g} of the patterns, polls every {} patterns",
                            cg.load_balance, cg.chunk);
      return plan;
    },
    // The method in words, and the settings as the run uses them.
    .record = [](const TrainConfig& c, bool numerics, Json& config) {
      const CgConfig cg = cg_config(c);
      Json g = Json::object();
      g["direction"] = "polak-ribiere (beta >= 0, restart when not downhill)";
      g["objective"] = "training loss per pattern of the pass";
      g["initial_step"] = cg.initial_step;
      g["max_expansions"] = cg.max_expansions;
      g["refinements"] = cg.refinements;
      if (!numerics) g["time_only_probes"] = cg.time_only_probes > 0 ? cg.time_only_probes : cg.refinements;
      g["flat_tolerance"] = cg.flat_tolerance;
      g["load_balance"] = cg.load_balance;
      g["chunk"] = cg.load_balance > 0 ? Json(cg.chunk) : Json(nullptr);
      g["master"] = cg.load_balance > 0 ? "rank 0 polls only, ranks 1.. hold the data" : "rank 0 computes its share too";
      config["cg"] = std::move(g);
    },
    .memory = [](const MemoryShape& s, const TrainConfig& c, StrategyMemory& m) {
      const CgConfig cg = cg_config(c);
      m.updates_first = m.updates_each = 0;
      m.vectors_first = 4 * s.wT(), m.vectors_each = 2 * s.wT();  // w0 and d; the master's direction state
      m.columns = cg.load_balance > 0 ? static_cast<double>(cg.chunk)
                                      : std::min(static_cast<double>(c.eval_chunk), s.share(s.n, true));
      m.columns_shrink = s.smaller_net;
      if (!s.numerics) m.order_patterns = 0;
      m.reduces_weights = true;
    },
    .reduces = true,
    .broadcasts = true,
    .train_float = train_cg<float>,
    .train_double = train_cg<double>,
};

}  // namespace wulf
