// `wulf plot`: draws result records into one PNG, and refuses what it cannot draw honestly
// (a file that is not a wulf train record, records of different problems, a record without
// the errors asked for) with a message naming the file.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/paths.hpp"
#include "util/process.hpp"

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

using namespace testing_support;

bool have_python() {
  const char* env = std::getenv("WULF_PYTHON");
  return (env && *env) || *build::plot_python;
}

class plot : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_python()) GTEST_SKIP() << "no Python 3 with matplotlib was found when wulf was configured";
  }
  // A short run with these options into NAME.json in the test's folder: the record's path.
  std::string record(const std::string& name, const std::vector<std::string>& args) {
    train_record(dir_, name, with({"--epochs", "3"}, args));
    return dir_.file(name + ".json");
  }
  TestDir dir_;
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

TEST_F(plot, draws_two_records_into_one_png) {
  const std::string a = record("b4", with(function_small, {"--block", "4"}));
  const std::string b = record("b16", with(function_small, {"--block", "16"}));
  const std::string png = dir_.file("curves.png");
  expect_success({"plot", a, b, "--out", png, "--log-time", "--title", "two blocks"}, {"2 curves"});
  EXPECT_TRUE(is_png(png));
  EXPECT_GT(std::filesystem::file_size(png), 5000u);  // axes, two curves and a legend, not an empty canvas
}

TEST_F(plot, refuses_records_of_different_problems_unless_mixed) {
  const std::string f = record("function", function_small);
  const std::string e = record("encoder", {"--problem", "encoder:8", "--error", "rmse"});
  const std::string png = dir_.file("mixed.png");
  expect_refused({"plot", f, e, "--out", png, "--error", "train"}, {f + " (function)", e + " (encoder:8)", "--mixed"});
  EXPECT_FALSE(std::filesystem::exists(png));
  expect_success({"plot", f, e, "--out", png, "--error", "train", "--mixed"});
  EXPECT_TRUE(is_png(png));
}

TEST_F(plot, refuses_a_file_that_is_not_a_record) {
  const std::string good = record("good", function_small);
  const std::string png = dir_.file("x.png");
  const std::string text = dir_.write("notes.txt", "not json at all\n");
  const std::string other = dir_.write("other.json", "{\"rows\": [1, 2]}\n");
  const std::string missing = dir_.file("missing.json");
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {text, "not a JSON record"}, {other, "not a wulf result record"}, {missing, "no such file"}}) {
    SCOPED_TRACE(bad);
    expect_refused({"plot", good, bad, "--out", png}, {bad + ": " + why});
  }
  EXPECT_FALSE(std::filesystem::exists(png));
}

TEST_F(plot, refuses_a_record_without_the_errors_asked_for) {
  const std::string e = record("encoder", {"--problem", "encoder:8"});
  expect_refused({"plot", e, "--out", dir_.file("e.png")},  // --error test, and no test set
                 {e + ": problem encoder:8 has no test set"});
  // A time-only simulation (--numerics off) has no errors at all.
  const std::string off =
      record("off", with(function_small, {"--engine", "sim", "--np", "2", "--platform", toy4, "--numerics", "off"}));
  expect_refused({"plot", off, "--out", dir_.file("off.png")}, {off + ": it was run with --numerics off"});
  expect_refused({"plot", e, "--error", "train", "--out", dir_.file("e.png"), "--labels", "a", "b"},
                 {"2 labels for 1 curve"});
}

// Hostile records: 200 000 nested brackets (closed or not), a bad escape, bytes that are not
// UTF-8. `wulf plot` refuses each before the drawing script starts, naming the file, with
// exit 2 and no crash (nothing recurses 200 000 levels); this needs no Python.
TEST(plot_input, hostile_records_are_refused_before_the_script_starts) {
  TestDir dir;
  const std::string deep = std::string(200000, '[');
  const std::vector<std::pair<std::string, std::string>> cases{
      {dir.write("deep.json", deep + std::string(200000, ']')), "a JSON record nested deeper than 100 levels"},
      {dir.write("open.json", deep), "a JSON record nested deeper than 100 levels"},
      {dir.write("objects.json", [] {
         std::string t;
         for (int i = 0; i < 200000; ++i) t += "{\"a\":";
         return t + "1" + std::string(200000, '}');
       }()),
       "a JSON record nested deeper than 100 levels"},
      {dir.write("escape.json", "{\"wulf_record\": 1, \"config\": {\"problem\": \"a\\qb\"}}"), "not a JSON record"},
      {dir.write("latin1.json", "{\"wulf_record\": 1, \"config\": {\"problem\": \"caf\xe9\"}}"), "not a JSON record"}};
  for (const auto& [path, why] : cases) {
    SCOPED_TRACE(path);
    const Outcome o = expect_refused({"plot", path, "--out", dir.file("x.png")}, {path + ": " + why});
    EXPECT_TRUE(plain_text(o.err.substr(0, o.err.find('\n')))) << o.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.png")));
}

// The drawing script run on its own (or on a file changed after `wulf plot` checked it):
// nesting too deep for Python's json, bytes that are not UTF-8 and a bad escape end in a
// message naming the file and exit 2, not in a RecursionError's traceback.
TEST_F(plot, the_drawing_script_alone_refuses_what_it_cannot_read_with_a_message) {
  const std::string python = std::getenv("WULF_PYTHON") && *std::getenv("WULF_PYTHON") ? std::getenv("WULF_PYTHON")
                                                                                       : build::plot_python;
  const std::vector<std::pair<std::string, std::string>> cases{
      {dir_.write("deep.json", std::string(200000, '[') + std::string(200000, ']')), "nested too deep"},
      {dir_.write("latin1.json", "{\"config\": {\"problem\": \"caf\xe9\"}}"), "not UTF-8 text"},
      {dir_.write("escape.json", "{\"config\": {\"problem\": \"a\\qb\"}}"), "not a JSON record"},
      {dir_.write("list.json", "[1, 2]"), "not a wulf result record"}};
  for (const auto& [path, why] : cases) {
    SCOPED_TRACE(path);
    std::string out, err;
    const int code = run_program_captured({python, plot_script(), path, "--out", dir_.file("x.png")}, out, err);
    EXPECT_EQ(code, 2) << err;
    EXPECT_TRUE(contains(err, "wulf plot: error: " + path + ": " + why)) << err;
    EXPECT_FALSE(contains(err, "Traceback")) << err;
  }
}

}  // namespace
}  // namespace wulf
