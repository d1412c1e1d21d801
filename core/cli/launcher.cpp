#include "cli/launcher.hpp"

#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "engine/process.hpp"

#include <mpi.h>

#include <charconv>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>

extern char** environ;

namespace wulf {
namespace {

// The processes once MPI was started (mpi); before, or without it, this process alone.
struct Processes {
  bool mpi = false;
  int rank = 0, size = 1, here = 1;
};
Processes joined;

std::optional<long long> whole_number(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::nullopt;
  long long v = 0;
  const auto [end, ec] = std::from_chars(text, text + std::strlen(text), v);
  if (ec != std::errc() || *end != '\0')
    throw InputError(std::string("$") + name + ": '" + text + "' is no whole number");
  return v;
}

// The variables by which the launcher told this process its place and reaches it: Open MPI's
// (OMPI_*, its MCA settings among them, but for the user's consent to run as root), PMIx's,
// PMI's and srun's of the task and step.
std::vector<std::string> launcher_variables() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    const auto starts = [&](const char* prefix) { return name.rfind(prefix, 0) == 0; };
    const bool consent = name == "OMPI_ALLOW_RUN_AS_ROOT" || name == "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM";
    const bool slurm_task = name == "SLURM_PROCID" || name == "SLURM_LOCALID" || name == "SLURM_NODEID" ||
                            name == "SLURM_TASK_PID" || name == "SLURM_GTIDS" || name == "SLURM_STEPID" ||
                            starts("SLURM_STEP_");
    if ((starts("OMPI_") && !consent) || starts("PMIX_") || starts("PMI_") || slurm_task) names.push_back(name);
  }
  return names;
}

void start_mpi(const LauncherPlace& place) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);  // only this thread calls MPI
  joined.mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &joined.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &joined.size);
  if (joined.size != place.size || joined.rank != place.rank)
    throw InputError("$" + place.launcher + " says process " + std::to_string(place.rank) + " of " +
                     std::to_string(place.size) + ", MPI says " + std::to_string(joined.rank) + " of " +
                     std::to_string(joined.size) + " (was wulf started by another MPI's launcher?)");
  MPI_Comm machine;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &machine);
  MPI_Comm_size(machine, &joined.here);
  MPI_Comm_free(&machine);
}

// Waits for a non-blocking collective, sleeping between looks: a blocking one would spin
// on a core that this machine's runs need.
void wait_for(MPI_Request& request) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    check_interrupt();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

LauncherPlace launcher_place() {
  constexpr const char* vars[][2] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                     {"PMI_SIZE", "PMI_RANK"},
                                     {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID"}};
  for (const auto& [size_var, rank_var] : vars) {
    const std::optional<long long> size = whole_number(size_var);
    if (!size) continue;
    const std::optional<long long> rank = whole_number(rank_var);
    if (*size < 1 || *size > INT_MAX || !rank || *rank < 0 || *rank >= *size)
      throw InputError(std::string("$") + size_var + " " + std::to_string(*size) + " and $" + rank_var + " " +
                       (rank ? std::to_string(*rank) : "(not set)") + " name no process of the launcher's");
    return {static_cast<int>(*rank), static_cast<int>(*size), size_var};
  }
  return {};
}

bool is_sweep_command(const std::string& command) {
  return command == "recommend" || command == "validate" || command == "study" || command == "calibrate";
}

int run_cli_in_launcher(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || !is_sweep_command(args[0])) return run_cli(args, out, err);
  LauncherPlace place;
  try {
    place = launcher_place();
  } catch (const InputError& e) {
    err << "wulf: error: " << e.what() << "\n";
    return exit_input;
  }
  if (place.launcher.empty()) return run_cli(args, out, err);
  keep_from_children(launcher_variables());
  if (place.size == 1) return run_cli(args, out, err);
  try {
    start_mpi(place);
  } catch (const InputError& e) {
    err << "wulf: error: " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, exit_input);
  }
  const bool leader = joined.rank == 0;
  std::ostream quiet(nullptr);  // writes nothing
  std::ostringstream errors;
  const int code = run_cli(args, leader ? out : quiet, leader ? err : errors);
  // Each line in one write: mpirun passes on what every process writes as it comes, and its
  // own MPI_Abort banner landed inside a line written piece by piece ("process ", the
  // banner, "1 of 2: wulf: error: ...").
  std::istringstream lines(errors.str());
  for (std::string line; std::getline(lines, line);)
    err << ("process " + std::to_string(joined.rank) + " of " + std::to_string(joined.size) + ": " + line + "\n");
  if (code == exit_ok) {
    MPI_Finalize();
    return code;
  }
  // The others may wait for this process's records: it ends them all.
  out.flush(), err.flush();
  MPI_Abort(MPI_COMM_WORLD, code);
  return code;
}

bool is_leader() { return joined.rank == 0; }
int processes() { return joined.size; }
int process_index() { return joined.rank; }
int processes_here() { return joined.here; }

std::vector<std::string> gather_texts(const std::string& mine) {
  if (!joined.mpi) return {mine};
  const auto n = static_cast<long long>(mine.size());
  std::vector<long long> sizes(static_cast<std::size_t>(joined.size));
  MPI_Request request;
  MPI_Iallgather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD, &request);
  wait_for(request);
  std::vector<int> counts, displacements;
  long long total = 0;
  for (long long s : sizes) {
    if (total + s > INT_MAX) throw std::runtime_error("the runs' results exceed 2 GiB, more than one gather holds");
    counts.push_back(static_cast<int>(s));
    displacements.push_back(static_cast<int>(total));
    total += s;
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Iallgatherv(mine.data(), static_cast<int>(n), MPI_CHAR, all.data(), counts.data(), displacements.data(), MPI_CHAR,
                  MPI_COMM_WORLD, &request);
  wait_for(request);
  std::vector<std::string> texts;
  for (std::size_t p = 0; p < sizes.size(); ++p)
    texts.push_back(all.substr(static_cast<std::size_t>(displacements[p]), static_cast<std::size_t>(counts[p])));
  return texts;
}

}  // namespace wulf
