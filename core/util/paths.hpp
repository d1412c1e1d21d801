// Where wulf finds its own programs and data files, in one place.
//
// An installed wulf (cmake --install build --prefix P) finds everything relative to its own
// executable, so the installed tree can be moved or copied as a whole:
//   P/bin/wulf
//   P/libexec/wulf/   wulf-rank-real, wulf-rank-sim (the shared object smpirun loads), wulf-platform
//   P/share/wulf/     platforms/ (the platform files, their profiles in profiles/), wulf_plot.py
// (the folder names are GNUInstallDirs', as configured). It never looks in the build or
// source tree, so a piece missing from the install is an error, not a silent fallback.
//
// A program run from its build tree (build/wulf, the tests, the benchmarks) finds the
// programs beside itself or in the build folder, and the data in the source tree.
#pragma once

#include <string>

namespace wulf {

// Whether the running program is one of the build tree's: it lies in the build folder or
// below it. Anything else is an installed wulf.
bool running_from_build_tree();

// The full path of one of wulf's programs: wulf, wulf-rank-real, wulf-rank-sim or
// wulf-platform. Throws InputError when it is not there (not built, not installed).
std::string helper_program(const std::string& name);

// The folder of the platform files; their per-pattern profiles are in its profiles/.
std::string platforms_dir();

// The drawing script that `wulf plot` runs.
std::string plot_script();

// Where `wulf calibrate` writes the platform and profile it measures unless told otherwise:
// the source tree's platforms/generated/ for a wulf run from its build tree, and
// platforms/generated/ in the current folder for an installed wulf (its prefix may be
// read-only, and the files are this machine's, not the installation's).
std::string generated_platforms_dir();

}  // namespace wulf
