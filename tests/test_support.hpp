// Helpers shared by the test files.
#pragma once

#include "util/errors.hpp"
#include "cli/cli.hpp"
#include "data/dataset.hpp"
#include "util/json.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <vector>
#include <fstream>
#include <string>
#include <unistd.h>

namespace wulf::testing_support {

// What `wulf ARGS` did, run in this process.
struct Outcome {
  int code;
  std::string out, err;
};
inline Outcome wulf(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

// A scratch folder of one test's own, removed with its contents when the test ends. The
// process id and the test's name keep tests that ctest runs in parallel processes apart.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "wulf_test")
      : path_(std::filesystem::temp_directory_path() /
              (prefix + "_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes text to the named file in the folder and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name)) << text;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

// The message of the InputError that f throws, or "" (and a test failure) if it throws none.
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError thrown";
  return "";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace wulf::testing_support
