#include "train/session.hpp"
#include "util/errors.hpp"

#include "train/run.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace wulf {

std::vector<TrainConfig> sweep_configs(const TrainConfig& base, const std::string& sweep) {
  std::vector<TrainConfig> out{base};
  for (const std::string& item : split_list(sweep, ';')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw InputError("--sweep: '" + item + "' is not key=value,value,...");
    const std::string key = trim(item.substr(0, eq));
    if (key != "eta" && key != "alpha" && key != "block" && key != "seed")
      throw InputError("--sweep: unknown key '" + key + "' (expected eta, alpha, block or seed)");
    // block and seed are counts: whole numbers, at least 1 and 0.
    const std::vector<double> values =
        key == "eta" || key == "alpha"
            ? number_list(item.substr(eq + 1), "sweep " + key)
            : [&] {
                const std::vector<long long> whole = whole_list(item.substr(eq + 1), "sweep " + key, key == "block" ? 1 : 0);
                return std::vector<double>(whole.begin(), whole.end());
              }();
    std::vector<TrainConfig> next;
    for (const TrainConfig& c : out)
      for (double v : values) {
        TrainConfig d = c;
        if (key == "eta") d.eta = v;
        if (key == "alpha") d.alpha = v;
        if (key == "block") d.block = static_cast<std::size_t>(v), d.learning = Learning::block;
        if (key == "seed") d.seed = static_cast<std::uint64_t>(v);
        next.push_back(d);
      }
    out = std::move(next);
  }
  return out;
}

namespace {

constexpr std::size_t session_fields = 9;  // per session: index, iterations, seconds, status, 3 errors, valid, history entries
constexpr std::size_t history_fields = 5;  // per history entry: SessionOutcome::history's

std::array<double, history_fields> history_entry(const IterationRecord& h, ErrorMetric metric) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {static_cast<double>(h.iteration), h.time_s, h.train_error, h.test ? h.test->error(metric) : nan,
          h.test && h.test->classifier ? h.test->accuracy() : nan};
}

}  // namespace

template <class T>
std::vector<SessionOutcome> train_sessions(const NetSpec& spec, const Dataset& train, const Dataset& test,
                                           const std::vector<TrainConfig>& sessions, Comm& comm, Compute& compute,
                                           PhaseTimes& phases, const std::function<void()>& after_iteration) {
  const int p = comm.size(), q = comm.rank();
  const std::size_t per_rank = (sessions.size() + static_cast<std::size_t>(p) - 1) / static_cast<std::size_t>(p);
  std::vector<double> mine(per_rank * session_fields, 0.0);
  std::vector<double> my_history;  // this rank's sessions' histories, one after another
  SerialComm local(comm);  // each session trains alone, on the run's clock
  const GlobalSizes sizes{train.size(), test.size(), train.has_labels()};
  for (std::size_t slot = 0, i = static_cast<std::size_t>(q); i < sessions.size(); i += static_cast<std::size_t>(p), ++slot) {
    const TrainConfig& c = sessions[i];
    Mlp<T> net(spec);
    Rng init_rng(c.seed);
    Rng weights_rng = init_rng.split(3);
    net.init_uniform(c.init_range, weights_rng);
    // --engine seq: a signal or --timeout ends the sweep after an iteration.
    const TrainResult r = train_block(net, train, test, sizes, c, local, compute, [&](const IterationRecord&) {
      if (after_iteration) after_iteration();
    });
    double* f = mine.data() + slot * session_fields;
    f[0] = static_cast<double>(i);
    f[1] = r.history.empty() ? 0 : r.history.back().iteration;
    f[2] = r.seconds;
    f[3] = static_cast<double>(r.reason);
    f[4] = r.final_train.error(c.metric);
    f[5] = r.final_test ? r.final_test->error(c.metric) : std::numeric_limits<double>::quiet_NaN();
    f[6] = r.final_test && r.final_test->classifier ? r.final_test->accuracy() : std::numeric_limits<double>::quiet_NaN();
    f[7] = 1;
    f[8] = static_cast<double>(r.history.size());
    for (const IterationRecord& h : r.history)
      for (double v : history_entry(h, c.metric)) my_history.push_back(v);
    const PhaseTimes& ph = r.phases;
    phases.forward += ph.forward, phases.backward += ph.backward, phases.update += ph.update;
    phases.test += ph.test, phases.forward_patterns += ph.forward_patterns;
    phases.backward_patterns += ph.backward_patterns, phases.updates += ph.updates;
    phases.test_patterns += ph.test_patterns;
  }
  std::vector<double> all(mine.size() * static_cast<std::size_t>(p));
  const double t0 = comm.now();
  comm.gather(std::span<const double>(mine), std::span<double>(all), 0);
  // The histories differ in length from rank to rank: each is padded to the longest.
  const double my_length = static_cast<double>(my_history.size());
  std::vector<double> lengths(static_cast<std::size_t>(p));
  comm.allgather(std::span<const double>(&my_length, 1), std::span<double>(lengths));
  const auto longest = static_cast<std::size_t>(*std::max_element(lengths.begin(), lengths.end()));
  my_history.resize(longest, 0.0);
  std::vector<double> histories(longest * static_cast<std::size_t>(p));
  comm.gather(std::span<const double>(my_history), std::span<double>(histories), 0);
  phases.comm += comm.now() - t0;
  phases.comm_calls += 3;
  std::vector<SessionOutcome> out;
  if (q != 0) return out;
  for (int r = 0; r < p; ++r) {
    const double* h = histories.data() + static_cast<std::size_t>(r) * longest;
    for (std::size_t slot = 0; slot < per_rank; ++slot) {
      const double* f = all.data() + (static_cast<std::size_t>(r) * per_rank + slot) * session_fields;
      if (f[7] != 1) continue;
      SessionOutcome o;
      o.index = static_cast<std::size_t>(f[0]);
      o.rank = r;
      o.config = sessions[o.index];
      o.iterations = static_cast<int>(f[1]);
      o.seconds = f[2];
      o.status = std::string(to_string(static_cast<StopReason>(static_cast<int>(f[3]))));
      o.train_error = f[4], o.test_error = f[5], o.test_accuracy = f[6];
      for (std::size_t e = 0; e < static_cast<std::size_t>(f[8]); ++e, h += history_fields)
        o.history.push_back({h[0], h[1], h[2], h[3], h[4]});
      out.push_back(o);
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return out;
}

template std::vector<SessionOutcome> train_sessions<float>(const NetSpec&, const Dataset&, const Dataset&,
                                                           const std::vector<TrainConfig>&, Comm&, Compute&,
                                                           PhaseTimes&, const std::function<void()>&);
template std::vector<SessionOutcome> train_sessions<double>(const NetSpec&, const Dataset&, const Dataset&,
                                                            const std::vector<TrainConfig>&, Comm&, Compute&,
                                                            PhaseTimes&, const std::function<void()>&);

namespace {

constexpr StrategyOption session_options[] = {
    {.name = "sweep",
     .key = "sweep",
     .kind = StrategyOption::Kind::text,
     .help = "the sessions: values of eta, alpha, block and seed, e.g. \"eta=0.5,1.5;alpha=0.5,0.9;block=4,16\"",
     .range = {},  // a text option has none
     .example = "eta=0.5,1.5;alpha=0.5,0.9"}};

}  // namespace

extern const StrategyDescriptor session_strategy{
    .name = "session",
    .help = "a parameter sweep, seed 000",
    .options_title = "training sessions (--strategy session, seed 000)",
    .options = session_options,
    .learning = momentum_learning,
    .layout = fixed_layout<DataLayout::whole>,
    .sessions = [](const TrainConfig& c) { return sweep_configs(c, setting_text(c, "sweep")); },
    // Each session is a whole training run on one rank's copy of the data, which a time-only
    // run does not load.
    .check = [](const TrainConfig&, int, bool numerics) {
      if (!numerics) throw InputError("--numerics off: --strategy session trains whole nets and needs the arithmetic");
    },
    .memory = [](const MemoryShape& s, const TrainConfig&, StrategyMemory& m) {
      double most = 0;  // the largest block of any session, which one rank runs whole
      for (const TrainConfig& one : s.sessions)
        most = std::max(most, static_cast<double>(block_size(one, static_cast<std::size_t>(s.n))));
      m.columns = most;
      m.holders = 1;
    },
};

}  // namespace wulf
