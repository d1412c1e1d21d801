// The runner of the sweep commands (recommend, validate, study, calibrate): they build lists
// of jobs, each a `wulf` command of its own, and hand them here; the results come back in
// list order, whatever order the jobs ran in.
//
// On one machine the jobs run through a pool of threads sized to the cores, each waiting on
// its job's program. Started by a user's mpirun or srun as several processes
// (cli/launcher.hpp), every process builds the same lists (the commands' lists are
// deterministic) and runs its share, job i on process i mod N, through its own pool; the
// results are then gathered so that every process holds all of them, and every job's output
// files are written at the paths that process's own list names (its own scratch folder), as
// if it had run them. No file system is shared: the records travel through MPI.
#pragma once

#include "util/json.hpp"

#include <functional>
#include <string>
#include <vector>

namespace wulf {

// The code of a job that was not run: an earlier job of its one-at-a-time list failed.
inline constexpr int kNotRun = -1;

struct JobResult {
  int code = 0;          // the exit code (2 input, 3 diverged, 4 timed out, ...), or kNotRun
  std::string out, err;  // what it printed
  std::string command;   // "wulf ARGS" without --out, for messages
  Json record;           // the record read back; null when it wrote none
  double wall_s = 0;     // what it took, on the machine that ran it

  // The last line it printed on its error stream, without "wulf: error: ".
  std::string message() const;
  bool ok() const { return code == 0; }
};

// One run: `wulf ARGS --out RECORD`.
struct Job {
  std::vector<std::string> args;   // wulf's arguments: {"train", "--problem", ...}
  std::string record;              // where its record goes (--out); empty: it writes none
  std::vector<std::string> files;  // other files its arguments make it write, brought back too
  // A run that is no `wulf` command (an mpirun of rank programs): called in place of wulf
  // ARGS, it returns the result (args then only name it in messages).
  std::function<JobResult()> run;
  // The most memory it holds at once, the command's own estimate (0: a `wulf train` job's is
  // its front end's, train_memory_bytes; any other's little). The pool starts a job only where
  // the jobs running hold, with it, no more than the machine's memory (machine_memory:
  // MemAvailable or $WULF_MEMORY_LIMIT_BYTES, as the runs are started); a job alone always
  // runs (it checks its own estimate).
  double memory_bytes = 0;
};

// How a list's jobs share the machines.
enum class Spread {
  pool,  // at once: through each process's pool, over the launcher's processes
  // One after another in list order, all on process 0: runs that measure this machine's
  // wall clock or need all of it (calibrate, real runs, the testbed), and may read what an
  // earlier job of the list wrote. A job that fails ends the list: the jobs after it are
  // not run (kNotRun).
  one_at_a_time,
};

class Runner {
 public:
  // jobs: runs at once on this process; 0: the cores it may use (its CPU affinity), shared
  // with the launcher's other processes on its machine.
  explicit Runner(long long jobs = 0);

  // Runs the list and returns its results in list order. A job that fails is a result
  // (its code and messages); the first exception a job threw (a signal, a program that
  // cannot start) is thrown once all have ended. on_start(i) is called as job i starts on
  // this process (one at a time).
  std::vector<JobResult> run(const std::vector<Job>& jobs, Spread spread = Spread::pool,
                             const std::function<void(std::size_t)>& on_start = {}) const;

  // Runs at once on this process.
  int pool() const { return pool_; }

 private:
  int pool_;
};

// The cores this process may run on.
int cores_here();

}  // namespace wulf
