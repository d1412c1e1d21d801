// --sim-messages (issue 34): under smpirun the messages of wulf's own schedules (overlap's
// buckets, the hierarchical allreduce, wulf's own reduces and broadcasts) travel as SimGrid
// comms between mailboxes (s4u, the default; sim/s4u_messages.cpp) or as SMPI's requests
// (smpi). Both give the same values to the bit, and the same simulated times within 1e-9 s
// an iteration: SimGrid's clock itself is kept to surf/precision, 1e-9 s. A third, fifo, sends
// the messages to one rank one after another (the testbed's Open MPI over TCP).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cmath>
#include <optional>

#include <unistd.h>

namespace wulf {
namespace {

using namespace testing_support;

constexpr double clock_tolerance_s = 1e-9;

// The two records of one job, one per --sim-messages, agree: values (where there are any),
// times, and each names its own choice.
void expect_same_run(const Json& s4u, const Json& smpi) {
  EXPECT_EQ(s4u.at("config").at("sim_messages").get<std::string>(), "s4u");
  EXPECT_EQ(smpi.at("config").at("sim_messages").get<std::string>(), "smpi");
  if (s4u.at("config").at("numerics").get<bool>()) {
    expect_same_history(s4u, smpi, "test_rmse");
    expect_same_history(s4u, smpi, "train_error");
  }
  const auto& a = s4u.at("history");
  const auto& b = smpi.at("history");
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i].at("time_s").get<double>(), b[i].at("time_s").get<double>(), clock_tolerance_s)
        << "iteration " << i;
  EXPECT_GT(s4u.at("final").at("time_s").get<double>(), 0.0);
}

void expect_same_both_ways(const TestDir& dir, const std::string& name, const std::vector<std::string>& job) {
  SCOPED_TRACE(name);
  expect_same_run(train_record(dir, name + "-s4u", job),
                  train_record(dir, name + "-smpi", with(job, {"--sim-messages", "smpi"})));
}

const std::vector<std::string> function_problem{"--problem", "function", "--epochs",    "2",
                                                "--block",   "64",       "--precision", "double"};

// Overlap's buckets, one per tensor, under each of its allreduces on two DGX-1 servers
// (NVLink within, 4 x 100 Gbit/s between), and on toy4's Fast Ethernet, where SMPI's default
// factors price a message by its size (envelope included) and every message is under SMPI's
// detached-send threshold, also with --eager-limit, which lets a message flow before its
// receive is posted.
TEST(sim_messages, overlaps_buckets_take_smpis_values_and_times) {
  TestDir dir;
  for (const char* algorithm : {"ring", "rdb", "rabenseifner", "hierarchical", "hierarchical-rabenseifner"})
    expect_same_both_ways(
        dir, std::string("dgx-") + algorithm,
        with(function_problem, {"--engine", "sim", "--np", "16", "--platform", wulf_platform("dgx1-v100.xml"),
                                "--strategy", "overlap", "--bucket-bytes", "0", "--bucket-allreduce", algorithm}));
  const std::vector<std::string> toy = with(function_problem, {"--engine", "sim", "--np", "4", "--platform", toy4,
                                                               "--strategy", "overlap", "--bucket-bytes", "20000"});
  expect_same_both_ways(dir, "toy", toy);
  expect_same_both_ways(dir, "toy-eager", with(toy, {"--eager-limit", "4096"}));
}

// smpirun's process runs under Debian's tcmalloc where it is installed (dev.sh installs it),
// for speed alone: with LD_PRELOAD set empty it runs glibc's malloc, and the values and the
// simulated times are the same to the bit. Each record names its allocator.
TEST(sim_messages, the_allocator_changes_no_value_and_no_simulated_time) {
  TestDir dir;
  const std::vector<std::string> job = with(function_problem, {"--engine", "sim", "--np", "4", "--platform", toy4,
                                                               "--strategy", "overlap", "--bucket-bytes", "0"});
  const Json chosen = [&] {
    const ScopedEnv unset("LD_PRELOAD", std::nullopt);
    return train_record(dir, "chosen", job);
  }();
  const Json glibc = [&] {
    const ScopedEnv empty("LD_PRELOAD", "");
    return train_record(dir, "glibc", job);
  }();
  const bool installed = ::access("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4", R_OK) == 0 ||
                         ::access("/usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4", R_OK) == 0 ||
                         ::access("/usr/lib/libtcmalloc_minimal.so.4", R_OK) == 0;
  EXPECT_EQ(chosen.at("config").at("sim_malloc").get<std::string>(), installed ? "tcmalloc" : "glibc");
  EXPECT_EQ(glibc.at("config").at("sim_malloc").get<std::string>(), "glibc");
  expect_same_history(chosen, glibc, "train_error");
  expect_same_history(chosen, glibc, "test_rmse");
  expect_same_history(chosen, glibc, "time_s");
  // An LD_PRELOAD the loader cannot open is skipped (glibc's malloc runs): the record says so.
  const Json missing = [&] {
    const ScopedEnv gone("LD_PRELOAD", "/nonexistent/libtcmalloc.so");
    return train_record(dir, "missing", job);
  }();
  EXPECT_EQ(missing.at("config").at("sim_malloc").get<std::string>(),
            "glibc (LD_PRELOAD=/nonexistent/libtcmalloc.so could not be preloaded: /nonexistent/libtcmalloc.so is no "
            "readable file)");
  expect_same_history(chosen, missing, "time_s");
}

// wulf's own reduce and broadcast trees (the root strategy) on 24 of Bunyip's CPUs; then its
// scatter-allgather broadcast, whose receives take what comes, with an eager limit, time-only.
TEST(sim_messages, wulfs_own_reduces_and_broadcasts_take_smpis_values_and_times) {
  TestDir dir;
  const std::vector<std::string> root =
      with(function_problem, {"--engine", "sim", "--np", "24", "--platform", wulf_platform("bunyip.xml"), "--strategy",
                              "root", "--reduce", "wulf-binomial"});
  expect_same_both_ways(dir, "root", with(root, {"--bcast", "binomial"}));
  expect_same_both_ways(dir, "root-scatter-eager",
                        with(root, {"--bcast", "scatter-allgather", "--eager-limit", "65536", "--numerics", "off"}));
}

// Four hosts, each on a Fast Ethernet link of its own, each charging an overhead per message sent
// with MPI_Isend (smpi/ois: 20 us and 1 ns a byte; SMPI charges smpi/os only to blocking sends,
// which wulf's schedules make none of), or none.
std::string four_hosts(bool overhead) {
  std::string xml = R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="four" routing="Full">
)";
  for (int h = 0; h < 4; ++h)
    xml += fmt::format(R"(    <host id="h{0}" speed="1Gf">{1}</host>
    <link id="l{0}" bandwidth="12.5MBps" latency="50us"/>
)",
                       h, overhead ? R"(<prop id="smpi/ois" value="0:2e-5:1e-9"/>)" : "");
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b)
      xml += fmt::format(R"(    <route src="h{}" dst="h{}"><link_ctn id="l{}"/><link_ctn id="l{}"/></route>
)",
                         a, b, a, b);
  return xml + "  </zone>\n</platform>\n";
}

// Where the hosts charge an overhead per message, which only SMPI's requests pay, the
// messages stay SMPI's: the s4u run is the smpi run to the bit, and slower than on the same
// hosts without it (1.2%: 1.8744 against 1.8524 s; more than 0.5% asked).
TEST(sim_messages, per_message_overheads_keep_smpis_requests) {
  TestDir dir;
  auto job = [&](const std::string& platform) {
    return with(function_problem,
                {"--engine", "sim", "--np", "4", "--platform", dir.write(platform, four_hosts(platform == "os.xml")),
                 "--strategy", "overlap", "--bucket-bytes", "0"});
  };
  const Json s4u = train_record(dir, "s4u", job("os.xml"));
  const Json smpi = train_record(dir, "smpi", with(job("os.xml"), {"--sim-messages", "smpi"}));
  expect_same_history(s4u, smpi, "time_s");
  const Json plain = train_record(dir, "plain", job("plain.xml"));
  EXPECT_GT(s4u.at("final").at("time_s").get<double>(), 1.005 * plain.at("final").at("time_s").get<double>());
}

// Two hosts of 1 Gflop/s, 100 Mbit/s and 100 us apart.
std::string two_hosts(const TestDir& dir) {
  return dir.write("two.xml", R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="two" routing="Full">
    <host id="h0" speed="1Gf"/>
    <host id="h1" speed="1Gf"/>
    <link id="l0" bandwidth="12.5MBps" latency="50us"/>
    <link id="l1" bandwidth="12.5MBps" latency="50us"/>
    <route src="h0" dst="h1"><link_ctn id="l0"/><link_ctn id="l1"/></route>
  </zone>
</platform>
)");
}

// --sim-messages fifo: the sends from one rank to another go one after another, each once
// the one before it is delivered (Open MPI over TCP: one socket a peer). Two ranks on two
// hosts, overlap's 3 buckets of the function net all but at once (its backward pass is
// short), each a ring of 2 steps: under s4u their messages share the link and bucket 0, the
// smallest, is done first (22 ms exposed); under fifo its second step waits behind bucket 1's
// first, the largest (232 ms). The same values to the bit, and the whole run within 10%
// (fifo is 5% slower: each message waits for the latency of the one before it, 2 x 50 us and
// SMPI's latency factor). With --eager-limit 4096 every bucket message (10 kB) goes by Open
// MPI's rendezvous handshake: the envelope, the receiver's answer at its next call, the data at
// the sender's next call after that: the same values, 2.5% slower (two more latencies a
// message, and the calls). Then every allreduce of overlap on two DGX-1 servers, one bucket a
// tensor: the same values under fifo, with and without the handshake, as under s4u, and no
// rank waits for ever.
TEST(sim_messages, fifo_sends_to_one_rank_one_after_another) {
  TestDir dir;
  const std::string two = two_hosts(dir);
  const std::vector<std::string> job = with(function_problem, {"--engine", "sim", "--np", "2", "--platform", two,
                                                               "--strategy", "overlap", "--bucket-bytes", "20000"});
  const Json shared = train_record(dir, "shared", job);
  const Json fifo = train_record(dir, "fifo", with(job, {"--sim-messages", "fifo"}));
  EXPECT_EQ(fifo.at("config").at("sim_messages").get<std::string>(), "fifo");
  expect_same_history(shared, fifo, "train_error");
  expect_same_history(shared, fifo, "test_rmse");
  const Json& a = shared.at("history").at(1);
  const Json& b = fifo.at("history").at(1);
  ASSERT_EQ(a.at("buckets").get<double>(), 3);
  EXPECT_LT(a.at("bucket_0_exposed_s").get<double>(), 0.04);
  EXPECT_GT(b.at("bucket_0_exposed_s").get<double>(), 0.2);
  EXPECT_GT(b.at("bucket_0_exposed_s").get<double>(), 4 * a.at("bucket_0_exposed_s").get<double>());
  const double t_shared = shared.at("final").at("time_s").get<double>();
  const double t_fifo = fifo.at("final").at("time_s").get<double>();
  EXPECT_GT(t_fifo, t_shared);
  EXPECT_LT(t_fifo, 1.1 * t_shared);
  // The handshake from the testbed's eager limit (4 MiB: none of these messages), or the one given.
  EXPECT_EQ(fifo.at("config").at("protocol").at("fifo_handshake_bytes").get<long long>(), 4194304);
  const Json asked = train_record(dir, "handshake", with(job, {"--sim-messages", "fifo", "--eager-limit", "4096"}));
  EXPECT_EQ(asked.at("config").at("protocol").at("fifo_handshake_bytes").get<long long>(), 4096);
  expect_same_history(shared, asked, "train_error");
  expect_same_history(shared, asked, "test_rmse");
  const double t_asked = asked.at("final").at("time_s").get<double>();
  EXPECT_GT(t_asked, 1.01 * t_fifo);
  EXPECT_LT(t_asked, 1.1 * t_fifo);
  for (const char* algorithm : {"ring", "rdb", "rabenseifner", "hierarchical", "hierarchical-rabenseifner", "rings"}) {
    SCOPED_TRACE(algorithm);
    const std::vector<std::string> dgx =
        with(function_problem, {"--engine", "sim", "--np", "16", "--platform", wulf_platform("dgx1-v100.xml"),
                                "--strategy", "overlap", "--bucket-bytes", "0", "--bucket-allreduce", algorithm});
    const Json plain = train_record(dir, std::string("dgx-") + algorithm, dgx);
    const std::vector<std::string> fifo_dgx = with(dgx, {"--sim-messages", "fifo"});
    expect_same_history(plain, train_record(dir, std::string("dgx-fifo-") + algorithm, fifo_dgx), "train_error");
    expect_same_history(plain,
                        train_record(dir, std::string("dgx-handshake-") + algorithm,
                                     with(fifo_dgx, {"--eager-limit", "4096"})),
                        "train_error");
  }
}

// --sim-messages fifo: a send queued behind another to the same rank goes on the wire as soon
// as that one is delivered, also while its rank computes (Open MPI has written it into the
// socket behind it). A net of three layers on two hosts: the last two, backward first, each a
// bucket of 1 MB, then 0.5 s of backward compute in the first. Bucket 1's first step (500 kB,
// 40 ms) waits behind bucket 0's, then goes during that compute: the communication left after
// the backward pass is s4u's within 2% (0.181 against 0.180 s), where a send that waited for
// its rank's next call would add that step and its answer (0.272 s).
TEST(sim_messages, fifo_sends_queued_behind_another_go_on_while_the_rank_computes) {
  TestDir dir;
  const std::string net = dir.write("queue.layers", R"(wulf-layers 1
name queue
samples 4 0
layer c other 1 backward=250000000 1
layer b linear 1 backward=1 250000
layer a linear 1 backward=1 250000
)");
  const std::vector<std::string> job{"--problem",          "layers:" + net, "--numerics", "off", "--engine", "sim",
                                     "--np",               "2",             "--platform", two_hosts(dir),
                                     "--strategy",         "overlap",       "--bucket-bytes", "1000000",
                                     "--bucket-allreduce", "ring",          "--block",    "4",   "--epochs", "1",
                                     "--test-size",        "0"};
  const Json shared = train_record(dir, "s4u", job);
  const Json fifo = train_record(dir, "fifo", with(job, {"--sim-messages", "fifo"}));
  const double exposed_s4u = shared.at("history").at(1).at("exposed_comm_s").get<double>();
  const double exposed_fifo = fifo.at("history").at(1).at("exposed_comm_s").get<double>();
  ASSERT_EQ(fifo.at("history").at(1).at("buckets").get<double>(), 3);
  EXPECT_NEAR(exposed_fifo, exposed_s4u, 0.02 * exposed_s4u);
  EXPECT_LT(exposed_fifo, 0.2);
}

TEST(sim_messages, a_bad_choice_is_refused_naming_it) {
  expect_train_refused(
      {"--problem", "xor", "--engine", "sim", "--np", "2", "--platform", toy4, "--sim-messages", "fast"},
      {"--sim-messages", "fast", "s4u, fifo or smpi"});
  expect_train_refused({"--problem", "xor", "--sim-messages", "smpi"}, {"--sim-messages", "--engine sim"});
}

}  // namespace
}  // namespace wulf
