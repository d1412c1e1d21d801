// `wulf plot`: draws result records into one PNG, and refuses what it cannot draw honestly
// (a file that is not a wulf train record, records of different problems, a record without
// the errors asked for) with a message naming the file.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/paths.hpp"
#include "engine/process.hpp"

#include <wulf/build_info.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

namespace wulf {
namespace {

using namespace testing_support;

bool have_python() {
  const char* env = std::getenv("WULF_PYTHON");
  return (env && *env) || *build::plot_python;
}

// The Python that runs the drawing script.
std::string python() {
  const char* env = std::getenv("WULF_PYTHON");
  return env && *env ? env : build::plot_python;
}

class plot : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_python()) WULF_SKIP("no Python 3 with matplotlib was found when wulf was configured");
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

// --x np: the time per iteration against the processors, simulated runs as points and a
// wulf model record's grid as lines (issue 65 item 1: both records read by one command); a
// model record is refused where a training curve is asked for.
TEST_F(plot, draws_runs_and_a_models_grid_against_the_processors) {
  const std::vector<std::string> sim{"--problem", "function", "--train-size", "64", "--test-size", "16", "--hidden",
                                     "8,8", "--engine", "sim", "--platform", toy4, "--numerics", "off",
                                     "--block", "16", "--strategy", "overlap"};
  const std::string p2 = record("p2", with(sim, {"--np", "2"}));
  const std::string p4 = record("p4", with(sim, {"--np", "4"}));
  const std::string model = dir_.file("model.json");
  expect_success({"model", "--overlap", "--platform", toy4, "--problem", "function", "--train-size", "64",
                  "--test-size", "16", "--hidden", "8,8", "--np", "1,2,4", "--block", "16", "--out", model});
  const std::string png = dir_.file("scaling.png");
  // One colour per setting: the runs' points and the model's line of the same overlap.
  expect_success({"plot", "--x", "np", p2, p4, model, "--out", png}, {"2 series of time per iteration against p"});
  EXPECT_TRUE(is_png(png));
  EXPECT_GT(std::filesystem::file_size(png), 5000u);
  expect_refused({"plot", model, "--out", png}, {model + ": a record of `wulf model --overlap`", "--x np"});
  expect_refused({"plot", "--x", "np", model, "--error", "test", "--out", png}, {"--error with --x np"});
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
  expect_refused({"plot", e, "--out", dir_.file("e.png"), "--error", "test"},  // asked for, and no test set
                 {e + ": problem encoder:8 has no test set"});
  // A time-only simulation (--numerics off) has no errors at all.
  const std::string off =
      record("off", with(function_small, {"--engine", "sim", "--np", "2", "--platform", toy4, "--numerics", "off"}));
  expect_refused({"plot", off, "--out", dir_.file("off.png")}, {off + ": it was run with --numerics off"});
  expect_refused({"plot", e, "--error", "train", "--out", dir_.file("e.png"), "--labels", "a", "b"},
                 {"2 labels for 1 curve"});
}

// A run with no test set (the encoder) stopped `wulf plot REC.json --out F.png` with "has no
// test set; draw its training error (--error train)". Without --error, the training error
// is drawn where a record has no test set (for every curve: one kind of error on one axis),
// and the output says so.
TEST_F(plot, without_error_draws_the_training_error_of_a_run_without_a_test_set_and_says_so) {
  const std::string e = record("encoder", {"--problem", "encoder:8"});
  const std::string png = dir_.file("e.png");
  expect_success({"plot", e, "--out", png},
                                   {e + " has no test error (problem encoder:8): drawing the training error",
                                    "1 curve of training error -> " + png});
  EXPECT_TRUE(is_png(png));
  // Where every record has a test set, the test error, as before.
  const std::string f = record("function", function_small);
  expect_success({"plot", f, "--out", dir_.file("f.png")}, {"1 curve of test error"});
}

// A record's history with a value that is no number ("train_error": "abc") ended in a
// Python TypeError's traceback. Every value the drawing reads is checked: a string, a list,
// true, an entry that is no object, an integer too large for a float, each named with the
// file and the entry, exit 2, no traceback.
TEST_F(plot, a_history_value_that_is_no_number_is_named_without_a_traceback) {
  const std::string good = record("good", function_small);
  Json r = read_json_file(good);
  const std::vector<std::tuple<std::string, Json, std::string>> cases{
      {"train_error", "abc", "history[1].train_error is \"abc\", not a number"},
      {"train_error", Json::array({1, 2}), "history[1].train_error is [1, 2], not a number"},
      {"time_s", true, "history[1].time_s is true, not a number"}};
  for (const auto& [key, value, why] : cases) {
    SCOPED_TRACE(why);
    Json bad = r;
    bad["history"][1][key] = value;
    const std::string path = dir_.write("bad.json", bad.dump());
    const Outcome o = expect_refused({"plot", path, "--out", dir_.file("x.png"), "--error", "train"}, {path + ": " + why});
    EXPECT_FALSE(contains(o.err, "Traceback")) << o.err;
  }
  Json entry = r;
  entry["history"][2] = "iteration";
  const std::string path = dir_.write("entry.json", entry.dump());
  expect_refused({"plot", path, "--out", dir_.file("x.png")}, {path + ": history[2] is not an object"});
  // The drawing script alone (wulf plot's JSON reader refuses the number first): an integer
  // past a double's range is no OverflowError, the point left out like an infinity.
  std::string text = r.dump();
  const std::string first = "\"train_error\":";
  text.insert(text.find(first, text.find(first) + 1) + first.size(), std::string(400, '9') + ",\"x\":");
  const std::string huge = dir_.write("huge.json", text);
  std::string out, err;
  EXPECT_EQ(run_program_captured({python(), plot_script(), huge, "--out", dir_.file("huge.png"), "--error", "train"},
                                 out, err),
            0)
      << err;
  EXPECT_FALSE(contains(err, "Traceback")) << err;
}

// Text from a record reaches a message escaped: a problem name holding a line break and an
// escape sequence cannot forge a line of wulf's output or recolour the terminal, whether
// `wulf plot` names it (records of two problems) or the drawing script does (no errors).
TEST_F(plot, control_characters_of_a_record_are_printed_escaped) {
  const std::string good = record("good", function_small);
  Json r = read_json_file(good);
  r["config"]["problem"] = "x\x1b[31m\nwulf: forged";
  const std::string odd = dir_.write("odd.json", r.dump());
  const Outcome mixed = expect_refused({"plot", good, odd, "--out", dir_.file("x.png")},
                                       {odd + " (x\\x1b[31m\\x0awulf: forged)"});
  for (auto& h : r["history"]) h.erase("test_error");
  r["config"]["test_patterns"] = 0;
  const std::string lacking = dir_.write("lacking.json", r.dump());
  const Outcome missing = expect_refused({"plot", lacking, "--out", dir_.file("x.png"), "--error", "test"},
                                         {"problem x\\x1b[31m\\nwulf: forged"});
  for (const Outcome* o : {&mixed, &missing}) {
    EXPECT_EQ(std::count(o->err.begin(), o->err.end(), '\n'), 1) << "one line: " << o->err;
    EXPECT_FALSE(contains(o->err, "\x1b")) << o->err;
  }
  // $...$ from a record is no mathematics for matplotlib: drawn, not an error.
  r["config"]["problem"] = "$\\frobnicate$";
  r["config"]["platform"] = "$\\x.xml";
  const std::string dollars = dir_.write("dollars.json", r.dump());
  expect_success({"plot", dollars, "--out", dir_.file("d.png"), "--error", "train"});
}

// --xlim nan:inf was handed to matplotlib. Each limit is a finite number, LO below HI, and
// positive on a logarithmic axis; else refused naming the option.
TEST_F(plot, axis_limits_that_are_no_finite_range_are_refused_naming_the_option) {
  const std::string f = record("function", function_small);
  const std::string png = dir_.file("x.png");
  for (const auto& [option, value, extra, why] : std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"--xlim", "nan:inf", "", "--xlim: 'nan:inf': nan is not a finite number"},
           {"--xlim", ":inf", "", "--xlim: ':inf': inf is not a finite number"},
           {"--ylim", "1e999:", "", "--ylim: '1e999:': inf is not a finite number"},
           {"--xlim", "5:1", "", "--xlim: '5:1': LO must be below HI"},
           {"--xlim", "1:2:3", "", "--xlim: '1:2:3' is not LO:HI"},
           {"--xlim", "0:10", "--log-time", "--xlim: '0:10': --log-time draws a logarithmic axis, whose limits are positive"},
           {"--ylim", "-1:", "--log-error", "--ylim: '-1:': --log-error draws a logarithmic axis"}}) {
    SCOPED_TRACE(option + " " + value);
    std::vector<std::string> args{"plot", f, "--out", png, option, value};
    if (!extra.empty()) args.push_back(extra);
    const Outcome o = expect_refused(args, {"wulf plot: error: " + why});
    EXPECT_FALSE(contains(o.err, "Traceback")) << o.err;
  }
  EXPECT_FALSE(std::filesystem::exists(png));
  expect_success({"plot", f, "--out", png, "--xlim", "0:", "--ylim", ":1.5"});
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

// WULF_PYTHON naming no program is the user's input: exit 2 naming the variable, not an
// internal error.
TEST_F(plot, a_wulf_python_that_cannot_start_is_named) {
  const std::string rec = record("a", function_small);
  const ScopedEnv python("WULF_PYTHON", std::string("/nonexistent/python3"));
  expect_refused({"plot", rec, "--out", dir_.file("a.png")}, {"WULF_PYTHON=/nonexistent/python3: "});
  EXPECT_FALSE(std::filesystem::exists(dir_.file("a.png")));
}

// The drawing script run on its own (or on a file changed after `wulf plot` checked it):
// nesting too deep for Python's json, bytes that are not UTF-8 and a bad escape end in a
// message naming the file and exit 2, not in a RecursionError's traceback.
TEST_F(plot, the_drawing_script_alone_refuses_what_it_cannot_read_with_a_message) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {dir_.write("deep.json", std::string(200000, '[') + std::string(200000, ']')), "nested too deep"},
      {dir_.write("latin1.json", "{\"config\": {\"problem\": \"caf\xe9\"}}"), "not UTF-8 text"},
      {dir_.write("escape.json", "{\"config\": {\"problem\": \"a\\qb\"}}"), "not a JSON record"},
      {dir_.write("list.json", "[1, 2]"), "not a wulf result record"}};
  for (const auto& [path, why] : cases) {
    SCOPED_TRACE(path);
    std::string out, err;
    const int code = run_program_captured({python(), plot_script(), path, "--out", dir_.file("x.png")}, out, err);
    EXPECT_EQ(code, 2) << err;
    EXPECT_TRUE(contains(err, "wulf plot: error: " + path + ": " + why)) << err;
    EXPECT_FALSE(contains(err, "Traceback")) << err;
  }
}

}  // namespace
}  // namespace wulf
