// Starting other programs: mpirun, smpirun and wulf's own helpers, and ending them.
//
// Every child runs in a process group of its own, so that wulf, not the terminal, decides
// when it ends. When a signal (SIGINT, SIGTERM, SIGHUP) asks wulf to stop, or a child runs
// past its time limit, wulf ends the child's process group and the processes below the
// child that left it (mpirun puts each rank in a group of its own): SIGTERM first, SIGKILL
// after a grace period. It then throws Interrupted or TimedOut (util/errors.hpp) instead of
// exiting, so that the stack unwinds and every temporary file and folder goes with the
// object that made it.
#pragma once

#include "util/proc.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace wulf {

// Seconds between SIGTERM and SIGKILL when wulf ends a child's processes: long enough for
// mpirun to end its ranks and remove its session files, short enough not to keep a user
// who pressed Ctrl-C waiting.
inline constexpr double kGraceSeconds = 3;
// The grace for a child that is wulf itself: it ends its own children first (within
// kGraceSeconds of its SIGTERM), and must not be killed while it does.
inline constexpr double kWulfGraceSeconds = 2 * kGraceSeconds + 2;

// The full path of program found on PATH (or program itself if it holds a '/' and is
// executable); empty if there is none.
std::string find_program(const std::string& program);

// How a child runs.
struct ChildOptions {
  bool capture = false;    // its standard output and error into ChildResult instead of shown
  bool keep_err = false;   // (not capture) its standard error shown as it comes and also kept
  double timeout_s = 0;    // > 0: ended after this many seconds (at most kLongestTimeoutSeconds), then TimedOut is thrown
  double grace_s = kGraceSeconds;
  std::vector<std::string> env;  // "NAME=value" set for the child only
  std::string name;              // what messages call the child (empty: argv[0]'s file name)
  // A step of removing what a run made (the testbed's namespaces): it runs to its end even
  // after a signal or past the time limit, which end every other child.
  bool cleanup = false;
  // Its processes that lead a session of their own (setsid) are not ended with it: they are
  // meant to outlive it (the testbed's link forwarders, which `wulf testbed delay` leaves).
  bool sessions_outlive = false;
  // Asked when the child timed out, before its processes are ended: what to say of them
  // (e.g. which rank is stopped), added to TimedOut's message.
  std::function<std::string()> on_timeout;
  // > 0: the most address space the child may map (RLIMIT_AS): past it its allocations fail
  // (std::bad_alloc) instead of taking the machine's memory. A sanitized build's children
  // get none, since AddressSanitizer maps terabytes of shadow memory as a program starts.
  double address_space_bytes = 0;
};

struct ChildResult {
  int code = 0;         // the exit code; a program killed by a signal gives 128 + the signal
  std::string out, err; // what it printed, when captured (err: the last 64 KiB when kept)
};

// Runs argv[0] (found on PATH) with argv, its standard input /dev/null, and waits for it.
// Throws std::runtime_error if it cannot be started; Interrupted if a signal came (before
// the start, or while it ran: its processes are ended first); TimedOut if it ran past
// options.timeout_s or the time limit of set_time_limit.
ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options = {});

// One of a group of children that run_children starts together.
struct GroupChild {
  std::vector<std::string> argv;
  std::vector<std::string> env;    // "NAME=value" for this child only, beside ChildOptions::env
  std::string out_path, err_path;  // files for its standard output and error, created (or emptied)
                                   // before it starts; empty: this process's own
  std::string name;                // what messages call it ("rank 2"; empty: argv[0]'s file name)
};

// How one child of a group ended.
struct ChildEnd {
  int code = -1;         // as ChildResult's (128 + N for signal N); -1: it never started
  int signal = 0;        // the signal that ended it; 0 when it exited
  double wall_s = 0;     // seconds from the group's start to its end
  std::string ended_by;  // "" where it ended by itself, else who ended it and why:
                         // "SIGTERM from wulf after rank 1 failed", "SIGTERM from wulf on SIGINT"
};

// Starts every child at once, each as run_child starts one (a process group of its own,
// standard input /dev/null, ended should this process die), its output in its files, and
// waits for all of them. As soon as one ends with a code other than 0, every other one is
// ended with its family (SIGTERM to all at once, SIGKILL after options.grace_s to what is
// left), and its index is returned: the first to fail. -1: every child exited 0. A signal, or
// the time limit (options.timeout_s, TimeLimit), ends every child still running and throws
// Interrupted or TimedOut naming each one ended. ends gets one entry per child, in order,
// however it ends (when it throws too). Throws std::runtime_error if a child cannot be
// started or its file opened (those started are ended). options.capture and keep_err do not
// apply: the outputs go to the files.
int run_children(const std::vector<GroupChild>& children, const ChildOptions& options, std::vector<ChildEnd>& ends);

// From now on no child of this process inherits these variables of its environment (exact
// names): the identity a user's MPI launcher gave this process (cli/launcher.hpp), which a
// child's own mpirun or `wulf train` would otherwise take for its own.
void keep_from_children(const std::vector<std::string>& names);

// run_child with its output shown; returns the exit code.
int run_program(const std::vector<std::string>& argv);
// The same, with its standard output and error captured instead of shown.
int run_program_captured(const std::vector<std::string>& argv, std::string& out, std::string& err);
// The same as a cleanup step (ChildOptions::cleanup): it runs even after a signal came.
int run_cleanup_captured(const std::vector<std::string>& argv, std::string& out, std::string& err);

// A process that finishes this one's cleanup however this one ends, SIGKILL included: the
// one exception to "nothing wulf starts outlives it" (spawn, in process.cpp), since it
// writes nothing and only removes what the run made (the testbed's namespaces). argv runs
// in a session of its own (signals to wulf's process group do not reach it), its standard
// input the read end of a pipe whose write end this process holds, close-on-exec (no other
// child inherits it): it reads end of file when end_guardian closes it, or when this process
// dies. Throws std::runtime_error if it cannot be started.
struct Guardian {
  int pid = -1;
  int fd = -1;  // the pipe's write end
};
Guardian start_guardian(const std::vector<std::string>& argv);
// Closes the pipe and waits for the guardian to end; nothing where there is none.
void end_guardian(Guardian& guardian) noexcept;

// The state /proc gives process pid (R running, S sleeping, T stopped, Z zombie, ...); '?'
// when there is no such process in this process's session.
char process_state(int pid);

// The wulf program's handlers of SIGINT, SIGTERM and SIGHUP (each one not ignored when wulf
// started, so that nohup still works): the first such signal wakes every wait for a child,
// which ends the child's processes and throws Interrupted; with no child running, the next
// check_interrupt() throws it. A second signal does not wait for the grace: it kills the
// children's groups and ends wulf at once.
void install_signal_handlers();
// The signal that asked wulf to stop, 0 when none did.
int pending_signal();
// "SIGTERM" for SIGTERM.
std::string signal_name(int signal);
// A time limit for all of this process's work from now on (--timeout of wulf train), in
// seconds (0: none), while the object lives. Waits for children and check_interrupt()
// honour it.
class TimeLimit {
 public:
  explicit TimeLimit(double seconds);
  ~TimeLimit();
  TimeLimit(const TimeLimit&) = delete;
  TimeLimit& operator=(const TimeLimit&) = delete;
};
// Throws Interrupted if a signal asked wulf to stop, TimedOut if the time limit passed.
// Long work done in this process (each iteration of a --engine seq run) calls it.
void check_interrupt();

}  // namespace wulf
