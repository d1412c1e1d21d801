// Starting other programs: mpirun, smpirun and wulf's own helpers.
#pragma once

#include <string>
#include <vector>

namespace wulf {

// The full path of program found on PATH (or program itself if it holds a '/' and is
// executable); empty if there is none.
std::string find_program(const std::string& program);

// Runs argv[0] with argv and waits for it. Returns its exit code; a program killed by a
// signal returns 128 + the signal. Throws std::runtime_error if it cannot be started.
int run_program(const std::vector<std::string>& argv);

// The same, with its standard output and error captured instead of shown.
int run_program_captured(const std::vector<std::string>& argv, std::string& out, std::string& err);

}  // namespace wulf
