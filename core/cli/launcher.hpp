// A sweep command (recommend, validate, study, calibrate) started by a user's MPI launcher
// (mpirun, mpiexec, srun) as one of several processes: every process runs the same front
// end, the runner (cli/runner.hpp) shares each list of jobs among them and gathers every
// job's result to all of them, and only process 0 prints and writes outputs.
//
// The processes talk through MPI (Open MPI's, linked into the wulf command); MPI is started
// only when the launcher's environment says there is more than one process, and this file is
// the front end's only user of <mpi.h>. The runs themselves are children of the processes,
// as on one machine: they must not take the launcher's identity for their own (a child
// `wulf train` would become one of the launcher's ranks, a child mpirun would join its job),
// so the variables the launcher set are kept from every child.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace wulf {

// Where this process stands among the launcher's processes, as its environment says:
// Open MPI's OMPI_COMM_WORLD_SIZE and _RANK, else PMI_SIZE and PMI_RANK (MPICH's Hydra, Intel
// MPI, srun --mpi=pmi2), else SLURM_STEP_NUM_TASKS and SLURM_PROCID (srun; not SLURM_NTASKS,
// which sbatch also sets for the one batch script). size 1: none, or a launcher of one.
struct LauncherPlace {
  int rank = 0;
  int size = 1;
  std::string launcher;  // the variable that told ("OMPI_COMM_WORLD_SIZE"); empty: none
};
LauncherPlace launcher_place();

// The commands that hand their runs to the runner and so may run under a launcher.
bool is_sweep_command(const std::string& command);

// run_cli for a sweep command started by a launcher: the launcher's variables are kept
// from every child; with more than one process, MPI is started, processes other than 0
// print nothing to out and their errors prefixed with "process R of N: ", and a process
// that fails ends all of them (MPI_Abort with its exit code) instead of leaving the others
// waiting for its records; the processes end MPI together when all succeed. Otherwise
// run_cli as it is.
int run_cli_in_launcher(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// Whether this process prints and writes the command's outputs: process 0, or the only one.
bool is_leader();
// The launcher's processes that take part in the runner's lists: 1 when MPI was not started.
int processes();
// This process's index among them.
int process_index();
// The processes on this process's machine (itself included).
int processes_here();
// Every process's text, in process order, to all of them (MPI's all-gather, waited for
// without spinning: the processes that wait leave their machine's cores to the runs; a
// signal to wulf ends the wait). Only once MPI was started.
std::vector<std::string> gather_texts(const std::string& mine);

}  // namespace wulf
