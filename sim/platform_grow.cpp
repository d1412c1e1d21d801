// wulf-platform grow: a platform of one homogeneous cluster, written again with more hosts.
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

// What zone id is, when not a flat cluster, from the names SimGrid 3.32 gives its links (its zone
// types are not visible outside the library): a fat tree's are link_from_<level>_..., a
// torus's <id>_link_from_<a>_to_<b>, a dragonfly's ..._link_in_group_... and
// local_link_from_router_...; a flat cluster's <id>_link_<n>.
std::string topology_of(const simgrid::s4u::Engine& e, const std::string& id) {
  for (const simgrid::s4u::Link* l : e.get_all_links()) {
    const std::string& name = l->get_name();
    if (name.find("_link_in_group_") != std::string::npos || name.rfind("local_link_from_router_", 0) == 0)
      return "cluster " + id + " is a dragonfly (topology=\"DRAGONFLY\")";
    if (name.rfind(id + "_link_from_", 0) == 0) return "cluster " + id + " is a torus (topology=\"TORUS\")";
    if (name.rfind("link_from_", 0) == 0) return "cluster " + id + " is a fat tree (topology=\"FAT_TREE\")";
  }
  return "zone " + id + " is not a <cluster> (it has no host links named " + id + "_link_0)";
}

// s as the value of an XML attribute between double quotes: names come from the user's
// file and may hold & < > " ' (SimGrid reads &amp; and &quot; in its own files), and a tab
// or a line break, which a parser would turn into a space unless written as a reference.
std::string attribute(const std::string& s) {
  std::string out;
  for (const char c : s) switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += "&#9;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      default: out += c;
    }
  return out;
}

// s inside an XML comment, which may not hold "--".
std::string comment_text(const std::string& s) {
  std::string out;
  for (const char c : s) out += c == '-' && !out.empty() && out.back() == '-' ? std::string(" -") : std::string(1, c);
  return out;
}

// x in 17 significant digits, which SimGrid reads back to the same double.
std::string exact(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// Writes text to path, every step checked; on a failure (a full disk), says so, removes
// what was written if path is a regular file (a half platform must not be loaded; a device
// such as /dev/full stays) and returns false.
bool write_whole(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "--grow: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (written && closed) return true;
  std::fprintf(stderr, "--grow: writing %s failed: %s\n", path.c_str(), std::strerror(written ? errno : write_errno));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) std::remove(path.c_str());
  return false;
}

// The cluster of a platform made of one <cluster> (hosts alike, one zone), rewritten with n
// hosts from what SimGrid loaded: speed, cores, host links, backbone, properties, the
// SMPI factors. Exits 2 naming what makes the platform no such cluster.
int grow(const simgrid::s4u::Engine& e, unsigned long n, const std::string& out_path) {
  const std::vector<simgrid::s4u::Host*> hosts = e.get_all_hosts();
  const simgrid::s4u::NetZone* zone = hosts.front()->get_englobing_zone();
  const std::string id = zone->get_name();
  for (const simgrid::s4u::Host* h : hosts)
    if (h->get_englobing_zone() != zone || h->get_speed() != hosts[0]->get_speed() ||
        h->get_core_count() != hosts[0]->get_core_count()) {
      std::fprintf(stderr, "--grow: the platform is not one cluster of like hosts (%s differs from %s)\n",
                   h->get_cname(), hosts[0]->get_cname());
      return 2;
    }
  // Host names are prefix + number + suffix.
  const std::string first = hosts[0]->get_name();
  const std::size_t digit = first.find_first_of("0123456789");
  if (digit == std::string::npos) {
    std::fprintf(stderr, "--grow: host %s is not named prefix-number-suffix\n", first.c_str());
    return 2;
  }
  const std::size_t after = first.find_first_not_of("0123456789", digit);
  const std::string prefix = first.substr(0, digit), suffix = after == std::string::npos ? "" : first.substr(after);
  const simgrid::s4u::Link* split_up = e.link_by_name_or_null(id + "_link_0_UP");
  const simgrid::s4u::Link* up = split_up ? split_up : e.link_by_name_or_null(id + "_link_0");
  const simgrid::s4u::Link* backbone = e.link_by_name_or_null(id + "_backbone");
  if (!up) {
    std::fprintf(stderr,
                 "--grow: %s; --grow rewrites only a flat cluster (one <cluster> of like hosts, each "
                 "with its own link, and a backbone or none): for more hosts, change the platform file (a fat "
                 "tree's, torus's or dragonfly's topo_parameters fix its host count)\n",
                 topology_of(e, id).c_str());
    return 2;
  }
  std::string xml = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n";
  xml += "<!-- What-if, written by wulf-platform grow: cluster " + comment_text(id) + " with " + std::to_string(n) +
         " hosts instead of " + std::to_string(hosts.size()) +
         ",\n     every other number as SimGrid loaded it. -->\n<platform version=\"4.1\">\n  <config>\n";
  for (const char* key : {"smpi/bw-factor", "smpi/lat-factor"})
    xml += "    <prop id=\"" + std::string(key) + "\" value=\"" +
           attribute(simgrid::config::get_value<std::string>(key)) + "\"/>\n";
  xml += "  </config>\n  <zone id=\"" + attribute(id + "_whatif") + "\" routing=\"Full\">\n";
  xml += "    <cluster id=\"" + attribute(id) + "\" prefix=\"" + attribute(prefix) + "\" suffix=\"" + attribute(suffix) +
         "\" radical=\"0-" + std::to_string(n - 1) + "\" speed=\"" + exact(hosts[0]->get_speed()) + "f\" core=\"" +
         std::to_string(hosts[0]->get_core_count()) + "\"\n             bw=\"" + exact(up->get_bandwidth()) +
         "Bps\" lat=\"" + exact(up->get_latency()) + "s\" sharing_policy=\"" + (split_up ? "SPLITDUPLEX" : "SHARED") + "\"";
  if (backbone)
    xml += " bb_bw=\"" + exact(backbone->get_bandwidth()) + "Bps\" bb_lat=\"" + exact(backbone->get_latency()) +
           "s\" bb_sharing_policy=\"" +
           (backbone->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::FATPIPE ? "FATPIPE" : "SHARED") + "\"";
  xml += ">\n";
  if (const auto* props = zone->get_properties())
    for (const auto& [key, value] : *props)
      xml += "      <prop id=\"" + attribute(key) + "\" value=\"" + attribute(value) + "\"/>\n";
  xml += "    </cluster>\n  </zone>\n</platform>\n";
  return write_whole(out_path, xml) ? 0 : 2;
}

}  // namespace wulf_platform
