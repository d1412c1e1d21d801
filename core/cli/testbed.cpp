// `wulf testbed check` and `wulf testbed clean`: whether this machine can build the emulated
// cluster of --engine testbed (engine/testbed.hpp), and removing what killed runs left; `wulf
// testbed run` (cli/testbed_run.cpp): any program on it.
#include "cli/cli.hpp"

#include "engine/delay_link.hpp"
#include "engine/testbed.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <iostream>
#include <optional>
#include <ostream>

namespace wulf {

namespace {

double seconds_of(const std::string& text) {
  const std::optional<double> seconds = parse_number(text);
  if (!seconds) throw InputError("wulf testbed delay: '" + text + "' is no number of seconds");
  return *seconds;  // its range is start_delay_link's to check
}

}  // namespace

int testbed_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string verb = args.empty() ? "" : args[0];
  if (verb == "--help" || verb == "-h") {
    out << "usage: wulf testbed check   whether this machine can run --engine testbed (exit 0), or why not (exit 2)\n"
           "       wulf testbed clean   remove the namespaces, processes and temporary files of testbed runs that "
           "were killed\n"
           "       wulf testbed run --platform FILE.xml --np N [options] -- PROGRAM [ARGS...]\n"
           "                            run any program on the platform's emulated cluster, a process per rank with "
           "torchrun's\n"
           "                            environment, or under mpirun (wulf testbed run --help)\n";
    return exit_ok;
  }
  // The guardian of a run (engine/testbed.hpp): waits for the end of its standard input,
  // then removes what the run left. Started by the run, not by people.
  if (verb == "guard" && args.size() == 2 && is_owner_tag(args[1])) {
    char buf[256];
    while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
    }
    remove_testbed_namespaces(args[1]);
    return exit_ok;
  }
  // A link's latency (engine/delay_link.hpp): started by a run inside a namespace of its
  // testbed, returns once the wire forwards.
  if (verb == "delay" && args.size() == 5) {
    start_delay_link({args[1], args[2], seconds_of(args[3]), seconds_of(args[4])});
    return exit_ok;
  }
  if (verb == "run") return testbed_run_command({args.begin() + 1, args.end()}, out, err);
  if (args.size() != 1 || (verb != "check" && verb != "clean")) {
    err << "usage: wulf testbed check | clean | run (wulf testbed --help)\n";
    return exit_input;
  }
  if (verb == "clean") {
    const int removed = remove_testbed_leftovers();
    remove_temp_leftovers();
    out << "wulf testbed: removed " << removed << " namespace" << (removed == 1 ? "" : "s")
        << " of testbed runs that are gone\n";
    return exit_ok;
  }
  const std::string why = testbed_unavailable();
  if (!why.empty()) {
    out << "wulf testbed: this machine cannot build the testbed: " << why << "\n";
    return exit_input;
  }
  out << "wulf testbed: this machine can build the testbed (namespaces, veth, tbf)\n";
  return exit_ok;
}

}  // namespace wulf
