// wulf-platform: loading a platform file, with SimGrid's aborts turned into a refusal and the
// zones that route by Floyd or Dijkstra sealed, as smpirun seals them.
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

// SimGrid ends the process (abort) on some faults of a platform file, after logging a line
// that says what is wrong and a backtrace: a host of core="0", for one. While the file is
// loaded, standard error goes to a file in memory; should SimGrid abort, the handler writes
// the first line it logged as wulf's message ("SimGrid cannot load it: Host a must have at
// least one core, not 0.") and exits with 2, the exit of any other refusal.
int real_stderr = -1;
int captured_stderr = -1;

// Whether text[from, to) is the C string s. (memcmp is not among the calls POSIX allows in
// a signal handler.)
bool span_is(const char* text, ssize_t from, ssize_t to, const char* s) {
  for (; from < to && *s; ++from, ++s)
    if (text[from] != *s) return false;
  return from == to && !*s;
}

extern "C" void refuse_on_abort(int) {
  // Only calls safe in a signal handler: SimGrid aborts from its own code, but in any state.
  static char text[1024];
  const ssize_t n = ::pread(captured_stderr, text, sizeof text, 0);
  ssize_t line = 0;
  while (line < n && text[line] != '\n') ++line;
  const char lead[] = "SimGrid cannot load it: ";
  const char unsaid[] = "SimGrid stopped while loading it (abort)";
  ssize_t done = ::write(real_stderr, lead, sizeof lead - 1);
  // SimGrid says "Host a must have at least one core, not 0." of core="-2" too: wulf's
  // words instead, which give no number.
  const char host[] = "Host ", cores[] = " must have at least one core, not 0.";
  const ssize_t name_end = line - static_cast<ssize_t>(sizeof cores - 1);
  if (name_end > 5 && span_is(text, 0, 5, host) && span_is(text, name_end, line, cores)) {
    const char is[] = "': core must be a whole number of at least 1";
    done = ::write(real_stderr, "host '", 6);
    done = ::write(real_stderr, text + 5, static_cast<std::size_t>(name_end - 5));
    done = ::write(real_stderr, is, sizeof is - 1);
  } else {
    done = line > 0 ? ::write(real_stderr, text, static_cast<std::size_t>(line)) : ::write(real_stderr, unsaid, sizeof unsaid - 1);
  }
  done = ::write(real_stderr, "\n", 1);
  static_cast<void>(done);  // nothing is left to tell a failed write to
  _exit(2);
}

// The most hosts a platform may declare: the most ranks wulf places (--np's range, 1 000 000).
// A cluster's radical may name far more ("0-99999999"), and SimGrid would then create hosts
// until the machine's memory runs out (about 5 KB each): the load stops at the first host
// past the limit instead.
constexpr unsigned long kMostHosts = 1'000'000;  // wulf's kMostRanks (core/util/text.hpp)

[[noreturn]] void refuse_too_many_hosts() {
  char text[200];
  const int n = std::snprintf(text, sizeof text,
                              "it declares more than %lu hosts, the most wulf reads (the most ranks it places)\n",
                              kMostHosts);
  ssize_t done = ::write(real_stderr >= 0 ? real_stderr : STDERR_FILENO, text, static_cast<std::size_t>(n));
  static_cast<void>(done);
  _exit(2);
}

// Whether a zone of the platform file at path computes its routes when the platform is
// sealed (routing="Floyd", "Dijkstra" or "DijkstraCache"), as smpirun seals it before any rank
// starts: unsealed they have none. Other platforms are left unsealed: SimGrid 3.32 crashes
// sealing a Full zone that lacks a route between two of its zones, which check_routes names
// instead. (SimGrid's library keeps the zones' types to itself: the file is read for them.)
bool routes_when_sealed(const char* path) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto blanks = [&](std::size_t at) { return text.find_first_not_of(" \t\r\n", at); };
  for (std::size_t at = text.find("routing"); at != std::string::npos; at = text.find("routing", at + 1)) {
    std::size_t v = blanks(at + 7);  // routing = "Floyd"
    if (v == std::string::npos || text[v] != '=' || (v = blanks(v + 1)) == std::string::npos) continue;
    if (text[v] != '"' && text[v] != '\'') continue;
    const std::size_t end = text.find(text[v], v + 1);
    const std::string kind = text.substr(v + 1, end == std::string::npos ? 0 : end - v - 1);
    if (kind == "Floyd" || kind == "Dijkstra" || kind == "DijkstraCache") return true;
  }
  return false;
}

// Loads the platform at path into e; SimGrid's aborts become a refusal (above), and what it
// logs otherwise reaches standard error after loading.
void load_platform(simgrid::s4u::Engine& e, const char* path) {
  static unsigned long created = 0;
  simgrid::s4u::Host::on_creation_cb([](simgrid::s4u::Host&) {
    if (++created > kMostHosts) refuse_too_many_hosts();
  });
  captured_stderr = ::memfd_create("wulf-platform-stderr", MFD_CLOEXEC);
  real_stderr = ::dup(STDERR_FILENO);
  if (captured_stderr < 0 || real_stderr < 0) {  // no capture: SimGrid's own words, then
    e.load_platform(path);
    if (routes_when_sealed(path)) e.seal_platform();
    return;
  }
  std::fflush(stderr);
  ::dup2(captured_stderr, STDERR_FILENO);
  std::signal(SIGABRT, refuse_on_abort);
  auto restore = [&] {
    std::fflush(stderr);
    std::signal(SIGABRT, SIG_DFL);
    ::dup2(real_stderr, STDERR_FILENO);
    char text[4096];
    for (off_t at = 0;;) {  // what SimGrid logged and did not abort on (a warning)
      const ssize_t n = ::pread(captured_stderr, text, sizeof text, at);
      if (n <= 0 || ::write(STDERR_FILENO, text, static_cast<std::size_t>(n)) < 0) break;
      at += n;
    }
    ::close(captured_stderr);
    ::close(real_stderr);
  };
  try {
    e.load_platform(path);
    if (routes_when_sealed(path)) e.seal_platform();
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

}  // namespace wulf_platform
