// `wulf plot`: draws result records into one PNG, and refuses what it cannot draw honestly
// (a file that is not a wulf train record, records of different problems, a record without
// the errors asked for) with a message naming the file.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"

#include <wulf/build_info.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace wulf {
namespace {

using testing_support::contains;
using testing_support::Outcome;
using testing_support::TempDir;
using testing_support::wulf;

bool have_python() {
  const char* env = std::getenv("WULF_PYTHON");
  return (env && *env) || *build::plot_python;
}

class plot : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_python()) GTEST_SKIP() << "no Python 3 with matplotlib was found when wulf was configured";
  }
  // A short sequential run of problem, its record's path.
  std::string record(const std::string& name, std::vector<std::string> args) {
    std::vector<std::string> all{"train", "--quiet", "--epochs", "3", "--out", dir_.file(name)};
    all.insert(all.end(), args.begin(), args.end());
    const Outcome o = wulf(all);
    EXPECT_EQ(o.code, exit_ok) << o.err;
    return dir_.file(name);
  }
  TempDir dir_{"wulf_test_plot"};
};

// The eight bytes every PNG file starts with.
bool is_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  in.read(head, 8);
  return in && std::string(head, 8) == std::string("\x89PNG\r\n\x1a\n", 8);
}

const std::vector<std::string> function_small{"--problem", "function", "--train-size", "64", "--test-size", "16",
                                              "--hidden", "8,8"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(plot, draws_two_records_into_one_png) {
  const std::string a = record("b4.json", with(function_small, {"--block", "4"}));
  const std::string b = record("b16.json", with(function_small, {"--block", "16"}));
  const std::string png = dir_.file("curves.png");
  const Outcome o = wulf({"plot", a, b, "--out", png, "--log-time", "--title", "two blocks"});
  ASSERT_EQ(o.code, exit_ok) << o.err;
  EXPECT_TRUE(contains(o.out, "2 curves")) << o.out;
  EXPECT_TRUE(is_png(png));
  EXPECT_GT(std::filesystem::file_size(png), 5000u);  // axes, two curves and a legend, not an empty canvas
}

TEST_F(plot, refuses_records_of_different_problems_unless_mixed) {
  const std::string f = record("function.json", function_small);
  const std::string e = record("encoder.json", {"--problem", "encoder:8", "--error", "rmse"});
  const std::string png = dir_.file("mixed.png");
  const Outcome refused = wulf({"plot", f, e, "--out", png, "--error", "train"});
  EXPECT_EQ(refused.code, exit_input);
  for (const std::string& part : {f + " (function)", e + " (encoder:8)", std::string("--mixed")})
    EXPECT_TRUE(contains(refused.err, part)) << part << " not in: " << refused.err;
  EXPECT_FALSE(std::filesystem::exists(png));
  const Outcome mixed = wulf({"plot", f, e, "--out", png, "--error", "train", "--mixed"});
  EXPECT_EQ(mixed.code, exit_ok) << mixed.err;
  EXPECT_TRUE(is_png(png));
}

TEST_F(plot, refuses_a_file_that_is_not_a_record) {
  const std::string good = record("good.json", function_small);
  const std::string png = dir_.file("x.png");
  const std::string text = dir_.write("notes.txt", "not json at all\n");
  const std::string other = dir_.write("other.json", "{\"rows\": [1, 2]}\n");
  const std::string missing = dir_.file("missing.json");
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {text, "not a JSON record"}, {other, "not a wulf result record"}, {missing, "no such file"}}) {
    const Outcome o = wulf({"plot", good, bad, "--out", png});
    EXPECT_EQ(o.code, exit_input) << bad;
    EXPECT_TRUE(contains(o.err, bad + ": " + why)) << o.err;
  }
  EXPECT_FALSE(std::filesystem::exists(png));
}

TEST_F(plot, refuses_a_record_without_the_errors_asked_for) {
  const std::string e = record("encoder.json", {"--problem", "encoder:8"});
  const Outcome o = wulf({"plot", e, "--out", dir_.file("e.png")});  // --error test, and no test set
  EXPECT_EQ(o.code, exit_input);
  EXPECT_TRUE(contains(o.err, e + ": problem encoder:8 has no test set")) << o.err;
  // A time-only simulation (--numerics off) has no errors at all.
  const std::string off = record("off.json", with(function_small, {"--engine", "sim", "--np", "2", "--platform",
                                                                   std::string(WULF_TEST_PLATFORMS) + "/toy4.xml",
                                                                   "--numerics", "off"}));
  const Outcome no_errors = wulf({"plot", off, "--out", dir_.file("off.png")});
  EXPECT_EQ(no_errors.code, exit_input);
  EXPECT_TRUE(contains(no_errors.err, off + ": it was run with --numerics off")) << no_errors.err;
  const Outcome labels = wulf({"plot", e, "--error", "train", "--out", dir_.file("e.png"), "--labels", "a", "b"});
  EXPECT_EQ(labels.code, exit_input);
  EXPECT_TRUE(contains(labels.err, "2 labels for 1 curve")) << labels.err;
}

}  // namespace
}  // namespace wulf
