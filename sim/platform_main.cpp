// wulf-platform: reads a SimGrid platform file with SimGrid's own loader and prints what
// wulf needs of it. A program of its own so that SimGrid's engine, of which a process may
// hold one, never lives inside the wulf command or its tests.
//
//   wulf-platform hosts FILE.xml [a,b,... | --ranks N [--per-host R]] [--bw-scale X]
//                  [--lat-scale Y] [--speed-scale Z]
//                                  a first line "cost-usd X" (the wulf:cost-usd property of the
//                                  first zone that has it, outermost first; "-" where none
//                                  has), then one line per host: name, cores, speed in flop/s,
//                                  and its wulf:group, wulf:node, wulf:nics, wulf:device,
//                                  wulf:efficiency, wulf:rings, wulf:ddp, wulf:memory and wulf:speed16. First
//                                  checks that the hosts chosen reach each other: the ones
//                                  named, or the ones N ranks fill in order, at most R on a
//                                  host; and that the run's what-if scales leave every
//                                  bandwidth, latency and speed in wulf's bounds
//   wulf-platform info FILE.xml    the whole platform as JSON: hosts, links, zones (with their
//                                  properties), routes
//                                  between the first hosts
//   wulf-platform grow FILE.xml N OUT.xml
//                                  writes the platform's one homogeneous cluster with N hosts
//                                  (the what-if of more processors than the machine had)
//   wulf-platform network FILE.xml a,b,...
//                                  the hosts named and the network between them, as the
//                                  testbed builds it (JSON): each host's speed, cores and
//                                  collective overhead, the links of their routes, and the
//                                  route of every ordered pair (with --pairs, of the
//                                  pairs the file lists alone, a line "i j" each: indices
//                                  into the hosts named)
//
// Every verb first refuses, with exit 2 and one line on standard error, a platform SimGrid
// cannot load (its own abort included) or loads although no machine is like it or wulf
// cannot print it (check_platform): a name with a blank or a control character, a cluster
#include "platform_parts.hpp"

// or a platform without hosts, a speed, bandwidth, latency or core count no machine has.
#include <simgrid/kernel/routing/ClusterZone.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/config.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <fstream>
#include <map>
#include <new>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace wulf_platform {

// text as a whole number: digits only (a count of hosts), at most ULONG_MAX.
bool whole_number(const std::string& text, unsigned long& n) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  n = std::strtoul(text.c_str(), nullptr, 10);
  return errno == 0;
}

// The hosts a list a,b,... names (each name once, in the order first named). False, with the
// fault on standard error, for a name the platform lacks.
bool chosen_hosts(const simgrid::s4u::Engine& engine, const std::string& which,
                  std::vector<simgrid::s4u::Host*>& chosen) {
  std::size_t start = 0;
  while (start <= which.size()) {
    const std::size_t end = std::min(which.find(',', start), which.size());
    const std::string name = which.substr(start, end - start);
    simgrid::s4u::Host* h = engine.host_by_name_or_null(name);
    if (!h) {
      std::fprintf(stderr, "--hosts: the platform has no host '%s'\n", name.c_str());
      return false;
    }
    if (std::find(chosen.begin(), chosen.end(), h) == chosen.end()) chosen.push_back(h);
    start = end + 1;
  }
  return true;
}

// The hosts that `ranks` ranks fill, in declared order, each host's cores (at most
// per_host of them when per_host > 0).
std::vector<simgrid::s4u::Host*> filled_hosts(const simgrid::s4u::Engine& engine, unsigned long ranks,
                                              unsigned long per_host) {
  std::vector<simgrid::s4u::Host*> hosts = declared_hosts(engine);
  std::size_t used = 0;
  for (unsigned long filled = 0; used < hosts.size() && filled < ranks; ++used) {
    const auto cores = static_cast<unsigned long>(hosts[used]->get_core_count());
    filled += per_host > 0 ? std::min(cores, per_host) : cores;
  }
  hosts.resize(used);
  return hosts;
}

// The hosts the arguments after FILE choose for `hosts` and `network`: none (every host, no
// route checked), a,b,..., or --ranks N [--per-host R]. False, with the fault on standard
// error, for arguments that are none of these or a name the platform lacks.
bool hosts_of_arguments(const simgrid::s4u::Engine& engine, const std::vector<std::string>& args,
                        std::vector<simgrid::s4u::Host*>& chosen) {
  if (args.size() == 1) return chosen_hosts(engine, args[0], chosen);
  unsigned long ranks = 0, per_host = 0;
  if ((args.size() == 2 || args.size() == 4) && args[0] == "--ranks" && whole_number(args[1], ranks) &&
      (args.size() == 2 || (args[2] == "--per-host" && whole_number(args[3], per_host)))) {
    chosen = filled_hosts(engine, ranks, per_host);
    return true;
  }
  std::fprintf(stderr, "wulf-platform: hosts are chosen by a,b,... or --ranks N [--per-host R]\n");
  return false;
}

// The pairs of a --pairs file: a line "i j" a pair, each an index into the k hosts chosen, i
// not j. False, with the fault on standard error, for a file that cannot be read or a line
// that is not such a pair.
bool read_pairs(const std::string& path, std::size_t k, HostPairs& pairs) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "wulf-platform: --pairs %s cannot be read\n", path.c_str());
    return false;
  }
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::size_t blank = line.find(' ');
    unsigned long i = 0, j = 0;
    if (blank == std::string::npos || !whole_number(line.substr(0, blank), i) ||
        !whole_number(line.substr(blank + 1), j) || i >= k || j >= k || i == j) {
      std::fprintf(stderr, "wulf-platform: --pairs %s, line %zu: '%s' is not two different host indices below %zu\n",
                   path.c_str(), number, line.c_str(), k);
      return false;
    }
    pairs.emplace_back(i, j);
  }
  return true;
}

// The what-if scales among the arguments after FILE (--bw-scale X, --lat-scale Y,
// --speed-scale Z, each a positive number), taken out of args. False, with the fault on
// standard error, for a scale that is no such number.
bool take_scales(std::vector<std::string>& args, Scales& scales) {
  for (std::size_t i = 0; i < args.size();) {
    double* scale = args[i] == "--bw-scale" ? &scales.bw : args[i] == "--lat-scale" ? &scales.lat
                    : args[i] == "--speed-scale" ? &scales.speed : nullptr;
    if (!scale) {
      ++i;
      continue;
    }
    char* end = nullptr;
    const char* text = i + 1 < args.size() ? args[i + 1].c_str() : "";
    *scale = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(*scale > 0)) {
      std::fprintf(stderr, "wulf-platform: %s '%s' is not a positive number\n", args[i].c_str(), text);
      return false;
    }
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(std::min(i + 2, args.size())));
  }
  return true;
}

int run(int argc, char** argv) {
  const std::string verb = argc >= 3 ? argv[1] : "";
  std::vector<std::string> args(argv + std::min(argc, 3), argv + argc);  // after FILE
  Scales scales;
  if (verb == "hosts" && !take_scales(args, scales)) return 2;
  if ((verb != "hosts" && verb != "info" && verb != "grow" && verb != "network") || (verb == "info" && !args.empty()) ||
      (verb == "grow" && args.size() != 2) || (verb == "hosts" && args.size() > 4) || (verb == "network" && args.size() != 1 && !(args.size() == 3 && args[1] == "--pairs"))) {
    std::fprintf(stderr,
                 "usage: wulf-platform hosts FILE.xml [a,b,... | --ranks N [--per-host R]] [--bw-scale X] "
                 "[--lat-scale Y] [--speed-scale Z] | info FILE.xml | grow FILE.xml N OUT.xml | network FILE.xml a,b,... [--pairs FILE]\n");
    return 2;
  }
  try {
    int sg_argc = 3;
    char log[] = "--log=root.thres:critical";
    char format[] = "--log=root.fmt:%m%n";  // the message alone, without time and source line
    char* sg_argv[] = {argv[0], log, format, nullptr};
    simgrid::s4u::Engine engine(&sg_argc, sg_argv);
    load_platform(engine, argv[2]);
    if (check_config() != 0 || check_platform(engine, scales) != 0) return 2;
    if (verb == "info")
      return guarded([&] {
        info(engine);
        return 0;
      });
    if (verb == "grow") {
      unsigned long n = 0;
      if (!whole_number(args[0], n) || n == 0) {
        std::fprintf(stderr, "--grow: '%s' is not a host count of at least 1\n", args[0].c_str());
        return 2;
      }
      return grow(engine, n, args[1]);
    }
    // The hosts chosen (the ones the ranks fill, or an explicit placement, --hosts) must
    // exist and reach each other.
    if (!args.empty()) {
      std::vector<simgrid::s4u::Host*> chosen;
      if (verb == "network" && args.size() == 3) {
        HostPairs pairs;
        if (!chosen_hosts(engine, args[0], chosen) || !read_pairs(args[2], chosen.size(), pairs) ||
            check_routes(chosen, pairs) != 0)
          return 2;
        network(engine, chosen, &pairs);
        return 0;
      }
      if (!hosts_of_arguments(engine, args, chosen) || check_routes(chosen) != 0) return 2;
      if (verb == "network") {
        network(engine, chosen);
        return 0;
      }
    }
    return print_hosts(engine);
  } catch (const std::bad_alloc&) {  // past the address space wulf gives it (engine/launch)
    std::fprintf(stderr, "SimGrid ran out of memory loading it (wulf-platform may take the memory this machine "
                         "has available): a cluster's radical, or another count, too large?\n");
    return 2;
  } catch (const std::exception& e) {
    // SimGrid's "Bad config key: K" goes on with every key it has, one a line: the first line.
    std::string what = e.what();
    if (const std::size_t eol = what.find('\n'); eol != std::string::npos) what.erase(eol);
    if (what.rfind("Bad config key: ", 0) == 0)
      std::fprintf(stderr,
                   "its <config> sets %s, which SimGrid does not know here (a platform may set the network's and "
                   "CPUs' model: network/..., cpu/..., smpi/bw-factor, smpi/lat-factor)\n",
                   what.substr(16).c_str());
    else
      std::fprintf(stderr, "SimGrid cannot load it: %s\n", what.c_str());
    return 2;
  }
}

}  // namespace wulf_platform

int main(int argc, char** argv) {
  const int code = wulf_platform::run(argc, argv);
  // What was printed reaches the reader whole, or the exit says it did not (a full disk, a
  // closed pipe): wulf reads hosts and JSON from this output.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "wulf-platform: writing its output failed: %s\n", std::strerror(errno));
    return code == 0 ? 2 : code;
  }
  return code;
}
