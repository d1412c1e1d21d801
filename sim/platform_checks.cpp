// wulf-platform: what every verb refuses before it prints anything (exit 2, one line on
// standard error): a <config> a wulf run cannot take, a name unfit to print, a cluster without
// hosts, a number no machine has, two hosts with no route between them.
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

// The numbers wulf takes from a platform, as the file gives them and after the what-if
// scales (--bw-scale, --lat-scale, --speed-scale) multiply them. SimGrid loads a bandwidth
// of 1e-30 B/s, a negative latency or a negative speed without a word, then either aborts
// the simulation (zero, negative, NaN or infinite bandwidth: smpirun exits 134, "The
// Impossible Did Happen") or simulates a machine that cannot be (1e-30 B/s: a run of 1e30
// seconds; an infinite speed: kernels of no time). Such a number is a unit left off or
// mistyped ("10" for "10MBps", "us" for "s") or a scale past any what-if, so it is refused,
// naming the host or link (and the option), before any rank starts.
constexpr double least_speed_flops = 1;    // no computer ever did less than 1 flop/s
constexpr double most_speed_flops = 1e18;  // nor a host more than an exaflop/s
constexpr double least_bandwidth_Bps = 1;  // nor a network link less than 1 byte/s
constexpr double most_bandwidth_Bps = 1e18;  // nor more than an exabyte a second
constexpr double most_latency_s = 3600;    // nor took an hour to start a message
// No host needs more cores than wulf runs ranks (--np at most 1 000 000): a hostfile and a
// placement hold one line per rank, whatever a host declares (core="2147483647").
constexpr int most_cores = 1000000;  // wulf's kMostRanks (core/util/text.hpp)

// What is wrong with value (a speed or a bandwidth) against [least, most], or "".
std::string out_of(double value, double least, double most, const char* unit) {
  if (std::isfinite(value) && value >= least && value <= most) return "";
  return number_text(value) + " " + unit + "; wulf takes a finite " + (std::string(unit) == "flop/s" ? "speed" : "bandwidth") +
         " from " + number_text(least) + " to " + number_text(most) + " " + unit;
}

// The fault of a value that is fine in the file but not once the option's scale multiplies
// it: "--bw-scale 1e+308: link 'l': bandwidth 1.25e+07 bytes/s x 1e+308 = inf bytes/s; ...".
std::string scaled_fault(const char* option, double scale, const std::string& what, double value,
                         const std::string& fault) {
  return std::string(option) + " " + number_text(scale) + ": " + what + " " + number_text(value) + " x " +
         number_text(scale) + " = " + fault;
}

// What is wrong with SMPI's piecewise values by message size, "bytes:value[:value...];..."
// (at most `values` values a chunk, each above 0 and at most 1e6 for the factors, from 0 to
// 3600 for a host's overheads in seconds): SimGrid crashes on text it cannot read and aborts
// on a factor of 0 or less, mid-run. "" where nothing is.
struct PiecewiseRule {
  std::size_t values;
  double lo, hi;
  bool lo_open;
  const char* form;
};

constexpr PiecewiseRule factor_rule{1, 0, 1e6, true, "bytes:factor (bytes from 0, a factor above 0 and at most 1e6)"};

constexpr PiecewiseRule overhead_rule{2, 0, 3600, false,
                                      "bytes:seconds[:seconds a byte] (bytes from 0, each time from 0 to 3600)"};

std::string piecewise_fault(const std::string& text, const PiecewiseRule& rule) {
  std::size_t at = 0;
  do {
    const std::size_t end = std::min(text.find(';', at), text.size());
    const std::string chunk = text.substr(at, end - at);
    std::vector<double> numbers;
    bool read = true;
    for (std::size_t from = 0; read && from <= chunk.size();) {
      const std::size_t colon = std::min(chunk.find(':', from), chunk.size());
      const std::string field = chunk.substr(from, colon - from);
      char* stop = nullptr;
      const double v = std::strtod(field.c_str(), &stop);
      read = !field.empty() && *stop == '\0' && std::isfinite(v);
      numbers.push_back(v);
      from = colon + 1;
    }
    bool fits = read && numbers.size() >= 2 && numbers.size() <= rule.values + 1 && numbers[0] >= 0 &&
                numbers[0] <= 1e18;
    for (std::size_t i = 1; fits && i < numbers.size(); ++i)
      fits = (rule.lo_open ? numbers[i] > rule.lo : numbers[i] >= rule.lo) && numbers[i] <= rule.hi;
    if (!fits) return "'" + chunk + "' is not " + rule.form;
    at = end + 1;
  } while (at < text.size());
  return "";
}

// What is wrong with host h's numbers (its speed, cores and SMPI's overheads of a message), or
// "" when nothing is.
std::string host_fault(const simgrid::s4u::Host* h, const Scales& scales) {
  const std::string what = "host '" + h->get_name() + "'";
  for (unsigned long p = 0; p < h->get_pstate_count(); ++p) {
    const double speed = h->get_pstate_speed(p);
    if (const std::string fault = out_of(speed, least_speed_flops, most_speed_flops, "flop/s"); !fault.empty())
      return what + ": speed " + fault + " (a unit mistyped? e.g. speed=\"1Gf\")";
    if (const std::string fault = out_of(speed * scales.speed, least_speed_flops, most_speed_flops, "flop/s");
        !fault.empty())
      return scaled_fault("--speed-scale", scales.speed, what + ": speed", speed, fault);
  }
  if (h->get_core_count() < 1)
    return what + ": " + std::to_string(h->get_core_count()) + " cores; it needs at least one";
  // SMPI's overheads of a message on this host (read by SMPI, and by engine_messages).
  for (const char* key : {"smpi/os", "smpi/ois", "smpi/or"})
    if (const char* v = h->get_property(key))
      if (const std::string fault = piecewise_fault(v, overhead_rule); !fault.empty())
        return what + ": its " + key + " " + fault;
  if (h->get_core_count() > most_cores)
    return what + ": " + std::to_string(h->get_core_count()) + " cores; wulf takes at most " +
           std::to_string(most_cores) + ", the most ranks it runs (--np)";
  return "";
}

// What is wrong with link l's numbers, or "" when nothing is.
std::string link_fault(const simgrid::s4u::Link* l, const Scales& scales) {
  const std::string what = "link '" + l->get_name() + "'";
  const double bw = l->get_bandwidth(), lat = l->get_latency();
  if (const std::string fault = out_of(bw, least_bandwidth_Bps, most_bandwidth_Bps, "bytes/s"); !fault.empty())
    return what + ": bandwidth " + fault + " (a unit mistyped? e.g. bandwidth=\"125MBps\")";
  if (!std::isfinite(lat)) return what + ": latency " + number_text(lat) + " s; a latency must be a finite number";
  if (lat < 0) return what + ": latency " + number_text(lat) + " s; a latency cannot be negative";
  if (lat > most_latency_s)
    return what + ": latency " + number_text(lat) + " s, more than an hour (a unit mistyped? e.g. latency=\"50us\")";
  if (const std::string fault = out_of(bw * scales.bw, least_bandwidth_Bps, most_bandwidth_Bps, "bytes/s");
      !fault.empty())
    return scaled_fault("--bw-scale", scales.bw, what + ": bandwidth", bw, fault);
  if (lat * scales.lat > most_latency_s)
    return scaled_fault("--lat-scale", scales.lat, what + ": latency", lat,
                        number_text(lat * scales.lat) + " s; wulf takes a latency of at most an hour (3600 s)");
  return "";
}

// One character of a name that no name may hold, as a message shows it ("\x0a", "a space",
// "U+202E"), or "" for a character names may hold. A name is printed one to a line (a
// hostfile, wulf-platform's output, `wulf platform info`) between blanks, so it holds no
// blank, no control character (a line break would forge a line of output, an escape
// sequence recolour the terminal) and no Unicode space or format character (one that
// reverses the text around it). c is a code point; bytes that are not UTF-8 are refused
// before (name_fault).
std::string unfit_character(std::uint32_t c) {
  char text[16];
  if (c == ' ') return "a space";
  if (c < 0x20 || c == 0x7f) {
    std::snprintf(text, sizeof text, "\\x%02x", static_cast<unsigned>(c));
    return text;
  }
  const bool unfit = (c >= 0x80 && c <= 0xa0) || c == 0x1680 || (c >= 0x2000 && c <= 0x200f) ||
                     (c >= 0x2028 && c <= 0x202f) || (c >= 0x205f && c <= 0x206f) || c == 0x3000 || c == 0xfeff;
  if (!unfit) return "";
  std::snprintf(text, sizeof text, "U+%04X", static_cast<unsigned>(c));
  return text;
}

// name as a message shows it: printable ASCII as it is, every other byte \xNN.
std::string shown(const std::string& name) {
  std::string out;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char text[8];
      std::snprintf(text, sizeof text, "\\x%02x", static_cast<unsigned>(c));
      out += text;
    }
  }
  return out;
}

// What makes name unfit to be printed as one word of a line, or "": empty, not UTF-8, or
// holding a character no name may hold (unfit_character).
std::string name_fault(const std::string& name) {
  if (name.empty()) return "the name is empty";
  for (std::size_t i = 0; i < name.size();) {
    const auto lead = static_cast<unsigned char>(name[i]);
    const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
    std::uint32_t c = length == 1 ? lead : length == 2 ? lead & 0x1f : length == 3 ? lead & 0x0f : lead & 0x07;
    bool utf8 = length > 0 && i + length <= name.size();
    for (std::size_t k = 1; utf8 && k < length; ++k) {
      const auto next = static_cast<unsigned char>(name[i + k]);
      utf8 = (next & 0xc0) == 0x80;
      c = (c << 6) | (next & 0x3f);
    }
    if (!utf8) {
      char text[8];
      std::snprintf(text, sizeof text, "\\x%02x", static_cast<unsigned>(lead));
      return std::string("the name is not UTF-8 text (byte ") + text + ")";
    }
    if (const std::string unfit = unfit_character(c); !unfit.empty())
      return "the name holds " + unfit + "; a name may hold no blank, control or format character (wulf prints "
             "names one to a line)";
    i += length;
  }
  return "";
}

// The first name of the platform unfit to print (name_fault), as "host 'h\x0aevil0' (zone
// c): ...", or "": every zone's, host's and link's, and the wulf:group, wulf:node and
// wulf:nics of a host, which `hosts` prints beside its name.
std::string names_fault(const simgrid::s4u::Engine& e, const std::vector<simgrid::s4u::Host*>& hosts) {
  std::vector<const simgrid::s4u::NetZone*> zones{e.get_netzone_root()};
  for (std::size_t i = 0; i < zones.size(); ++i)
    for (const simgrid::s4u::NetZone* c : zones[i]->get_children()) zones.push_back(c);
  for (const simgrid::s4u::NetZone* z : zones)
    if (const std::string fault = name_fault(z->get_name()); !fault.empty())
      return "zone '" + shown(z->get_name()) + "': " + fault;
  for (const simgrid::s4u::Host* h : hosts) {
    const std::string where = " (zone " + shown(h->get_englobing_zone()->get_name()) + ")";
    if (const std::string fault = name_fault(h->get_name()); !fault.empty())
      return "host '" + shown(h->get_name()) + "'" + where + ": " + fault;
    for (const char* key : {"wulf:group", "wulf:node", "wulf:nics"})
      if (const char* value = h->get_property(key); value && *value)
        if (const std::string fault = name_fault(value); !fault.empty())
          return "host '" + h->get_name() + "': its " + key + " '" + shown(value) + "': " + fault;
  }
  for (const simgrid::s4u::Link* l : e.get_all_links())
    if (const std::string fault = name_fault(l->get_name()); !fault.empty())
      return "link '" + shown(l->get_name()) + "': " + fault;
  return "";
}

// A <cluster> that SimGrid made without hosts, as "zone 'c' is a cluster without hosts ...",
// or "". SimGrid reads radical="3-0" as the numbers from 3 up to 0, which are none, and says
// nothing.
std::string empty_cluster(const simgrid::s4u::NetZone* z) {
  if (routes_by_construction(z) && z->get_all_hosts().empty())
    return "zone '" + z->get_name() +
           "' is a cluster without hosts: its radical names none (a range is FIRST-LAST with FIRST <= LAST, e.g. "
           "radical=\"0-3\")";
  for (const simgrid::s4u::NetZone* c : z->get_children())
    if (std::string fault = empty_cluster(c); !fault.empty()) return fault;
  return "";
}

// What a platform's <config> may set, by key (the first rule whose prefix the key starts
// with): the model's parameters (null `why`), or why not. SimGrid applies a <config> only to
// the keys its command line left alone, so a key that smpirun or wulf sets there would be
// ignored without a word; the contexts' keys crash the ranks (several threads: SMPI's ranks
// are not thread-safe, SimGrid aborts in malloc; a small stack: a segmentation fault).
struct ConfigRule {
  const char* prefix;
  const char* why;
};

constexpr const char* solver_why =
    "wulf runs SimGrid's max-min solver, the one its results were checked with (BMF, for parallel tasks, aborts "
    "mid-run where it finds no allocation)";

constexpr ConfigRule config_rules[] = {
    {"network/model", "smpirun sets it (SMPI's model, whose factors a platform sets by smpi/bw-factor and "
                      "smpi/lat-factor), so the platform's would be ignored"},
    {"network/solver", solver_why},
    {"cpu/solver", solver_why},
    {"host/solver", solver_why},
    {"bmf/", solver_why},
    {"host/model", "SMPI's network model runs inside SimGrid's default host model (ptask_L07 replaces it, for "
                   "parallel tasks)"},
    {"network/", nullptr},
    {"cpu/", nullptr},
    {"disk/", nullptr},
    {"maxmin/", nullptr},
    {"smpi/bw-factor", nullptr},
    {"smpi/lat-factor", nullptr},
    {"smpi/IB-penalty-factors", "only SimGrid's IB network model reads it, and smpirun sets SMPI's, so it would be "
                                "ignored"},
    {"surf/precision", "smpirun sets it, so the platform's would be ignored"},
    {"smpi/async-small-thresh", "wulf sets SMPI's eager limit by --eager-limit"},
    {"smpi/send-is-detached-thresh", "wulf sets SMPI's eager limit by --eager-limit"},
    {"smpi/simulate-computation", "wulf charges the compute itself (by the hosts' speed), and sets it off"},
    {"smpi/host-speed", "wulf charges the compute itself (by the hosts' speed), and sets it off"},
    {"smpi/wtime", "wulf sets it (reading the clock costs nothing)"},
    {"smpi/test", "wulf sets it (a progress call costs nothing)"},
    {"contexts/", "the ranks run in SimGrid's default contexts: with several threads SMPI's ranks crash, with "
                  "a smaller stack they overflow it"},
    {"", "it is not part of the platform's model (SimGrid's tracing, plug-ins, debugging and SMPI's run options): "
         "wulf runs without it"},
};

// The keys SimGrid 3.32 declares in this program (a <config> of another key is refused by
// SimGrid itself as a bad key).
constexpr const char* declared_config_keys[] = {
    "bmf/max-iterations", "bmf/precision", "cmonkey/host", "cmonkey/link", "cmonkey/tell", "cmonkey/time",
    "contexts/factory", "contexts/guard-size", "contexts/nthreads", "contexts/stack-size", "contexts/synchro",
    "cpu/maxmin-selective-update", "cpu/model", "cpu/optim", "cpu/solver", "debug/breakpoint", "debug/clean-atexit",
    "debug/verbose-exit", "disk/model", "disk/solver", "exception/cutpath", "help-nostop", "host/model", "host/solver",
    "maxmin/concurrency-limit", "maxmin/precision", "model-check/replay", "model-check/timeout", "network/TCP-gamma",
    "network/bandwidth-factor", "network/crosstraffic", "network/latency-factor", "network/loopback-bw",
    "network/loopback-lat", "network/maxmin-selective-update", "network/model", "network/optim", "network/solver",
    "network/weight-S", "ns3/TcpModel", "ns3/seed", "path", "plugin", "plugin/dvfs/governor", "plugin/dvfs/max-pstate",
    "plugin/dvfs/min-pstate", "plugin/dvfs/sampling-rate", "smpi/IB-penalty-factors", "smpi/async-small-thresh",
    "smpi/auto-shared-malloc-thresh", "smpi/bw-factor", "smpi/comp-adjustment-file", "smpi/cpu-threshold",
    "smpi/display-allocs", "smpi/errors-are-fatal", "smpi/grow-injected-times", "smpi/host-speed", "smpi/hostfile",
    "smpi/init", "smpi/iprobe", "smpi/iprobe-cpu-usage", "smpi/lat-factor", "smpi/list-leaks", "smpi/map", "smpi/np",
    "smpi/pedantic", "smpi/replay", "smpi/send-is-detached-thresh", "smpi/shared-malloc", "smpi/simulate-computation",
    "smpi/test", "smpi/trace-call-location", "smpi/trace-call-use-absolute-path", "smpi/wtime", "surf/precision",
    "tracing", "tracing/actor", "tracing/basic", "tracing/categorized", "tracing/comment", "tracing/comment-file",
    "tracing/disable-destroy", "tracing/disable_link", "tracing/disable_power", "tracing/filename",
    "tracing/platform", "tracing/platform/topology", "tracing/precision", "tracing/smpi", "tracing/smpi/computing",
    "tracing/smpi/display-sizes", "tracing/smpi/format", "tracing/smpi/format/ti-one-file", "tracing/smpi/group",
    "tracing/smpi/internals", "tracing/smpi/sleeping", "tracing/uncategorized", "tracing/vm"};

// The model's numbers a <config> may set, each in a range SimGrid runs with: outside it
// SimGrid crashes (maxmin/precision 0), or takes it without a word for a model no network
// has (a negative TCP window).
struct ConfigRange {
  const char* key;
  double lo, hi;
  bool lo_open;  // the range excludes lo
  bool whole;    // an int option
};

constexpr ConfigRange config_ranges[] = {
    {"network/TCP-gamma", 0, 1e15, false, false},         {"network/weight-S", 0, 1e15, false, false},
    {"network/latency-factor", 0, 1e6, true, false},      {"network/bandwidth-factor", 0, 1e6, true, false},
    {"network/loopback-lat", 0, 3600, false, false},      {"maxmin/precision", 0, 0.01, true, false},
    {"maxmin/concurrency-limit", -1, 1e9, false, true}};

// Exits 2 naming the first key the platform's <config> set that a wulf run cannot take, or
// set to a value out of its range.
int check_config() {
  for (const char* key : declared_config_keys) {
    bool set = false;
    try {
      set = !simgrid::config::is_default(key);
    } catch (const std::exception&) {  // not declared in this SimGrid: nothing set it
      continue;
    }
    // A <config> of network/model or cpu/model makes host/model "compound": that is theirs.
    if (!set || (std::strcmp(key, "host/model") == 0 && simgrid::config::get_value<std::string>(key) == "compound"))
      continue;
    const std::string k = key;
    const ConfigRule* rule = std::find_if(std::begin(config_rules), std::end(config_rules),
                                          [&](const ConfigRule& r) { return k.rfind(r.prefix, 0) == 0; });
    if (rule->why) {
      std::fprintf(stderr, "its <config> sets %s, which a wulf run cannot take: %s\n", key, rule->why);
      return 2;
    }
    if (k == "smpi/bw-factor" || k == "smpi/lat-factor")
      if (const std::string fault = piecewise_fault(simgrid::config::get_value<std::string>(key), factor_rule);
          !fault.empty()) {
        std::fprintf(stderr, "its <config> sets %s: %s\n", key, fault.c_str());
        return 2;
      }
    for (const ConfigRange& r : config_ranges) {
      if (k != r.key) continue;
      const double v = r.whole ? simgrid::config::get_value<int>(key) : simgrid::config::get_value<double>(key);
      if (!(r.lo_open ? v > r.lo : v >= r.lo) || !(v <= r.hi)) {
        std::fprintf(stderr, "its <config> sets %s to %.17g: it must be %s %.17g and at most %.17g\n", key, v,
                     r.lo_open ? "above" : "at least", r.lo, r.hi);
        return 2;
      }
    }
  }
  return 0;
}

// Exits 2 naming the first fault of the platform: a name unfit to print, a cluster or the
// whole platform without hosts, a host or link whose numbers no machine has (see
// least_speed_flops), as the file gives them or once scales multiply them.
int check_platform(const simgrid::s4u::Engine& e, const Scales& scales) {
  const std::vector<simgrid::s4u::Host*> hosts = declared_hosts(e);
  std::string fault = names_fault(e, hosts);
  if (fault.empty()) fault = empty_cluster(e.get_netzone_root());
  if (fault.empty() && hosts.empty()) fault = "it has no hosts (no <host> and no <cluster>)";
  for (std::size_t i = 0; fault.empty() && i < hosts.size(); ++i) fault = host_fault(hosts[i], scales);
  for (const simgrid::s4u::Link* l : e.get_all_links())
    if (fault.empty()) fault = link_fault(l, scales);
  if (fault.empty()) return 0;
  std::fprintf(stderr, "%s\n", fault.c_str());
  return 2;
}

// Runs work (which looks routes up with route(), above) in a child process and returns its
// exit code. Should SimGrid stop the child, or work return 2 having set look_up->empty, prints
// the pair it was looking up in one line and returns 2.
int guarded(const std::function<int()>& work) {
  void* shared = ::mmap(nullptr, sizeof(LookUp), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    std::fprintf(stderr, "cannot share memory with a process to look routes up: %s\n", std::strerror(errno));
    return 2;
  }
  look_up = new (shared) LookUp;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = ::fork();
  if (child == 0) {
    // What SimGrid logs as it stops (a backtrace) is not the user's message.
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDERR_FILENO);
    const int code = work();
    std::fflush(stdout);
    _exit(code);
  }
  int status = 0;
  const bool waited = child > 0 && ::waitpid(child, &status, 0) == child;
  const LookUp seen = *look_up;
  ::munmap(shared, sizeof(LookUp));
  look_up = nullptr;
  if (child < 0 || !waited) {
    std::fprintf(stderr, "cannot start a process to look routes up: %s\n", std::strerror(errno));
    return 2;
  }
  if (WIFEXITED(status) && !(WEXITSTATUS(status) == 2 && seen.empty)) return WEXITSTATUS(status);
  if (!seen.from || !seen.to) {
    std::fprintf(stderr, "SimGrid stopped while reading the platform's routes\n");
    return 2;
  }
  std::fprintf(stderr, "no route from host '%s' to host '%s'%s\n", seen.from->get_cname(), seen.to->get_cname(),
               seen.empty ? "" : " (SimGrid stops looking it up: two zones with no route between them?)");
  return 2;
}

// Exits 2 naming the first pair of hosts with no route between them: a Full zone without a
// <route> for the pair gives an empty route, which SimGrid does not refuse; zones without a
// route between them stop SimGrid (guarded). Two hosts of one cluster are not asked: a
// 4 096-host cluster would take 16 million route look-ups.
int check_routes(const std::vector<simgrid::s4u::Host*>& hosts) {
  const std::size_t k = hosts.size();
  std::vector<const simgrid::s4u::NetZone*> cluster(k, nullptr);  // hosts[i]'s zone, if such
  for (std::size_t i = 0; i < k; ++i)
    if (const simgrid::s4u::NetZone* z = hosts[i]->get_englobing_zone(); routes_by_construction(z)) cluster[i] = z;
  return guarded([&] {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        if (i == j || (cluster[i] && cluster[i] == cluster[j])) continue;
        const Route r = route(hosts[i], hosts[j]);
        if (r.links.empty() && r.latency == 0) {
          look_up->empty = true;  // guarded names the pair
          return 2;
        }
      }
    return 0;
  });
}

int check_routes(const std::vector<simgrid::s4u::Host*>& hosts, const HostPairs& pairs) {
  return guarded([&] {
    for (const auto& [i, j] : pairs) {
      const Route r = route(hosts[i], hosts[j]);
      if (r.links.empty() && r.latency == 0) {
        look_up->empty = true;  // guarded names the pair
        return 2;
      }
    }
    return 0;
  });
}

}  // namespace wulf_platform
