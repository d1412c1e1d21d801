// What goes wrong, and how wulf says so: the error for bad input and the exit codes.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace wulf {

// text with every control character but the line break and the tab written as \xNN (ESC,
// NUL, CR, DEL, and the C1 controls U+0080 to U+009F), and every byte that is not part of
// well-formed UTF-8: what a message quotes from a file reaches a terminal as plain text, while
// names in UTF-8 show as written. The one rule of everything wulf prints (util/text.hpp,
// SafeOstream).
std::string safe_to_print(std::string_view text);

// Thrown for any fault in user input: a missing or malformed file, an unknown name, a bad
// size. The message names the input and says what is wrong; the command prints it and
// exits non-zero before any training starts.
// Its message is safe to print (safe_to_print): text it quotes from a file cannot reach the
// terminal as an escape sequence, nor cut the message short with a NUL.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(safe_to_print(message)) {}
};

// Exit codes of the command.
enum ExitCode : int {
  exit_ok = 0,
  exit_internal = 1,  // a bug or the machine (out of memory, ...)
  exit_input = 2,     // bad options, files or data: nothing was run
  exit_diverged = 3,  // training diverged or stopped on a fault (stopped_on_fault); the record says where
  exit_timeout = 4,   // a run went past --timeout: its processes were ended, it left no record
  // A signal that ended wulf gives 128 + the signal: 129 SIGHUP, 130 SIGINT, 143 SIGTERM.
};

// Thrown when a signal (SIGINT, SIGTERM, SIGHUP) asked wulf to stop, after the children it
// waited for were ended (engine/process.hpp). Not a std::exception, so that no handler of
// errors on the way takes it for one: it reaches the command's top with the stack unwound
// (every temporary file removed), and wulf exits 128 + signal with the message.
struct Interrupted {
  int signal = 0;
  std::string message;  // "interrupted (SIGTERM): ended mpirun's process group 4242"
};

// Thrown when a run went past its time limit (--timeout), after its processes were ended;
// wulf exits exit_timeout with the message. Not a std::exception, as Interrupted.
struct TimedOut {
  std::string message;  // "timed out after 5 s (--timeout): ..."
};

}  // namespace wulf
