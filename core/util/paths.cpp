#include "util/paths.hpp"

#include "util/errors.hpp"

#include <wulf/build_info.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include <unistd.h>

namespace wulf {
namespace {

namespace fs = std::filesystem;

// The file of the wulf program this code runs in, symbolic links resolved (so a link to
// bin/wulf elsewhere on PATH still finds the installed tree). The ranks of a simulation run
// inside SimGrid's smpimain, which is not wulf's: they look nothing up here, the front end
// hands them every file by its path (cli/train.cpp).
fs::path program_file() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fs::path(".") / "unknown";
  return exe;
}

// The folders of the installed tree that holds the running program.
struct InstalledTree {
  fs::path bin, libexec, data;
};

InstalledTree installed_tree() {
  const fs::path program = program_file();
  // wulf is in bin/, the programs it starts in libexec/wulf/.
  const fs::path bin = program.filename() == "wulf" ? program.parent_path()
                                                    : (program.parent_path() / build::bin_from_libexec).lexically_normal();
  return {bin, (bin / build::libexec_from_bin).lexically_normal(), (bin / build::data_from_bin).lexically_normal()};
}

}  // namespace

bool running_from_build_tree() {
  std::error_code ec;
  const fs::path build = fs::weakly_canonical(build::binary_dir, ec);
  if (ec) return false;
  const fs::path here = program_file().parent_path();
  return std::mismatch(build.begin(), build.end(), here.begin(), here.end()).first == build.end();
}

std::string helper_program(const std::string& name) {
  const bool build_tree = running_from_build_tree();
  // In the build tree every program is built into the build folder, which the tests reach
  // from build/tests/.
  const std::vector<std::string> dirs =
      build_tree ? std::vector<std::string>{program_file().parent_path().string(), build::binary_dir}
                 : std::vector<std::string>{installed_tree().libexec.string(), installed_tree().bin.string()};
  for (const std::string& dir : dirs)
    if (::access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  if (build_tree) throw InputError(name + " is not built (looked beside wulf and in " + build::binary_dir + ")");
  throw InputError(name + " is not installed (looked in " + dirs[0] + " and " + dirs[1] + ")");
}

std::string platforms_dir() {
  if (running_from_build_tree()) return std::string(build::source_dir) + "/platforms";
  return (installed_tree().data / "platforms").string();
}

std::string plot_script() {
  if (running_from_build_tree()) return std::string(build::source_dir) + "/core/cli/wulf_plot.py";
  return (installed_tree().data / "wulf_plot.py").string();
}

std::string generated_platforms_dir() {
  if (running_from_build_tree()) return std::string(build::source_dir) + "/platforms/generated";
  return "platforms/generated";
}

}  // namespace wulf
