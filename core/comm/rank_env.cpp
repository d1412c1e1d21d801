#include "comm/rank_env.hpp"

#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/proc.hpp"

#include <cstdlib>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace wulf {

namespace {

// Appends one line to the front end's status file (WULF_STATUS_FILE), which the front end
// made: opened without O_CREAT and without following a link, so that nothing else can be
// put in its place. Appends of one short line do not interleave.
void append_status_line(std::string line) {
  const char* path = std::getenv("WULF_STATUS_FILE");
  if (!path || !*path) return;
  for (char& c : line)
    if (c == '\n') c = ' ';
  line += '\n';
  const int fd = ::open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t written = ::write(fd, line.data(), line.size());
  ::close(fd);
}

}  // namespace

void report_rank_status(int code, int rank, const std::string& message) {
  append_status_line(std::to_string(code) + " " + std::to_string(rank) + " " + message);
}

void report_rank_started(int rank) {
  append_status_line("started " + std::to_string(rank) + " " + std::to_string(::getpid()) + " " + host_name());
}

Json testbed_description() {
  const char* path = std::getenv("WULF_TESTBED_FILE");
  if (!path || !*path) return Json();
  return parse_json(read_text_file(path, "WULF_TESTBED_FILE"), path);
}

TestbedRankFacts testbed_rank_facts(const Json& description, int rank) {
  TestbedRankFacts facts;
  const Json& ranks = description.at("rank_host");
  if (rank < 0 || static_cast<std::size_t>(rank) >= ranks.size())
    throw InputError("the testbed's description has no rank " + std::to_string(rank));
  const Json& host = description.at("hosts").at(ranks[static_cast<std::size_t>(rank)].get<std::size_t>());
  facts.speed_flops = host.at("speed_flops").get<double>();
  facts.collective_overhead_s = host.at("collective_overhead_s").get<double>();
  facts.device = host.value("device", "");
  if (const std::string e = host.value("efficiency", ""); !e.empty())
    facts.efficiency = parse_kind_efficiency(e, "the testbed's host " + host.at("name").get<std::string>() +
                                                    ": wulf:efficiency");
  return facts;
}

}  // namespace wulf
