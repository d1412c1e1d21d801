// What this machine gives a run: its memory.
#pragma once

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

}  // namespace wulf
