// What this machine gives a run: its memory, and what its CPUs did while a run went.
#pragma once

#include "util/json.hpp"

#include <array>
#include <optional>
#include <string>

namespace wulf {

// The memory this machine can give a run: $WULF_MEMORY_LIMIT_BYTES where it is set (tests,
// or a share of a machine that others use too), else MemAvailable of /proc/meminfo; none
// where neither can be read (then nothing is checked). Throws InputError for a variable
// that is not a positive number of bytes.
struct MachineMemory {
  double bytes = 0;
  std::string source;  // "MemAvailable" or "WULF_MEMORY_LIMIT_BYTES"
};
std::optional<MachineMemory> machine_memory();

// The largest mapping of private writable memory the kernel lets one process reserve, however
// little of it is ever touched: under vm.overcommit_memory 0 (its heuristic) MemTotal plus
// SwapTotal, under 2 CommitLimit less Committed_AS, under 1 none (anything is granted); none
// where /proc cannot be read.
std::optional<MachineMemory> mapping_limit();

// The mappings the kernel allows a process (vm.max_map_count), or Linux's default, 65530,
// where it cannot be read.
long long max_map_count();

// What the machine's CPUs have done since boot, all of them together, in seconds (/proc/stat's
// first line over USER_HZ): busy, in user, nice, system, irq and softirq time; steal, the time
// a hypervisor gave another machine while this one had work.
struct CpuSeconds {
  double busy = 0, steal = 0;
};
// A look at the machine: its CPU seconds and /proc/loadavg's 1, 5 and 15 minute load
// averages, each none where it cannot be read. Taken before and after a run, two say what else
// ran beside it and what a virtual machine's host took away.
struct MachineSample {
  std::optional<CpuSeconds> cpu;
  std::optional<std::array<double, 3>> load;
};
MachineSample sample_machine();
// A record's "machine" over a run from two samples: its cores, loadavg_before and
// loadavg_after, cpu_busy_s and cpu_steal_s (the seconds over the run, machine-wide); null
// where a sample lacks them.
Json machine_use_json(const MachineSample& before, const MachineSample& after, unsigned cores);

}  // namespace wulf
