#include "session.hpp"

#include "run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace wulf {

std::vector<TrainConfig> sweep_configs(const TrainConfig& base, const std::string& sweep) {
  std::vector<TrainConfig> out{base};
  std::stringstream items(sweep);
  std::string item;
  while (std::getline(items, item, ';')) {
    if (item.find_first_not_of(' ') == std::string::npos) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw InputError("--sweep: '" + item + "' is not key=value,value,...");
    std::string key = item.substr(0, eq);
    key.erase(0, key.find_first_not_of(' '));
    key.erase(key.find_last_not_of(' ') + 1);
    if (key != "eta" && key != "alpha" && key != "block" && key != "seed")
      throw InputError("--sweep: unknown key '" + key + "' (expected eta, alpha, block or seed)");
    std::vector<double> values;
    std::stringstream list(item.substr(eq + 1));
    std::string text;
    while (std::getline(list, text, ',')) {
      std::size_t used = 0;
      double v = 0;
      try {
        v = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      while (used < text.size() && text[used] == ' ') ++used;
      if (used != text.size() || !std::isfinite(v)) throw InputError("--sweep " + key + ": '" + text + "' is not a number");
      if ((key == "block" || key == "seed") && (v < (key == "block" ? 1 : 0) || v != std::floor(v)))
        throw InputError("--sweep " + key + ": '" + text + "' must be a whole number" +
                         (key == "block" ? " >= 1" : " >= 0"));
      values.push_back(v);
    }
    if (values.empty()) throw InputError("--sweep " + key + ": no values");
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

// One rank alone, on the world's clock: a session trains as if sequentially, in the
// engine's time (simulated under smpirun).
class LocalComm final : public Comm {
 public:
  explicit LocalComm(Comm& world) : world_(world) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  double now() const override { return world_.now(); }
  void barrier() override {}
  void allreduce_sum(std::span<float>) override {}
  void allreduce_sum(std::span<double>) override {}
  void reduce_sum(std::span<float>, int) override {}
  void reduce_sum(std::span<double>, int) override {}
  void bcast(std::span<float>, int) override {}
  void bcast(std::span<double>, int) override {}
  void allgather(std::span<const float> s, std::span<float> r) override { std::copy(s.begin(), s.end(), r.begin()); }
  void allgather(std::span<const double> s, std::span<double> r) override { std::copy(s.begin(), s.end(), r.begin()); }
  void gather(std::span<const double> s, std::span<double> r, int) override { std::copy(s.begin(), s.end(), r.begin()); }
  void gather(std::span<const float> s, std::span<float> r, int) override { std::copy(s.begin(), s.end(), r.begin()); }
  void scatter(std::span<const float> s, std::span<float> r, int) override {
    std::copy(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(r.size()), r.begin());
  }
  void scatterv(std::span<const float> s, std::span<const int>, std::span<float> r, int root) override {
    scatter(s, r, root);
  }
  [[noreturn]] void abort(const std::string& message, int code) override {
    world_.abort(message, code);
    std::abort();  // not reached: the world's abort ends the process
  }

 private:
  Comm& world_;
};

constexpr std::size_t fields = 8;  // per session: index, iterations, seconds, status, 3 errors, valid

}  // namespace

template <class T>
std::vector<SessionOutcome> train_sessions(const NetSpec& spec, const Dataset& train, const Dataset& test,
                                           const std::vector<TrainConfig>& sessions, Comm& comm, Compute& compute,
                                           PhaseTimes& phases) {
  const int p = comm.size(), q = comm.rank();
  const std::size_t per_rank = (sessions.size() + static_cast<std::size_t>(p) - 1) / static_cast<std::size_t>(p);
  std::vector<double> mine(per_rank * fields, 0.0);
  LocalComm local(comm);
  const GlobalSizes sizes{train.size(), test.size(), train.has_labels()};
  const char* statuses[] = {"max_iterations", "target_reached", "time_limit", "diverged"};
  for (std::size_t slot = 0, i = static_cast<std::size_t>(q); i < sessions.size(); i += static_cast<std::size_t>(p), ++slot) {
    const TrainConfig& c = sessions[i];
    Mlp<T> net(spec);
    Rng init_rng(c.seed);
    Rng weights_rng = init_rng.split(3);
    net.init_uniform(c.init_range, weights_rng);
    const TrainResult r = train_block(net, train, test, sizes, c, local, compute);
    double* f = mine.data() + slot * fields;
    f[0] = static_cast<double>(i);
    f[1] = r.history.empty() ? 0 : r.history.back().iteration;
    f[2] = r.seconds;
    f[3] = static_cast<double>(r.reason);
    f[4] = r.final_train.error(c.metric);
    f[5] = r.final_test ? r.final_test->error(c.metric) : std::numeric_limits<double>::quiet_NaN();
    f[6] = r.final_test && r.final_test->classifier ? r.final_test->accuracy() : std::numeric_limits<double>::quiet_NaN();
    f[7] = 1;
    const PhaseTimes& ph = r.phases;
    phases.forward += ph.forward, phases.backward += ph.backward, phases.update += ph.update;
    phases.test += ph.test, phases.forward_patterns += ph.forward_patterns;
    phases.backward_patterns += ph.backward_patterns, phases.updates += ph.updates;
    phases.test_patterns += ph.test_patterns;
  }
  std::vector<double> all(mine.size() * static_cast<std::size_t>(p));
  const double t0 = comm.now();
  comm.gather(std::span<const double>(mine), std::span<double>(all), 0);
  phases.comm += comm.now() - t0;
  phases.comm_calls += 1;
  std::vector<SessionOutcome> out;
  if (q != 0) return out;
  for (int r = 0; r < p; ++r)
    for (std::size_t slot = 0; slot < per_rank; ++slot) {
      const double* f = all.data() + (static_cast<std::size_t>(r) * per_rank + slot) * fields;
      if (f[7] != 1) continue;
      SessionOutcome o;
      o.index = static_cast<std::size_t>(f[0]);
      o.rank = r;
      o.config = sessions[o.index];
      o.iterations = static_cast<int>(f[1]);
      o.seconds = f[2];
      o.status = statuses[static_cast<int>(f[3])];
      o.train_error = f[4], o.test_error = f[5], o.test_accuracy = f[6];
      out.push_back(o);
    }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return out;
}

template std::vector<SessionOutcome> train_sessions<float>(const NetSpec&, const Dataset&, const Dataset&,
                                                           const std::vector<TrainConfig>&, Comm&, Compute&,
                                                           PhaseTimes&);
template std::vector<SessionOutcome> train_sessions<double>(const NetSpec&, const Dataset&, const Dataset&,
                                                            const std::vector<TrainConfig>&, Comm&, Compute&,
                                                            PhaseTimes&);

}  // namespace wulf
