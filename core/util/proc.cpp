#include "util/proc.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include <unistd.h>

namespace wulf {

std::optional<Proc> read_proc(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(file, line)) return std::nullopt;
  const std::size_t close = line.rfind(')');  // the name may hold blanks and parentheses
  if (close == std::string::npos || close + 2 > line.size()) return std::nullopt;
  std::istringstream fields(line.substr(close + 2));
  Proc p;
  p.pid = pid;
  fields >> p.state >> p.ppid >> p.pgrp >> p.sid;
  std::string skipped;
  for (int field = 7; field < 22; ++field) fields >> skipped;  // tty_nr .. itrealvalue
  fields >> p.start;
  if (!fields) return std::nullopt;
  return p;
}

std::string owner_tag() {
  const auto me = read_proc(::getpid());
  return fmt::format("{}.{}", ::getpid(), me ? me->start : 0);
}

bool is_owner_tag(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return false;
  const std::string_view pid = text.substr(0, dot), start = text.substr(dot + 1);
  const auto digits = [](std::string_view s, std::size_t most) {
    return !s.empty() && s.size() <= most && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return digits(pid, 9) && digits(start, 19);
}

bool owner_alive(std::string_view tag) {
  if (!is_owner_tag(tag)) return false;
  const std::size_t dot = tag.find('.');
  const auto p = read_proc(static_cast<pid_t>(std::stol(std::string(tag.substr(0, dot)))));
  return p && p->state != 'Z' && std::to_string(p->start) == tag.substr(dot + 1);
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

}  // namespace wulf
