// `wulf platform info FILE` and `wulf platform bench FILE`: what SimGrid makes of a platform
// file, and what MPI costs on it in simulation. Any valid SimGrid platform works: the
// platform is read by SimGrid's loader (wulf-platform) and measured by wulf-rank-sim under
// smpirun.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "data/dataset.hpp"
#include "engine/launch.hpp"
#include "comm/staged_reduce.hpp"
#include "util/json.hpp"
#include "util/files.hpp"
#include "train/result_record.hpp"
#include "util/text.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>

namespace po = boost::program_options;

namespace wulf {
namespace {

std::string human_rate(double bytes_per_s) {
  std::ostringstream s;
  s << std::setprecision(4) << bytes_per_s * 8 / 1e6 << " Mbit/s";
  return s.str();
}

std::string human_time(double seconds) {
  std::ostringstream s;
  s << std::setprecision(4);
  if (seconds < 1e-3) s << seconds * 1e6 << " us";
  else if (seconds < 1) s << seconds * 1e3 << " ms";
  else s << seconds << " s";
  return s.str();
}

void print_zone(std::ostream& out, const Json& zone, int depth) {
  out << std::string(static_cast<std::size_t>(2 * depth + 2), ' ') << zone.at("name").get<std::string>();
  const double hosts = zone.at("hosts").get<double>();
  if (hosts > 0) out << " (" << hosts << " hosts)";
  out << "\n";
  for (const Json& child : zone.at("zones")) print_zone(out, child, depth + 1);
}

int info_command(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description options("wulf platform info FILE.xml [options]", 110, 55);
  options.add_options()("help,h", "print this help")("file", po::value<std::string>(), "the platform file")(
      "out", po::value<std::string>(), "write the description (JSON) to FILE");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  if (vm.count("help")) return out << options << "\n", exit_ok;
  if (!vm.count("file")) throw InputError("wulf platform info: no platform file given");
  const std::string file = vm["file"].as<std::string>();
  if (vm.count("out")) check_writable(vm["out"].as<std::string>(), "--out");

  Json info = platform_info(file);
  const auto& hosts = info.at("hosts");
  const auto& links = info.at("links");
  double cores = 0;
  std::map<std::pair<double, double>, int> kinds;  // (cores, speed) -> hosts
  for (const Json& h : hosts) {
    cores += h.at("cores").get<double>();
    kinds[{h.at("cores").get<double>(), h.at("speed_flops").get<double>()}] += 1;
  }
  out << "platform " << file << ": " << hosts.size() << " hosts, " << cores << " cores, " << links.size()
      << " links\n";
  out << "hosts:\n";
  for (const auto& [kind, count] : kinds)
    out << "  " << std::setw(5) << count << " x " << kind.first << " core" << (kind.first == 1 ? "" : "s") << " at "
        << std::setprecision(4) << kind.second / 1e9 << " Gflop/s\n";
  for (std::size_t i = 0; i < hosts.size() && i < 6; ++i)
    out << "  " << hosts[i].at("name").get<std::string>() << " (zone " << hosts[i].at("zone").get<std::string>()
        << ")\n";
  if (hosts.size() > 6) out << "  ... " << hosts.size() - 6 << " more\n";
  std::map<std::pair<double, double>, int> link_kinds;  // (bandwidth, latency) -> links
  for (const Json& l : links) link_kinds[{l.at("bandwidth_Bps").get<double>(), l.at("latency_s").get<double>()}] += 1;
  out << "links (bandwidth, latency):\n";
  for (const auto& [kind, count] : link_kinds)
    out << "  " << std::setw(5) << count << " x " << human_rate(kind.first) << ", " << human_time(kind.second) << "\n";
  out << "zones:\n";
  print_zone(out, info.at("zone"), 0);
  out << "routes:\n";
  for (const Json& r : info.at("routes"))
    out << "  " << r.at("from").get<std::string>() << " -> " << r.at("to").get<std::string>() << ": "
        << r.at("links").size() << " links, latency " << human_time(r.at("latency_s").get<double>()) << ", bottleneck "
        << human_rate(r.at("bottleneck_Bps").get<double>()) << "\n";
  if (vm.count("out")) {
    Json record = Json::object();
    record["wulf_record"] = 1;
    record["config"]["command"] = "platform info";
    record["config"]["platform"] = file;
    record["config"]["versions"] = versions_json();
    record["platform"] = std::move(info);
    write_file_atomically(vm["out"].as<std::string>(), record_text(record) + "\n");
    out << "record: " << vm["out"].as<std::string>() << "\n";
  }
  return exit_ok;
}

std::vector<std::size_t> parse_list(const std::string& text, const std::string& option) {
  std::vector<std::size_t> values;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    const auto v = parse_number(item);
    if (!v || *v < 1 || *v != std::floor(*v) || *v > 1e12)
      throw InputError("--" + option + ": '" + item + "' is not a whole number >= 1");
    values.push_back(static_cast<std::size_t>(*v));
  }
  if (values.empty()) throw InputError("--" + option + ": empty list");
  return values;
}

std::vector<std::string> parse_words(const std::string& text) {
  std::vector<std::string> words;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) words.push_back(trim(item));
  return words;
}

int bench_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("wulf platform bench FILE.xml [options]", 110, 55);
  options.add_options()
      ("help,h", "print this help")
      ("file", po::value<std::string>(), "the platform file")
      ("hosts", po::value<std::string>(), "ping-pong between these two hosts, e.g. a,b (default: the first two)")
      ("sizes", po::value<std::string>()->default_value("1,1024,65536,1048576,16777216"), "ping-pong message sizes, bytes")
      ("np", po::value<std::string>()->default_value("2,4,8,16"), "ranks of the collectives (those above the cores are skipped)")
      ("collectives", po::value<std::string>()->default_value("allreduce,reduce,allgather"), "which: allreduce, reduce, allgather")
      ("elements", po::value<std::string>()->default_value("4096,16768,54912"), "values per rank in the collectives")
      ("type", po::value<std::string>()->default_value("double"), "value type: double|float")
      ("allreduce", po::value<std::string>()->default_value("default"), "SMPI's allreduce algorithm (e.g. rdb)")
      ("reduce", po::value<std::string>()->default_value("default"),
       "reduce algorithm: SMPI's (default, binomial) or wulf's own (wulf-binomial, four-stage: seed 002's, its "
       "layout from the platform's host properties)")
      ("repeat", po::value<long long>()->default_value(3), "calls per measurement (the mean is reported)")
      ("no-pingpong", "measure only the collectives")
      ("bw-scale", po::value<double>()->default_value(1.0), "what-if: every link's bandwidth times this")
      ("lat-scale", po::value<double>()->default_value(1.0), "what-if: every link's latency times this")
      ("grow", po::value<long long>()->default_value(0),
       "what-if: the platform's one homogeneous cluster with this many hosts (0: as it is)")
      ("out", po::value<std::string>(), "write the measurements (JSON) to FILE");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  if (vm.count("help")) return out << options << "\n", exit_ok;
  if (!vm.count("file")) throw InputError("wulf platform bench: no platform file given");
  const std::string file = vm["file"].as<std::string>();
  const std::vector<std::size_t> sizes = parse_list(vm["sizes"].as<std::string>(), "sizes");
  const std::vector<std::size_t> nps = parse_list(vm["np"].as<std::string>(), "np");
  const std::vector<std::size_t> elements = parse_list(vm["elements"].as<std::string>(), "elements");
  const std::vector<std::string> collectives = parse_words(vm["collectives"].as<std::string>());
  for (const auto& c : collectives)
    if (c != "allreduce" && c != "reduce" && c != "allgather")
      throw InputError("--collectives: unknown collective '" + c + "' (expected allreduce, reduce or allgather)");
  const std::string type = vm["type"].as<std::string>();
  if (type != "double" && type != "float") throw InputError("--type: '" + type + "' (expected double or float)");
  const long long repeat = vm["repeat"].as<long long>();
  if (repeat < 1) throw InputError("--repeat: must be at least 1");
  if (vm.count("out")) check_writable(vm["out"].as<std::string>(), "--out");
  const double bw_scale = vm["bw-scale"].as<double>(), lat_scale = vm["lat-scale"].as<double>();
  if (!(bw_scale > 0) || !(lat_scale > 0)) throw InputError("--bw-scale and --lat-scale must be positive");
  const long long grow = vm["grow"].as<long long>();
  if (grow < 0) throw InputError("--grow: must not be negative");
  std::unique_ptr<GrownPlatform> grown;
  if (grow > 0) grown = std::make_unique<GrownPlatform>(file, grow);
  const std::string run_file = grown ? grown->path() : file;

  const std::vector<PlatformHost> hosts =
      platform_hosts(run_file, static_cast<long long>(*std::max_element(nps.begin(), nps.end())));
  long long total_cores = 0;
  for (const auto& h : hosts) total_cores += h.cores;
  // The ping-pong pair: named hosts, or the first two.
  std::vector<PlatformHost> pair;
  if (vm.count("hosts")) {
    for (const std::string& name : parse_words(vm["hosts"].as<std::string>())) {
      const auto it = std::find_if(hosts.begin(), hosts.end(), [&](const PlatformHost& h) { return h.name == name; });
      if (it == hosts.end()) throw InputError("--hosts: the platform " + file + " has no host '" + name + "'");
      pair.push_back(*it);
    }
    if (pair.size() != 2 || pair[0].name == pair[1].name) throw InputError("--hosts: name two different hosts");
  } else {
    if (hosts.size() < 2) throw InputError("platform " + file + ": a ping-pong needs two hosts");
    pair = {hosts[0], hosts[1]};
  }
  for (auto& h : pair) h.cores = 1;

  const std::string program = wulf_program("wulf-rank-sim");
  const std::string reduce = vm["reduce"].as<std::string>();
  if (reduce != "default" && reduce != "binomial" && !is_point_to_point_reduce(reduce))
    throw InputError("--reduce: unknown algorithm '" + reduce + "' (expected default, binomial, wulf-binomial or four-stage)");
  // wulf's own reduces end in (four-stage) or stand beside the library's binomial one.
  const std::vector<std::string> cfg{"smpi/allreduce:" + vm["allreduce"].as<std::string>(),
                                     "smpi/reduce:" + (is_point_to_point_reduce(reduce) ? std::string("binomial") : reduce)};
  auto measure = [&](const std::vector<PlatformHost>& on, std::size_t np, const std::string& what,
                     const std::vector<std::size_t>& list) {
    const Hostfile hostfile(on);
    std::vector<std::string> cmd = smpirun_command(run_file, hostfile, static_cast<int>(np), cfg, program);
    std::ostringstream sizes_text;
    for (std::size_t i = 0; i < list.size(); ++i) sizes_text << (i ? "," : "") << list[i];
    cmd.insert(cmd.end(), {"bench", "--what", what, "--sizes", sizes_text.str(), "--repeat", std::to_string(repeat),
                           "--bw-scale", std::to_string(bw_scale), "--lat-scale", std::to_string(lat_scale)});
    if (type == "float") cmd.push_back("--float");
    if (what == "reduce" && is_point_to_point_reduce(reduce)) {
      cmd.insert(cmd.end(), {"--reduce", reduce});
      const std::string layout = reduce == "four-stage" ? reduce_layout_of(on, static_cast<int>(np)) : "";
      if (!layout.empty()) cmd.insert(cmd.end(), {"--reduce-layout", layout});
    }
    const RanksOutcome o = run_ranks(cmd, true, true);
    if (o.code != 0) throw InputError("platform " + file + ": the " + what + " run failed: " + o.failure);
    std::vector<Json> rows;
    std::istringstream lines(o.output);
    std::string line;
    while (std::getline(lines, line))
      if (!line.empty() && line.front() == '{') rows.push_back(parse_json(line, "the " + what + " run's output"));
    return rows;
  };

  Json record = Json::object();
  record["wulf_record"] = 1;
  Json& config = record["config"];
  config["command"] = "platform bench";
  config["platform"] = file;
  config["pingpong_hosts"] = Json::array({pair[0].name, pair[1].name});
  config["type"] = type;
  config["repeat"] = repeat;
  config["collective_algorithm"] = "allreduce:" + vm["allreduce"].as<std::string>() + ", reduce:" +
                                   vm["reduce"].as<std::string>();
  config["what_if"]["bw_scale"] = bw_scale;
  config["what_if"]["lat_scale"] = lat_scale;
  config["what_if"]["grow"] = grow;
  config["versions"] = versions_json();

  out << "platform " << file << ": " << hosts.size() << " hosts, " << total_cores << " cores\n";
  if (!vm.count("no-pingpong")) {
    out << "ping-pong " << pair[0].name << " <-> " << pair[1].name << " (one way):\n";
    out << std::setw(12) << "bytes" << std::setw(14) << "time" << std::setw(18) << "rate" << "\n";
    Json pingpong = Json::array();
    const std::vector<Json> pp = measure(pair, 2, "pingpong", sizes);
    for (const Json& row : pp) {
      const double t = row.at("time_s").get<double>(), bytes = row.at("bytes").get<double>();
      out << std::setw(12) << bytes << std::setw(14) << human_time(t) << std::setw(18) << human_rate(bytes / t) << "\n";
      pingpong.push_back(row);
    }
    // Latency: the smallest message's time; bandwidth: the largest's bytes over its time
    // beyond that latency (with one size, that size's rate).
    const double latency = pp.front().at("time_s").get<double>();
    const double beyond =
        pp.size() > 1 ? pp.back().at("time_s").get<double>() - latency : pp.back().at("time_s").get<double>();
    const double bandwidth = pp.back().at("bytes").get<double>() / std::max(1e-30, beyond);
    out << "latency " << human_time(latency) << ", bandwidth " << human_rate(bandwidth) << "\n";
    record["pingpong"] = std::move(pingpong);
    record["summary"]["latency_s"] = latency;
    record["summary"]["bandwidth_Bps"] = bandwidth;
  }

  Json rows = Json::array();
  out << "collectives (" << type << ", mean of " << repeat << " calls, the last rank's return):\n";
  out << std::setw(11) << "collective" << std::setw(6) << "np" << std::setw(10) << "elements" << std::setw(14)
      << "time" << "\n";
  for (const std::string& what : collectives)
    for (std::size_t np : nps) {
      if (static_cast<long long>(np) > total_cores) {
        err << "wulf platform bench: np " << np << " skipped: the platform has " << total_cores << " cores\n";
        continue;
      }
      for (const Json& row : measure(hosts, np, what, elements)) {
        out << std::setw(11) << what << std::setw(6) << np << std::setw(10) << row.at("size").get<double>()
            << std::setw(14) << human_time(row.at("time_s").get<double>()) << "\n";
        rows.push_back(row);
      }
    }
  record["collectives"] = std::move(rows);
  if (vm.count("out")) {
    write_file_atomically(vm["out"].as<std::string>(), record_text(record) + "\n");
    out << "record: " << vm["out"].as<std::string>() << "\n";
  }
  return exit_ok;
}

}  // namespace

int platform_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? err : out) << "usage: wulf platform info FILE.xml [--out F.json]\n"
                               << "       wulf platform bench FILE.xml [options] (wulf platform bench --help)\n";
    return args.empty() ? exit_input : exit_ok;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "info") return info_command(rest, out);
  if (args[0] == "bench") return bench_command(rest, out, err);
  throw InputError("wulf platform: unknown verb '" + args[0] + "' (expected info or bench)");
}

}  // namespace wulf
