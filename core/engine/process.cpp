#include "engine/process.hpp"

#include "util/errors.hpp"
#include "util/proc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace wulf {

std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = (end > start ? dirs.substr(start, end - start) : ".") + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

namespace {

using Clock = std::chrono::steady_clock;

// ---- Signals: the handler only records the signal and wakes the waits (a self-pipe that
// is never drained, so that every wait, in every thread, sees it readable from then on).

std::atomic<int> pending{0};
int wake_fds[2] = {-1, -1};
// The process groups of the children being waited for, for a second signal to kill.
constexpr std::size_t kGroupSlots = 64;
std::atomic<pid_t> child_groups[kGroupSlots];

void on_signal(int signal) {
  const int saved_errno = errno;
  int none = 0;
  if (!pending.compare_exchange_strong(none, signal)) {
    // A second signal: whoever sent it will not wait for the grace.
    for (auto& group : child_groups)
      if (const pid_t g = group.load(); g > 0) ::kill(-g, SIGKILL);
    ::signal(signal, SIG_DFL);
    ::raise(signal);  // delivered as the handler returns
  }
  if (wake_fds[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fds[1], &byte, 1);
  }
  errno = saved_errno;
}

// A child's process group in child_groups while it is waited for.
class GroupSlot {
 public:
  explicit GroupSlot(pid_t group) {
    for (auto& s : child_groups) {
      pid_t empty = 0;
      if (s.compare_exchange_strong(empty, group)) {
        slot_ = &s;
        return;
      }
    }
  }
  ~GroupSlot() {
    if (slot_) slot_->store(0);
  }
  GroupSlot(const GroupSlot&) = delete;
  GroupSlot& operator=(const GroupSlot&) = delete;

 private:
  std::atomic<pid_t>* slot_ = nullptr;
};

// ---- The time limit of TimeLimit (set once, before any thread starts children).

std::optional<Clock::time_point> limit_end;
double limit_seconds = 0;

std::string seconds_text(double s) { return fmt::format("{:g} s", s); }
Clock::duration after(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(seconds, kLongestTimeoutSeconds)));
}

// ---- Processes as /proc shows them.

std::vector<Proc> all_processes() {
  std::vector<Proc> procs;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    if (const auto p = read_proc(static_cast<pid_t>(std::stol(name)))) procs.push_back(*p);
  }
  return procs;
}

// The processes of one child: its process group, the processes below it (which may have
// left the group: mpirun puts each rank in a group of its own) and those seen before, which
// stay its own after the child is gone (an orphaned rank). With sessions_outlive, not those
// that lead a session of their own (ChildOptions::sessions_outlive).
class Family {
 public:
  Family(pid_t leader, bool sessions_outlive) : leader_(leader), sessions_outlive_(sessions_outlive) {}

  // The family's processes alive now (zombies are dead), remembered for later calls.
  std::vector<Proc> live() { return live(all_processes()); }
  // The same from all, the processes there are (one look for several families).
  std::vector<Proc> live(const std::vector<Proc>& all) {
    std::multimap<pid_t, const Proc*> children;
    std::map<pid_t, const Proc*> by_pid;
    for (const Proc& p : all) children.emplace(p.ppid, &p), by_pid[p.pid] = &p;
    std::map<pid_t, Proc> found;
    auto take = [&](const Proc& p) {
      if (p.state != 'Z' && p.pid != ::getpid() && !(sessions_outlive_ && p.sid == p.pid && p.pid != leader_))
        found.emplace(p.pid, p);
    };
    for (const Proc& p : all)
      if (p.pgrp == leader_) take(p);
    std::vector<pid_t> below{leader_};
    while (!below.empty()) {
      const pid_t parent = below.back();
      below.pop_back();
      for (auto [it, end] = children.equal_range(parent); it != end; ++it) {
        take(*it->second);
        below.push_back(it->second->pid);
      }
    }
    for (const Proc& k : known_)
      if (const auto it = by_pid.find(k.pid); it != by_pid.end() && it->second->start == k.start) take(*it->second);
    known_.clear();
    for (const auto& [pid, p] : found) known_.push_back(p);
    return known_;
  }

 private:
  pid_t leader_;
  bool sessions_outlive_;
  std::vector<Proc> known_;
};

// Sends signal to each of procs, and to the leader's group.
void send_all(pid_t leader, const std::vector<Proc>& procs, int signal) {
  ::kill(-leader, signal);
  for (const Proc& p : procs)
    if (p.pgrp != leader) ::kill(p.pid, signal);
}

// A child being ended: its process group's leader and its family.
struct Ending {
  pid_t leader;
  Family* family;
};

// Waits up to seconds for the families to have no live process; true if none has.
bool families_gone(const std::vector<Ending>& members, double seconds) {
  const auto end = Clock::now() + after(seconds);
  while (true) {
    const std::vector<Proc> all = all_processes();
    if (std::all_of(members.begin(), members.end(), [&](const Ending& m) { return m.family->live(all).empty(); }))
      return true;
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Ends children's families at once, so that the grace is waited once for all: SIGTERM to
// each group (mpirun then ends its ranks itself) and SIGCONT to every process (a stopped one
// cannot take SIGTERM), then after the grace SIGKILL to what is left. The leaders are not
// reaped here: a leader's zombie keeps its process group's id from being reused. Returns,
// for each member, whether it needed SIGKILL.
std::vector<bool> end_families(const std::vector<Ending>& members, double grace) {
  const std::vector<Proc> before = all_processes();
  for (const Ending& m : members) {
    const std::vector<Proc> live = m.family->live(before);
    ::kill(-m.leader, SIGTERM);
    send_all(m.leader, live, SIGCONT);
  }
  std::vector<bool> killed(members.size(), false);
  if (families_gone(members, grace)) return killed;
  const std::vector<Proc> left = all_processes();
  for (std::size_t i = 0; i < members.size(); ++i)
    if (const std::vector<Proc> live = members[i].family->live(left); !live.empty()) {
      send_all(members[i].leader, live, SIGKILL);
      killed[i] = true;
    }
  families_gone(members, 2);
  return killed;
}

std::string killed_after(double grace) { return " (SIGKILL after " + seconds_text(grace) + ")"; }

// end_families for one child. Returns " (SIGKILL after N s)" when that was needed.
std::string end_family(pid_t leader, Family& family, double grace) {
  return end_families({{leader, &family}}, grace)[0] ? killed_after(grace) : "";
}

// How a child ended: its code as reap gives it, and the signal that ended it (0: it exited).
struct ChildExit {
  int code = 0, signal = 0;
};

// How pid ended, once it has; it is left to reap (waitid's WNOWAIT). None while it runs.
std::optional<ChildExit> exit_of(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno == ECHILD ? std::optional<ChildExit>(ChildExit{1, 0}) : std::nullopt;
  if (info.si_pid != pid) return std::nullopt;
  if (info.si_code == CLD_EXITED) return ChildExit{info.si_status, 0};
  return ChildExit{128 + info.si_status, info.si_status};
}

// True once pid has ended; it is left to reap.
bool has_ended(pid_t pid) { return exit_of(pid).has_value(); }

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// ---- Starting a child.

std::vector<char*> c_args(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  return args;
}

// The variables no child inherits ("NAME="), set once before any child starts.
std::vector<std::string> hidden_variables;

// This process's environment with overrides ("NAME=value") put in, the hidden variables left out.
std::vector<std::string> environment_with(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('=') + 1);
    const auto named = [&](const std::string& o) { return o.rfind(name, 0) == 0; };
    if (std::none_of(overrides.begin(), overrides.end(), named) &&
        std::find(hidden_variables.begin(), hidden_variables.end(), name) == hidden_variables.end())
      env.push_back(entry);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

struct Pipe {
  int read = -1, write = -1;
  void open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot create a pipe");
    read = fds[0], write = fds[1];
  }
  void close_write() {
    if (write >= 0) ::close(write), write = -1;
  }
  void close_read() {
    if (read >= 0) ::close(read), read = -1;
  }
  ~Pipe() { close_write(), close_read(); }
};

// The program argv[0] names: itself when it holds a '/', else the first executable of that
// name on $PATH; empty when there is none. Looked up before the fork, so that the child
// calls nothing but system calls.
std::string program_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// fork(), or std::runtime_error naming what was to start (the pipe's ends closed).
pid_t fork_or_throw(const std::string& what, const int pipe_ends[2]) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(pipe_ends[0]), ::close(pipe_ends[1]);
    throw std::runtime_error("cannot start " + what + ": " + std::strerror(e));
  }
  return pid;
}

// In a child before exec (async-signal-safe): the signals wulf handles at their defaults,
// none blocked.
void default_signals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Starts argv in a process group of its own, standard input from /dev/null, the signals wulf
// handles at their defaults, out_fd and err_fd as standard output and error (-1: this
// process's own). The child ends
// with this process: it asks the kernel for SIGKILL should its parent die (PR_SET_PDEATHSIG),
// so that nothing wulf starts, and nothing that writes a record for it, outlives a wulf
// killed with SIGKILL. wulf's rank programs ask the same of their launcher (rank_main.cpp).
// The kernel ties that request to the thread that forked, not the process: every caller
// waits for its child in the thread that started it (recommend's worker threads included).
pid_t spawn(const std::vector<std::string>& argv, const ChildOptions& options, int out_fd, int err_fd) {
  const std::string program = program_path(argv[0]);
  if (program.empty()) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(ENOENT));
  std::vector<char*> args = c_args(argv);
  const std::vector<std::string> env_text = environment_with(options.env);
  std::vector<char*> env = c_args(env_text);
  int failed[2];  // the child's errno, should exec fail; closed by a successful exec
  if (::pipe2(failed, O_CLOEXEC) != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(errno));
  struct rlimit limit {RLIM_INFINITY, RLIM_INFINITY};
#ifndef __SANITIZE_ADDRESS__
  if (options.address_space_bytes > 0 && options.address_space_bytes < 1e18)
    limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(options.address_space_bytes);
#endif
  const pid_t parent = ::getpid();
  const pid_t pid = fork_or_throw(argv[0], failed);
  if (pid == 0) {  // async-signal-safe calls only from here
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before the request
    default_signals();
    if (limit.rlim_cur != RLIM_INFINITY) ::setrlimit(RLIMIT_AS, &limit);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0 && null != 0) ::dup2(null, 0), ::close(null);
    if (out_fd >= 0) ::dup2(out_fd, 1);
    if (err_fd >= 0) ::dup2(err_fd, 2);
    ::execve(program.c_str(), args.data(), env.data());
    const int e = errno;
    [[maybe_unused]] const ssize_t n = ::write(failed[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(failed[1]);
  int e = 0;
  ssize_t got;
  do got = ::read(failed[0], &e, sizeof e);
  while (got < 0 && errno == EINTR);
  ::close(failed[0]);
  if (got == static_cast<ssize_t>(sizeof e)) {
    ::waitpid(pid, nullptr, 0);
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(e));
  }
  return pid;
}

}  // namespace

Guardian start_guardian(const std::vector<std::string>& argv) {
  const std::string program = program_path(argv[0]);
  if (program.empty()) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(ENOENT));
  std::vector<char*> args = c_args(argv);
  const std::vector<std::string> env_text = environment_with({});
  std::vector<char*> env = c_args(env_text);
  int line[2];
  if (::pipe2(line, O_CLOEXEC) != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(errno));
  const pid_t pid = fork_or_throw(argv[0], line);
  if (pid == 0) {  // async-signal-safe calls only from here
    ::setsid();
    default_signals();
    ::dup2(line[0], 0);  // dup2 clears close-on-exec on the copy
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 1);
    ::execve(program.c_str(), args.data(), env.data());
    ::_exit(127);
  }
  ::close(line[0]);
  return {pid, line[1]};
}

void end_guardian(Guardian& guardian) noexcept {
  if (guardian.fd >= 0) ::close(guardian.fd);
  if (guardian.pid > 0)
    while (::waitpid(guardian.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  guardian = {};
}

namespace {

// Reads what is there from a pipe into sink; closes it at its end. keep: the most of sink
// kept (its tail); echo: also written to this process's standard error.
void drain(Pipe& pipe, std::string& sink, std::size_t keep, bool echo) {
  char buf[65536];
  const ssize_t got = ::read(pipe.read, buf, sizeof buf);
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (got <= 0) return pipe.close_read();
  if (echo) {
    [[maybe_unused]] const ssize_t n = ::write(2, buf, static_cast<std::size_t>(got));
  }
  sink.append(buf, static_cast<std::size_t>(got));
  if (sink.size() > keep) sink.erase(0, sink.size() - keep);
}

// A descriptor that becomes readable when process pid ends (pidfd_open); -1 on kernels
// before 5.3, where the wait looks every 50 ms instead.
struct ProcessFd {
  explicit ProcessFd(pid_t pid) : fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))) {}
  ~ProcessFd() {
    if (fd >= 0) ::close(fd);
  }
  ProcessFd(const ProcessFd&) = delete;
  ProcessFd& operator=(const ProcessFd&) = delete;
  const int fd;
};

std::string program_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The end of a child's wait: when it must be ended, and what for.
struct Deadline {
  std::optional<Clock::time_point> end;
  double seconds = 0;
};

Deadline deadline_of(const ChildOptions& options) {
  Deadline d;
  if (options.cleanup) return d;  // it runs to its end
  if (options.timeout_s > 0) {
    d.end = Clock::now() + after(options.timeout_s);
    d.seconds = options.timeout_s;
  }
  if (limit_end && (!d.end || *limit_end < *d.end)) {
    d.end = limit_end;
    d.seconds = limit_seconds;
  }
  return d;
}

// Milliseconds poll may sleep: until the deadline, at most a second (the family is looked
// at once a second, so that a rank orphaned by its mpirun is still known to be the run's).
int poll_ms(const Deadline& d, bool exit_seen_by_poll) {
  long long ms = exit_seen_by_poll ? 1000 : 50;
  if (d.end) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*d.end - Clock::now()).count();
    ms = std::clamp<long long>(left, 0, ms);
  }
  return static_cast<int>(ms);
}

// Why the children must be ended now: a signal that asked wulf to stop, or the time limit
// (signal 0). A cleanup step knows neither.
struct StopAsked {
  int signal = 0;
};

std::optional<StopAsked> stop_asked(const ChildOptions& options, const Deadline& deadline) {
  if (options.cleanup) return std::nullopt;
  if (const int s = pending.load()) return StopAsked{s};
  if (deadline.end && Clock::now() >= *deadline.end) return StopAsked{0};
  return std::nullopt;
}

// Throws what stop asks for once the children are ended: Interrupted or TimedOut, saying what
// the time limit found (what, on_timeout's) and what was ended.
[[noreturn]] void throw_stop(const StopAsked& stop, const Deadline& deadline, const std::string& what,
                             const std::string& ended) {
  if (stop.signal) throw Interrupted{stop.signal, "interrupted (" + signal_name(stop.signal) + "): ended " + ended};
  throw TimedOut{"timed out after " + seconds_text(deadline.seconds) + (what.empty() ? "" : ": " + what) + "; ended " +
                 ended};
}

// What the time limit has to say of the children before they are ended (on_timeout's).
std::string said_on_timeout(const StopAsked& stop, const ChildOptions& options) {
  return !stop.signal && options.on_timeout ? options.on_timeout() : "";
}

}  // namespace

void keep_from_children(const std::vector<std::string>& names) {
  for (const std::string& name : names) hidden_variables.push_back(name + "=");
}

ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options) {
  if (!options.cleanup) check_interrupt();  // asked to stop before it started: it is not started
  const Deadline deadline = deadline_of(options);
  Pipe out, err;
  if (options.capture) out.open();
  if (options.capture || options.keep_err) err.open();
  const pid_t pid = spawn(argv, options, out.write, err.write);
  out.close_write(), err.close_write();
  const GroupSlot slot(pid);
  const ProcessFd pidfd(pid);
  Family family(pid, options.sessions_outlive);
  ChildResult result;
  const std::size_t keep = options.capture ? std::string::npos : 64 * 1024;
  const std::string ended =
      (options.name.empty() ? program_name(argv[0]) : options.name) + "'s process group " + std::to_string(pid);
  bool exited = false;
  auto last_look = Clock::now();
  while (true) {
    pollfd fds[4];
    nfds_t n = 0;
    if (wake_fds[0] >= 0) fds[n++] = {wake_fds[0], POLLIN, 0};
    if (pidfd.fd >= 0 && !exited) fds[n++] = {pidfd.fd, POLLIN, 0};
    const nfds_t first_pipe = n;
    if (out.read >= 0) fds[n++] = {out.read, POLLIN, 0};
    if (err.read >= 0) fds[n++] = {err.read, POLLIN, 0};
    ::poll(fds, n, poll_ms(deadline, pidfd.fd >= 0 || exited));
    for (nfds_t i = first_pipe; i < n; ++i)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        Pipe& p = fds[i].fd == out.read ? out : err;
        drain(p, &p == &out ? result.out : result.err, keep, &p == &err && options.keep_err);
      }
    if (!exited && has_ended(pid)) {
      exited = true;
      // What it left behind in its group or below it is the run's too.
      if (!family.live().empty()) end_family(pid, family, options.grace_s);
      last_look = Clock::now();
    }
    if (exited && (out.read < 0 && err.read < 0)) break;  // it ended before a signal or its time
    if (const std::optional<StopAsked> stop = stop_asked(options, deadline)) {
      const std::string what = said_on_timeout(*stop, options);
      const std::string how = end_family(pid, family, options.grace_s);
      reap(pid);
      throw_stop(*stop, deadline, what, ended + how);
    }
    if (!exited && Clock::now() - last_look > std::chrono::seconds(1)) {
      family.live();  // remembered: a rank orphaned by its mpirun is still the run's
      last_look = Clock::now();
    } else if (exited && Clock::now() - last_look > std::chrono::seconds(2)) {
      out.close_read(), err.close_read();  // held open by a process that is not the run's
    }
  }
  result.code = reap(pid);
  return result;
}

namespace {

// A file a child writes as its standard output or error, opened (created, or emptied) before
// it starts and closed here once it has: the child holds its own copy.
class ChildOutputFile {
 public:
  explicit ChildOutputFile(const std::string& path) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  }
  ~ChildOutputFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ChildOutputFile(const ChildOutputFile&) = delete;
  ChildOutputFile& operator=(const ChildOutputFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// One child of a group once started.
struct StartedChild {
  StartedChild(pid_t p, bool sessions_outlive) : pid(p), slot(p), pidfd(p), family(p, sessions_outlive) {}
  const pid_t pid;
  const GroupSlot slot;
  const ProcessFd pidfd;
  Family family;
  bool exited = false, reaped = false;
};

// The children of run_children, from their start to their reaping. Whatever still runs when
// the object goes (an exception on the way, one that could not be started) is ended, and
// every child is reaped.
class ChildGroup {
 public:
  ChildGroup(const std::vector<GroupChild>& children, const ChildOptions& options, std::vector<ChildEnd>& ends)
      : children_(children), options_(options), ends_(ends) {
    ends_.assign(children.size(), {});
  }
  ~ChildGroup() {
    try {
      end_running("SIGTERM from wulf as it stopped");
    } catch (...) {  // a destructor must not throw; the children end with wulf (PR_SET_PDEATHSIG)
    }
    reap_all();
  }
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;

  void start() {
    start_ = Clock::now();
    for (const GroupChild& child : children_) {
      const ChildOutputFile out(child.out_path), err(child.err_path);
      ChildOptions own = options_;
      own.env.insert(own.env.end(), child.env.begin(), child.env.end());
      started_.push_back(
          std::make_unique<StartedChild>(spawn(child.argv, own, out.fd(), err.fd()), options_.sessions_outlive));
    }
  }

  int wait() {
    const Deadline deadline = deadline_of(options_);
    auto last_look = Clock::now();
    while (true) {
      std::vector<pollfd> fds;
      if (wake_fds[0] >= 0) fds.push_back({wake_fds[0], POLLIN, 0});
      bool seen_by_poll = true;
      for (const auto& s : started_) {
        if (s->exited) continue;
        if (s->pidfd.fd >= 0)
          fds.push_back({s->pidfd.fd, POLLIN, 0});
        else
          seen_by_poll = false;  // a kernel without pidfd_open: looked at every 50 ms
      }
      ::poll(fds.data(), fds.size(), poll_ms(deadline, seen_by_poll));
      look();
      if (const std::optional<StopAsked> stop = stop_asked(options_, deadline)) {
        const std::string what = said_on_timeout(*stop, options_);
        const std::string ended = end_running(
            "SIGTERM from wulf " + (stop->signal ? "on " + signal_name(stop->signal)
                                                 : "at the time limit of " + seconds_text(deadline.seconds)));
        reap_all();
        throw_stop(*stop, deadline, what, ended.empty() ? "nothing: every child had ended" : ended);
      }
      if (first_failed_ >= 0) {
        end_running("SIGTERM from wulf after " + name(first_failed_) + " failed");
        break;
      }
      if (std::all_of(started_.begin(), started_.end(), [](const auto& s) { return s->exited; })) break;
      if (Clock::now() - last_look > std::chrono::seconds(1)) {
        const std::vector<Proc> all = all_processes();
        for (const auto& s : started_)
          if (!s->exited) s->family.live(all);  // remembered: what leaves the child's group is still its own
        last_look = Clock::now();
      }
    }
    reap_all();
    return first_failed_;
  }

 private:
  std::string name(std::size_t i) const {
    return children_[i].name.empty() ? program_name(children_[i].argv[0]) : children_[i].name;
  }

  // Notes how child i ended, once it has.
  bool noted_end(std::size_t i) {
    const std::optional<ChildExit> e = exit_of(started_[i]->pid);
    if (!e) return false;
    started_[i]->exited = true;
    ends_[i].code = e->code;
    ends_[i].signal = e->signal;
    ends_[i].wall_s = std::chrono::duration<double>(Clock::now() - start_).count();
    return true;
  }

  // The children that ended since the last look; the first to fail is kept.
  void look() {
    for (std::size_t i = 0; i < started_.size(); ++i) {
      StartedChild& s = *started_[i];
      if (s.exited || !noted_end(i)) continue;
      // What it left behind in its group or below it is its own too.
      if (!s.family.live().empty()) end_family(s.pid, s.family, options_.grace_s);
      if (ends_[i].code != 0 && first_failed_ < 0) first_failed_ = static_cast<int>(i);
    }
  }

  // Ends every child still running, each said to be ended by `reason`; returns what was
  // ended, for messages ("rank 0's process group 4242, rank 2's process group 4244").
  std::string end_running(const std::string& reason) {
    std::vector<Ending> members;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < started_.size(); ++i)
      if (!started_[i]->exited) members.push_back({started_[i]->pid, &started_[i]->family}), which.push_back(i);
    if (members.empty()) return "";
    const std::vector<bool> killed = end_families(members, options_.grace_s);
    std::string ended;
    for (std::size_t k = 0; k < which.size(); ++k) {
      const std::size_t i = which[k];
      const std::string how = killed[k] ? killed_after(options_.grace_s) : "";
      if (!noted_end(i)) {  // its leader not yet seen gone: reap_all gives its code
        started_[i]->exited = true;
        ends_[i].wall_s = std::chrono::duration<double>(Clock::now() - start_).count();
      }
      ends_[i].ended_by = reason + how;
      ended += (ended.empty() ? "" : ", ") + name(i) + "'s process group " + std::to_string(started_[i]->pid) + how;
    }
    return ended;
  }

  void reap_all() noexcept {
    for (std::size_t i = 0; i < started_.size(); ++i)
      if (!started_[i]->reaped) {
        const int code = reap(started_[i]->pid);
        if (ends_[i].code < 0) ends_[i].code = code;
        started_[i]->reaped = true;
      }
  }

  const std::vector<GroupChild>& children_;
  const ChildOptions& options_;
  std::vector<ChildEnd>& ends_;
  std::vector<std::unique_ptr<StartedChild>> started_;
  Clock::time_point start_ = Clock::now();
  int first_failed_ = -1;
};

}  // namespace

int run_children(const std::vector<GroupChild>& children, const ChildOptions& options, std::vector<ChildEnd>& ends) {
  if (!options.cleanup) check_interrupt();  // asked to stop before they started: none is started
  ChildGroup group(children, options, ends);
  group.start();
  return group.wait();
}

int run_program(const std::vector<std::string>& argv) { return run_child(argv).code; }

namespace {

int captured(const std::vector<std::string>& argv, std::string& out, std::string& err, bool cleanup) {
  ChildOptions options;
  options.capture = true;
  options.cleanup = cleanup;
  ChildResult r = run_child(argv, options);
  out = std::move(r.out), err = std::move(r.err);
  return r.code;
}

}  // namespace

int run_program_captured(const std::vector<std::string>& argv, std::string& out, std::string& err) {
  return captured(argv, out, err, false);
}

int run_cleanup_captured(const std::vector<std::string>& argv, std::string& out, std::string& err) {
  return captured(argv, out, err, true);
}

void install_signal_handlers() {
  if (wake_fds[0] < 0 && ::pipe2(wake_fds, O_CLOEXEC | O_NONBLOCK) != 0) wake_fds[0] = wake_fds[1] = -1;
  struct sigaction action {};
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, s);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup, a shell's & job
    ::sigaction(s, &action, nullptr);
  }
}

char process_state(int pid) {
  const auto p = read_proc(static_cast<pid_t>(pid));
  return p && p->sid == ::getsid(0) ? p->state : '?';
}

int pending_signal() { return pending.load(); }

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

TimeLimit::TimeLimit(double seconds) {
  limit_seconds = seconds > 0 ? seconds : 0;
  limit_end.reset();
  if (seconds > 0) limit_end = Clock::now() + after(seconds);
}

TimeLimit::~TimeLimit() {
  limit_end.reset();
  limit_seconds = 0;
}

void check_interrupt() {
  if (const int s = pending.load()) throw Interrupted{s, "interrupted (" + signal_name(s) + ")"};
  if (limit_end && Clock::now() >= *limit_end) throw TimedOut{"timed out after " + seconds_text(limit_seconds)};
}

}  // namespace wulf
