// `wulf testbed run`: any program on the emulated cluster of a platform (engine/testbed.hpp),
// once per rank with torchrun's environment, or under the testbed's mpirun; each rank's output
// kept in a file, the ranks' ends and the machine's load in a record.
#include "cli/cli.hpp"

#include "cli/options.hpp"
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "train/result_record.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/json.hpp"
#include "util/machine.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace wulf {
namespace {

// torchrun's port of rank 0's store (--master-port's default).
constexpr long long kTorchrunPort = 29500;
// The interface of every host's namespace that holds its address (Testbed::build): gloo and
// NCCL are told it, since they otherwise look the hostname up, fail, and fall back to loopback.
constexpr const char* kHostInterface = "eth0";

const std::string usage_text = fmt::format(
    "usage: wulf testbed run --platform FILE.xml --np N [options] -- PROGRAM [ARGS...]\n"
    "\n"
    "Builds the platform's network between the hosts the N ranks use (as wulf train --engine testbed does) and\n"
    "runs PROGRAM across it at the platform's rates (times --bw-scale): time dilation 1, since a program's own\n"
    "compute cannot be dilated. Where this machine's cores cannot carry the links' rates in real time, a note\n"
    "says what they carry and the --bw-scale that fits; where N is more than its cores, a note says that the\n"
    "ranks' compute shares them.\n"
    "\n"
    "--launcher env (default) starts PROGRAM once per rank in its host's network namespace, under the platform's\n"
    "host name, with torchrun's environment: RANK, LOCAL_RANK (among the ranks on its host), WORLD_SIZE,\n"
    "LOCAL_WORLD_SIZE, GROUP_RANK (its host's index), GROUP_WORLD_SIZE, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR\n"
    "(rank 0's host's address), MASTER_PORT; GLOO_SOCKET_IFNAME=eth0 and NCCL_SOCKET_IFNAME=eth0 (the interface\n"
    "of the host's address); WULF_TESTBED_HOST (the platform's host). The rest of the environment is kept.\n"
    "--launcher mpirun starts `mpirun PROGRAM ARGS` in the first host's namespace, as --engine testbed does.\n"
    "\n"
    "Each rank's standard output and error go to DIR/rank-R.out and DIR/rank-R.err (under mpirun, DIR/mpirun.out\n"
    "and DIR/mpirun.err). wulf waits for every rank; as soon as one exits with another code than 0, it ends the\n"
    "others (SIGTERM, SIGKILL {:g} s later), as it does on SIGINT, SIGTERM, SIGHUP or --timeout. The record (--out)\n"
    "holds the config, the testbed, each rank's host, address, exit code, who ended it and its wall seconds, and\n"
    "the machine's load and stolen CPU time over the run; `ended` {{status, message}} where a signal or --timeout\n"
    "ended the run. Everything built is removed however the run ends.\n",
    kGraceSeconds);

const std::string exit_codes_text = fmt::format(
    "exit codes: 0 every rank exited 0, 1 a rank failed (the first is named, with the end of its standard\n"
    "error), 2 bad input (nothing was built), {} timed out (--timeout), 128 + N ended by signal N (130 SIGINT,\n"
    "143 SIGTERM).\n",
    static_cast<int>(exit_timeout));

}  // namespace

// The command's options, after which `--` and the program come.
po::options_description testbed_run_options() {
  po::options_description o("wulf testbed run", 110, 40);
  // clang-format off
  o.add_options()
      ("help,h", "print this help")
      ("platform", po::value<std::string>(), "the SimGrid platform file (XML) whose network is built")
      ("np", whole_in("np", kRanksHereRange), "ranks: processes of PROGRAM (env), or mpirun's ranks")
      ("hosts", po::value<std::string>(),
       "the host of each rank, in rank order: a list (a,b,a,b) or a file of one host name per line (default: the "
       "platform's hosts in the order it declares them, each filled to its cores)")
      ("ranks-per-host", whole_in("ranks-per-host", {.lo = 0, .hi = kRanksHereRange.hi})->default_value(0),
       "at most this many ranks on a host (0: fill each host's cores in order)")
      ("bw-scale", number_in("bw-scale", kWhatIfScaleRange)->default_value(1.0),
       "what-if: every link's bandwidth times this (e.g. the one the note suggests)")
      ("master-port", whole_in("master-port", {.lo = 1, .hi = 65535}),
       "env: MASTER_PORT, where rank 0's store listens (default 29500, torchrun's)")
      ("launcher", one_of({"env", "mpirun"}, "--launcher: '{}' (expected env or mpirun)")->default_value("env"),
       "env: PROGRAM once per rank with torchrun's environment; mpirun: PROGRAM is an MPI program, started by "
       "the testbed's mpirun")
      ("logs", po::value<std::string>(),
       "the folder of the ranks' output files, new or empty (default: testbed-run-PID in the current folder)")
      ("out", po::value<std::string>(), "the record, JSON (default: run.json in --logs)")
      ("timeout", timeout_value(), timeout_help("").c_str())
      ("quiet", po::bool_switch(), "print neither the testbed nor the summary");
  // clang-format on
  return o;
}

namespace {

// What the command line asks for, checked.
struct RunRequest {
  std::string platform;
  long long np = 0;
  std::vector<std::string> hosts;  // --hosts, a host a rank (empty: filled in order)
  long long ranks_per_host = 0;
  double bw_scale = 1;
  long long master_port = kTorchrunPort;
  bool mpirun = false;
  std::string logs, out;
  double timeout_s = 0;
  bool quiet = false;
  std::vector<std::string> program;
};

RunRequest read_request(const po::variables_map& vm, std::vector<std::string> program) {
  RunRequest r;
  if (!vm.count("platform")) throw InputError("--platform: give the platform file whose network the ranks run on");
  if (!vm.count("np")) throw InputError("--np: give the number of ranks");
  r.platform = vm["platform"].as<std::string>();
  check_input_file(r.platform, "--platform", platform_file_limit);
  r.np = vm["np"].as<long long>();
  r.ranks_per_host = vm["ranks-per-host"].as<long long>();
  if (vm.count("hosts")) r.hosts = rank_hosts(vm["hosts"].as<std::string>(), r.np, r.ranks_per_host);
  r.bw_scale = vm["bw-scale"].as<double>();
  r.mpirun = vm["launcher"].as<std::string>() == "mpirun";
  if (vm.count("master-port")) {
    if (r.mpirun) throw InputError("--master-port is for --launcher env: mpirun's ranks find each other themselves");
    r.master_port = vm["master-port"].as<long long>();
  }
  r.logs = vm.count("logs") ? vm["logs"].as<std::string>() : "testbed-run-" + std::to_string(::getpid());
  if (r.logs.empty()) throw InputError("--logs: give a folder");
  r.out = vm.count("out") ? vm["out"].as<std::string>() : (fs::path(r.logs) / "run.json").string();
  if (vm.count("timeout")) r.timeout_s = vm["timeout"].as<double>();
  r.quiet = vm["quiet"].as<bool>();
  if (program.empty() || program[0].empty())
    throw InputError("no program: give it after --, e.g. wulf testbed run --platform P --np 4 -- python3 train.py");
  if (find_program(program[0]).empty())
    throw InputError(
        "-- " + program[0] + ": " +
        (program[0].find('/') == std::string::npos ? "no such program on PATH" : "not an executable file"));
  r.program = std::move(program);
  return r;
}

// --logs: a folder that is new (made here) or empty, refused before anything is built. One
// this command made and left empty (the set-up failed) goes with the object.
class LogFolder {
 public:
  explicit LogFolder(const std::string& path) : path_(fs::absolute(path)) {
    std::error_code ec;
    if (fs::exists(path_, ec)) {
      if (!fs::is_directory(path_, ec)) throw InputError("--logs " + path + ": it is not a folder");
      if (!fs::is_empty(path_, ec))
        throw InputError("--logs " + path + ": it is not empty (it may hold another run's output): give a new or "
                         "empty folder");
    } else if (!fs::create_directory(path_, ec) || ec) {
      throw InputError("--logs " + path + ": cannot make it: " + (ec ? ec.message() : "no reason given"));
    } else {
      made_ = true;
    }
    try {
      check_writable(file("run.json"), "--logs");
    } catch (const InputError&) {
      if (made_) fs::remove(path_, ec);
      throw;
    }
  }
  ~LogFolder() {
    std::error_code ec;
    if (made_) fs::remove(path_, ec);  // only where it is still empty
  }
  LogFolder(const LogFolder&) = delete;
  LogFolder& operator=(const LogFolder&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
  bool made_ = false;
};

// Rank r's place: its host's index in the plan, and its index among that host's ranks.
struct RankSlot {
  std::size_t host = 0;
  int local_rank = 0;
};

std::vector<RankSlot> rank_slots(const TestbedPlan& plan) {
  std::vector<RankSlot> places;
  std::vector<int> seen(plan.hosts.size(), 0);
  for (const int h : plan.rank_host) {
    const auto host = static_cast<std::size_t>(h);
    places.push_back({host, seen[host]++});
  }
  return places;
}

// The children: a rank each, in its host's namespace, with torchrun's environment; or mpirun.
std::vector<GroupChild> rank_children(const RunRequest& r, const Testbed& bed, const LogFolder& logs,
                                      const MpiSessionDir& session) {
  const TestbedPlan& plan = bed.plan();
  if (r.mpirun) {
    std::vector<std::string> cmd = bed.command(r.program[0], session, Collectives{});
    cmd.insert(cmd.end(), r.program.begin() + 1, r.program.end());
    return {{cmd, {}, logs.file("mpirun.out"), logs.file("mpirun.err"), "mpirun"}};
  }
  std::vector<GroupChild> children;
  const std::vector<RankSlot> places = rank_slots(plan);
  const std::string np = std::to_string(r.np), hosts = std::to_string(plan.hosts.size());
  for (std::size_t rank = 0; rank < places.size(); ++rank) {
    const RankSlot& p = places[rank];
    const TestbedHost& host = plan.hosts[p.host];
    const std::string name = "rank " + std::to_string(rank), id = std::to_string(rank);
    children.push_back({bed.in_host(p.host, r.program),
                        {"RANK=" + id, "LOCAL_RANK=" + std::to_string(p.local_rank), "WORLD_SIZE=" + np,
                         "LOCAL_WORLD_SIZE=" + std::to_string(host.ranks), "GROUP_RANK=" + std::to_string(p.host),
                         "GROUP_WORLD_SIZE=" + hosts, "ROLE_RANK=" + id, "ROLE_WORLD_SIZE=" + np,
                         "MASTER_ADDR=" + plan.hosts.at(0).address, "MASTER_PORT=" + std::to_string(r.master_port),
                         std::string("GLOO_SOCKET_IFNAME=") + kHostInterface,
                         std::string("NCCL_SOCKET_IFNAME=") + kHostInterface, "WULF_TESTBED_HOST=" + host.name},
                        logs.file("rank-" + id + ".out"),
                        logs.file("rank-" + id + ".err"),
                        name});
  }
  return children;
}

// A child's end in the record: its exit code, the signal that ended it, who ended it, its
// wall seconds (null where it never started).
Json child_end_json(const ChildEnd* end) {
  const bool ran = end && end->code >= 0;
  return {{"exit_code", ran ? Json(end->code) : Json(nullptr)},
          {"signal", ran && end->signal ? Json(signal_name(end->signal)) : Json(nullptr)},
          {"ended_by", ran && !end->ended_by.empty() ? Json(end->ended_by) : Json(nullptr)},
          {"wall_s", ran ? Json(end->wall_s) : Json(nullptr)}};
}

// What the record says of the run, however it ended: ends has an entry per child once they
// started (none before), and the machine is looked at as they start and once they have ended.
struct RunState {
  std::vector<ChildEnd> ends;
  MachineSample before, after;
  std::chrono::steady_clock::time_point start, end;
  bool started = false;
  double wall_s() const { return std::chrono::duration<double>(end - start).count(); }
};

// The ranks' time: from their start to the end of the last, whatever ends the wait.
class RanksTimed {
 public:
  explicit RanksTimed(RunState& state) : state_(state) {
    state_.before = sample_machine();
    state_.start = std::chrono::steady_clock::now();
    state_.started = true;
  }
  ~RanksTimed() {
    state_.end = std::chrono::steady_clock::now();
    state_.after = sample_machine();
  }
  RanksTimed(const RanksTimed&) = delete;
  RanksTimed& operator=(const RanksTimed&) = delete;

 private:
  RunState& state_;
};

Json run_record(const RunRequest& r, const TestbedPlan& plan, const LogFolder& logs,
                const std::vector<std::string>& notes, const RunState& state) {
  const std::vector<RankSlot> places = rank_slots(plan);
  Json hosts = Json::array(), ranks = Json::array();
  for (std::size_t rank = 0; rank < places.size(); ++rank) {
    const TestbedHost& host = plan.hosts[places[rank].host];
    hosts.push_back(host.name);
    const std::string id = std::to_string(rank);
    Json j = {{"rank", rank}, {"host", host.name}, {"address", host.address}, {"local_rank", places[rank].local_rank}};
    j.update(child_end_json(!r.mpirun && rank < state.ends.size() ? &state.ends[rank] : nullptr));
    j["stdout"] = logs.file(r.mpirun ? "mpirun.out" : "rank-" + id + ".out");
    j["stderr"] = logs.file(r.mpirun ? "mpirun.err" : "rank-" + id + ".err");
    ranks.push_back(std::move(j));
  }
  const unsigned cores = std::thread::hardware_concurrency();
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["kind"] = "testbed_run";
  record["config"] = {{"platform", r.platform},
                      {"np", r.np},
                      {"hosts", hosts},
                      {"bw_scale", r.bw_scale},
                      {"launcher", r.mpirun ? "mpirun" : "env"},
                      {"program", r.program},
                      {"master_addr", plan.hosts.at(0).address},
                      {"master_port", r.mpirun ? Json(nullptr) : Json(r.master_port)},
                      {"logs", logs.str()},
                      {"timeout_s", r.timeout_s > 0 ? Json(r.timeout_s) : Json(nullptr)},
                      {"versions", versions_json()}};
  record["testbed"] = plan.to_json();
  record["notes"] = notes;
  record["ranks"] = std::move(ranks);
  if (r.mpirun) {
    record["mpirun"] = child_end_json(state.ends.empty() ? nullptr : &state.ends[0]);
    record["mpirun"]["stdout"] = logs.file("mpirun.out");
    record["mpirun"]["stderr"] = logs.file("mpirun.err");
  }
  record["wall_s"] = state.started ? Json(state.wall_s()) : Json(nullptr);
  record["machine"] = state.started ? machine_use_json(state.before, state.after, cores) : Json(nullptr);
  return record;
}

// The last lines of a rank's file, each indented, for a message ("" where it is empty).
std::string last_lines(const std::string& path, std::size_t lines) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  std::string text(static_cast<std::size_t>(size - from), '\0');
  in.seekg(from);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  std::vector<std::string> all;
  std::istringstream in_lines(text);
  for (std::string line; std::getline(in_lines, line);) all.push_back(line);
  while (!all.empty() && trim(all.back()).empty()) all.pop_back();
  if (all.size() > lines) all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(lines));
  std::string said;
  for (const std::string& line : all) said += "\n    " + line;
  return safe_to_print(said);
}

// The first child that failed, for people: which rank on which host, how it ended, and the
// end of its standard error.
std::string failure_text(const RunRequest& r, const TestbedPlan& plan, const std::vector<GroupChild>& children,
                         const std::vector<ChildEnd>& ends, std::size_t first) {
  const ChildEnd& e = ends[first];
  const std::string how =
      e.signal ? "was killed by " + signal_name(e.signal) : "exited with code " + std::to_string(e.code);
  const std::string who =
      r.mpirun ? "mpirun" : children[first].name + " (host " + plan.hosts[rank_slots(plan)[first].host].name + ")";
  const std::string tail = last_lines(children[first].err_path, 10);
  const std::size_t others = children.size() - 1;
  return who + " " + how + (others > 0 && !r.mpirun ? "; the other ranks were ended" : "") + "; " +
         (tail.empty() ? "its standard error, " + children[first].err_path + ", is empty"
                       : "the end of its standard error, " + children[first].err_path + ":" + tail);
}

}  // namespace

int testbed_run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  // Everything after the first `--` is the program and its arguments, never wulf's options.
  const auto dashes = std::find(args.begin(), args.end(), "--");
  const std::vector<std::string> own(args.begin(), dashes);
  std::vector<std::string> program(dashes == args.end() ? dashes : dashes + 1, args.end());
  const po::options_description options = testbed_run_options();
  po::variables_map vm;
  po::store(po::command_line_parser(own).options(options).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    out << usage_text << "\n" << options << "\n" << exit_codes_text;
    return exit_ok;
  }
  const RunRequest r = read_request(vm, std::move(program));
  ready_testbed("wulf testbed run", err);
  const PlatformHosts placement =
      place_ranks(r.platform, r.platform, r.np, r.ranks_per_host, r.hosts, {.bw = r.bw_scale});
  const TestbedPlan plan =
      plan_program_testbed(r.platform, hosts_of_ranks(placement.hosts, r.np), static_cast<int>(r.np), r.bw_scale);
  const LogFolder logs(r.logs);
  check_output(r.out, "--out", {});
  std::vector<std::string> notes;
  for (std::string note : {real_time_note(plan, std::thread::hardware_concurrency(), r.bw_scale),
                           shared_cores_note(static_cast<int>(r.np), std::thread::hardware_concurrency())})
    if (!note.empty()) notes.push_back(std::move(note));
  if (!r.quiet) print_testbed(out, plan);
  for (const std::string& note : notes) err << "wulf testbed run: note: " << note << "\n";

  const TimeLimit limit(r.timeout_s);
  RunState state;
  std::vector<GroupChild> children;
  int failed = -1;
  const auto write_ended = [&](const std::string& status, const std::string& message) {
    Json record = run_record(r, plan, logs, notes, state);
    record["ended"] = {{"status", status}, {"message", message}};
    write_file_atomically(r.out, record_text(record));
  };
  try {
    const Testbed bed(plan);
    const MpiSessionDir session;
    children = rank_children(r, bed, logs, session);
    try {
      const RanksTimed timed(state);
      failed = run_children(children, ChildOptions{}, state.ends);
    } catch (const std::runtime_error& e) {  // a rank that could not be started, or its file
      throw InputError(std::string("wulf testbed run: ") + e.what());
    }
  } catch (const TimedOut& e) {
    write_ended("timed_out", e.message);
    throw;
  } catch (const Interrupted& e) {
    write_ended("interrupted", e.message);
    throw;
  }
  write_file_atomically(r.out, record_text(run_record(r, plan, logs, notes, state)));
  if (failed >= 0) {
    err << "wulf testbed run: " << failure_text(r, plan, children, state.ends, static_cast<std::size_t>(failed))
        << "\n";
    return exit_internal;
  }
  if (!r.quiet)
    out << fmt::format("wulf testbed run: {} exited 0 in {:.3g} s; their output is in {}, the record {}\n",
                       r.mpirun ? "mpirun's " + std::to_string(r.np) + " ranks" : std::to_string(r.np) + " ranks",
                       state.wall_s(), logs.str(), r.out);
  return exit_ok;
}

}  // namespace wulf
