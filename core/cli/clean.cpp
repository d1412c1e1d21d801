// `wulf clean`: removing what runs killed by SIGKILL left behind, and nothing of a run that
// still goes.
#include "cli/cli.hpp"

#include "engine/testbed.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "engine/process.hpp"

#include <filesystem>
#include <ostream>

#include <unistd.h>

namespace wulf {

int clean_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    out << "usage: wulf clean   remove what killed runs left: their temporary files and folders in "
        << temp_folder().string()
        << " (wulf-*-PID.START-*, whose process is gone) and, as root, their testbed namespaces\n";
    return exit_ok;
  }
  if (!args.empty()) {
    err << "usage: wulf clean\n";
    return exit_input;
  }
  const int files = remove_temp_leftovers();
  // The testbed's namespaces: only root makes them, with ip.
  const int namespaces = ::geteuid() == 0 && !find_program("ip").empty() ? remove_testbed_leftovers() : 0;
  out << "wulf clean: removed " << files << " temporary file" << (files == 1 ? "" : "s") << " or folder"
      << (files == 1 ? "" : "s") << " and " << namespaces << " testbed namespace" << (namespaces == 1 ? "" : "s")
      << " of runs that are gone\n";
  return exit_ok;
}

}  // namespace wulf
