#include "job/job_json.hpp"

#include "comm/nb_allreduce.hpp"

#include "nn/activation.hpp"
#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "train/result_record.hpp"
#include "util/errors.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace wulf {

long long open_mpi_eager_bytes(long long eager_limit) { return eager_limit > 0 ? eager_limit : kTestbedEagerBytes; }

Json protocol_json(bool testbed, long long eager_limit) {
  if (testbed) {
    const long long bytes = open_mpi_eager_bytes(eager_limit);
    return {{"eager_limit_bytes", bytes},
            {"data_flows", fmt::format("as soon as sent up to {} bytes (Open MPI's eager protocol); beyond, after "
                                       "a handshake with the receiver (its rendezvous)", bytes)},
            {"settings", {{"btl_tcp_eager_limit", bytes},
                          {"btl_tcp_max_send_size", std::max(bytes, kDefaultMaxSendBytes)},
                          {"btl_tcp_sndbuf", kSocketBufferBytes},
                          {"btl_tcp_rcvbuf", kSocketBufferBytes}}}};
  }
  if (eager_limit > 0)
    return {{"eager_limit_bytes", eager_limit},
            {"data_flows", fmt::format("as soon as sent up to {} bytes, sharing each link with the flows already "
                                       "on it; beyond, when the receive is posted", eager_limit)},
            {"settings", {{"smpi/async-small-thresh", eager_limit}, {"smpi/send-is-detached-thresh", eager_limit}}}};
  return {{"eager_limit_bytes", nullptr},
          {"data_flows", "when the receive is posted (SMPI's rendezvous), with no handshake on the wire"},
          {"settings", {{"smpi/async-small-thresh", 0}, {"smpi/send-is-detached-thresh", 65536}}},
          {"testbed_default", kTestbedEagerBytes},
          {"why_not_the_testbeds",
           "measured against the testbed: with the testbed's eager limit SMPI lets early messages share links "
           "with current ones and back-to-back calls fall into a slow cycle (about twice as slow at p = 8 on Bat "
           "Cave) that the testbed shows in some runs only; with Open MPI's own 64 KiB limit the testbed pays a "
           "handshake SMPI does not model (+12% to +44%); SMPI's rendezvous is within 3.2% of the testbed's "
           "in-step runs (experiments/testbed, section 7)"}};
}

namespace {

// A strategy option's key: the object it lies in ("" for the config itself) and its field.
std::pair<std::string, std::string> key_of(const StrategyOption& o) {
  const std::size_t dot = o.key.find('.');
  if (dot == std::string_view::npos) return {"", std::string(o.key)};
  return {std::string(o.key.substr(0, dot)), std::string(o.key.substr(dot + 1))};
}

// The values of the strategy's options at their keys, then what its descriptor adds.
void add_strategy_json(Json& j, const TrainJob& job) {
  const TrainConfig& c = job.config;
  for (const StrategyOption& o : job.strategy->options) {
    const auto [object, field] = key_of(o);
    Json& where = object.empty() ? j : j[object];
    switch (o.kind) {
      case StrategyOption::Kind::whole: where[field] = static_cast<long long>(setting(c, o.name)); break;
      case StrategyOption::Kind::number: where[field] = setting(c, o.name); break;
      case StrategyOption::Kind::text: where[field] = setting_text(c, o.name); break;
    }
  }
  if (job.strategy->record) job.strategy->record(c, job.compute.numerics, j);
}

// The engine's part of the config, as earlier records have it.
void add_engine_json(Json& j, const TrainJob& job) {
  j["command"] = "train";
  j["engine"] = to_string(job.engine);
  j["np"] = job.np;
  j["strategy"] = to_string(job.strategy);
  add_strategy_json(j, job);
  j["weights_out"] = job.weights_path.empty() ? Json(nullptr) : Json(job.weights_path);
  j["weights_in"] = job.weights_in.empty() ? Json(nullptr) : Json(job.weights_in);
  j["machine_cost_usd"] = job.machine_cost_usd > 0 ? Json(job.machine_cost_usd) : Json(nullptr);
  j["platform"] = job.platform.empty() ? Json(nullptr) : Json(job.platform);
  if (job.engine == Engine::real) {
    j["hostfile"] = job.hostfile.empty() ? Json(nullptr) : Json(job.hostfile);
    j["mpirun_args"] = job.mpirun_args;
  }
  j["collective_algorithm"] = job.engine == Engine::seq
                                  ? Json(nullptr)
                                  : Json("allreduce:" + job.allreduce + ", reduce:" + job.reduce + ", bcast:" + job.bcast +
                                         ", allgather:" + job.allgather + ", gather:" + job.gather);
  for (const auto& [key, chosen_by] : {std::pair{"allreduce_chosen_by", &job.allreduce_chosen_by},
                                       {"reduce_chosen_by", &job.reduce_chosen_by},
                                       {"bcast_chosen_by", &job.bcast_chosen_by},
                                       {"allgather_chosen_by", &job.allgather_chosen_by},
                                       {"gather_chosen_by", &job.gather_chosen_by}})
    if (job.engine != Engine::seq && !chosen_by->empty()) j[key] = *chosen_by;
  if (job.reduce == "four-stage") {
    // Without a layout (or with no rank in a group) the four-stage reduce is wulf-binomial.
    j["reduce_layout"] = job.has_reduce_layout ? Json(job.reduce_layout.to_string()) : Json(nullptr);
    j["reduce_falls_back"] = !job.has_reduce_layout || !job.reduce_layout.has_groups();
  }
  j["compute"] = to_string(job.compute.mode);
  j["numerics"] = job.compute.numerics;
  if (job.compute.mode == ComputeMode::calibrated) j["profile"] = job.compute.profile.name;
  if (job.compute.mode == ComputeMode::measured) j["measured_scale"] = job.compute.measured_scale;
  if (job.engine == Engine::testbed)
    j["dilation"] = job.compute.dilation > 0 ? Json(job.compute.dilation) : Json(nullptr);  // null: not chosen yet
  if (on_platform(job.engine)) {
    Json what_if = Json::object();
    what_if["bw_scale"] = job.compute.bw_scale;
    if (job.engine == Engine::sim) what_if["lat_scale"] = job.compute.lat_scale;
    what_if["speed_scale"] = job.compute.speed_scale;
    what_if["grow"] = job.grow;
    j["what_if"] = std::move(what_if);
    // null: the engine's default (SMPI: no data flows before the receive is posted; the
    // testbed: kTestbedEagerBytes, in config.testbed.open_mpi).
    j["eager_limit_bytes"] = job.eager_limit > 0 ? Json(job.eager_limit) : Json(nullptr);
    j["protocol"] = protocol_json(job.engine == Engine::testbed, job.eager_limit);
    if (job.engine == Engine::sim) j["sim_messages"] = job.sim_messages;
    if (job.engine == Engine::sim) j["sim_malloc"] = sim_allocator().name;  // wall time only
    if (job.engine == Engine::sim && job.sim_messages == "fifo") {
      const long long bytes = open_mpi_eager_bytes(job.eager_limit);
      j["protocol"]["fifo_handshake_bytes"] = bytes;
      j["protocol"]["fifo_handshake"] = fmt::format(
          "wulf's own messages of at least {} bytes (--sim-messages fifo) go by Open MPI's rendezvous over TCP: "
          "the envelope, the receiver's answer at its first call after it arrived, the data at the sender's first "
          "call after the answer arrived",
          bytes);
    }
    j["ranks_per_host"] = job.ranks_per_host;
    j["placement"] = job.rank_hosts.empty() ? "the platform's hosts in order" : "--hosts";
  }
}

// The problem's, the net's and the training's part, as earlier records have it.
void add_training_json(Json& j, const TrainJob& job) {
  const Problem& p = job.problem;
  const TrainConfig& c = job.config;
  j["problem"] = job.problem_name;
  j["problem_description"] = p.description;
  j["defaults_from"] = p.defaults.source;
  j["train_patterns"] = p.train_total;
  j["test_patterns"] = p.test_total;
  j["inputs"] = p.inputs;
  j["outputs"] = p.outputs;
  Json sizes = Json::array();
  for (int s : job.spec.sizes) sizes.push_back(s);
  j["layers"] = std::move(sizes);
  Json acts = Json::array();
  for (Activation a : job.spec.activations) acts.push_back(to_string(a));
  j["activations"] = std::move(acts);
  j["loss"] = to_string(job.spec.loss);
  j["bias"] = job.spec.bias;
  j["sigmoid_derivative"] = job.spec.clip_sigmoid_derivative ? "fann" : "exact";
  j["parameters"] = job.spec.parameter_count();
  j["precision"] = precision_name(job.double_precision);
  j["learning"] = to_string(c.learning);
  j["block"] = block_size(c, p.train_total);
  if (c.learning == Learning::rprop)
    j["rprop"] = {{"variant", "iRprop- as FANN 2.2"},         {"increase", c.rprop.increase},
                  {"decrease", c.rprop.decrease},             {"delta_min", c.rprop.delta_min},
                  {"delta_max", c.rprop.delta_max},           {"delta_zero", c.rprop.delta_zero}};
  j["eta"] = c.eta;
  j["alpha"] = c.alpha;
  j["momentum"] = to_string(c.momentum);
  j["block_step"] = to_string(c.block_step);
  j["max_iterations"] = c.max_iterations;
  j["target_error"] = c.target_error ? Json(*c.target_error) : Json(nullptr);
  j["error_metric"] = to_string(c.metric);
  j["max_seconds"] = c.max_seconds;
  j["seed"] = c.seed;
  j["shuffle"] = c.shuffle;
  j["eval_train"] = c.eval_train;
  j["history_every"] = c.history_every;
  j["init_range"] = c.init_range;
  const ProblemKind* kind = problem_kind(job.problem_name);
  j["data_dir"] = kind && kind->data == ProblemData::mnist ? Json(job.data.mnist_dir) : Json(nullptr);
  j["load_s"] = job.load_seconds;
  j["versions"] = versions_json();
}

// The fields that make the config a whole job, after those of earlier records.
void add_job_fields(Json& j, const TrainJob& job) {
  j["job_format"] = job_format;
  j["train_size"] = job.data.train_size;
  j["test_size"] = job.data.test_size;
  j["test_data"] = job.data.test_data.empty() ? Json(nullptr) : Json(job.data.test_data);
  j["collectives"] = {{"allreduce", job.allreduce}, {"reduce", job.reduce},   {"bcast", job.bcast},
                      {"allgather", job.allgather}, {"gather", job.gather}};
  j["oversubscribe"] = job.oversubscribe;
  j["hosts_of_ranks"] = job.rank_hosts.empty() ? Json(nullptr) : Json(job.rank_hosts);
  j["rank_nodes"] = job.config.rank_nodes.empty() ? Json(nullptr) : Json(job.config.rank_nodes);
  j["rank_rings"] = job.config.rank_rings.empty() ? Json(nullptr) : Json(job.config.rank_rings);
  if (job.compute.mode == ComputeMode::calibrated) {
    const Profile& p = job.compute.profile;
    Json v = {{"Tf_s", p.Tf}, {"Tb_s", p.Tb}, {"Tu_s", p.Tu}, {"Tm_s", p.Tm}, {"Ts_s", p.Ts},
              {"To_s", p.To}, {"n", p.n},     {"m", p.m},     {"w", p.w}};
    v["Ti_s"] = p.has_ti_tw ? Json(p.Ti) : Json(nullptr);
    v["Tw_s"] = p.has_ti_tw ? Json(p.Tw) : Json(nullptr);
    v["Ta_s"] = p.has_ta ? Json(p.Ta) : Json(nullptr);
    v["problem"] = p.problem.empty() ? Json(nullptr) : Json(p.problem);
    v["precision"] = p.precision.empty() ? Json(nullptr) : Json(p.precision);
    j["profile_values"] = std::move(v);
  }
  j["out"] = job.out_path.empty() ? Json(nullptr) : Json(job.out_path);
  j["quiet"] = job.quiet;
  // The layer file the net was read from, as the front end read it (TrainJob::layer_file_digest).
  if (job.spec.table) j["layer_file_digest"] = job.spec.table->digest;
  if (!job.inputs.empty()) {
    Json inputs = Json::array();
    for (const TrainJob::InputFile& f : job.inputs) inputs.push_back({{"what", f.what}, {"path", f.path}, {"digest", f.digest}});
    j["input_files"] = std::move(inputs);
  }
}

template <std::size_t N>
bool named_in(std::string_view name, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A config's fields, read with the field named in every error.
class Fields {
 public:
  Fields(const Json& j, std::string source, std::string path) : j_(j), source_(std::move(source)), path_(std::move(path)) {
    if (!j_.is_object()) fail("", "expected an object");
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(source_ + ": " + path_ + (key.empty() ? "" : "." + key) + ": " + what);
  }
  bool has(const std::string& key) const { return j_.contains(key) && !j_[key].is_null(); }
  const Json& at(const std::string& key) const {
    if (!j_.contains(key)) fail(key, "missing");
    return j_[key];
  }
  Fields object(const std::string& key) const { return Fields(at(key), source_, path_ + "." + key); }
  double number(const std::string& key) const {
    const Json& v = at(key);
    if (!v.is_number()) fail(key, "expected a number, found " + std::string(v.type_name()));
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(key, "not a finite number");
    return d;
  }
  double number(const std::string& key, double absent) const { return has(key) ? number(key) : absent; }
  // A number held to the range of the option that gives it (a record's value as the command
  // line's would be: option "eta" for eta).
  double ranged(const std::string& key, const Range& range, std::string_view option) const {
    const double d = number(key);
    try {
      check_in_range(d, range, option);
    } catch (const InputError& e) {
      fail(key, std::string(e.what()) + " (the option's range is " + range_text(range) + ")");
    }
    return d;
  }
  long long whole(const std::string& key, long long lo, long long hi) const {
    const double d = number(key);
    if (d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi))
      fail(key, fmt::format("{:g} is not a whole number in [{}, {}]", d, lo, hi));
    return static_cast<long long>(d);
  }
  long long whole(const std::string& key, long long lo, long long hi, long long absent) const {
    return has(key) ? whole(key, lo, hi) : absent;
  }
  bool flag(const std::string& key) const {
    const Json& v = at(key);
    if (!v.is_boolean()) fail(key, "expected true or false, found " + std::string(v.type_name()));
    return v.get<bool>();
  }
  std::string text(const std::string& key) const {
    const Json& v = at(key);
    if (!v.is_string()) fail(key, "expected a string, found " + std::string(v.type_name()));
    return v.get<std::string>();
  }
  std::string text(const std::string& key, const std::string& absent) const { return has(key) ? text(key) : absent; }
  std::vector<std::string> texts(const std::string& key) const {
    const Json& v = at(key);
    if (!v.is_array()) fail(key, "expected an array, found " + std::string(v.type_name()));
    std::vector<std::string> out;
    for (const Json& e : v) {
      if (!e.is_string()) fail(key, "expected an array of strings");
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  // A word read by parse (an enum's name), its error told of this field.
  template <class Parse>
  auto word(const std::string& key, Parse parse) const {
    const std::string name = text(key);
    try {
      return parse(name);
    } catch (const InputError&) {
      fail(key, "'" + printable(name) + "' is not a known name");
    }
  }
  // A whole number kept as std::size_t.
  std::size_t count(const std::string& key, long long lo = 0) const {
    return static_cast<std::size_t>(whole(key, lo, std::numeric_limits<int>::max()));
  }

 private:
  const Json& j_;
  std::string source_, path_;
};

// The strategy's options from their keys (a value the record may omit: its default).
void read_strategy(const Fields& f, TrainConfig& c) {
  for (const StrategyOption& o : c.strategy->options) {
    const auto [object, field] = key_of(o);
    const Fields where = object.empty() ? f : f.object(object);
    if (o.record_may_omit && !where.has(field)) continue;
    switch (o.kind) {
      case StrategyOption::Kind::whole:
        c.settings.set(o.name, static_cast<double>(where.whole(field, static_cast<long long>(o.range.lo),
                                                               static_cast<long long>(o.range.hi))));
        break;
      case StrategyOption::Kind::number:
        c.settings.set(o.name, where.ranged(field, o.range, o.name));
        break;
      case StrategyOption::Kind::text: c.settings.set_text(o.name, where.text(field)); break;
    }
  }
}

void read_engine(const Fields& f, TrainJob& job) {
  job.engine = f.word("engine", [](const std::string& s) { return parse_engine(s); });
  job.np = static_cast<int>(f.whole("np", 1, kMostRanks));
  job.strategy = f.word("strategy", [](const std::string& s) { return parse_strategy(s); });
  TrainConfig& c = job.config;
  c.strategy = job.strategy;
  read_strategy(f, c);
  // Records from before the gathers were chosen have none: their MPI's own, default.
  const Fields coll = f.object("collectives");
  for (const JobCollective& one : job_collectives(job)) {
    const std::string key(one.name);
    one.algorithm = key == "allgather" || key == "gather" ? coll.text(key, "default") : coll.text(key);
    one.chosen_by = f.text(key + "_chosen_by", "");
  }
  if (!named_in(job.allreduce, allreduce_algorithms)) coll.fail("allreduce", "unknown algorithm");
  if (!named_in(job.reduce, reduce_algorithms)) coll.fail("reduce", "unknown algorithm");
  if (!named_in(job.bcast, bcast_algorithms)) coll.fail("bcast", "unknown algorithm");
  if (!named_in(job.allgather, allgather_algorithms)) coll.fail("allgather", "unknown algorithm");
  if (!named_in(job.gather, gather_algorithms)) coll.fail("gather", "unknown algorithm");
  if (job.reduce == "four-stage" && f.has("reduce_layout")) {
    try {
      job.reduce_layout = ReduceLayout::parse(f.text("reduce_layout"), job.np);
    } catch (const InputError& e) {
      f.fail("reduce_layout", e.what());
    }
    job.has_reduce_layout = true;
  }
  job.oversubscribe = f.text("oversubscribe");
  if (!named_in(job.oversubscribe, oversubscribe_modes))
    f.fail("oversubscribe", "expected " + listed(oversubscribe_modes));
  job.platform = f.text("platform", "");
  if (job.engine == Engine::real) {
    job.hostfile = f.text("hostfile", "");
    job.mpirun_args = f.texts("mpirun_args");
  }
  if (on_platform(job.engine)) {
    const Fields what_if = f.object("what_if");
    job.compute.bw_scale = what_if.number("bw_scale");
    job.compute.lat_scale = what_if.number("lat_scale", 1.0);
    job.compute.speed_scale = what_if.number("speed_scale");
    job.grow = what_if.whole("grow", 0, kMostRanks);
    for (const char* scale : {"bw_scale", "lat_scale", "speed_scale"})
      if (what_if.has(scale))
        if (const std::string fault = what_if_scale_fault(what_if.number(scale)); !fault.empty())
          what_if.fail(scale, fault);
    job.eager_limit = f.whole("eager_limit_bytes", 1, 1LL << 40, 0);
    job.sim_messages = f.text("sim_messages", "s4u");
    if (!sim_messages_named(job.sim_messages)) f.fail("sim_messages", "expected " + listed(sim_messages_names));
    job.ranks_per_host = f.whole("ranks_per_host", 0, kMostRanks);
    if (f.has("hosts_of_ranks")) job.rank_hosts = f.texts("hosts_of_ranks");
    if (!job.rank_hosts.empty() && job.rank_hosts.size() != static_cast<std::size_t>(job.np))
      f.fail("hosts_of_ranks", fmt::format("{} hosts for {} ranks", job.rank_hosts.size(), job.np));
  }
  job.machine_cost_usd = f.number("machine_cost_usd", 0);
  if (f.has("machine_cost_usd") && !(job.machine_cost_usd > 0)) f.fail("machine_cost_usd", "must be positive");
  if (f.has("rank_nodes")) {
    const Json& nodes = f.at("rank_nodes");
    if (!nodes.is_array()) f.fail("rank_nodes", "expected an array of node numbers, one per rank");
    for (const Json& n : nodes) {
      if (!n.is_number_integer() || n.get<long long>() < 0 || n.get<long long>() > 1'000'000'000)
        f.fail("rank_nodes", "expected whole node numbers from 0");
      job.config.rank_nodes.push_back(n.get<int>());
    }
    if (const std::string fault = node_layout_fault(job.config.rank_nodes, job.np); !fault.empty())
      f.fail("rank_nodes", fault);
  }
  if (f.has("rank_rings")) {
    const Json& rings = f.at("rank_rings");
    if (!rings.is_array()) f.fail("rank_rings", "expected an array of rings, each its ranks in order");
    for (const Json& ring : rings) {
      if (!ring.is_array()) f.fail("rank_rings", "expected each ring as an array of ranks");
      std::vector<int>& ranks = job.config.rank_rings.emplace_back();
      for (const Json& r : ring) {
        if (!r.is_number_integer() || r.get<long long>() < 0 || r.get<long long>() >= job.np)
          f.fail("rank_rings", fmt::format("expected ranks from 0 to {}", job.np - 1));
        ranks.push_back(r.get<int>());
      }
    }
    if (const std::string fault = rings_fault(job.config.rank_rings, static_cast<int>(job.np)); !fault.empty())
      f.fail("rank_rings", fault);
  }
}

Profile read_profile_values(const Fields& f, const std::string& name) {
  Profile p;
  p.name = name;
  const std::pair<const char*, double*> times[] = {{"Tf_s", &p.Tf}, {"Tb_s", &p.Tb}, {"Tu_s", &p.Tu}, {"Tm_s", &p.Tm},
                                                    {"Ts_s", &p.Ts}, {"To_s", &p.To}, {"n", &p.n},   {"m", &p.m},
                                                    {"w", &p.w}};
  for (const auto& [key, field] : times) *field = f.number(key);
  for (const char* key : {"Tf_s", "Tb_s", "Tu_s"})
    if (!(f.number(key) > 0)) f.fail(key, "must be positive");
  p.has_ti_tw = f.has("Ti_s") && f.has("Tw_s");
  if (p.has_ti_tw) p.Ti = f.number("Ti_s"), p.Tw = f.number("Tw_s");
  p.has_ta = f.has("Ta_s");
  if (p.has_ta) p.Ta = f.number("Ta_s");
  p.problem = f.text("problem", "");
  p.precision = f.text("precision", "");
  return p;
}

void read_compute(const Fields& f, TrainJob& job) {
  ComputeConfig& compute = job.compute;
  compute.mode = f.word("compute", [](const std::string& s) { return parse_compute_mode(s); });
  compute.numerics = f.flag("numerics");
  compute.ranks = job.np;
  if (compute.mode == ComputeMode::calibrated)
    compute.profile = read_profile_values(f.object("profile_values"), f.text("profile"));
  if (compute.mode == ComputeMode::measured) {
    compute.measured_scale = f.number("measured_scale");
    if (!(compute.measured_scale > 0)) f.fail("measured_scale", "must be a positive number");
  }
  compute.dilation = job.engine == Engine::testbed ? f.number("dilation", 0) : 1.0;
  if (job.engine == Engine::testbed && f.has("dilation") &&
      !(compute.dilation >= kDilationRange.lo && compute.dilation <= kDilationRange.hi))
    f.fail("dilation", fmt::format("{:g} is not in {}", compute.dilation, range_text(kDilationRange)));
}

void read_net(const Fields& f, TrainJob& job) {
  NetSpec& spec = job.spec;
  const Json& layers = f.at("layers");
  if (!layers.is_array() || layers.size() < 2) f.fail("layers", "expected an array of at least 2 sizes");
  for (const Json& s : layers) {
    if (!s.is_number_integer() || s.get<long long>() < 1 || s.get<long long>() > 2147483647)
      f.fail("layers", "expected whole numbers of at least 1");
    spec.sizes.push_back(s.get<int>());
  }
  for (const std::string& a : f.texts("activations")) {
    try {
      spec.activations.push_back(parse_activation(a, "activation"));
    } catch (const InputError&) {
      f.fail("activations", "'" + printable(a) + "' is not an activation");
    }
  }
  spec.loss = f.word("loss", [](const std::string& s) { return parse_loss(s, "loss"); });
  spec.bias = f.flag("bias");
  const std::string derivative = f.text("sigmoid_derivative");
  if (!is_one_of(derivative, {"exact", "fann"})) f.fail("sigmoid_derivative", "expected exact or fann");
  spec.clip_sigmoid_derivative = derivative == "fann";
  try {
    spec.validate();
  } catch (const InputError& e) {
    f.fail("layers", e.what());
  }
  job.double_precision = f.text("precision") == "double";
  if (!is_one_of(f.text("precision"), {"float", "double"})) f.fail("precision", "expected float or double");
}

void read_training(const Fields& f, TrainJob& job) {
  TrainConfig& c = job.config;
  c.learning = f.word("learning", [](const std::string& s) { return parse_learning(s); });
  c.block = f.count("block", 1);
  if (c.learning == Learning::rprop) {
    const Fields r = f.object("rprop");
    c.rprop = {r.ranged("increase", kRpropIncreaseRange, "rprop-increase"),
               r.ranged("decrease", kRpropDecreaseRange, "rprop-decrease"),
               r.ranged("delta_min", kRpropDeltaMinRange, "rprop-delta-min"),
               r.ranged("delta_max", kStepRange, "rprop-delta-max"),
               r.ranged("delta_zero", kStepRange, "rprop-delta-zero")};
  }
  c.eta = f.ranged("eta", kStepRange, "eta");
  c.alpha = f.ranged("alpha", kAlphaRange, "alpha");
  c.momentum = f.word("momentum", [](const std::string& s) { return parse_momentum_rule(s); });
  c.block_step = f.word("block_step", [](const std::string& s) { return parse_block_step(s); });
  c.max_iterations = static_cast<int>(f.whole("max_iterations", 0, 100'000'000));
  if (f.has("target_error")) c.target_error = f.ranged("target_error", kErrorRange, "target-error");
  c.metric = f.word("error_metric", [](const std::string& s) { return parse_error_metric(s); });
  c.max_seconds = f.ranged("max_seconds", {.lo = 0, .hi = kLongestTimeoutSeconds}, "max-seconds");
  c.seed = static_cast<std::uint64_t>(f.whole("seed", 0, std::numeric_limits<long long>::max()));
  c.shuffle = f.flag("shuffle");
  c.eval_train = f.flag("eval_train");
  c.history_every = static_cast<int>(f.whole("history_every", 1, 1'000'000'000));
  c.init_range = f.ranged("init_range", kInitRange, "init-range");
}

void read_data_and_outputs(const Fields& f, TrainJob& job) {
  job.problem_name = f.text("problem");
  ProblemOptions& d = job.data;
  d.seed = job.config.seed;
  d.mnist_dir = f.text("data_dir", "");
  d.test_data = f.text("test_data", "");
  d.train_size = f.count("train_size");
  d.test_size = f.count("test_size");
  job.out_path = f.text("out", "");
  job.weights_path = f.text("weights_out", "");
  job.weights_in = f.text("weights_in", "");
  job.layer_file_digest = f.text("layer_file_digest", "");
  if (f.has("input_files")) {
    const Json& inputs = f.at("input_files");
    if (!inputs.is_array()) f.fail("input_files", "expected an array of {what, path, digest}");
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].is_object() || !inputs[i].contains("what") || !inputs[i].contains("path") ||
          !inputs[i].contains("digest") || !inputs[i]["what"].is_string() || !inputs[i]["path"].is_string() ||
          !inputs[i]["digest"].is_string())
        f.fail("input_files", "item " + std::to_string(i) + " is not {what, path, digest} of strings");
      job.inputs.push_back({inputs[i]["what"].get<std::string>(), inputs[i]["path"].get<std::string>(),
                            inputs[i]["digest"].get<std::string>()});
    }
  }
  job.quiet = f.flag("quiet");
}

}  // namespace

Json job_json(const TrainJob& job) {
  Json j = Json::object();
  add_engine_json(j, job);
  add_training_json(j, job);
  add_job_fields(j, job);
  return j;
}

TrainJob job_from_json(const Json& config, const std::string& source) {
  const Fields f(config, source, "config");
  // Another command's record (recommend's, model's) first: it has no job format of its own.
  if (config.contains("command") && f.text("command") != "train")
    f.fail("command", "\"" + printable(f.text("command")) + "\": --rerun runs the records of wulf train");
  if (!config.contains("job_format"))
    f.fail("job_format", "missing: the record was written by a wulf older than --rerun, whose config is not a whole job");
  if (f.whole("job_format", 0, 1'000'000) != job_format)
    f.fail("job_format", fmt::format("{} is not this wulf's job format {}", f.number("job_format"), job_format));
  if (f.text("command") != "train") f.fail("command", "not a training run's record");  // a record without one
  TrainJob job;
  read_engine(f, job);
  read_compute(f, job);
  read_net(f, job);
  read_training(f, job);
  read_data_and_outputs(f, job);
  return job;
}

}  // namespace wulf
