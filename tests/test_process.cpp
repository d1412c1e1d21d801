// Children are wulf's to end: each runs in a process group of its own, and a child that runs
// past its time limit is ended with everything it started (its group, and what left the
// group below it), SIGTERM first, SIGKILL after the grace, even when it is stopped or
// ignores SIGTERM. The ranks' status file is the front end's own: ranks never create it.
// (Signals sent to the wulf program are tested end to end in tests/signals_test.sh.)
#include "comm/rank_env.hpp"
#include "engine/launch.hpp"
#include "util/errors.hpp"
#include "engine/process.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace wulf {
namespace {

namespace fs = std::filesystem;
using namespace testing_support;

// A child that must be ended: every test's children sleep far longer than their limit.
ChildOptions limited(double timeout_s) {
  ChildOptions o;
  o.capture = true;
  o.timeout_s = timeout_s;
  o.grace_s = 0.5;
  return o;
}

// The message of the TimedOut that run_child throws; fails the test if it throws none.
std::string timed_out_message(const std::vector<std::string>& argv, const ChildOptions& options) {
  try {
    run_child(argv, options);
  } catch (const TimedOut& e) {
    return e.message;
  }
  ADD_FAILURE() << argv.back() << ": no TimedOut";
  return "";
}

// The pid a child wrote to file.
int pid_in(const std::string& file) {
  std::ifstream in(file);
  int pid = 0;
  in >> pid;
  return pid;
}

// A process of this session that has ended: gone, or a zombie nobody reaps (this
// machine's init may not).
bool ended(int pid) {
  const char state = process_state(pid);
  return state == '?' || state == 'Z';
}

TEST(process, a_child_runs_in_a_process_group_of_its_own_with_no_input) {
  std::string out, err;
  // $$ is the shell's pid; field 5 of /proc/$$/stat its process group; cat reads stdin.
  ASSERT_EQ(run_program_captured({"sh", "-c", "echo $$ $(cut -d' ' -f5 /proc/$$/stat); cat"}, out, err), 0) << err;
  std::istringstream fields(out);
  int pid = 0, group = 0;
  fields >> pid >> group;
  EXPECT_EQ(group, pid) << out;
  EXPECT_NE(group, ::getpgrp());
}

TEST(process, a_child_gets_its_own_environment_and_keeps_its_error_stream) {
  ChildOptions o;
  o.capture = true;
  o.env = {"WULF_TEST_VALUE=42", "HOME=/elsewhere"};
  const ChildResult r = run_child({"sh", "-c", "echo $WULF_TEST_VALUE $HOME; echo oops >&2; exit 3"}, o);
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "42 /elsewhere\n");
  EXPECT_EQ(r.err, "oops\n");
  EXPECT_EQ(std::getenv("WULF_TEST_VALUE"), nullptr);  // this process's environment is untouched
  ChildOptions kept;
  kept.keep_err = true;
  EXPECT_EQ(run_child({"sh", "-c", "echo shown and kept >&2"}, kept).err, "shown and kept\n");
}

// address_space_bytes is the child's RLIMIT_AS, which `ulimit -v` reads in KiB; a child
// without it has the limit this process has. A sanitized build sets none (ASan's shadow
// memory would not fit).
TEST(process, a_child_gets_the_address_space_it_is_given) {
  ChildOptions o;
  o.capture = true;
  const std::string unbounded = run_child({"sh", "-c", "ulimit -v"}, o).out;
  o.address_space_bytes = 1e9;
#ifdef __SANITIZE_ADDRESS__
  EXPECT_EQ(run_child({"sh", "-c", "ulimit -v"}, o).out, unbounded);
#else
  EXPECT_EQ(run_child({"sh", "-c", "ulimit -v"}, o).out, "976562\n");
  EXPECT_EQ(unbounded, "unlimited\n");
#endif
}

TEST(process, a_child_killed_by_a_signal_gives_128_plus_the_signal) {
  EXPECT_EQ(run_program({"sh", "-c", "kill -KILL $$"}), 137);
}

TEST(process, a_child_past_its_time_limit_is_ended_with_its_whole_group) {
  const TestDir dir;
  const std::string pid_file = dir.file("pid");
  const std::string message =
      timed_out_message({"sh", "-c", "sleep 60 & echo $! > " + pid_file + "; wait"}, limited(0.3));
  EXPECT_TRUE(contains(message, "timed out after 0.3 s; ended sh's process group ")) << message;
  EXPECT_FALSE(contains(message, "SIGKILL")) << message;
  const int sleeper = pid_in(pid_file);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(ended(sleeper)) << "the child's background sleep " << sleeper << " is " << process_state(sleeper);
}

TEST(process, what_left_the_childs_group_is_ended_too) {
  // mpirun puts each rank in a process group of its own: such a process is still the child's.
  const TestDir dir;
  const std::string pid_file = dir.file("pid");
  timed_out_message({"sh", "-c", "setsid sleep 60 & echo $! > " + pid_file + "; wait"}, limited(0.3));
  const int sleeper = pid_in(pid_file);
  ASSERT_GT(sleeper, 0);
  // It left this session too (setsid): look at it directly.
  std::ifstream stat("/proc/" + std::to_string(sleeper) + "/stat");
  std::string line;
  std::getline(stat, line);
  const std::size_t close = line.rfind(')');
  EXPECT_TRUE(line.empty() || (close != std::string::npos && line.substr(close + 2, 1) == "Z")) << line;
}

TEST(process, a_child_that_ignores_sigterm_gets_sigkill_after_the_grace) {
  const std::string message = timed_out_message({"sh", "-c", "trap '' TERM; sleep 60; sleep 60"}, limited(0.3));
  EXPECT_TRUE(contains(message, "(SIGKILL after 0.5 s)")) << message;
}

TEST(process, a_stopped_child_is_ended_and_what_it_is_said_to_be_is_in_the_message) {
  ChildOptions o = limited(0.3);
  o.on_timeout = [] { return std::string("the child is stopped"); };
  const std::string message = timed_out_message({"sh", "-c", "kill -STOP $$; sleep 60"}, o);
  EXPECT_TRUE(contains(message, "timed out after 0.3 s: the child is stopped; ended sh's process group")) << message;
}

TEST(process, what_a_child_leaves_behind_in_its_group_is_ended_when_it_exits) {
  const TestDir dir;
  const std::string pid_file = dir.file("pid");
  std::string out, err;
  // sh exits at once; its sleep stays in its group, holding no pipe.
  ASSERT_EQ(run_program_captured({"sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $! > " + pid_file}, out, err), 0);
  const int sleeper = pid_in(pid_file);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(ended(sleeper)) << "the sleep " << sleeper << " left behind is " << process_state(sleeper);
}

// Whether pid is a live process, in any session (process_state sees this session's only).
bool alive_anywhere(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

TEST(process, with_sessions_outlive_what_leads_a_session_of_its_own_outlives_the_child) {
  // The testbed's link forwarders: `wulf testbed delay` leaves one in a session of its own.
  // The child runs 1.5 s, so that the once-a-second look has seen the sleeper below it
  // (without the option such a process stays the child's, as in what_left_the_childs_group).
  const TestDir dir;
  const std::string pid_file = dir.file("pid");
  const std::string leave = "setsid sleep 60 >/dev/null 2>&1 & echo $! > " + pid_file + "; sleep 1.5";
  ChildOptions o;
  o.capture = true;
  o.grace_s = 0.5;
  for (const bool outlive : {true, false}) {
    o.sessions_outlive = outlive;
    ASSERT_EQ(run_child({"sh", "-c", leave}, o).code, 0);
    const int sleeper = pid_in(pid_file);
    ASSERT_GT(sleeper, 0);
    EXPECT_EQ(alive_anywhere(sleeper), outlive) << "sessions_outlive " << outlive << ", the session leader "
                                                << sleeper << " left by the child";
    if (alive_anywhere(sleeper)) ::kill(sleeper, SIGKILL);  // this test's own
  }
}

TEST(process, a_time_limit_bounds_every_child_and_the_work_in_between) {
  {
    const TimeLimit limit(0.3);
    ChildOptions o;
    o.grace_s = 0.5;
    try {
      run_child({"sleep", "60"}, o);
      ADD_FAILURE() << "no TimedOut";
    } catch (const TimedOut& e) {
      EXPECT_TRUE(contains(e.message, "timed out after 0.3 s; ended sleep's process group")) << e.message;
    }
    try {
      check_interrupt();
      ADD_FAILURE() << "no TimedOut";
    } catch (const TimedOut& e) {
      EXPECT_EQ(e.message, "timed out after 0.3 s");
    }
  }
  check_interrupt();  // the limit went with its object
  EXPECT_EQ(run_program({"true"}), 0);
}

// A limit beyond the steady clock's range (its nanoseconds reach about 292 years) once
// overflowed into the past and timed out at once; --timeout refuses such values, and one
// given here is cut to kLongestTimeoutSeconds instead.
TEST(process, a_limit_too_long_for_the_clock_is_no_limit_at_once) {
  for (const double seconds : {9.3e9, 1e10, 1e20, 1e300}) {
    SCOPED_TRACE(seconds);
    ChildOptions o;
    o.timeout_s = seconds;
    EXPECT_EQ(run_child({"sleep", "0.1"}, o).code, 0);
    const TimeLimit limit(seconds);
    EXPECT_NO_THROW(check_interrupt());
    EXPECT_EQ(run_program({"true"}), 0);
  }
}

TEST(process, a_program_that_is_not_there_cannot_be_started) {
  EXPECT_THROW(run_program({"/no/such/program"}), std::runtime_error);
}

// A group of children (run_children): each in a process group of its own, its output in its
// files, its own environment; all waited for.
TEST(process, a_group_of_children_runs_at_once_each_with_its_files_and_environment) {
  const TestDir dir;
  std::vector<GroupChild> children;
  for (int i = 0; i < 3; ++i) {
    const std::string id = std::to_string(i);
    children.push_back(
        {{"sh", "-c", "echo $WULF_TEST_RANK $(cut -d' ' -f5 /proc/$$/stat) $$; echo err$WULF_TEST_RANK >&2"},
         {"WULF_TEST_RANK=" + id},
         dir.file("out" + id),
         dir.file("err" + id),
         "child " + id});
  }
  std::vector<ChildEnd> ends;
  EXPECT_EQ(run_children(children, {}, ends), -1);
  ASSERT_EQ(ends.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(ends[i].code, 0);
    EXPECT_EQ(ends[i].signal, 0);
    EXPECT_EQ(ends[i].ended_by, "");
    EXPECT_GT(ends[i].wall_s, 0);
    std::ifstream out(dir.file("out" + std::to_string(i)));
    int rank = -1, group = 0, pid = 0;
    out >> rank >> group >> pid;
    EXPECT_EQ(rank, i);
    EXPECT_EQ(group, pid);  // a process group of its own
    std::ifstream err(dir.file("err" + std::to_string(i)));
    std::string said;
    err >> said;
    EXPECT_EQ(said, "err" + std::to_string(i));
  }
  EXPECT_EQ(std::getenv("WULF_TEST_RANK"), nullptr);
}

// The first child to fail ends the others at once, with what they started; each is said to
// have been ended, and why.
TEST(process, the_first_child_of_a_group_to_fail_ends_the_others) {
  const TestDir dir;
  const std::string pid_file = dir.file("pid");
  const std::vector<GroupChild> children{
      {{"sh", "-c", "sleep 60 & echo $! > " + pid_file + "; wait"}, {}, "", "", "sleeper"},
      {{"sh", "-c", "sleep 0.2; exit 3"}, {}, "", "", "quitter"},
      {{"sh", "-c", "trap '' TERM; sleep 60; sleep 60"}, {}, "", "", "stubborn"}};
  ChildOptions o;
  o.grace_s = 0.5;
  std::vector<ChildEnd> ends;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_children(children, o, ends), 1);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[1].code, 3);
  EXPECT_EQ(ends[1].ended_by, "");
  EXPECT_EQ(ends[0].code, 128 + SIGTERM);
  EXPECT_EQ(ends[0].signal, SIGTERM);
  EXPECT_EQ(ends[0].ended_by, "SIGTERM from wulf after quitter failed");
  EXPECT_EQ(ends[2].signal, SIGKILL);
  EXPECT_EQ(ends[2].ended_by, "SIGTERM from wulf after quitter failed (SIGKILL after 0.5 s)");
  const int sleeper = pid_in(pid_file);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(ended(sleeper)) << "the first child's background sleep " << sleeper << " is " << process_state(sleeper);
}

// Past the time limit every child still running is ended and named; ends says how each ended.
TEST(process, a_group_past_its_time_limit_is_ended_and_each_child_named) {
  const std::vector<GroupChild> children{{{"sleep", "60"}, {}, "", "", "rank 0"},
                                         {{"true"}, {}, "", "", "rank 1"},
                                         {{"sleep", "60"}, {}, "", "", "rank 2"}};
  std::vector<ChildEnd> ends;
  try {
    run_children(children, limited(0.5), ends);
    ADD_FAILURE() << "no TimedOut";
  } catch (const TimedOut& e) {
    EXPECT_TRUE(contains(e.message, "timed out after 0.5 s; ended rank 0's process group ")) << e.message;
    EXPECT_TRUE(contains(e.message, ", rank 2's process group ")) << e.message;
    EXPECT_FALSE(contains(e.message, "rank 1")) << e.message;
  }
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[1].code, 0);
  EXPECT_EQ(ends[1].ended_by, "");
  for (const int i : {0, 2}) {
    EXPECT_EQ(ends[i].code, 128 + SIGTERM) << i;
    EXPECT_EQ(ends[i].ended_by, "SIGTERM from wulf at the time limit of 0.5 s") << i;
  }
}

// A child that cannot be started: the group is not started, and those started are ended.
TEST(process, a_group_with_a_program_that_is_not_there_is_refused) {
  const std::vector<GroupChild> children{{{"sleep", "60"}, {}, "", "", ""}, {{"/no/such/program"}, {}, "", "", ""}};
  std::vector<ChildEnd> ends;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(run_children(children, limited(30), ends), std::runtime_error);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0].code, 128 + SIGTERM);
  EXPECT_EQ(ends[1].code, -1);
}

TEST(process, signals_have_their_names) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(signal_name(SIGHUP), "SIGHUP");
}

// The status file's protocol (engine/launch.hpp).
class status_file : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv("WULF_STATUS_FILE"); }
  TestDir dir_;
};

TEST_F(status_file, a_rank_appends_to_the_front_ends_file_and_never_creates_one) {
  const std::string missing = dir_.file("missing");
  ::setenv("WULF_STATUS_FILE", missing.c_str(), 1);
  report_rank_status(0, 0, "finished");
  EXPECT_FALSE(fs::exists(missing));
  const std::string made = dir_.write("status", "");
  ::setenv("WULF_STATUS_FILE", made.c_str(), 1);
  report_rank_started(1);
  report_rank_status(2, 1, "error: one\ntwo");
  const std::string text = read_text_file(made, "status");
  EXPECT_EQ(text.rfind("started 1 " + std::to_string(::getpid()) + " ", 0), 0u) << text;
  EXPECT_TRUE(contains(text, "\n2 1 error: one two\n")) << text;
}

TEST_F(status_file, a_link_put_in_its_place_is_not_followed) {
  const std::string target = dir_.write("target", "mine\n");
  const std::string link = dir_.file("status");
  fs::create_symlink(target, link);
  ::setenv("WULF_STATUS_FILE", link.c_str(), 1);
  report_rank_status(0, 0, "finished");
  EXPECT_EQ(read_text_file(target, "target"), "mine\n");
}

// Temporary files and folders carry their owner (util/files.hpp): what a process that is
// gone left is removed, what a live one holds and what carries no owner are never touched.
class temp_leftovers : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("TMPDIR");
    saved_ = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv("TMPDIR", dir_.str().c_str(), 1);
  }
  void TearDown() override { saved_ ? ::setenv("TMPDIR", saved_->c_str(), 1) : ::unsetenv("TMPDIR"); }
  std::vector<std::string> names() const {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(dir_.path())) found.push_back(e.path().filename().string());
    std::sort(found.begin(), found.end());
    return found;
  }
  TestDir dir_;
  std::optional<std::string> saved_;
};

TEST_F(temp_leftovers, what_a_killed_process_left_goes_and_nothing_of_a_live_one) {
  // A child makes a folder with a file in it and a file, then dies as SIGKILL would leave
  // them: no destructor runs.
  const pid_t child = ::fork();
  if (child == 0) {
    auto* folder = new TempDir("mpi");
    std::ofstream(folder->file("session")) << "x";
    new TempFile("status", "started 0 1 host\n");
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_EQ(names().size(), 2u);
  const TempDir live("smpi");
  const TempFile live_file("hostfile", "a\n");
  // Another program's, an older wulf's (no owner), and one whose pid runs but started at
  // another time (a pid used again).
  fs::create_directory(dir_.path() / "wulf-mpi-Xa3k9Q");
  std::ofstream(dir_.path() / "wulf-status-abcdef") << "";
  const std::string reused = "wulf-job-" + std::to_string(::getpid()) + ".1-Qq1234";
  std::ofstream(dir_.path() / reused) << "{}";
  EXPECT_TRUE(owner_alive(owner_tag()));
  EXPECT_FALSE(owner_alive(std::to_string(::getpid()) + ".1"));
  EXPECT_FALSE(owner_alive(std::to_string(child) + ".1"));
  EXPECT_FALSE(owner_alive("1234"));

  EXPECT_EQ(remove_temp_leftovers(), 3);
  const std::vector<std::string> left = names();
  EXPECT_EQ(left.size(), 4u);
  EXPECT_TRUE(fs::is_directory(live.path()));
  EXPECT_TRUE(fs::exists(live_file.path()));
  EXPECT_TRUE(fs::exists(dir_.path() / "wulf-mpi-Xa3k9Q"));
  EXPECT_TRUE(fs::exists(dir_.path() / "wulf-status-abcdef"));
  EXPECT_FALSE(fs::exists(dir_.path() / reused));
  EXPECT_EQ(remove_temp_leftovers(), 0);
}

PlatformHost host(const std::string& name, int cores) {
  PlatformHost h;
  h.name = name, h.cores = cores;
  return h;
}

TEST(hostfile, one_line_per_core_so_smpirun_writes_no_file_of_its_own) {
  const Hostfile file({host("a", 2), host("b", 1)}, 3);
  EXPECT_EQ(read_text_file(file.path(), "hostfile"), "a\na\nb\n");
}

// Two hosts of core="2147483647" made a hostfile of a line per core: past 1 GB, then a hang
// (train --engine sim --np 2). A hostfile holds a line per rank, hosts filled in order.
TEST(hostfile, one_line_per_rank_whatever_the_cores_a_host_declares) {
  const Hostfile absurd({host("a", 2147483647), host("b", 2147483647)}, 3);
  EXPECT_EQ(read_text_file(absurd.path(), "hostfile"), "a\na\na\n");
  const Hostfile spread({host("a", 1), host("b", 2), host("c", 4)}, 4);
  EXPECT_EQ(read_text_file(spread.path(), "hostfile"), "a\nb\nb\nc\n");
}

TEST(hostfile, it_is_made_in_tmpdir) {
  const TestDir dir;
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", dir.str().c_str(), 1);
  const std::string path = Hostfile({host("a", 1)}, 1).path();
  old ? ::setenv("TMPDIR", saved.c_str(), 1) : ::unsetenv("TMPDIR");
  EXPECT_EQ(fs::path(path).parent_path(), dir.path()) << path;
  EXPECT_FALSE(fs::exists(path));  // and removed with the object
}

}  // namespace
}  // namespace wulf
