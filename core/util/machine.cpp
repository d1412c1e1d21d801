#include "util/machine.hpp"

#include "util/errors.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace wulf {

namespace {

// A field of /proc/meminfo in bytes, or none.
std::optional<double> meminfo_bytes(const std::string& field) {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line))
    if (line.rfind(field + ":", 0) == 0) {
      std::istringstream fields(line.substr(field.size() + 1));
      double kib = 0;
      if (fields >> kib && kib >= 0) return kib * 1024.0;
    }
  return std::nullopt;
}

}  // namespace

std::optional<MachineMemory> machine_memory() {
  if (const char* limit = std::getenv("WULF_MEMORY_LIMIT_BYTES"); limit && *limit) {
    const auto v = parse_number(limit);
    if (!v || !std::isfinite(*v) || *v <= 0)
      throw InputError(std::string("WULF_MEMORY_LIMIT_BYTES: '") + limit + "' is not a positive number of bytes");
    return MachineMemory{*v, "WULF_MEMORY_LIMIT_BYTES"};
  }
  if (const auto available = meminfo_bytes("MemAvailable"); available && *available > 0)
    return MachineMemory{*available, "MemAvailable"};
  return std::nullopt;
}

std::optional<MachineMemory> mapping_limit() {
  std::ifstream policy("/proc/sys/vm/overcommit_memory");
  int mode = -1;
  if (!(policy >> mode) || mode == 1) return std::nullopt;
  if (mode == 2) {
    const auto limit = meminfo_bytes("CommitLimit"), committed = meminfo_bytes("Committed_AS");
    if (!limit || !committed) return std::nullopt;
    return MachineMemory{std::max(0.0, *limit - *committed), "CommitLimit less Committed_AS, vm.overcommit_memory 2"};
  }
  const auto total = meminfo_bytes("MemTotal"), swap = meminfo_bytes("SwapTotal");
  if (!total) return std::nullopt;
  return MachineMemory{*total + swap.value_or(0), "MemTotal and SwapTotal, vm.overcommit_memory 0"};
}

long long max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  if (long long v = 0; in >> v && v > 0) return v;
  return 65530;
}

MachineSample sample_machine() {
  MachineSample sample;
  std::ifstream stat("/proc/stat");
  std::string name;
  // cpu  user nice system idle iowait irq softirq steal (guest time is counted in user's)
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (stat >> name >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal && name == "cpu" && hz > 0)
    sample.cpu = CpuSeconds{(user + nice + system + irq + softirq) / hz, steal / hz};
  std::ifstream loadavg("/proc/loadavg");
  std::array<double, 3> load{};
  if (loadavg >> load[0] >> load[1] >> load[2]) sample.load = load;
  return sample;
}

Json machine_use_json(const MachineSample& before, const MachineSample& after, unsigned cores) {
  const auto load = [](const MachineSample& s) { return s.load ? Json(*s.load) : Json(nullptr); };
  const bool cpu = before.cpu && after.cpu;
  return {{"cores", cores},
          {"loadavg_before", load(before)},
          {"loadavg_after", load(after)},
          {"cpu_busy_s", cpu ? Json(after.cpu->busy - before.cpu->busy) : Json(nullptr)},
          {"cpu_steal_s", cpu ? Json(after.cpu->steal - before.cpu->steal) : Json(nullptr)}};
}

}  // namespace wulf
