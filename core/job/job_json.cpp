#include "job/job_json.hpp"

#include "comm/nb_allreduce.hpp"

#include "nn/activation.hpp"
#include "comm/rank_env.hpp"
#include "train/result_record.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

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

Json null_if_empty(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

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

// Profile values as a calibrated job's profile_values hold them, into the profile that has its
// name already.
void read_profile_values(const Fields& f, Profile& p) {
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
}

Json profile_values_json(const Profile& p) {
  Json v = {{"Tf_s", p.Tf}, {"Tb_s", p.Tb}, {"Tu_s", p.Tu}, {"Tm_s", p.Tm}, {"Ts_s", p.Ts},
            {"To_s", p.To}, {"n", p.n},     {"m", p.m},     {"w", p.w}};
  v["Ti_s"] = p.has_ti_tw ? Json(p.Ti) : Json(nullptr);
  v["Tw_s"] = p.has_ti_tw ? Json(p.Tw) : Json(nullptr);
  v["Ta_s"] = p.has_ta ? Json(p.Ta) : Json(nullptr);
  v["problem"] = null_if_empty(p.problem);
  v["precision"] = null_if_empty(p.precision);
  return v;
}

// The five collectives from the config's "collectives" (records from before the gathers were
// chosen have none: their MPI's own, default) and how each was chosen.
void read_collectives(const Fields& f, TrainJob& job) {
  const Fields coll = f.object("collectives");
  for (const JobCollective& one : job_collectives(job)) {
    const std::string key(one.name);
    one.algorithm = key == "allgather" || key == "gather" ? coll.text(key, "default") : coll.text(key);
  }
  if (!named_in(job.allreduce, allreduce_algorithms)) coll.fail("allreduce", "unknown algorithm");
  if (!named_in(job.reduce, reduce_algorithms)) coll.fail("reduce", "unknown algorithm");
  if (!named_in(job.bcast, bcast_algorithms)) coll.fail("bcast", "unknown algorithm");
  if (!named_in(job.allgather, allgather_algorithms)) coll.fail("allgather", "unknown algorithm");
  if (!named_in(job.gather, gather_algorithms)) coll.fail("gather", "unknown algorithm");
}

void read_what_if(const Fields& f, TrainJob& job) {
  const Fields what_if = f.object("what_if");
  job.compute.bw_scale = what_if.number("bw_scale");
  job.compute.lat_scale = what_if.number("lat_scale", 1.0);
  job.compute.speed_scale = what_if.number("speed_scale");
  job.grow = what_if.whole("grow", 0, kMostRanks);
  for (const char* scale : {"bw_scale", "lat_scale", "speed_scale"})
    if (what_if.has(scale))
      if (const std::string fault = what_if_scale_fault(what_if.number(scale)); !fault.empty())
        what_if.fail(scale, fault);
}

Json what_if_json(const TrainJob& job) {
  Json what_if = Json::object();
  what_if["bw_scale"] = job.compute.bw_scale;
  if (job.engine == Engine::sim) what_if["lat_scale"] = job.compute.lat_scale;
  what_if["speed_scale"] = job.compute.speed_scale;
  what_if["grow"] = job.grow;
  return what_if;
}

// The record's config.protocol, with the handshake of --sim-messages fifo.
Json job_protocol_json(const TrainJob& job) {
  Json protocol = protocol_json(job.engine == Engine::testbed, job.eager_limit);
  if (job.engine == Engine::sim && job.sim_messages == "fifo") {
    const long long bytes = open_mpi_eager_bytes(job.eager_limit);
    protocol["fifo_handshake_bytes"] = bytes;
    protocol["fifo_handshake"] = fmt::format(
        "wulf's own messages of at least {} bytes (--sim-messages fifo) go by Open MPI's rendezvous over TCP: "
        "the envelope, the receiver's answer at its first call after it arrived, the data at the sender's first "
        "call after the answer arrived",
        bytes);
  }
  return protocol;
}

void read_rank_nodes(const Fields& f, TrainJob& job) {
  if (!f.has("rank_nodes")) return;
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

void read_rank_rings(const Fields& f, TrainJob& job) {
  if (!f.has("rank_rings")) return;
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

void read_layers(const Fields& f, TrainJob& job) {
  const Json& layers = f.at("layers");
  if (!layers.is_array() || layers.size() < 2) f.fail("layers", "expected an array of at least 2 sizes");
  for (const Json& s : layers) {
    if (!s.is_number_integer() || s.get<long long>() < 1 || s.get<long long>() > 2147483647)
      f.fail("layers", "expected whole numbers of at least 1");
    job.spec.sizes.push_back(s.get<int>());
  }
}

void read_activations(const Fields& f, TrainJob& job) {
  for (const std::string& a : f.texts("activations")) {
    try {
      job.spec.activations.push_back(parse_activation(a, "activation"));
    } catch (const InputError&) {
      f.fail("activations", "'" + printable(a) + "' is not an activation");
    }
  }
}

void read_input_files(const Fields& f, TrainJob& job) {
  if (!f.has("input_files")) return;
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

Json input_files_json(const TrainJob& job) {
  Json inputs = Json::array();
  for (const TrainJob::InputFile& f : job.inputs) inputs.push_back({{"what", f.what}, {"path", f.path}, {"digest", f.digest}});
  return inputs;
}

using Value = std::optional<Json>;  // a field's value; nullopt: the key is left out

// One field of the job as JSON, described once: its key; the jobs that have it (nullptr: every
// job), decided by fields before it, so that a config is read in the same order it is written;
// its value; and how a config's value is read back into the job, held to the range of the option
// that gives it (nullptr: a fact of the data, the run or the build, written for people and plots
// and made again from the job). A field whose key is empty is several keys, its value's. The
// order is the records' own since the first wulf that wrote them, the fields that make a config
// a whole job after those.
struct JobField {
  std::string_view key;
  bool (*has)(const TrainJob&);
  Value (*write)(const TrainJob&);
  void (*read)(const Fields&, TrainJob&);
};

bool is_real(const TrainJob& j) { return j.engine == Engine::real; }
bool is_sim(const TrainJob& j) { return j.engine == Engine::sim; }
bool is_testbed(const TrainJob& j) { return j.engine == Engine::testbed; }
bool not_seq(const TrainJob& j) { return j.engine != Engine::seq; }
bool platform_job(const TrainJob& j) { return on_platform(j.engine); }
bool four_stage(const TrainJob& j) { return j.reduce == "four-stage"; }
bool calibrated(const TrainJob& j) { return j.compute.mode == ComputeMode::calibrated; }
bool measured(const TrainJob& j) { return j.compute.mode == ComputeMode::measured; }
bool rprop(const TrainJob& j) { return j.config.learning == Learning::rprop; }
bool adam(const TrainJob& j) { return j.config.learning == Learning::adam; }

constexpr JobField job_fields[] = {
    // The engine's part, as earlier records have it.
    {"command", nullptr, [](const TrainJob&) -> Value { return "train"; }, nullptr},  // checked first
    {"engine", nullptr, [](const TrainJob& j) -> Value { return to_string(j.engine); },
     [](const Fields& f, TrainJob& j) { j.engine = f.word("engine", [](const std::string& s) { return parse_engine(s); }); }},
    {"np", nullptr, [](const TrainJob& j) -> Value { return j.np; },
     [](const Fields& f, TrainJob& j) { j.np = static_cast<int>(f.whole("np", 1, kMostRanks)); }},
    {"strategy", nullptr, [](const TrainJob& j) -> Value { return to_string(j.strategy); },
     [](const Fields& f, TrainJob& j) {
       j.strategy = f.word("strategy", [](const std::string& s) { return parse_strategy(s); });
       j.config.strategy = j.strategy;
     }},
    {"", nullptr,  // the strategy's options at their keys, then what its descriptor adds
     [](const TrainJob& j) -> Value {
       Json options = Json::object();
       add_strategy_json(options, j);
       return options;
     },
     [](const Fields& f, TrainJob& j) { read_strategy(f, j.config); }},
    {"weights_out", nullptr, [](const TrainJob& j) -> Value { return null_if_empty(j.weights_path); },
     [](const Fields& f, TrainJob& j) { j.weights_path = f.text("weights_out", ""); }},
    {"weights_in", nullptr, [](const TrainJob& j) -> Value { return null_if_empty(j.weights_in); },
     [](const Fields& f, TrainJob& j) { j.weights_in = f.text("weights_in", ""); }},
    {"machine_cost_usd", nullptr,
     [](const TrainJob& j) -> Value { return j.machine_cost_usd > 0 ? Json(j.machine_cost_usd) : Json(nullptr); },
     [](const Fields& f, TrainJob& j) {
       j.machine_cost_usd = f.number("machine_cost_usd", 0);
       if (f.has("machine_cost_usd") && !(j.machine_cost_usd > 0)) f.fail("machine_cost_usd", "must be positive");
     }},
    {"platform", nullptr, [](const TrainJob& j) -> Value { return null_if_empty(j.platform); },
     [](const Fields& f, TrainJob& j) { j.platform = f.text("platform", ""); }},
    {"hostfile", is_real, [](const TrainJob& j) -> Value { return null_if_empty(j.hostfile); },
     [](const Fields& f, TrainJob& j) { j.hostfile = f.text("hostfile", ""); }},
    {"mpirun_args", is_real, [](const TrainJob& j) -> Value { return j.mpirun_args; },
     [](const Fields& f, TrainJob& j) { j.mpirun_args = f.texts("mpirun_args"); }},
    // The collectives are read from "collectives" (below) here: the fields after need them.
    {"collective_algorithm", nullptr,
     [](const TrainJob& j) -> Value {
       if (j.engine == Engine::seq) return Json(nullptr);
       return "allreduce:" + j.allreduce + ", reduce:" + j.reduce + ", bcast:" + j.bcast +
              ", allgather:" + j.allgather + ", gather:" + j.gather;
     },
     read_collectives},
    {"", not_seq,  // how each collective was chosen ("allreduce_chosen_by", ...), where it was
     [](const TrainJob& j) -> Value {
       Json chosen = Json::object();
       for (const auto& one : job_collectives(j))
         if (!one.chosen_by.empty()) chosen[std::string(one.name) + "_chosen_by"] = one.chosen_by;
       return chosen;
     },
     [](const Fields& f, TrainJob& j) {
       for (const JobCollective& one : job_collectives(j)) one.chosen_by = f.text(std::string(one.name) + "_chosen_by", "");
     }},
    // Without a layout (or with no rank in a group) the four-stage reduce is wulf-binomial.
    {"reduce_layout", four_stage,
     [](const TrainJob& j) -> Value {
       return j.has_reduce_layout ? Json(j.reduce_layout.to_string()) : Json(nullptr);
     },
     [](const Fields& f, TrainJob& j) {
       if (!f.has("reduce_layout")) return;
       try {
         j.reduce_layout = ReduceLayout::parse(f.text("reduce_layout"), j.np);
       } catch (const InputError& e) {
         f.fail("reduce_layout", e.what());
       }
       j.has_reduce_layout = true;
     }},
    {"reduce_falls_back", four_stage,
     [](const TrainJob& j) -> Value { return !j.has_reduce_layout || !j.reduce_layout.has_groups(); }, nullptr},
    {"compute", nullptr, [](const TrainJob& j) -> Value { return to_string(j.compute.mode); },
     [](const Fields& f, TrainJob& j) {
       j.compute.mode = f.word("compute", [](const std::string& s) { return parse_compute_mode(s); });
       j.compute.ranks = j.np;
     }},
    {"numerics", nullptr, [](const TrainJob& j) -> Value { return j.compute.numerics; },
     [](const Fields& f, TrainJob& j) { j.compute.numerics = f.flag("numerics"); }},
    {"profile", calibrated, [](const TrainJob& j) -> Value { return j.compute.profile.name; },
     [](const Fields& f, TrainJob& j) { j.compute.profile.name = f.text("profile"); }},
    {"measured_scale", measured, [](const TrainJob& j) -> Value { return j.compute.measured_scale; },
     [](const Fields& f, TrainJob& j) {
       j.compute.measured_scale = f.number("measured_scale");
       if (!(j.compute.measured_scale > 0)) f.fail("measured_scale", "must be a positive number");
     }},
    // null: not chosen yet (the front end chooses the testbed's dilation).
    {"dilation", is_testbed,
     [](const TrainJob& j) -> Value { return j.compute.dilation > 0 ? Json(j.compute.dilation) : Json(nullptr); },
     [](const Fields& f, TrainJob& j) {
       j.compute.dilation = f.number("dilation", 0);
       if (f.has("dilation") && !(j.compute.dilation >= kDilationRange.lo && j.compute.dilation <= kDilationRange.hi))
         f.fail("dilation", fmt::format("{:g} is not in {}", j.compute.dilation, range_text(kDilationRange)));
     }},
    {"what_if", platform_job, [](const TrainJob& j) -> Value { return what_if_json(j); }, read_what_if},
    // null: the engine's default (SMPI: no data flows before the receive is posted; the
    // testbed: kTestbedEagerBytes, in config.testbed.open_mpi).
    {"eager_limit_bytes", platform_job,
     [](const TrainJob& j) -> Value { return j.eager_limit > 0 ? Json(j.eager_limit) : Json(nullptr); },
     [](const Fields& f, TrainJob& j) { j.eager_limit = f.whole("eager_limit_bytes", 1, 1LL << 40, 0); }},
    {"protocol", platform_job, [](const TrainJob& j) -> Value { return job_protocol_json(j); }, nullptr},
    {"sim_messages", is_sim, [](const TrainJob& j) -> Value { return j.sim_messages; },
     [](const Fields& f, TrainJob& j) {
       j.sim_messages = f.text("sim_messages", "s4u");
       if (!sim_messages_named(j.sim_messages)) f.fail("sim_messages", "expected " + listed(sim_messages_names));
     }},
    // Wall time only; what it was: a re-run's front end sets its own.
    {"sim_malloc", is_sim, [](const TrainJob& j) -> Value { return j.sim_malloc; },
     [](const Fields& f, TrainJob& j) { j.sim_malloc = f.text("sim_malloc", ""); }},
    {"ranks_per_host", platform_job, [](const TrainJob& j) -> Value { return j.ranks_per_host; },
     [](const Fields& f, TrainJob& j) { j.ranks_per_host = f.whole("ranks_per_host", 0, kMostRanks); }},
    {"placement", platform_job,
     [](const TrainJob& j) -> Value { return j.rank_hosts.empty() ? "the platform's hosts in order" : "--hosts"; },
     nullptr},

    // The problem's, the net's and the training's part, as earlier records have it.
    {"problem", nullptr, [](const TrainJob& j) -> Value { return j.problem_name; },
     [](const Fields& f, TrainJob& j) { j.problem_name = f.text("problem"); }},
    {"problem_description", nullptr, [](const TrainJob& j) -> Value { return j.problem.description; }, nullptr},
    {"defaults_from", nullptr, [](const TrainJob& j) -> Value { return j.problem.defaults.source; }, nullptr},
    {"train_patterns", nullptr, [](const TrainJob& j) -> Value { return j.problem.train_total; }, nullptr},
    {"test_patterns", nullptr, [](const TrainJob& j) -> Value { return j.problem.test_total; }, nullptr},
    {"inputs", nullptr, [](const TrainJob& j) -> Value { return j.problem.inputs; }, nullptr},
    {"outputs", nullptr, [](const TrainJob& j) -> Value { return j.problem.outputs; }, nullptr},
    {"layers", nullptr, [](const TrainJob& j) -> Value { return j.spec.sizes; }, read_layers},
    {"activations", nullptr,
     [](const TrainJob& j) -> Value {
       Json acts = Json::array();
       for (Activation a : j.spec.activations) acts.push_back(to_string(a));
       return acts;
     },
     read_activations},
    {"loss", nullptr, [](const TrainJob& j) -> Value { return to_string(j.spec.loss); },
     [](const Fields& f, TrainJob& j) { j.spec.loss = f.word("loss", [](const std::string& s) { return parse_loss(s, "loss"); }); }},
    {"bias", nullptr, [](const TrainJob& j) -> Value { return j.spec.bias; },
     [](const Fields& f, TrainJob& j) { j.spec.bias = f.flag("bias"); }},
    {"sigmoid_derivative", nullptr,
     [](const TrainJob& j) -> Value { return j.spec.clip_sigmoid_derivative ? "fann" : "exact"; },
     [](const Fields& f, TrainJob& j) {
       const std::string derivative = f.text("sigmoid_derivative");
       if (!is_one_of(derivative, {"exact", "fann"})) f.fail("sigmoid_derivative", "expected exact or fann");
       j.spec.clip_sigmoid_derivative = derivative == "fann";
     }},
    {"parameters", nullptr, [](const TrainJob& j) -> Value { return j.spec.parameter_count(); }, nullptr},
    {"precision", nullptr,
     [](const TrainJob& j) -> Value { return j.half.empty() ? precision_name(j.double_precision) : j.half; },
     [](const Fields& f, TrainJob& j) {
       const std::string p = f.text("precision");
       if (!is_one_of(p, {"float", "double", "bf16", "fp16"})) f.fail("precision", "expected " + listed(precision_names));
       j.double_precision = p == "double";
       j.half = p == "bf16" || p == "fp16" ? p : "";
       j.config.value_bytes = j.half.empty() ? 0 : 2;
     }},
    {"learning", nullptr, [](const TrainJob& j) -> Value { return to_string(j.config.learning); },
     [](const Fields& f, TrainJob& j) {
       j.config.learning = f.word("learning", [](const std::string& s) { return parse_learning(s); });
     }},
    {"block", nullptr, [](const TrainJob& j) -> Value { return block_size(j.config, j.problem.train_total); },
     [](const Fields& f, TrainJob& j) { j.config.block = f.count("block", 1); }},
    {"rprop", rprop,
     [](const TrainJob& j) -> Value {
       const RpropConfig& r = j.config.rprop;
       return Json{{"variant", "iRprop- as FANN 2.2"}, {"increase", r.increase},     {"decrease", r.decrease},
                   {"delta_min", r.delta_min},        {"delta_max", r.delta_max},   {"delta_zero", r.delta_zero}};
     },
     [](const Fields& f, TrainJob& j) {
       const Fields r = f.object("rprop");
       j.config.rprop = {r.ranged("increase", kRpropIncreaseRange, "rprop-increase"),
                         r.ranged("decrease", kRpropDecreaseRange, "rprop-decrease"),
                         r.ranged("delta_min", kRpropDeltaMinRange, "rprop-delta-min"),
                         r.ranged("delta_max", kStepRange, "rprop-delta-max"),
                         r.ranged("delta_zero", kStepRange, "rprop-delta-zero")};
     }},
    {"adam", adam,
     [](const TrainJob& j) -> Value {
       const AdamConfig& a = j.config.adam;
       return Json{{"variant", "torch.optim.Adam (PyTorch 1.13)"},
                   {"beta1", a.beta1},
                   {"beta2", a.beta2},
                   {"epsilon", a.epsilon}};
     },
     [](const Fields& f, TrainJob& j) {
       const Fields a = f.object("adam");
       j.config.adam = {a.ranged("beta1", kAdamBetaRange, "adam-beta1"), a.ranged("beta2", kAdamBetaRange, "adam-beta2"),
                        a.ranged("epsilon", kAdamEpsilonRange, "adam-epsilon")};
     }},
    {"eta", nullptr, [](const TrainJob& j) -> Value { return j.config.eta; },
     [](const Fields& f, TrainJob& j) { j.config.eta = f.ranged("eta", kStepRange, "eta"); }},
    {"alpha", nullptr, [](const TrainJob& j) -> Value { return j.config.alpha; },
     [](const Fields& f, TrainJob& j) { j.config.alpha = f.ranged("alpha", kAlphaRange, "alpha"); }},
    {"momentum", nullptr, [](const TrainJob& j) -> Value { return to_string(j.config.momentum); },
     [](const Fields& f, TrainJob& j) {
       j.config.momentum = f.word("momentum", [](const std::string& s) { return parse_momentum_rule(s); });
     }},
    {"block_step", nullptr, [](const TrainJob& j) -> Value { return to_string(j.config.block_step); },
     [](const Fields& f, TrainJob& j) {
       j.config.block_step = f.word("block_step", [](const std::string& s) { return parse_block_step(s); });
     }},
    {"max_iterations", nullptr, [](const TrainJob& j) -> Value { return j.config.max_iterations; },
     [](const Fields& f, TrainJob& j) {
       j.config.max_iterations = static_cast<int>(f.whole("max_iterations", 0, static_cast<long long>(kEpochsRange.hi)));
     }},
    {"target_error", nullptr,
     [](const TrainJob& j) -> Value { return j.config.target_error ? Json(*j.config.target_error) : Json(nullptr); },
     [](const Fields& f, TrainJob& j) {
       if (f.has("target_error")) j.config.target_error = f.ranged("target_error", kErrorRange, "target-error");
     }},
    {"error_metric", nullptr, [](const TrainJob& j) -> Value { return to_string(j.config.metric); },
     [](const Fields& f, TrainJob& j) {
       j.config.metric = f.word("error_metric", [](const std::string& s) { return parse_error_metric(s); });
     }},
    {"max_seconds", nullptr, [](const TrainJob& j) -> Value { return j.config.max_seconds; },
     [](const Fields& f, TrainJob& j) {
       j.config.max_seconds = f.ranged("max_seconds", {.lo = 0, .hi = kLongestTimeoutSeconds}, "max-seconds");
     }},
    {"seed", nullptr, [](const TrainJob& j) -> Value { return j.config.seed; },
     [](const Fields& f, TrainJob& j) {
       j.config.seed = static_cast<std::uint64_t>(f.whole("seed", 0, std::numeric_limits<long long>::max()));
       j.data.seed = j.config.seed;  // the problem's data is drawn from the run's seed
     }},
    {"shuffle", nullptr, [](const TrainJob& j) -> Value { return j.config.shuffle; },
     [](const Fields& f, TrainJob& j) { j.config.shuffle = f.flag("shuffle"); }},
    {"eval_train", nullptr, [](const TrainJob& j) -> Value { return j.config.eval_train; },
     [](const Fields& f, TrainJob& j) { j.config.eval_train = f.flag("eval_train"); }},
    {"recompute", nullptr,  // written only when on: the records of before it read back as off
     [](const TrainJob& j) -> Value { return j.config.recompute ? Value(true) : std::nullopt; },
     [](const Fields& f, TrainJob& j) { j.config.recompute = f.has("recompute") && f.flag("recompute"); }},
    {"history_every", nullptr, [](const TrainJob& j) -> Value { return j.config.history_every; },
     [](const Fields& f, TrainJob& j) {
       j.config.history_every = static_cast<int>(f.whole("history_every", 1, kMostHistoryEvery));
     }},
    {"init_range", nullptr, [](const TrainJob& j) -> Value { return j.config.init_range; },
     [](const Fields& f, TrainJob& j) { j.config.init_range = f.ranged("init_range", kInitRange, "init-range"); }},
    {"data_dir", nullptr,
     [](const TrainJob& j) -> Value {
       const ProblemKind* kind = problem_kind(j.problem_name);
       return kind && kind->data == ProblemData::mnist ? Json(j.data.mnist_dir) : Json(nullptr);
     },
     [](const Fields& f, TrainJob& j) { j.data.mnist_dir = f.text("data_dir", ""); }},
    {"load_s", nullptr, [](const TrainJob& j) -> Value { return j.load_seconds; }, nullptr},
    {"versions", nullptr, [](const TrainJob&) -> Value { return versions_json(); }, nullptr},

    // The fields that make the config a whole job, after those of earlier records.
    {"job_format", nullptr, [](const TrainJob&) -> Value { return job_format; }, nullptr},  // checked first
    {"train_size", nullptr, [](const TrainJob& j) -> Value { return j.data.train_size; },
     [](const Fields& f, TrainJob& j) { j.data.train_size = f.count("train_size"); }},
    {"test_size", nullptr, [](const TrainJob& j) -> Value { return j.data.test_size; },
     [](const Fields& f, TrainJob& j) { j.data.test_size = f.count("test_size"); }},
    {"test_data", nullptr, [](const TrainJob& j) -> Value { return null_if_empty(j.data.test_data); },
     [](const Fields& f, TrainJob& j) { j.data.test_data = f.text("test_data", ""); }},
    {"collectives", nullptr,  // read with collective_algorithm
     [](const TrainJob& j) -> Value {
       return Json{{"allreduce", j.allreduce}, {"reduce", j.reduce},   {"bcast", j.bcast},
                   {"allgather", j.allgather}, {"gather", j.gather}};
     },
     nullptr},
    {"oversubscribe", nullptr, [](const TrainJob& j) -> Value { return j.oversubscribe; },
     [](const Fields& f, TrainJob& j) {
       j.oversubscribe = f.text("oversubscribe");
       if (!named_in(j.oversubscribe, oversubscribe_modes))
         f.fail("oversubscribe", "expected " + listed(oversubscribe_modes));
     }},
    // Read on the platform engines only, the ones --hosts places.
    {"hosts_of_ranks", nullptr,
     [](const TrainJob& j) -> Value { return j.rank_hosts.empty() ? Json(nullptr) : Json(j.rank_hosts); },
     [](const Fields& f, TrainJob& j) {
       if (!on_platform(j.engine) || !f.has("hosts_of_ranks")) return;
       j.rank_hosts = f.texts("hosts_of_ranks");
       if (!j.rank_hosts.empty() && j.rank_hosts.size() != static_cast<std::size_t>(j.np))
         f.fail("hosts_of_ranks", fmt::format("{} hosts for {} ranks", j.rank_hosts.size(), j.np));
     }},
    {"rank_nodes", nullptr,
     [](const TrainJob& j) -> Value {
       return j.config.rank_nodes.empty() ? Json(nullptr) : Json(j.config.rank_nodes);
     },
     read_rank_nodes},
    {"rank_rings", nullptr,
     [](const TrainJob& j) -> Value {
       return j.config.rank_rings.empty() ? Json(nullptr) : Json(j.config.rank_rings);
     },
     read_rank_rings},
    {"profile_values", calibrated, [](const TrainJob& j) -> Value { return profile_values_json(j.compute.profile); },
     [](const Fields& f, TrainJob& j) { read_profile_values(f.object("profile_values"), j.compute.profile); }},
    {"out", nullptr, [](const TrainJob& j) -> Value { return null_if_empty(j.out_path); },
     [](const Fields& f, TrainJob& j) { j.out_path = f.text("out", ""); }},
    {"quiet", nullptr, [](const TrainJob& j) -> Value { return j.quiet; },
     [](const Fields& f, TrainJob& j) { j.quiet = f.flag("quiet"); }},
    // The layer file the net was read from, as the front end read it (TrainJob::layer_file_digest).
    {"layer_file_digest", nullptr,
     [](const TrainJob& j) -> Value { return j.spec.table ? Value(j.spec.table->digest) : Value(); },
     [](const Fields& f, TrainJob& j) { j.layer_file_digest = f.text("layer_file_digest", ""); }},
    {"input_files", nullptr,
     [](const TrainJob& j) -> Value { return j.inputs.empty() ? Value() : input_files_json(j); }, read_input_files},
};
}  // namespace

Json job_json(const TrainJob& job) {
  Json j = Json::object();
  for (const JobField& field : job_fields) {
    if (field.has && !field.has(job)) continue;
    Value value = field.write(job);
    if (!value) continue;
    if (!field.key.empty()) {
      j[std::string(field.key)] = std::move(*value);
      continue;
    }
    for (auto& [key, item] : value->items()) {  // several keys; an object's merged into the one there
      Json& there = j[key];
      if (there.is_object() && item.is_object())
        for (auto& [inner, v] : item.items()) there[inner] = v;
      else
        there = item;
    }
  }
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
  for (const JobField& field : job_fields)
    if (field.read && (!field.has || field.has(job))) field.read(f, job);
  try {
    job.spec.validate();
  } catch (const InputError& e) {
    f.fail("layers", e.what());
  }
  return job;
}

}  // namespace wulf
