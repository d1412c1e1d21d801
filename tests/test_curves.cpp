// Error against time: every run's history is a complete curve (iterations 0..N, time
// non-decreasing, both errors at every entry), on the sequential engine and in simulation
// for each strategy; --target-error stops at the first iteration at or below the target,
// and a target never reached says what was best and when.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace wulf {
namespace {

using namespace testing_support;

// A small regression problem whose runs take milliseconds: 64 training, 16 test points.
const std::vector<std::string> small{"--problem", "function", "--train-size", "64", "--test-size", "16",
                                     "--hidden", "8,8", "--block", "8"};

// The small problem trained with these options into DIR/NAME.json: the record.
Json train(const TestDir& dir, const std::string& name, const std::vector<std::string>& args) {
  return train_record(dir, name, with(small, args));
}

// history is iterations 0, 1, ..., final.iterations, in order, with time from 0 on and
// never going back; with `strict`, time grows in every iteration (simulation charges each).
void expect_complete_curve(const Json& history, int iterations, bool strict, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(history.size(), static_cast<std::size_t>(iterations) + 1);
  double last = 0;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const Json& h = history[i];
    EXPECT_EQ(h.at("iteration").get<double>(), static_cast<double>(i));
    const double t = h.at("time_s").get<double>();
    if (i == 0) {
      EXPECT_EQ(t, 0.0);
    } else if (strict) {
      EXPECT_GT(t, last) << "iteration " << i;
    }
    EXPECT_GE(t, last) << "iteration " << i;
    last = t;
    for (const char* key : {"train_error", "test_error"}) {
      ASSERT_TRUE(h.contains(key) && h.at(key).is_number()) << key << " missing in iteration " << i;
      EXPECT_TRUE(std::isfinite(h.at(key).get<double>())) << key << " in iteration " << i;
    }
  }
}

void expect_complete_record(const Json& r, bool strict, const std::string& what) {
  const int iterations = static_cast<int>(r.at("final").at("iterations").get<double>());
  EXPECT_EQ(iterations, 4) << what;
  const auto& history = r.at("history");
  expect_complete_curve(history, iterations, strict, what);
  ASSERT_FALSE(history.empty());
  EXPECT_GE(r.at("final").at("time_s").get<double>(), history.back().at("time_s").get<double>()) << what;
}

TEST(curves, are_complete_and_monotone_in_time_sequentially_and_in_simulation_for_each_strategy) {
  TestDir dir;
  expect_complete_record(train(dir, "seq", {"--epochs", "4"}), false, "seq");
  for (const char* strategy : {"block", "average", "ppt", "scatter", "root", "cg"}) {
    const Json r = train(dir, strategy,
                         {"--epochs", "4", "--engine", "sim", "--np", "2", "--platform", toy4, "--strategy", strategy});
    expect_complete_record(r, true, std::string("sim, ") + strategy);
  }
}

TEST(curves, every_session_of_a_sweep_has_its_own_complete_curve) {
  TestDir dir;
  const Json r = train(dir, "sweep", {"--epochs", "3", "--engine", "sim", "--np", "2", "--platform", toy4,
                                      "--strategy", "session", "--sweep", "eta=0.5,0.9,1.2"});
  const auto& sessions = r.at("sessions");
  ASSERT_EQ(sessions.size(), 3u);
  for (const Json& s : sessions) {
    expect_complete_curve(s.at("history"), 3, true, "session " + std::to_string(s.at("index").get<double>()));
    // The curve ends where the session's own summary does.
    EXPECT_EQ(s.at("history").back().at("time_s").get<double>(), s.at("time_s").get<double>());
  }
  // Sessions differ in eta, so their curves do.
  EXPECT_NE(sessions[0].at("history").back().at("test_error").get<double>(),
            sessions[2].at("history").back().at("test_error").get<double>());
}

TEST(curves, history_every_keeps_every_nth_iteration_and_the_last) {
  TestDir dir;
  const Json r = train(dir, "thin", {"--epochs", "7", "--history-every", "3"});
  std::vector<double> kept;
  for (const Json& h : r.at("history")) kept.push_back(h.at("iteration").get<double>());
  EXPECT_EQ(kept, (std::vector<double>{0, 3, 6, 7}));
}

// Runs with a target, stopping at the first iteration whose check error is <= it.
void expect_stops_at_first_iteration_at_or_below(const TestDir& dir, const std::string& name,
                                                 const std::vector<std::string>& engine, bool simulated) {
  SCOPED_TRACE(name);
  const std::vector<std::string> args = with({"--epochs", "12", "--eta", "0.5"}, engine);
  const Json free_run = train(dir, name + "-free", args);
  const auto& h = free_run.at("history");
  ASSERT_EQ(h.size(), 13u);
  // The target: the error of iteration 8; the first iteration at or below it may be earlier.
  const double target = h[8].at("test_error").get<double>();
  int first = 0;
  for (int i = 1; i <= 8; ++i)
    if (h[static_cast<std::size_t>(i)].at("test_error").get<double>() <= target) {
      first = i;
      break;
    }
  ASSERT_GT(first, 0);
  // A run that is not improving at all would make this test trivial.
  ASSERT_LT(target, h[0].at("test_error").get<double>());
  // The target exactly as recorded (%.17g round-trips a double; std::to_string would round).
  char exact[40];
  std::snprintf(exact, sizeof exact, "%.17g", target);
  const Json stopped = train(dir, name + "-target", with(args, {"--target-error", exact}));
  EXPECT_EQ(stopped.at("final").at("status").get<std::string>(), "target_reached");
  EXPECT_EQ(stopped.at("final").at("iterations").get<double>(), first);
  const auto& hs = stopped.at("history");
  ASSERT_EQ(hs.size(), static_cast<std::size_t>(first) + 1);
  // Same seed, same run up to the stop: the same errors, and in simulation the same times.
  for (std::size_t i = 0; i < hs.size(); ++i) {
    EXPECT_EQ(hs[i].at("test_error").get<double>(), h[i].at("test_error").get<double>()) << i;
    if (simulated) {
      EXPECT_EQ(hs[i].at("time_s").get<double>(), h[i].at("time_s").get<double>()) << i;
    }
  }
  EXPECT_LE(hs.back().at("test_error").get<double>(), target);
  for (std::size_t i = 1; i + 1 < hs.size(); ++i) EXPECT_GT(hs[i].at("test_error").get<double>(), target) << i;
}

TEST(curves, a_target_error_stops_at_the_first_iteration_at_or_below_it) {
  TestDir dir;
  expect_stops_at_first_iteration_at_or_below(dir, "seq", {}, false);
  expect_stops_at_first_iteration_at_or_below(dir, "sim-average",
                                              {"--engine", "sim", "--np", "2", "--platform", toy4, "--strategy",
                                               "average"},
                                              true);
}

TEST(curves, a_target_never_reached_says_the_best_error_and_when) {
  TestDir dir;
  // Not --quiet: the run's message is checked too.
  const Outcome o =
      expect_success(with({"train", "--epochs", "6", "--target-error", "0", "--out", dir.file("never.json")}, small));
  const Json r = read_json_file(dir.file("never.json"));
  const Json& fin = r.at("final");
  EXPECT_EQ(fin.at("status").get<std::string>(), "max_iterations");
  // The best of iterations 1..6, from the history, is what the record and the message name.
  const auto& h = r.at("history");
  std::size_t best = 1;
  for (std::size_t i = 2; i < h.size(); ++i)
    if (h[i].at("test_error").get<double>() < h[best].at("test_error").get<double>()) best = i;
  const Json& b = fin.at("best");
  EXPECT_EQ(b.at("check").get<std::string>(), "test");
  EXPECT_EQ(b.at("iteration").get<double>(), static_cast<double>(best));
  EXPECT_EQ(b.at("error").get<double>(), h[best].at("test_error").get<double>());
  EXPECT_EQ(b.at("time_s").get<double>(), h[best].at("time_s").get<double>());
  EXPECT_GT(b.at("time_s").get<double>(), 0.0);
  const std::string reason = fin.at("reason").get<std::string>();
  EXPECT_TRUE(contains(reason, "ran all 6 iterations without reaching the target error 0")) << reason;
  EXPECT_TRUE(contains(reason, "in iteration " + std::to_string(best) + ", at ")) << reason;
  EXPECT_TRUE(contains(o.out, "stopped: " + reason)) << o.out;  // what the run printed
}

TEST(curves, a_time_limit_with_a_target_not_reached_says_so_too) {
  TestDir dir;
  // On toy4 an iteration of this net takes well under a simulated second: 0.002 s stops it early.
  const Json r = train(dir, "limit", {"--epochs", "50", "--target-error", "0", "--max-seconds", "0.002", "--engine",
                                      "sim", "--np", "2", "--platform", toy4});
  expect_stopped(r, "time_limit", {"without reaching the target error 0 (best "});
  EXPECT_LT(r.at("final").at("iterations").get<double>(), 50);
  EXPECT_GE(r.at("final").at("time_s").get<double>(), 0.002);
}

// The record's contract (../shared/DESIGN.md): final holds the error fields a history entry
// holds, with the final pass's values; a run without the arithmetic has none, so they are
// null, never a 0 that reads as a perfect net.
TEST(curves, final_holds_the_error_fields_of_the_history) {
  TestDir dir;
  // A classifier with a test set (every field) and one without (the training set's only).
  const Json digits = train_record(dir, "digits", {"--problem", "digits:20x20", "--train-size", "300", "--test-size",
                                                   "100", "--epochs", "2", "--block", "50"});
  const Json parity = train_record(dir, "parity", {"--problem", "parity", "--epochs", "2"});
  for (const Json* record : {&digits, &parity}) {
    const Json& last = record->at("history").back();
    const Json& fin = record->at("final");
    for (const char* key : {"train_error", "train_rmse", "train_class_errors", "train_accuracy", "test_error",
                            "test_rmse", "test_loss", "test_class_errors", "test_accuracy"})
      if (last.contains(key) || std::string(key).rfind("train_", 0) == 0) {
        ASSERT_TRUE(fin.contains(key)) << key;
        EXPECT_TRUE(fin.at(key).is_number()) << key;
      }
  }
  const Json& d = digits.at("final");
  EXPECT_EQ(d.at("test_error"), d.at("test").at("class_errors").get<double>() / 100.0);  // --error class
  EXPECT_EQ(d.at("test_class_errors"), d.at("test").at("class_errors"));
  EXPECT_EQ(d.at("train_rmse"), d.at("train").at("rmse"));
  const Json off = train_record(dir, "off", {"--problem", "parity", "--epochs", "2", "--block", "16", "--engine", "sim", "--np", "2",
                                             "--platform", toy4, "--numerics", "off"});
  EXPECT_TRUE(off.at("final").at("train_error").is_null());
  EXPECT_TRUE(off.at("final").at("train_rmse").is_null());
  EXPECT_FALSE(off.at("final").contains("train"));
}

}  // namespace
}  // namespace wulf
