// Helpers shared by the test files: `wulf` run in this process, scratch folders, the
// platforms and data the tests read, and the checks that several files make. A test file
// takes them all with `using namespace testing_support;` (names here clash with none in
// wulf, which is why the scratch folder is TestDir and not TempDir).
#pragma once

#include "cli/cli.hpp"
#include "engine/launch.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/json.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace wulf::testing_support {

// A test that cannot run here. Under CI=true (the CI machine, .ci/run) a skip is a failure: the
// CI machine has root, namespaces, Python with matplotlib and PyTorch, and MNIST (./dev.sh test
// installs them), so a skip there means a test that did not run. WULF_SKIP_ANYWHERE is for the
// reasons that hold on the CI machine too (an AddressSanitizer build, a machine's free memory);
// docs/development.md lists every skip and where it happens.
inline bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}
#define WULF_SKIP(reason)                                                                         \
  do {                                                                                            \
    const std::string wulf_skip_reason_ = (reason);                                               \
    if (::wulf::testing_support::under_ci())                                                      \
      GTEST_FAIL() << "skipped under CI=true, where it must run: " << wulf_skip_reason_;          \
    GTEST_SKIP() << wulf_skip_reason_;                                                            \
  } while (0)
#define WULF_SKIP_ANYWHERE(reason) GTEST_SKIP() << (reason)

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

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// a, then b: the options of a run built from a common part and its own.
inline std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A scratch folder of one test's own, removed with its contents when the test ends. mkdtemp
// (util/files.hpp) keeps tests that ctest runs in parallel apart; the test's name in the
// folder's name only says whose a folder left behind by a crash is.
class TestDir : public TempDir {
 public:
  TestDir() : TempDir(current_test()) {}

  // Writes text to the named file in the folder and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    write_file_atomically(file(name), text);
    return file(name);
  }

 private:
  static std::string current_test() {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    if (!test) return "test";
    std::string name = std::string("test-") + test->test_suite_name() + "." + test->name();
    std::replace(name.begin(), name.end(), '/', '_');  // parameterised tests' names
    return name;
  }
};

// The platforms of the tests (tests/platforms) and wulf's own (platforms/).
inline std::string test_platform(const std::string& name) { return std::string(WULF_TEST_PLATFORMS) + "/" + name; }
inline std::string wulf_platform(const std::string& name) { return std::string(WULF_PLATFORMS_DIR) + "/" + name; }
// Four hosts of one core: the platform of most simulated runs in the tests.
inline const std::string toy4 = test_platform("toy4.xml");

// The folder of the four MNIST files: $WULF_MNIST_DIR, else the one the build was told about
// ("" when neither names one).
inline std::string mnist_dir() {
  if (const char* env = std::getenv("WULF_MNIST_DIR"); env && *env) return env;
#ifdef WULF_TEST_MNIST_DIR
  return WULF_TEST_MNIST_DIR;
#else
  return "";
#endif
}

// Runs `wulf ARGS --out DIR/NAME.json`, expects it to end with exit code `expect` and returns
// the record it wrote.
inline Json record_of(const TestDir& dir, const std::string& name, std::vector<std::string> args,
                      int expect = exit_ok) {
  const std::string path = dir.file(name + ".json");
  args.insert(args.end(), {"--out", path});
  const Outcome o = wulf(args);
  EXPECT_EQ(o.code, expect) << name << ": " << o.out << o.err;
  return read_json_file(path);
}

// Trains with these options (`wulf train --quiet ARGS`) into DIR/NAME.json and returns the record.
inline Json train_record(const TestDir& dir, const std::string& name, const std::vector<std::string>& args,
                         int expect = exit_ok) {
  return record_of(dir, name, with({"train", "--quiet"}, args), expect);
}

// Runs `wulf ARGS` and expects it to succeed (exit 0), printing every one of the parts;
// returns what it did for further checks.
inline Outcome expect_success(const std::vector<std::string>& args, const std::vector<std::string>& printed = {}) {
  Outcome o = wulf(args);
  EXPECT_EQ(o.code, exit_ok) << o.err;
  for (const auto& p : printed) EXPECT_TRUE(contains(o.out, p)) << "'" << p << "' not in: " << o.out;
  return o;
}

// o is a refusal of bad input (exit 2) whose message holds every one of the fragments.
inline void expect_refusal(const Outcome& o, const std::vector<std::string>& fragments) {
  EXPECT_EQ(o.code, exit_input) << o.out << o.err;
  for (const auto& f : fragments) EXPECT_TRUE(contains(o.err, f)) << "'" << f << "' not in: " << o.err;
}
// Runs `wulf ARGS` and expects it refused so; returns what it did for further checks.
inline Outcome expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& fragments) {
  Outcome o = wulf(args);
  expect_refusal(o, fragments);
  return o;
}
// The same for `wulf train ARGS`.
inline Outcome expect_train_refused(const std::vector<std::string>& args, const std::vector<std::string>& fragments) {
  return expect_refused(with({"train"}, args), fragments);
}

// Record r's run stopped with this status, for a reason that names every one of the parts.
inline void expect_stopped(const Json& r, const std::string& status, const std::vector<std::string>& parts) {
  const Json& fin = r.at("final");
  EXPECT_EQ(fin.at("status").get<std::string>(), status);
  const std::string reason = fin.at("reason").get<std::string>();
  for (const auto& p : parts) EXPECT_TRUE(contains(reason, p)) << "'" << p << "' not in: " << reason;
}

// The key of every history entry of records a and b agrees: exactly with tolerance 0, else
// within tolerance relative to a's value; null (not measured, as in iteration 0) in both or
// in neither. Entries before `first` carry the key in neither record (a strategy's note,
// absent from iteration 0), the others in both.
inline void expect_same_history(const Json& a, const Json& b, const std::string& key, double tolerance = 0,
                                std::size_t first = 0) {
  const auto& ha = a.at("history");
  const auto& hb = b.at("history");
  ASSERT_EQ(ha.size(), hb.size());
  for (std::size_t i = 0; i < ha.size(); ++i) {
    const bool expected = i >= first;
    ASSERT_EQ(ha[i].contains(key), expected) << key << " in iteration " << i;
    ASSERT_EQ(hb[i].contains(key), expected) << key << " in iteration " << i;
    if (!expected) continue;
    if (ha[i].at(key).is_null() || hb[i].at(key).is_null()) {
      EXPECT_EQ(ha[i].at(key).is_null(), hb[i].at(key).is_null()) << key << " in iteration " << i;
      continue;
    }
    const double x = ha[i].at(key).get<double>(), y = hb[i].at(key).get<double>();
    if (tolerance == 0)
      EXPECT_EQ(x, y) << key << " differs in iteration " << i;
    else
      EXPECT_NEAR(x, y, tolerance * std::abs(x)) << key << " in iteration " << i;
  }
}

// The message of the InputError that f throws, or "" and a test failure (saying if_none)
// when it throws none.
template <class F>
std::string input_error(F f, const std::string& if_none = "no InputError thrown") {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << if_none;
  return "";
}
// f throws an InputError whose message names every one of the parts.
template <class F>
void expect_input_error(F f, const std::vector<std::string>& parts,
                        const std::string& if_none = "no InputError thrown") {
  const std::string message = input_error(f, if_none);
  for (const auto& p : parts) EXPECT_TRUE(contains(message, p)) << "'" << p << "' not in: " << message;
}

// A device like /dev/full (every write to it fails: "No space left on device") in dir, so that
// a test of a full disk never touches the machine's own /dev/full, whatever the code under
// test does to the path; /dev/full itself where this process may not make devices (not root).
inline std::string full_device(const TestDir& dir) {
  const std::string path = dir.file("full");
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) return path;
  return "/dev/full";
}

// An environment variable set for one scope, or unset with nullopt; as it was afterwards.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) saved_ = old;
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~ScopedEnv() {
    if (saved_)
      ::setenv(name_.c_str(), saved_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

// For one scope, the simulations run under glibc's malloc on transparent huge pages instead
// of tcmalloc (experiments/today, "The allocator"): the values and simulated times are the same
// (sim_messages.the_allocator_changes_no_value_and_no_simulated_time), and a run of large real
// buffers goes 1.7 to 3.5 times faster here (each fresh 4 KB page costs this virtual machine
// about 10 us). Where the machine gives no huge pages, glibc's malloc alone.
class HugePagesForLargeBuffers {
 public:
  HugePagesForLargeBuffers() = default;

 private:
  ScopedEnv preload_{"LD_PRELOAD", std::string()};
  ScopedEnv tunables_{"GLIBC_TUNABLES", std::string("glibc.malloc.hugetlb=1:") + sim_glibc_tunables};
};

// $WULF_MEMORY_LIMIT_BYTES (the machine's memory to the estimate) set for one scope, or
// unset with nullopt; as it was afterwards.
class MemoryLimit : public ScopedEnv {
 public:
  explicit MemoryLimit(const std::optional<std::string>& value) : ScopedEnv("WULF_MEMORY_LIMIT_BYTES", value) {}
};

// A folder of MNIST's four IDX files in dir, name, holding `train` and `test` images of 28 x 28
// pixels (pixel i of image k is (i + k) mod 256) labelled k mod 10: MNIST's files, small.
inline std::string small_mnist(const TestDir& dir, std::uint32_t train, std::uint32_t test,
                               const std::string& name = "mnist") {
  const std::string folder = dir.file(name);
  std::filesystem::create_directory(folder);
  const auto big_endian = [](std::string& s, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xff);
  };
  for (const auto& [set, count] : {std::pair<std::string, std::uint32_t>{"train", train}, {"t10k", test}}) {
    std::string images, labels;
    big_endian(images, 0x803), big_endian(images, count), big_endian(images, 28), big_endian(images, 28);
    big_endian(labels, 0x801), big_endian(labels, count);
    for (std::uint32_t k = 0; k < count; ++k) {
      for (std::uint32_t i = 0; i < 28 * 28; ++i) images += static_cast<char>((i + k) % 256);
      labels += static_cast<char>(k % 10);
    }
    write_file_atomically(folder + "/" + set + "-images-idx3-ubyte", images);
    write_file_atomically(folder + "/" + set + "-labels-idx1-ubyte", labels);
  }
  return folder;
}

// While it lives, no file this process writes may grow beyond `bytes` (RLIMIT_FSIZE): a write
// past it fails (EFBIG), as one on a full disk does. SIGXFSZ is ignored meanwhile, so that
// the failure is an error the code under test sees rather than the end of the test.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit limit = old_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_{};
  void (*old_handler_)(int) = SIG_DFL;
};

// Every byte of text is printable ASCII: a message that shows what a file held stays plain text.
inline bool plain_text(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

}  // namespace wulf::testing_support
