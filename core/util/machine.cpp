#include "util/machine.hpp"

#include "util/errors.hpp"
#include "util/text.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace wulf {

std::optional<MachineMemory> machine_memory() {
  if (const char* limit = std::getenv("WULF_MEMORY_LIMIT_BYTES"); limit && *limit) {
    const auto v = parse_number(limit);
    if (!v || !std::isfinite(*v) || *v <= 0)
      throw InputError(std::string("WULF_MEMORY_LIMIT_BYTES: '") + limit + "' is not a positive number of bytes");
    return MachineMemory{*v, "WULF_MEMORY_LIMIT_BYTES"};
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line))
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      double kib = 0;
      if (fields >> kib && kib > 0) return MachineMemory{kib * 1024.0, "MemAvailable"};
    }
  return std::nullopt;
}

}  // namespace wulf
