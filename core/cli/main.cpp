#include "cli/launcher.hpp"
#include "engine/process.hpp"

#include <iostream>

int main(int argc, char** argv) {
  // SIGINT, SIGTERM and SIGHUP end wulf's children and unwind wulf (engine/process.hpp).
  wulf::install_signal_handlers();
  // A sweep command started by a user's mpirun or srun shares its runs with the launcher's
  // other processes (cli/launcher.hpp); any other command runs as it is.
  const int code =
      wulf::run_cli_in_launcher(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
  // A signal that came while wulf ran no child and reached no check ends it all the same.
  if (const int s = wulf::pending_signal(); s != 0 && code != 128 + s) {
    std::cerr << "wulf: interrupted (" << wulf::signal_name(s) << ")\n";
    return 128 + s;
  }
  return code;
}
