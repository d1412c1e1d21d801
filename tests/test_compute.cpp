// Compute charging that does not need ranks: the one rule of charged times (charged_seconds)
// that sim and real share, the real engine's padding (real/compute_real.cpp, compiled into
// this test) and its ledger, the clock's time dilation, the compute budget in the record and
// how each engine resolves --compute, --profile, --numerics and --dilation.
#include "comm/comm.hpp"
#include "comm/compute.hpp"
#include "comm/own_comm.hpp"
#include "job/train_job.hpp"
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "train/result_record.hpp"
#include "util/errors.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace wulf {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A made-up profile: 20 ms a forward pattern, 0.5 ms a backward one.
Profile made_up_profile() {
  Profile p;
  p.name = "made-up";
  p.Tf = 0.02, p.Tb = 0.0005, p.Tu = 0.003, p.Tm = 0.001, p.Ts = 0.0001, p.To = 0.004;
  return p;
}

ComputeConfig calibrated(double dilation) {
  ComputeConfig c;
  c.mode = ComputeMode::calibrated;
  c.profile = made_up_profile();
  c.dilation = dilation;
  c.ranks = 2;
  return c;
}

TEST(compute, charged_seconds_of_flops_are_the_flops_over_the_speed_and_speed_scale) {
  ComputeConfig c;
  c.mode = ComputeMode::flops;
  c.speed_scale = 2;
  EXPECT_EQ(charged_seconds(c, Phase::forward, 7, 4e9, 1e9), 2.0);
  EXPECT_EQ(charged_seconds(c, Phase::update, 1, 3e6, 1.5e9), 3e6 / 2 / 1.5e9);
  EXPECT_EQ(charged_flops(c, 4e9), 2e9);
  EXPECT_EQ(charged_seconds(c, Phase::other, 0, 0, 1e9), 0.0);
}

TEST(compute, charged_seconds_of_calibrated_are_the_profiles_times_per_pattern_and_update) {
  ComputeConfig c = calibrated(1);
  const Profile& p = c.profile;
  EXPECT_EQ(charged_seconds(c, Phase::forward, 3, 1e9, 1e9), p.Tf * 3);
  EXPECT_EQ(charged_seconds(c, Phase::backward, 5, 1e9, 1e9), p.Tb * 5);
  EXPECT_EQ(charged_seconds(c, Phase::test, 4, 1e9, 1e9), p.Ts * 4 + p.Tf * 4);  // a forward pass and its error
  EXPECT_EQ(charged_seconds(c, Phase::update, 1, 1e9, 1e9), p.Tu);                // two ranks: no Tm
  EXPECT_EQ(charged_seconds(c, Phase::other, 9, 1e9, 1e9), 0.0);
  c.ranks = 1;  // seed 000's eq. (3): the sequential program also copies the weights
  EXPECT_EQ(charged_seconds(c, Phase::update, 1, 1e9, 1e9), p.Tu + p.Tm);
  c.speed_scale = 4;
  EXPECT_EQ(charged_seconds(c, Phase::forward, 3, 0, 0), p.Tf * 3 / 4);
  c.mode = ComputeMode::measured;  // no rule ahead of the arithmetic
  EXPECT_EQ(charged_seconds(c, Phase::forward, 3, 1e9, 1e9), 0.0);
  c.mode = ComputeMode::wall;
  EXPECT_EQ(charged_seconds(c, Phase::forward, 3, 1e9, 1e9), 0.0);
}

TEST(compute, a_calibrated_kernel_lasts_its_charge_times_the_dilation_and_is_booked) {
  const std::unique_ptr<Compute> compute = make_compute(calibrated(2));
  ASSERT_TRUE(compute->pads());
  const Clock::time_point t0 = Clock::now();
  compute->begin();
  compute->charge(Phase::forward, 1, 0);  // 20 ms of platform time, 40 ms of wall time
  // Sleeping can only be late: a lower bound.
  EXPECT_GE(seconds_since(t0), 0.04);
  const BudgetLine f = compute->ledger().lines[static_cast<std::size_t>(Phase::forward)];
  EXPECT_EQ(f.kernels, 1);
  EXPECT_EQ(f.charged_s, 0.02);
  EXPECT_EQ(f.overruns, 0);
  EXPECT_LT(f.real_s, 0.04);  // the arithmetic (none here) before the sleep
  EXPECT_LE(f.worst_ratio, 1.0);
}

TEST(compute, a_kernel_past_its_budget_is_an_overrun_and_is_not_padded_further) {
  const std::unique_ptr<Compute> compute = make_compute(calibrated(2));
  compute->begin();
  const Clock::time_point t0 = Clock::now();
  while (seconds_since(t0) < 0.01) {}  // 10 ms of "arithmetic" against a budget of 2 x 0.5 ms
  compute->charge(Phase::backward, 1, 0);
  const BudgetLine b = compute->ledger().lines[static_cast<std::size_t>(Phase::backward)];
  EXPECT_EQ(b.kernels, 1);
  EXPECT_EQ(b.overruns, 1);
  EXPECT_EQ(b.charged_s, 0.0005);
  EXPECT_GE(b.real_s, 0.01);
  EXPECT_GE(b.worst_ratio, 10.0);  // at least 10 ms over 1 ms
}

TEST(compute, to_per_iteration_and_the_collective_overhead_are_padded_too) {
  ComputeConfig c = calibrated(3);
  c.collective_overhead_s = 0.002;
  const std::unique_ptr<Compute> compute = make_compute(c);
  const Clock::time_point t0 = Clock::now();
  compute->charge_iteration();   // To = 4 ms: 12 ms of wall time
  compute->charge_collective();  // 2 ms: 6 ms
  EXPECT_GE(seconds_since(t0), 0.018);
  const ComputeLedger ledger = compute->ledger();
  EXPECT_EQ(ledger.lines[ComputeLedger::iteration].charged_s, 0.004);
  EXPECT_EQ(ledger.lines[ComputeLedger::collective].charged_s, 0.002);
  EXPECT_EQ(ledger.lines[ComputeLedger::collective].kernels, 1);
  EXPECT_EQ(ComputeLedger::name(ComputeLedger::iteration), "iteration_overhead");
  EXPECT_EQ(ComputeLedger::name(ComputeLedger::collective), "collective_overhead");
  EXPECT_EQ(ComputeLedger::name(0), "forward");
}

TEST(compute, flops_mode_pads_to_the_flops_over_the_hosts_speed) {
  ComputeConfig c;
  c.mode = ComputeMode::flops;
  c.host_speed = 1e9;
  c.speed_scale = 0.5;
  c.dilation = 1.5;
  const std::unique_ptr<Compute> compute = make_compute(c);
  const Clock::time_point t0 = Clock::now();
  compute->begin();
  compute->charge(Phase::update, 1, 1e7);  // 1e7 / 0.5 / 1e9 = 20 ms, 30 ms of wall time
  EXPECT_GE(seconds_since(t0), 0.03);
  EXPECT_EQ(compute->ledger().lines[static_cast<std::size_t>(Phase::update)].charged_s, 1e7 / 0.5 / 1e9);
}

TEST(compute, wall_mode_charges_nothing_and_keeps_no_ledger) {
  const std::unique_ptr<Compute> compute = make_compute(ComputeConfig{});
  EXPECT_FALSE(compute->pads());
  compute->begin();
  compute->charge(Phase::forward, 1000, 1e12);
  EXPECT_EQ(compute->ledger().lines[0].kernels, 0);
}

TEST(compute, the_real_engine_refuses_what_it_cannot_charge) {
  ComputeConfig flops;
  flops.mode = ComputeMode::flops;  // no host speed
  EXPECT_THROW(make_compute(flops), InputError);
  ComputeConfig measured;
  measured.mode = ComputeMode::measured;
  EXPECT_THROW(make_compute(measured), InputError);
  ComputeConfig wall_off;
  wall_off.numerics = false;
  EXPECT_THROW(make_compute(wall_off), InputError);
  EXPECT_THROW(make_compute(calibrated(0)), InputError);  // a testbed rank given no --dilation
  EXPECT_THROW(make_compute(calibrated(std::numeric_limits<double>::infinity())), InputError);
}

TEST(compute, a_ledger_survives_its_flat_form) {
  ComputeLedger a;
  a.lines[1] = {3, 0.25, 0.5, 2, 7.5};
  a.lines[ComputeLedger::collective] = {9, 0, 0.125, 0, 0};
  const auto flat = a.flat();
  const ComputeLedger b = ComputeLedger::from_flat(flat);
  EXPECT_EQ(b.lines[1].kernels, 3);
  EXPECT_EQ(b.lines[1].real_s, 0.25);
  EXPECT_EQ(b.lines[1].charged_s, 0.5);
  EXPECT_EQ(b.lines[1].overruns, 2);
  EXPECT_EQ(b.lines[1].worst_ratio, 7.5);
  EXPECT_EQ(b.lines[ComputeLedger::collective].kernels, 9);
  EXPECT_THROW(ComputeLedger::from_flat(std::vector<double>(3)), std::length_error);
}

// The steady clock in seconds, as SerialComm reads it.
double steady_seconds() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

TEST(compute, the_clock_reads_wall_time_over_the_dilation_and_splits_inherit_it) {
  SerialComm comm;
  comm.set_time_dilation(4);
  const std::unique_ptr<Comm> part = comm.split(0, 0);
  for (const Comm* c : {static_cast<const Comm*>(&comm), static_cast<const Comm*>(part.get())}) {
    const double before = steady_seconds();
    const double now = c->now();
    const double after = steady_seconds();
    EXPECT_GE(now, before / 4);
    EXPECT_LE(now, after / 4);
  }
  // A communicator that reads another's clock sets that one's.
  SerialComm alone(static_cast<Comm&>(comm));  // (not a copy of comm)
  alone.set_time_dilation(2);
  const double before = steady_seconds();
  const double now = comm.now();
  EXPECT_GE(now, before / 2);
  // wulf's own collectives wrap the run's communicator: the dilation reaches it.
  SerialComm inner;
  OwnCollectivesComm reducing(inner, OwnCollectives{"wulf-binomial", "binomial", "linear-sync"}, ReduceLayout{});
  reducing.set_time_dilation(8);
  const double before8 = steady_seconds();
  const double now8 = inner.now();
  EXPECT_GE(now8, before8 / 8);
  EXPECT_LT(now8, before8 / 4);
  EXPECT_THROW(comm.set_time_dilation(0), std::invalid_argument);
  EXPECT_THROW(comm.set_time_dilation(std::nan("")), std::invalid_argument);
}

TEST(compute, the_record_holds_each_ranks_budget_and_warns_of_overruns) {
  std::vector<ComputeLedger> ranks(2);
  ranks[0].lines[0] = {10, 0.5, 1.0, 0, 0.05};
  ranks[1].lines[1] = {10, 0.9, 0.1, 3, 2.54};  // backward on rank 1, 2.54 times its budget
  ranks[1].lines[ComputeLedger::collective] = {4, 0, 0.01, 0, 0};
  Json record = {{"phases", {{"ranks", Json::array({Json::object(), Json::object()})}}}};
  const std::string warning = add_compute_budget(record, ranks, 10, "testbed");
  EXPECT_EQ(warning,
            "wulf train: warning: 3 of 24 kernels took longer than their budget (worst: backward on rank 1, 2.5 "
            "times it): the dilation 10 is too small for this machine's arithmetic");
  EXPECT_TRUE(record.at("dilation_too_small").get<bool>());
  const Json& b1 = record.at("phases").at("ranks").at(1).at("compute_budget");
  EXPECT_EQ(b1.at("backward").at("charged_s").get<double>(), 0.1);
  EXPECT_EQ(b1.at("backward").at("charged_wall_s").get<double>(), 1.0);
  EXPECT_EQ(b1.at("backward").at("real_s").get<double>(), 0.9);
  EXPECT_EQ(b1.at("overruns").get<long long>(), 3);
  EXPECT_EQ(record.at("compute_budget").at("worst").at("rank").get<int>(), 1);
  EXPECT_EQ(record.at("compute_budget").at("overruns").get<long long>(), 3);
  // On --engine real there is no dilation: the profile is what is short.
  const std::string real = add_compute_budget(record, ranks, 1, "real");
  EXPECT_NE(real.find("the profile's times are shorter than this machine's arithmetic"), std::string::npos) << real;
  // No overrun: no warning, and the record says so.
  ranks[1].lines[1].overruns = 0;
  EXPECT_EQ(add_compute_budget(record, ranks, 10, "testbed"), "");
  EXPECT_FALSE(record.at("dilation_too_small").get<bool>());
}

// The options resolved as the front end resolves them (no launch).
TrainJob resolved(std::vector<std::string> args) {
  const auto options = train_options();
  args.insert(args.begin(), {"--problem", "encoder:8", "--epochs", "1"});
  return resolve(parse_train(args, options));
}

// args are refused before any rank starts, with a message holding every fragment.
void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& fragments) {
  try {
    resolved(args);
    ADD_FAILURE() << "not refused";
  } catch (const InputError& e) {
    for (const std::string& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << "'" << f << "' not in: " << e.what();
  }
}

const std::string toy4 = std::string(WULF_TEST_PLATFORMS) + "/toy4.xml";
const std::string profile = std::string(WULF_TEST_PLATFORMS) + "/example.profile";

TEST(compute, each_engine_takes_its_own_compute_modes) {
  // seq charges nothing.
  expect_refused({"--compute", "calibrated", "--profile", profile}, {"--compute is for --engine sim, testbed or real"});
  expect_refused({"--profile", profile}, {"--profile is for --compute calibrated"});
  expect_refused({"--numerics", "off"}, {"--numerics off", "--engine seq"});
  // real: the wall clock, or calibrated padding.
  expect_refused({"--engine", "real", "--compute", "flops"},
                 {"--compute flops on --engine real", "use --engine testbed --platform FILE"});
  expect_refused({"--engine", "real", "--compute", "measured"}, {"--compute measured on --engine real"});
  expect_refused({"--engine", "real", "--numerics", "off"}, {"--numerics off on --engine real", "--compute calibrated"});
  expect_refused({"--engine", "real", "--compute", "calibrated"}, {"--compute calibrated needs --profile"});
  expect_refused({"--engine", "real", "--profile", profile}, {"--profile is for --compute calibrated"});
  // sim: as before, and wall means nothing there.
  expect_refused({"--engine", "sim", "--platform", toy4, "--compute", "wall"}, {"--compute wall on --engine sim"});
  expect_refused({"--engine", "sim", "--platform", toy4, "--profile", profile},
                 {"--profile is for --compute calibrated"});
  // testbed: a platform, flops or calibrated, a dilation of at least 1.
  expect_refused({"--engine", "testbed"}, {"--engine testbed needs --platform FILE.xml"});
  expect_refused({"--engine", "testbed", "--platform", toy4, "--compute", "measured"},
                 {"--compute measured on --engine testbed"});
  expect_refused({"--engine", "testbed", "--platform", toy4, "--compute", "wall"},
                 {"--compute wall on --engine testbed"});
  for (const char* d : {"0.5", "0", "-3"})
    expect_refused({"--engine", "testbed", "--platform", toy4, std::string("--dilation=") + d},
                   {"--dilation: ", " must be at least 1"});
  for (const char* d : {"inf", "nan", "ten"})
    expect_refused({"--engine", "testbed", "--platform", toy4, std::string("--dilation=") + d}, {"--dilation", "not a number"});
  // At most 600: TCP's least retransmission timeout dilated (200 ms D) reaches Linux's largest.
  for (const char* d : {"601", "1e300"})
    expect_refused({"--engine", "testbed", "--platform", toy4, std::string("--dilation=") + d},
                   {"--dilation: ", " is more than 600"});

  EXPECT_EQ(resolved({}).compute.mode, ComputeMode::wall);
  EXPECT_EQ(resolved({"--engine", "real"}).compute.mode, ComputeMode::wall);
  const TrainJob real = resolved({"--engine", "real", "--compute", "calibrated", "--profile", profile, "--numerics", "off"});
  EXPECT_EQ(real.compute.mode, ComputeMode::calibrated);
  EXPECT_EQ(real.compute.dilation, 1.0);
  EXPECT_EQ(resolved({"--engine", "sim", "--platform", toy4}).compute.mode, ComputeMode::flops);
}

TEST(compute, a_testbed_job_records_its_dilation_and_what_if) {
  const TrainJob chosen = resolved({"--engine", "testbed", "--platform", toy4, "--numerics", "off", "--speed-scale",
                                    "2", "--dilation", "12.5"});
  EXPECT_EQ(chosen.compute.mode, ComputeMode::flops);
  EXPECT_EQ(chosen.compute.dilation, 12.5);
  EXPECT_FALSE(chosen.compute.numerics);
  const Json& j = chosen.config_json;
  EXPECT_EQ(j.at("engine").get<std::string>(), "testbed");
  EXPECT_EQ(j.at("dilation").get<double>(), 12.5);
  EXPECT_EQ(j.at("compute").get<std::string>(), "flops");
  EXPECT_EQ(j.at("platform").get<std::string>(), toy4);
  EXPECT_EQ(j.at("what_if").at("speed_scale").get<double>(), 2.0);
  EXPECT_EQ(j.at("what_if").at("bw_scale").get<double>(), 1.0);
  EXPECT_TRUE(j.contains("ranks_per_host"));
  EXPECT_TRUE(j.contains("placement"));
  // Without --dilation the front end chooses it: 0 until then, null in the record.
  const TrainJob open = resolved({"--engine", "testbed", "--platform", toy4, "--compute", "calibrated", "--profile",
                                  profile});
  EXPECT_EQ(open.compute.dilation, 0.0);
  EXPECT_TRUE(open.config_json.at("dilation").is_null());
  EXPECT_EQ(open.config_json.at("profile").get<std::string>(), profile);
}

// The testbed's ranks are mpirun's processes on this machine, as real's are: the memory
// estimate counts each rank process (not one process of simulated ranks, as sim's).
TEST(compute, a_testbed_run_is_counted_in_memory_like_a_real_one_on_this_machine) {
  const TrainJob testbed = resolved({"--engine", "testbed", "--platform", toy4, "--np", "2", "--dilation", "10"});
  const TrainJob real = resolved({"--engine", "real", "--np", "2"});
  const Json& t = testbed.config_json.at("memory_estimate");
  const Json& r = real.config_json.at("memory_estimate");
  EXPECT_EQ(t.at("where").get<std::string>(), "2 rank processes on this machine");
  EXPECT_EQ(t.at("machine_bytes"), r.at("machine_bytes"));
  EXPECT_EQ(t.at("process_bytes"), r.at("process_bytes"));
}

}  // namespace
}  // namespace wulf
