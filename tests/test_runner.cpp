// The runner of the sweep commands (cli/runner.hpp, issue 30 item 4): results in list order
// whatever order the jobs ran in, a failing job's code and message, the pool's size held,
// one at a time in list order; where a process stands under a launcher, its variables kept
// from the children; and the same `wulf recommend` alone and under `mpirun -np 2`: the same
// choice, the same output and the same records, wall-clock times aside.
#include "cli/launcher.hpp"
#include "cli/runner.hpp"
#include "cli/train_resolve.hpp"
#include "engine/launch.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "engine/process.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

namespace wulf {
namespace {

using namespace testing_support;

// A job that takes ms milliseconds and says its name; it counts how many such jobs run at once.
struct Counter {
  std::atomic<int> running{0}, most{0};
  std::mutex m;
  std::vector<std::string> finished;  // in the order they ended

  Job job(const std::string& name, int ms, int code = 0) {
    return {{name}, "", {}, [this, name, ms, code] {
              const int now = ++running;
              for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
              }
              std::this_thread::sleep_for(std::chrono::milliseconds(ms));
              --running;
              const std::lock_guard<std::mutex> lock(m);
              finished.push_back(name);
              return JobResult{code, name, code ? "wulf: error: " + name + " failed\n" : "", "", Json(), 0};
            }};
  }
};

TEST(runner, results_come_back_in_list_order_whatever_order_the_jobs_ended_in) {
  Counter c;
  // The first job takes longest: with four at once it ends last.
  const std::vector<Job> jobs{c.job("a", 400), c.job("b", 200), c.job("c", 100), c.job("d", 10)};
  const std::vector<JobResult> results = Runner(4).run(jobs);
  ASSERT_EQ(results.size(), 4u);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(results[i].out, jobs[i].args[0]);
    EXPECT_EQ(results[i].command, jobs[i].args[0]);  // no wulf command: its own name
    EXPECT_GE(results[i].wall_s, 0.005);
  }
  EXPECT_EQ(c.finished.back(), "a");
  EXPECT_GE(c.most.load(), 2);
  EXPECT_LE(c.most.load(), 4);
}

TEST(runner, a_pool_of_one_runs_one_job_at_a_time) {
  Counter c;
  std::vector<Job> jobs;
  for (const char* name : {"a", "b", "c"}) jobs.push_back(c.job(name, 50));
  Runner(1).run(jobs);
  EXPECT_EQ(c.most.load(), 1);
  EXPECT_EQ(c.finished, (std::vector<std::string>{"a", "b", "c"}));
  // One at a time whatever the pool, in list order, and a failure ends the list.
  Counter d;
  std::vector<std::size_t> started;
  const std::vector<JobResult> results =
      Runner(4).run({d.job("a", 50), d.job("b", 10, 3), d.job("c", 10)}, Spread::one_at_a_time,
                    [&](std::size_t i) { started.push_back(i); });
  EXPECT_EQ(d.most.load(), 1);
  EXPECT_EQ(started, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(results[0].code, 0);
  EXPECT_EQ(results[1].code, 3);
  EXPECT_EQ(results[1].message(), "b failed");
  EXPECT_EQ(results[2].code, kNotRun);
  EXPECT_TRUE(contains(results[2].err, "not run")) << results[2].err;
}

// The pool starts a job only where it fits into the machine's memory beside those running
// (issue 62: two simulations of 17.9 GiB each were started side by side on 24 GiB); a job
// alone runs whatever its estimate.
TEST(runner, the_pool_runs_together_only_what_fits_into_memory) {
  const MemoryLimit limit("1000");
  Counter big;
  std::vector<Job> jobs;
  for (const char* name : {"a", "b", "c"}) {
    jobs.push_back(big.job(name, 50));
    jobs.back().memory_bytes = 600;
  }
  Runner(4).run(jobs);
  EXPECT_EQ(big.most.load(), 1);
  EXPECT_EQ(big.finished.size(), 3u);
  Counter small;
  jobs.clear();
  for (const char* name : {"a", "b", "c", "d"}) {
    jobs.push_back(small.job(name, 50));
    jobs.back().memory_bytes = 400;
  }
  Runner(4).run(jobs);
  EXPECT_EQ(small.most.load(), 2);  // two fit, three do not
  Counter huge;
  jobs = {huge.job("alone", 10)};
  jobs.back().memory_bytes = 1e12;
  Runner(4).run(jobs);
  EXPECT_EQ(huge.finished, (std::vector<std::string>{"alone"}));
}

// A `wulf train` job without an estimate of its own is held to its front end's (issue 62:
// recommend's and study's simulations went into the pool with none).
TEST(runner, a_train_job_is_held_to_its_own_front_ends_memory_estimate) {
  TestDir dir;
  const std::vector<std::string> args{"train",      "--problem", "encoder:8", "--engine", "sim", "--np", "4",
                                      "--platform", toy4,        "--epochs",  "2",        "--quiet"};
  const Json record = record_of(dir, "alone", args);
  const double bytes = train_memory_bytes(args);
  EXPECT_NEAR(bytes, record.at("config").at("memory_estimate").at("machine_bytes").get<double>(), 1.0);
  EXPECT_GT(bytes, 0);
  EXPECT_EQ(train_memory_bytes({"train", "--problem", "no-such-problem"}), 0);
  EXPECT_EQ(train_memory_bytes({"platform", "info", toy4}), 0);
  // Room for one such run, not two: the second starts once the first has ended.
  const MemoryLimit limit(std::to_string(static_cast<long long>(bytes * 1.5)));
  std::vector<Job> jobs;
  for (const char* name : {"a", "b"}) jobs.push_back({args, dir.file(std::string(name) + ".json"), {}, {}});
  std::vector<std::chrono::steady_clock::time_point> started(2);
  const std::vector<JobResult> results =
      Runner(2).run(jobs, Spread::pool, [&](std::size_t i) { started[i] = std::chrono::steady_clock::now(); });
  ASSERT_TRUE(results[0].ok() && results[1].ok()) << results[0].err << results[1].err;
  const std::size_t first = started[0] <= started[1] ? 0 : 1;
  EXPECT_GE(std::chrono::duration<double>(started[1 - first] - started[first]).count(), results[first].wall_s * 0.99);
}

TEST(runner, the_pool_is_the_cores_unless_told) {
  EXPECT_EQ(Runner().pool(),
            std::max(1, std::min(cores_here(), static_cast<int>(std::thread::hardware_concurrency()))));
  EXPECT_EQ(Runner(3).pool(), 3);
}

TEST(runner, wulf_jobs_give_their_records_and_a_failing_one_its_code_and_message) {
  TestDir dir;
  std::vector<Job> jobs;
  for (int epochs : {3, 1, 2})
    jobs.push_back({{"train", "--problem", "encoder:8", "--epochs", std::to_string(epochs), "--quiet"},
                    dir.file("run-" + std::to_string(epochs) + ".json"),
                    {},
                    {}});
  // Refused (exit 2) before it writes anything; the others run all the same.
  jobs.push_back({{"train", "--problem", "encoder:8", "--epochs", "-1", "--quiet"}, dir.file("bad.json"), {}, {}});
  write_file_atomically(dir.file("bad.json"), "{\"left\": \"from before\"}\n");  // not taken for its record
  const std::vector<JobResult> results = Runner(2).run(jobs);
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(results[i].code, exit_ok) << results[i].err;
    EXPECT_EQ(results[i].record.at("final").at("iterations").get<double>(), std::stod(jobs[i].args[4]));
    EXPECT_EQ(results[i].record.at("config").at("out").get<std::string>(), jobs[i].record);
    EXPECT_EQ(results[i].command, "wulf train --problem encoder:8 --epochs " + jobs[i].args[4] + " --quiet");
  }
  EXPECT_EQ(results[3].code, exit_input);
  EXPECT_EQ(results[3].message(), "--epochs: -1 is negative") << results[3].err;
  EXPECT_TRUE(results[3].record.is_null());
}

// Sets environment variables for one scope; unsets them after.
class Environment {
 public:
  explicit Environment(const std::map<std::string, std::string>& vars) : vars_(vars) {
    for (const auto& [name, value] : vars_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~Environment() {
    for (const auto& [name, value] : vars_) ::unsetenv(name.c_str());
  }

 private:
  std::map<std::string, std::string> vars_;
};

TEST(runner, a_process_knows_its_place_from_its_launchers_environment) {
  EXPECT_TRUE(launcher_place().launcher.empty());
  EXPECT_EQ(launcher_place().size, 1);
  {
    const Environment e({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "2"}});
    EXPECT_EQ(launcher_place().rank, 2);
    EXPECT_EQ(launcher_place().size, 4);
    EXPECT_EQ(launcher_place().launcher, "OMPI_COMM_WORLD_SIZE");
  }
  {
    const Environment e({{"PMI_SIZE", "3"}, {"PMI_RANK", "0"}});
    EXPECT_EQ(launcher_place().size, 3);
  }
  {
    // sbatch's batch script has SLURM_NTASKS but is one process; srun's tasks have the step's.
    const Environment e({{"SLURM_NTASKS", "8"}, {"SLURM_PROCID", "0"}});
    EXPECT_EQ(launcher_place().size, 1);
    const Environment step({{"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_PROCID", "5"}});
    EXPECT_EQ(launcher_place().rank, 5);
    EXPECT_EQ(launcher_place().size, 8);
  }
  for (const auto& [size, rank] : {std::pair{"2", "2"}, std::pair{"0", "0"}, std::pair{"two", "0"}}) {
    const Environment e({{"OMPI_COMM_WORLD_SIZE", size}, {"OMPI_COMM_WORLD_RANK", rank}});
    expect_input_error([] { launcher_place(); }, {"OMPI_COMM_WORLD"});
  }
}

TEST(runner, the_launchers_variables_are_kept_from_the_children) {
  // A launcher of one process: no MPI, but a child wulf train that saw OMPI_COMM_WORLD_SIZE
  // would take itself for one of the launcher's ranks and refuse --engine sim.
  TestDir dir;
  ChildOptions options;
  options.capture = true;
  options.env = {"OMPI_COMM_WORLD_SIZE=1", "OMPI_COMM_WORLD_RANK=0", "PMIX_RANK=0", "OMPI_MCA_ess_base_jobid=1"};
  const ChildResult r =
      run_child({wulf_program("wulf"), "recommend", "--platform", toy4, "--problem", "encoder:8", "--target-error",
                 "0.5", "--np", "1,2", "--blocks", "8", "--max-epochs", "2", "--records", dir.file("runs")},
                options);
  EXPECT_EQ(r.code, exit_ok) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("runs/time-1.json")));
  // The variables themselves: hidden from every child from now on.
  ::setenv("WULF_TEST_LAUNCHER_ID", "7", 1);
  keep_from_children({"WULF_TEST_LAUNCHER_ID"});
  const ChildResult env = run_child({"env"}, options);
  EXPECT_FALSE(contains(env.out, "WULF_TEST_LAUNCHER_ID")) << env.out;
  EXPECT_TRUE(contains(env.out, "OMPI_COMM_WORLD_SIZE=1")) << "overrides still reach the child";
}

// Wall-clock fields, which two runs of the same search cannot share: the recommend record's
// "wall" (and how its runs ran: processes, runs at once), each run's wall_s and load_s, and
// the scratch paths the runs wrote to ("out"). A sequential run's clock is the wall clock:
// its time_s, phases and flop rates (recommend's convergence entries are such runs).
void expect_same(const Json& a, const Json& b, const std::string& where, bool sequential = false) {
  if (a.is_object() && a.contains("config") && a.at("config").is_object() && a.at("config").contains("engine"))
    sequential = a.at("config").at("engine") == "seq";
  if (a.is_object() && a.contains("engine") && a.at("engine") == "seq") sequential = true;
  if (a.is_object()) {
    ASSERT_TRUE(b.is_object()) << where;
    for (const auto& [key, value] : a.items()) {
      if (key == "wall" || key == "wall_s" || key == "load_s" || key == "out") continue;
      if (sequential && (key == "time_s" || key == "phases" || key == "performance")) continue;
      ASSERT_TRUE(b.contains(key)) << where << "/" << key;
      expect_same(value, b.at(key), where + "/" + key, sequential);
    }
    EXPECT_EQ(a.size(), b.size()) << where;
  } else if (a.is_array()) {
    ASSERT_TRUE(b.is_array()) << where;
    ASSERT_EQ(a.size(), b.size()) << where;
    for (std::size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i], where + "/" + std::to_string(i), sequential);
  } else {
    EXPECT_EQ(a, b) << where;
  }
}

// The output without the phases' wall times ("... 0.4 s", "wall time: ...") and the record's path.
std::string without_wall_times(const std::string& out) {
  std::string s = std::regex_replace(out, std::regex(R"(\.\.\. [0-9]+\.[0-9] s)"), "... # s");
  s = std::regex_replace(s, std::regex(R"(wall time: .*)"), "wall time: #");
  return std::regex_replace(s, std::regex(R"(record: .*)"), "record: #");
}

TEST(runner, recommend_under_mpirun_np_2_gives_the_choice_output_and_records_of_recommend_alone) {
  TestDir dir;
  // encoder:16 on the toy platform with seed 000's Bat Cave phase times: 6 timings, 2
  // sequential runs, 3 finalists, a parallel choice (test_recommend's search).
  const std::vector<std::string> search{"recommend",
                                        "--platform",
                                        toy4,
                                        "--problem",
                                        "encoder:16",
                                        "--target-error",
                                        "0.001",
                                        "--compute",
                                        "calibrated",
                                        "--profile",
                                        test_platform("example.profile"),
                                        "--np",
                                        "1,2,4",
                                        "--blocks",
                                        "4,8",
                                        "--max-epochs",
                                        "3000",
                                        "--finalists",
                                        "2"};
  ChildOptions options;
  options.capture = true;
  options.grace_s = kWulfGraceSeconds;
  const std::string wulf_path = wulf_program("wulf");
  std::vector<std::string> alone{wulf_path};
  alone.insert(alone.end(), search.begin(), search.end());
  alone.insert(alone.end(), {"--out", dir.file("alone.json"), "--records", dir.file("alone")});
  const ChildResult a = run_child(alone, options);
  ASSERT_EQ(a.code, exit_ok) << a.out << a.err;

  const MpiSessionDir session;
  std::vector<std::string> mpi = mpirun_command(2, "on", Collectives{}, wulf_path, session);
  mpi.insert(mpi.end(), search.begin(), search.end());
  mpi.insert(mpi.end(), {"--out", dir.file("mpi.json"), "--records", dir.file("mpi")});
  const ChildResult m = run_child(mpi, options);
  ASSERT_EQ(m.code, exit_ok) << m.out << m.err;

  // The same output (process 1 prints nothing), the same choice.
  EXPECT_EQ(without_wall_times(m.out), without_wall_times(a.out));
  EXPECT_TRUE(contains(a.out, "recommended: block, p 4, b 4")) << a.out;
  const Json ra = read_json_file(dir.file("alone.json")), rm = read_json_file(dir.file("mpi.json"));
  EXPECT_EQ(ra.at("wall").at("processes").get<int>(), 1);
  EXPECT_EQ(rm.at("wall").at("processes").get<int>(), 2);
  for (const char* key : {"strategy", "p", "b", "eta", "alpha", "time_s", "iterations", "speedup", "command"})
    EXPECT_EQ(rm.at("choice").at(key), ra.at("choice").at(key)) << key;
  expect_same(ra, rm, "recommend");
  // Every run's record, those run by process 1 (odd jobs of each list) brought back to 0.
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("alone"))) names.push_back(e.path().filename());
  EXPECT_EQ(names.size(), 6u + 2u + 3u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(std::filesystem::exists(dir.file("mpi/" + name)));
    expect_same(read_json_file(dir.file("alone/" + name)), read_json_file(dir.file("mpi/" + name)), name);
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.file("mpi")), {}),
            static_cast<std::ptrdiff_t>(names.size()));
}

TEST(runner, a_process_that_fails_under_mpirun_ends_the_others_with_its_error) {
  // Process 1 is given a profile that is not there: it fails while parsing, process 0 has
  // begun the screening and would wait for process 1's records.
  const std::vector<std::string> search{
      "recommend",  "--platform", toy4,  "--problem", "encoder:16", "--target-error", "0.001", "--compute",
      "calibrated", "--np",       "1,2", "--blocks",  "4",          "--max-epochs",   "3000",  "--profile"};
  const MpiSessionDir session;
  std::vector<std::string> cmd = mpirun_command(1, "on", Collectives{}, wulf_program("wulf"), session);
  cmd.insert(cmd.end(), search.begin(), search.end());
  cmd.insert(cmd.end(), {test_platform("example.profile"), ":", "-np", "1", wulf_program("wulf")});
  cmd.insert(cmd.end(), search.begin(), search.end());
  cmd.push_back("/nonexistent/example.profile");
  ChildOptions options;
  options.capture = true;
  options.timeout_s = 60;  // a hang is a failure
  const auto t0 = std::chrono::steady_clock::now();
  const ChildResult r = run_child(cmd, options);
  EXPECT_EQ(r.code, exit_input) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "process 1 of 2: wulf: error: --profile /nonexistent/example.profile")) << r.err;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30);
}

// Two processes of one launcher started with different jobs (--blocks 4 and 8) are refused
// before any run, the first difference named: once they gave one mixed result and exit 0.
TEST(runner, processes_started_with_different_lists_are_refused_before_any_run) {
  const std::vector<std::string> search{
      "recommend",  "--platform", toy4,  "--problem", "encoder:16", "--target-error", "0.001", "--compute",
      "calibrated", "--profile",  test_platform("example.profile"), "--np", "1,2", "--max-epochs", "3000", "--blocks"};
  const MpiSessionDir session;
  std::vector<std::string> cmd = mpirun_command(1, "on", Collectives{}, wulf_program("wulf"), session);
  cmd.insert(cmd.end(), search.begin(), search.end());
  cmd.insert(cmd.end(), {"4", ":", "-np", "1", wulf_program("wulf")});
  cmd.insert(cmd.end(), search.begin(), search.end());
  cmd.push_back("8");
  ChildOptions options;
  options.capture = true;
  options.timeout_s = 60;  // a hang is a failure
  const ChildResult r = run_child(cmd, options);
  EXPECT_EQ(r.code, exit_input) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "the launcher's process 1 has another list of runs than process 0")) << r.err;
  EXPECT_TRUE(contains(r.err, "--block 4")) << r.err;
  EXPECT_TRUE(contains(r.err, "--block 8")) << r.err;
  EXPECT_FALSE(contains(r.out, "recommended")) << r.out;
}

}  // namespace
}  // namespace wulf
