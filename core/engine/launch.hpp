// Starting ranks under mpirun or smpirun, from the wulf command: finding wulf's own
// programs, reading a platform's hosts through SimGrid, writing the hostfile, and learning
// how the ranks ended.
#pragma once

#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/json.hpp"
#include "util/text.hpp"

#include <memory>
#include <string>
#include <vector>

namespace wulf {

// A program built beside wulf (or in the build tree): wulf-rank-real, wulf-rank-sim,
// wulf-platform. Throws InputError if it is not built.
std::string wulf_program(const std::string& name);

// Runs wulf-platform with args (its verb, the platform file, ...), its output captured, and
// returns its exit code. Its address space is bounded by this machine's memory
// (machine_memory, and 1 GiB for the program itself): a platform whose numbers make SimGrid
// allocate without end (a radical of 2^31 hosts) is refused for its memory, not left to
// take the machine's.
int run_wulf_platform(const std::vector<std::string>& args, std::string& out, std::string& err);

struct PlatformHost {
  std::string name;
  int cores = 0;
  double speed = 0;  // flop/s
  // Host properties for --reduce four-stage: wulf:group (empty: outside the groups),
  // wulf:node (its index in the group, -1: unknown) and wulf:nics (0: unknown).
  std::string group;
  int node = -1;
  int nics = 0;
  // wulf:rings, for the rings allreduce: the host's place in each of its node's rings (k
  // places from 0, comma-separated); empty: none.
  std::vector<int> ring_places{};
  // wulf:memory, the bytes of the host's device (a GPU's memory); 0: not given.
  double memory = 0;
  // wulf:speed16, its dense 16-bit tensor rate in flop/s (--precision bf16, fp16); 0: not given.
  double speed16 = 0;
};
// The most wulf:memory a host may give: 1 PiB.
inline constexpr double kMostDeviceMemory = 1125899906842624.0;

// A wulf:rings value, "p0,p1,...": whole places from 0, at least one; what names it in a
// refusal.
std::vector<int> parse_ring_places(const std::string& text, const std::string& what);

// What a run needs of a platform, as SimGrid loads it (through wulf-platform, one run of
// it): its hosts in declared order, and the machine's price from its wulf:cost-usd zone
// property (the first zone that has it, outermost first; 0 where none has).
struct PlatformHosts {
  std::vector<PlatformHost> hosts;
  double cost_usd = 0;
};

// A run's what-if (--bw-scale, --lat-scale, --speed-scale): every link's bandwidth and
// latency and every host's speed times these. 1: as the platform is.
struct PlatformScales {
  double bw = 1, lat = 1, speed = 1;
};

// The hosts of a platform. Throws InputError naming the file for a missing file, one SimGrid
// cannot load or wulf refuses (a name it cannot print, a number no machine has: see
// sim/platform_checks.cpp), a wulf:cost-usd that is not a positive number, or, when ranks > 0,
// two of the hosts the first `ranks` ranks run on with no route between them; and naming
// the option, a scale that takes a bandwidth, latency or speed out of wulf's bounds.
// ranks_per_host > 0 puts at most that many ranks on a host (each host's cores are capped to
// it), so that np ranks spread over np hosts with 1 instead of filling the first host's cores.
PlatformHosts platform_hosts(const std::string& file, long long ranks = 0, long long ranks_per_host = 0,
                             const PlatformScales& scales = {});
// An explicit placement (--hosts): rank r on names[r]. One entry per rank, in rank order,
// each of one core, so that a hostfile of them puts every rank where it was asked. Throws
// InputError naming the file for a host it lacks, two hosts with no route between them, more
// ranks on a host than it has cores, or what platform_hosts refuses.
PlatformHosts placed_hosts(const std::string& file, const std::vector<std::string>& names,
                           const PlatformScales& scales = {});
// The hosts np ranks go on, in rank order: the placement `names` gives (--hosts, a host a rank)
// where it is not empty, else the platform's hosts filled in order, at most ranks_per_host
// each (0: each to its cores). Throws InputError naming --np where those hosts have fewer
// cores than np ranks, and what platform_hosts and placed_hosts refuse. file is the platform
// read; shown, what messages call it (a grown platform's file goes by the platform it grew).
PlatformHosts place_ranks(const std::string& file, const std::string& shown, long long np, long long ranks_per_host,
                          const std::vector<std::string>& names, const PlatformScales& scales = {});
// The four-stage reduce's layout (ReduceLayout's explicit form) of np ranks filling hosts
// in order, each host's cores: one node per host, its group and node index from the host
// properties, the fan-in the fewest NICs of a grouped host. Empty when no host used has a
// group: then the reduce is the library's.
std::string reduce_layout_of(const std::vector<PlatformHost>& hosts, int np);
// Everything `wulf-platform info` says of the platform (hosts, links, zones, routes).
Json platform_info(const std::string& file);

// --grow HOSTS: 0 (the platform as it is) or the hosts of the grown cluster, at most 100 000.
inline constexpr Range kGrowRange{.lo = 0, .hi = 100'000, .whole = true};
// The what-if of a platform with more hosts: its one homogeneous cluster rewritten with
// `hosts` hosts (1 to kGrowRange.hi) in a file in $TMPDIR (default /tmp), removed with the
// object. Throws InputError naming the file when the platform is not such a cluster.
class GrownPlatform : public TempFile {
 public:
  GrownPlatform(const std::string& file, long long hosts);
};

// A hostfile for smpirun in $TMPDIR (default /tmp), removed with the object: one line per
// rank, the host's name, hosts filled in order, each up to its cores. Sized by the ranks, never
// by the cores a host declares (core="2147483647" is two billion cores but one line a rank).
class Hostfile : public TempFile {
 public:
  Hostfile(const std::vector<PlatformHost>& hosts, long long ranks);
};

// --eager-limit BYTES (sim, testbed): messages up to it go without waiting for the receiver.
// Refused unless a whole number of bytes in kEagerLimitRange, [1 KiB, 1 GiB] (what names the
// option in errors).
inline constexpr Range kEagerLimitRange{.lo = 1024, .hi = 1 << 30, .whole = true};
void check_eager_limit(long long bytes, const std::string& what);
// SMPI's settings for it: the data of a message up to bytes flows as soon as it is sent
// (smpi/async-small-thresh) and the sender does not wait (smpi/send-is-detached-thresh).
// SMPI's own defaults (bytes 0) start no transfer before the receive is posted.
std::vector<std::string> smpi_eager_config(long long bytes);

// smpirun's arguments for np ranks of program (wulf-rank-sim) on a platform: only wulf
// charges compute, reading the clock costs nothing, and all ranks share one copy of the
// program; extra_cfg are further --cfg=... settings.
std::vector<std::string> smpirun_command(const std::string& platform, const Hostfile& hosts, int np,
                                         const std::vector<std::string>& extra_cfg, const std::string& program);

// The allocator of smpirun's process, which holds every simulated rank: Debian's tcmalloc
// (libtcmalloc-minimal4, installed by dev.sh) where it is installed, preloaded; glibc's malloc
// where it is not, in a sanitized build (ASan's runtime must come first), or where the
// environment sets LD_PRELOAD itself (then that stands: LD_PRELOAD= runs glibc's). The
// simulated times and values do not depend on it; the wall time does (ResNet-50, a bucket per
// tensor, by turns: a third less at 256 to 1 024 GPUs). `preload` is the library to preload
// ("" for none); `name` is what the record says (config.sim_malloc): tcmalloc, glibc, or
// LD_PRELOAD=... as the environment sets it.
struct SimAllocator {
  std::string preload, name;
};
SimAllocator sim_allocator();
// glibc's malloc thresholds for smpirun's process where the environment sets no
// GLIBC_TUNABLES (run_ranks): SMPI's message-sized buffers stay on the heap.
inline constexpr const char* sim_glibc_tunables =
    "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824";

// The collective algorithms a run forces on its engine, by comm/collective_choice's names
// (resolved: Open MPI 4.1's choice where the user said default); "default" leaves the
// MPI's own choice. A reduce here is a library's: wulf's own reduces name the library
// reduce they call (four-stage's last stage), or none.
struct Collectives {
  std::string allreduce = "default";
  std::string reduce = "default";
  std::string bcast = "default";
  std::string allgather = "default";
  std::string gather = "default";
};

// smpirun's --cfg settings that force them on SMPI: smpi/<collective>:NAME for those SMPI
// has (collective_choice's smpi), none for wulf's own, which make no library call.
std::vector<std::string> smpi_collective_config(const Collectives& collectives);

// A folder of one mpirun's own for Open MPI's session directory, removed with the object.
// Open MPI 4.1 puts every mpirun's session under /tmp/ompi.<host>.<uid>, and two mpiruns
// that start at the same moment can both try to create it; the loser fails in orte_init
// ("mkdir ... File exists"). With a folder each, concurrent runs (ctest -j, two users'
// studies) never meet there.
class MpiSessionDir : public TempDir {
 public:
  MpiSessionDir() : TempDir("mpi") {}
};

// mpirun's arguments for np ranks of program on this machine: as root with Open MPI's
// consent, oversubscribed ("on", or "auto" when np exceeds the cores), with Open MPI's
// tuned collectives set to the algorithms asked for, its session directory in session.
std::vector<std::string> mpirun_command(int np, const std::string& oversubscribe, const Collectives& collectives,
                                        const std::string& program, const MpiSessionDir& session);
// The same, spanning the machines of an Open MPI hostfile (empty: this machine), with more
// arguments of the user's for mpirun; "auto" oversubscribes only without a hostfile.
std::vector<std::string> mpirun_command(int np, const std::string& oversubscribe, const Collectives& collectives,
                                        const std::string& program, const MpiSessionDir& session,
                                        const std::string& hostfile, const std::vector<std::string>& extra);

// What wulf decides of its own mpirun (--engine real), checked before it starts:
// - --mpirun-args may not undo it: options that set the number of processes (-np, -n, -c,
//   -N, --npernode, --npersocket, --pernode, --ppr, --map-by ppr:...; wulf's --np), the hosts
//   (-H, --host, --hostfile, --machinefile, --default-hostfile, --rankfile; wulf's
//   --hostfile), oversubscription (--oversubscribe, --nooversubscribe, --map-by
//   ...:OVERSUBSCRIBE; wulf's --oversubscribe), or the program (--app, ':', a word that is no
//   option's value; wulf starts its rank program), nor options that start no ranks (--help,
//   --version, --do-not-launch); an option Open MPI 4.1's mpirun does not know is refused as
//   mpirun would refuse it, after it started;
// - a --hostfile is one Open MPI reads: each line a host, then settings key=value (slots,
//   count or cpu, their max- forms, port: whole numbers; username), '#' a comment; and where
//   every line gives its slots, they hold np ranks unless oversubscribe is "on".
// Throws InputError naming the option, the word or the file's line, and what to use instead.
void check_mpirun_launch(int np, const std::string& hostfile, const std::string& oversubscribe,
                         const std::vector<std::string>& mpirun_args);
// The slots an Open MPI hostfile gives, all lines together; 0 when a line leaves them to the
// host's cores. Throws InputError naming --hostfile, the path and the line it cannot read.
long long hostfile_slots(const std::string& path);

struct RanksOutcome {
  int code = 0;          // the exit code of the whole run (2 input, 3 diverged, ...)
  std::string failure;   // "rank 3: error: ..." of the first rank that failed, or empty
  std::string output;    // the ranks' standard output, when captured
};

// Runs cmd (mpirun or smpirun and the rank program) and waits; the ranks write how they
// ended to a status file (report_rank_status), so an aborted simulation (smpirun exits 0)
// or a rank killed from outside (no status) is told apart from success. The failure names
// the rank: the one that reported it, or (mpirun, output not captured) the one mpirun saw
// killed by a signal. timeout_s > 0 ends the run after that long (engine/process.hpp) and
// throws TimedOut, naming the ranks on this machine that are stopped; so does the time
// limit of a TimeLimit.
// env: more "NAME=value" for the run (the testbed's description).
RanksOutcome run_ranks(const std::vector<std::string>& cmd, bool simulation, bool capture_output, double timeout_s = 0,
                       const std::vector<std::string>& env = {});

// The rank program's arguments for its job (a training job, or `bench` and a benchmark):
// --job FILE, a file of the run's own removed with the object, or --job-text JSON, one
// argument that mpirun hands to ranks on other machines too (as_text). smpirun's script
// splits its arguments at blanks, so simulated ranks are always given the file.
class RankJobArgs {
 public:
  RankJobArgs(const Json& job, bool as_text);
  const std::vector<std::string>& args() const { return args_; }

 private:
  std::unique_ptr<TempFile> file_;
  std::vector<std::string> args_;
};

// The last line a wulf run printed on its error stream, without "wulf: error: " or "wulf: ":
// its message ("timed out after 5 s; ended mpirun's process group 4242").
std::string wulf_last_message(std::string err);

}  // namespace wulf
