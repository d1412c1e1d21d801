// What goes wrong, and how wulf says so: the error for bad input and the exit codes.
#pragma once

#include <stdexcept>

namespace wulf {

// Thrown for any fault in user input: a missing or malformed file, an unknown name, a bad
// size. The message names the input and says what is wrong; the command prints it and
// exits non-zero before any training starts.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit codes of the command.
enum ExitCode : int {
  exit_ok = 0,
  exit_internal = 1,  // a bug or the machine (out of memory, ...)
  exit_input = 2,     // bad options, files or data: nothing was run
  exit_diverged = 3,  // training diverged or stopped on a fault (stopped_on_fault); the record says where
};

}  // namespace wulf
