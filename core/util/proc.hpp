// What /proc says of a process, and the owner tags made from it: what every wulf process
// (the front end and each rank) may ask of itself or of another, without starting or
// ending anything (that is engine/process.hpp's, the front end's).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace wulf {

// A process as /proc/PID/stat shows it.
struct Proc {
  pid_t pid = 0, ppid = 0, pgrp = 0, sid = 0;
  char state = '?';
  unsigned long long start = 0;  // clock ticks after boot: tells a pid's processes apart
};
// Process pid, or nothing where /proc has no such process (or one that cannot be read).
std::optional<Proc> read_proc(pid_t pid);

// What this process owns outside itself carries its owner tag, "<pid>.<start time>" (the
// start in clock ticks after boot, which tells a pid's processes apart): its temporary files
// and folders (util/files.hpp) and the testbed's namespaces. Whatever carries the tag of a
// process that is gone was left by a killed run and may be removed; nothing else may be.
std::string owner_tag();
// Whether text is an owner tag: "<pid>.<start>", both whole numbers.
bool is_owner_tag(std::string_view text);
// Whether the process of an owner tag runs: the same pid, started at the same time (a zombie
// does not run). Text that is no owner tag names no process that runs.
bool owner_alive(std::string_view tag);

// This machine's host name ("?" where it cannot be read).
std::string host_name();

}  // namespace wulf
