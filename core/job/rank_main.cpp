// main() of wulf-rank-real (under mpirun) and wulf-rank-sim (under smpirun): the same source,
// built twice. `wulf train --engine real|sim` starts it with its own arguments.
#include "job/rank.hpp"
#include "comm/compute.hpp"
#include "comm/mpi/rank.hpp"
#include "util/text.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  // Started by wulf (WULF_FRONT_END_PID), the ranks end with their launcher: mpirun, or
  // smpirun for the process that simulates them all. wulf's launcher ends with wulf (spawn in
  // engine/process.cpp), so no rank outlives a wulf killed with SIGKILL, nor writes its record.
  // A rank that starts after either has gone (an orphan, its parent now init) ends at once.
  if (const char* front_end = std::getenv("WULF_FRONT_END_PID")) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const long pid = std::atol(front_end);
    if (::getppid() == 1 || (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) return 1;
  }
  wulf::mpi_init(&argc, &argv);
  int code = 0;
  {
    const std::unique_ptr<wulf::Comm> comm = wulf::make_mpi_comm();
    const std::vector<std::string> args(argv + 1, argv + argc);
    wulf::SafeOstream out(std::cout), err(std::cerr);  // as wulf's own output (util/text.hpp)
    if (!args.empty() && args[0] == "bench")  // `wulf platform bench` measures the platform
      code = wulf::run_rank_bench(std::vector<std::string>(args.begin() + 1, args.end()), *comm, wulf::make_compute,
                                  out, err);
    else
      code = wulf::run_rank(args, *comm, wulf::make_compute, out, err);
  }
  wulf::mpi_finalize();
  return code;
}
