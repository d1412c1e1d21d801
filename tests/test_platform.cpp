// `wulf platform info` and `wulf platform bench` on our platforms and on SimGrid's other
// topologies, and the platform faults that must stop a run before any rank starts.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "comm/compute.hpp"
#include "data/dataset.hpp"
#include "util/json.hpp"
#include "util/machine.hpp"
#include "engine/process.hpp"
#include "comm/collective_choice.hpp"
#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "job/job_json.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <tuple>

#include "test_support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace wulf {
namespace {

using namespace testing_support;

std::string platform(const std::string& name) { return test_platform(name); }

TEST(platform, info_reports_what_simgrid_loaded) {
  TestDir dir;
  expect_success({"platform", "info", toy4, "--out", dir.file("info.json")}, {"4 hosts, 4 cores", "100 Mbit/s, 50 us"});
  const Json r = read_json_file(dir.file("info.json"));
  const auto& hosts = r.at("platform").at("hosts");
  ASSERT_EQ(hosts.size(), 4u);
  EXPECT_EQ(hosts[0].at("speed_flops").get<double>(), 1e9);
  // toy-0 -> toy-1: up link, backbone, down link: 50 + 10 + 50 us.
  const auto& route = r.at("platform").at("routes").at(0);
  EXPECT_EQ(route.at("links").size(), 3u);
  EXPECT_NEAR(route.at("latency_s").get<double>(), 110e-6, 1e-12);
}

// The whole network: for every pair of zones, the slowest route between them with its
// bottleneck link named, wherever it is; SimGrid's own __loopback__ is no platform link.
// Two clusters, left (hosts l-0 .. l-<left_hosts - 1>) and right (r-0 .. r-2), whose backbones
// meet through a 1 MB/s link, "narrow", far slower than anything inside either.
std::string two_clusters(const TestDir& dir, const std::string& name, int left_hosts) {
  return dir.write(name, R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="left" prefix="l-" suffix="" radical="0-)" + std::to_string(left_hosts - 1) +
                         R"(" speed="1Gf" bw="125MBps" lat="50us"/>
    <cluster id="right" prefix="r-" suffix="" radical="0-2" speed="1Gf" bw="125MBps" lat="50us"/>
    <link id="narrow" bandwidth="1MBps" latency="1ms"/>
    <zoneRoute src="left" dst="right" gw_src="l-left_router" gw_dst="r-right_router">
      <link_ctn id="narrow"/>
    </zoneRoute>
  </zone>
</platform>
)");
}

TEST(platform, info_names_the_slowest_route_between_every_pair_of_zones) {
  TestDir dir;
  const std::string file = two_clusters(dir, "two.xml", 3);
  expect_success({"platform", "info", file, "--out", dir.file("info.json")},
                 {"left -> right: l-0 -> r-0: ", "bottleneck 8 Mbit/s (narrow)"});
  const Json p = read_json_file(dir.file("info.json")).at("platform");
  for (const Json& l : p.at("links")) EXPECT_NE(l.at("name").get<std::string>(), "__loopback__");
  ASSERT_EQ(p.at("routes").size(), 4u);  // left-left, left-right, right-left, right-right
  for (const Json& r : p.at("routes")) {
    const bool across = r.at("from_zone") != r.at("to_zone");
    EXPECT_EQ(r.at("bottleneck_link") == "narrow", across) << r;
    EXPECT_EQ(r.at("bottleneck_Bps").get<double>(), across ? 1e6 : 125e6) << r;
  }
  expect_success({"platform", "info", platform("no-route.xml")}, {"a -> c: no route"});
}

// Names come from the user's file: a quote or a backslash in one is escaped in
// wulf-platform's JSON, and reaches the summary and the record unchanged.
TEST(platform, info_reads_names_with_quotes_and_backslashes) {
  TestDir dir;
  const std::string file = dir.write("odd.xml", R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z&quot;1\" routing="Full">
    <prop id="wulf:note" value="a &quot;quoted\&#9;note"/>
    <host id="a&quot;b\c" speed="1Gf"/>
    <host id="d'e" speed="1Gf"/>
    <link id="l&quot;\" bandwidth="125MBps" latency="50us"/>
    <route src="a&quot;b\c" dst="d'e"><link_ctn id="l&quot;\"/></route>
  </zone>
</platform>
)");
  expect_success({"platform", "info", file, "--out", dir.file("info.json")},
                 {"a\"b\\c (zone z\"1\\)", "a\"b\\c -> d'e: 1 links"});
  const Json r = read_json_file(dir.file("info.json"));
  const Json& platform = r.at("platform");
  EXPECT_EQ(platform.at("hosts").at(1).at("name").get<std::string>(), "d'e");
  EXPECT_EQ(platform.at("links").at(0).at("name").get<std::string>(), "l\"\\");
  EXPECT_EQ(platform.at("zone").at("properties").at("wulf:note").get<std::string>(), "a \"quoted\\\tnote");
}

// A platform of one cluster, c, in a Full zone w: <cluster id="c" suffix="" speed="1Gf"
// bw="125MBps" lat="50us" ATTRIBUTES/> (its prefix and radical among them).
std::string cluster_platform(const TestDir& dir, const std::string& name, const std::string& attributes) {
  return dir.write(name, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                         "<platform version=\"4.1\"><zone id=\"w\" routing=\"Full\"><cluster id=\"c\" suffix=\"\" "
                         "speed=\"1Gf\" bw=\"125MBps\" lat=\"50us\" " + attributes + "/></zone></platform>\n");
}

// A name is printed one to a line (a hostfile, wulf-platform's lines, `platform info`), so a
// line break in one would forge a line of output (prefix="h&#10;evil": `platform info`
// printed it raw, and train said "it has no hosts"), an escape sequence recolour the
// terminal, a space split a hostfile's line. A zone, host or link name that holds a blank,
// a control or format character, or bytes that are not UTF-8 is refused by every command
// that reads a platform, naming the element, in one line: the same rule for info, train,
// bench and the testbed's hosts.
TEST(platform, names_that_could_forge_output_are_refused_naming_the_element) {
  TestDir dir;
  const auto cluster = [&](const std::string& name, const std::string& prefix) {
    return cluster_platform(dir, name, "prefix=\"" + prefix + "\" radical=\"0-1\"");
  };
  const auto full = [&](const std::string& name, const std::string& zone, const std::string& host,
                        const std::string& link) {
    return dir.write(name, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                           "<platform version=\"4.1\"><zone id=\"" + zone + "\" routing=\"Full\">"
                           "<host id=\"" + host + "\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>"
                           "<link id=\"" + link + "\" bandwidth=\"1MBps\" latency=\"1us\"/>"
                           "<route src=\"" + host + "\" dst=\"b\"><link_ctn id=\"" + link + "\"/></route>"
                           "</zone></platform>\n");
  };
  const std::vector<std::pair<std::string, std::string>> cases{
      {cluster("newline.xml", "h&#10;evil"), "host 'h\\x0aevil0' (zone c): the name holds \\x0a; a name may hold no blank, control or format "
                                               "character"},
      {cluster("escape.xml", "h\x1b[31m"), "host 'h\\x1b[31m0' (zone c): the name holds \\x1b"},
      {cluster("space.xml", "h "), "host 'h 0' (zone c): the name holds a space"},
      {cluster("tab.xml", "h&#9;"), "host 'h\\x090' (zone c): the name holds \\x09"},
      {cluster("reversed.xml", "h\xe2\x80\xae"), "host 'h\\xe2\\x80\\xae0' (zone c): the name holds U+202E"},
      {cluster("latin1.xml", "caf\xe9"), "host 'caf\\xe90' (zone c): the name is not UTF-8 text (byte \\xe9)"},
      {full("zone.xml", "z&#10;x", "a", "l"), "zone 'z\\x0ax': the name holds \\x0a"},
      {full("link.xml", "z", "a", "l&#13;x"), "link 'l\\x0dx': the name holds \\x0d"},
      {dir.write("group.xml", "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                              "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\">"
                              "<prop id=\"wulf:group\" value=\"A B\"/></host></zone></platform>\n"),
       "host 'a': its wulf:group 'A B': the name holds a space"}};
  for (const auto& [file, why] : cases) {
    SCOPED_TRACE(file);
    const std::string named = "platform " + file + ": " + why;
    const Outcome info = expect_refused({"platform", "info", file}, {named});
    EXPECT_EQ(std::count(info.err.begin(), info.err.end(), '\n'), 1) << "one line: " << info.err;
    EXPECT_TRUE(plain_text(info.err.substr(0, info.err.size() - 1))) << info.err;
    const Outcome train = expect_train_refused(
        {"--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np", "2", "--platform", file},
        {named});
    EXPECT_EQ(std::count(train.err.begin(), train.err.end(), '\n'), 1) << "one line: " << train.err;
    expect_refused({"platform", "bench", file, "--np", "2"}, {named});
    PlatformHost b;
    b.name = "b", b.cores = 1;
    expect_input_error([&] { plan_testbed(file, {b}, 1, 10, 1.0); }, {named}, "the testbed's plan took the platform");
  }
  // A UTF-8 name is no fault: printed as it is.
  expect_success({"platform", "info", cluster("utf8.xml", "n\xc5\x93ud-")}, {"n\xc5\x93ud-0 (zone c)"});
}

TEST(platform, every_simgrid_topology_is_read_and_measured) {
  for (const char* file : {"fattree.xml", "torus.xml", "dragonfly.xml", "routed.xml", "flat64.xml"}) {
    SCOPED_TRACE(file);
    expect_success({"platform", "info", platform(file)});
    expect_success({"platform", "bench", platform(file), "--np", "2", "--elements", "1024", "--collectives",
                    "allreduce", "--sizes", "8,65536"},
                   {"allreduce"});
  }
}

TEST(platform, bench_measures_latency_bandwidth_and_collectives_deterministically) {
  TestDir dir;
  const std::vector<std::string> args{"platform",   "bench",     toy4,      "--np",     "2,4",
                                      "--elements", "1024,8192", "--sizes", "8,1048576"};
  const Json a = record_of(dir, "a", args), b = record_of(dir, "b", args);
  const auto& pp = a.at("pingpong");
  ASSERT_EQ(pp.size(), 2u);
  EXPECT_LT(pp[0].at("time_s").get<double>(), pp[1].at("time_s").get<double>());
  // A 1 MB message over a 100 Mbit/s link: about 84 ms one way, whatever SMPI's factors.
  EXPECT_GT(pp[1].at("time_s").get<double>(), 0.08);
  EXPECT_LT(pp[1].at("time_s").get<double>(), 0.12);
  const double bw = a.at("summary").at("bandwidth_Bps").get<double>();
  EXPECT_GT(bw, 0.8 * 12.5e6);
  EXPECT_LE(bw, 12.5e6);
  // 3 collectives x 2 rank counts x 2 sizes.
  EXPECT_EQ(a.at("collectives").size(), 12u);
  for (std::size_t i = 0; i < 12; ++i)
    EXPECT_EQ(a.at("collectives")[i].at("time_s").get<double>(), b.at("collectives")[i].at("time_s").get<double>());
  // The record says how each time is taken, as --help does.
  EXPECT_NE(a.at("config").at("measured_as").at("collectives").get<std::string>().find("last rank"), std::string::npos);
  EXPECT_NE(a.at("config").at("measured_as").at("pingpong").get<std::string>().find("half the round trip"),
            std::string::npos);
  EXPECT_NE(wulf({"platform", "bench", "--help"}).out.find("the last rank's finish"), std::string::npos);
}

// A small message's ping-pong is its route's latency (far2: 1 ms host to host, SMPI's factors
// 1): the clock starts when both ranks are in step, not as the barrier lets them go (SMPI's
// lets rank 1 go a latency after rank 0, which made it 1.168 ms over 3 round trips).
TEST(platform, a_small_messages_pingpong_takes_its_routes_latency) {
  TestDir dir;
  const Json r = record_of(dir, "far", {"platform", "bench", platform("far2.xml"), "--np", "2", "--sizes", "4",
                                        "--collectives", "allreduce", "--elements", "16"});
  const double one_way = r.at("pingpong").at(0).at("time_s").get<double>();
  EXPECT_GE(one_way, 1e-3);
  EXPECT_LT(one_way, 1.01e-3);  // the bytes at 12.5 MB/s and the ranks' own time: microseconds
  // Each of the --repeat 3 round trips' halves, whose mean is time_s.
  const Json& calls = r.at("pingpong").at(0).at("calls_s");
  ASSERT_EQ(calls.size(), 3u);
  double sum = 0;
  for (const Json& c : calls) {
    EXPECT_GE(c.get<double>(), 1e-3);
    EXPECT_LT(c.get<double>(), 1.01e-3);
    sum += c.get<double>();
  }
  EXPECT_NEAR(sum / 3, one_way, 1e-12);
}

// --back-to-back --gap: compute charged before each call, as training's between its
// allreduces, and rank 0's time in each call. Bat Cave's recursive doubling at p = 8 with
// 16 768 doubles and the 1.36 ms a Table VII block of 16 computes between its calls: under
// SMPI's rendezvous the ranks stay in step (40.3 ms a call); under its eager model (the
// testbed's 4 MiB eager limit) a rank that is ahead sends its next call's first message while
// its partner still receives the last one, the difference grows every other call, and the
// ranks end in a cycle of two calls, 150.4 and 75.0 ms (measured). The testbed falls into a
// like cycle in some runs (197 and 17 ms) and stays in step in others (experiments/testbed).
TEST(platform, a_gap_between_back_to_back_calls_and_each_calls_time) {
  TestDir dir;
  const std::vector<std::string> args{"platform", "bench", std::string(WULF_PLATFORMS_DIR) + "/batcave.xml", "--np",
                                      "8", "--collectives", "allreduce", "--elements", "16768", "--allreduce", "rdb",
                                      "--no-pingpong", "--back-to-back", "--repeat", "40", "--gap", "0.00136"};
  const Json in_step = record_of(dir, "rendezvous", args);
  EXPECT_EQ(in_step.at("config").at("gap_s").get<double>(), 0.00136);
  const Json& row = in_step.at("collectives").at(0);
  const auto calls = row.at("calls_s").get<std::vector<double>>();
  ASSERT_EQ(calls.size(), 40u);
  for (const double t : calls) EXPECT_NEAR(t, 0.0403, 0.0005);
  EXPECT_NEAR(row.at("time_s").get<double>(), 0.0403, 0.0005);  // per call, the gap left out
  std::vector<std::string> eager = args;
  eager.insert(eager.end(), {"--eager-limit", "4194304"});
  const auto cycle = record_of(dir, "eager", eager).at("collectives").at(0).at("calls_s").get<std::vector<double>>();
  ASSERT_EQ(cycle.size(), 40u);
  EXPECT_NEAR(cycle.front(), 0.0403, 0.0005);  // in step at first
  for (std::size_t i = 30; i < 38; i += 2) {
    const double a = std::min(cycle[i], cycle[i + 1]), b = std::max(cycle[i], cycle[i + 1]);
    EXPECT_NEAR(a, 0.0750, 0.002) << i;
    EXPECT_NEAR(b, 0.1504, 0.002) << i;
  }
  // --gap needs --back-to-back.
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"platform", "bench", std::string(WULF_PLATFORMS_DIR) + "/batcave.xml", "--gap", "0.001"}, out, err),
            exit_input);
  EXPECT_NE(err.str().find("--gap is for --back-to-back calls"), std::string::npos) << err.str();
}

// --allreduce default: each row's algorithm is Open MPI 4.1's choice for its ranks and size,
// named with how it was chosen; sizes that share one are measured in one run. 512 doubles
// (4 096 bytes): the ring on 2 ranks, recursive doubling on 4; 40 000 (320 000 bytes):
// Rabenseifner's on both. A named algorithm is every row's.
TEST(platform, bench_names_each_allreduce_rows_algorithm) {
  TestDir dir;
  const std::vector<std::string> args{"platform", "bench", toy4, "--np", "2,4", "--collectives", "allreduce",
                                      "--elements", "512,40000", "--no-pingpong"};
  const Json d = record_of(dir, "default", args);
  ASSERT_EQ(d.at("collectives").size(), 4u);
  const std::vector<std::string> expected{"ring", "rabenseifner", "rdb", "rabenseifner"};
  for (std::size_t i = 0; i < 4; ++i) {
    const Json& row = d.at("collectives")[i];
    EXPECT_EQ(row.at("algorithm").get<std::string>(), expected[i]) << row;
    EXPECT_EQ(row.at("chosen_by").get<std::string>(),
              fmt::format("Open MPI 4.1's choice for {} ranks and {} bytes", row.at("np").get<int>(),
                          row.at("size").get<int>() * 8));
  }
  for (const Json& row : record_of(dir, "ring", with(args, {"--allreduce", "ring"})).at("collectives")) {
    EXPECT_EQ(row.at("algorithm").get<std::string>(), "ring");
    EXPECT_EQ(row.at("chosen_by").get<std::string>(), "--allreduce");
  }
}

// So do the reduce's, bcast's, allgather's and gather's: Open MPI 4.1's choice for their
// ranks and size (each rank's block for the gathers), run on the engine, or the one named.
TEST(platform, bench_names_every_collectives_rows_algorithm) {
  TestDir dir;
  const std::vector<std::string> args{"platform", "bench", toy4, "--np", "2,4", "--collectives",
                                      "reduce,bcast,allgather,gather", "--elements", "512,40000", "--no-pingpong"};
  const Json d = record_of(dir, "default", args);
  std::vector<std::string> names;
  for (const Json& row : d.at("collectives")) {
    names.push_back(row.at("what").get<std::string>() + ":" + row.at("algorithm").get<std::string>());
    EXPECT_EQ(row.at("chosen_by").get<std::string>(),
              fmt::format("Open MPI 4.1's choice for {} ranks and {} bytes", row.at("np").get<int>(),
                          row.at("size").get<int>() * 8));
    EXPECT_GT(row.at("time_s").get<double>(), 0) << row;
  }
  // 4 096 and 320 000 bytes on 2 ranks, then on 4 (coll_tuned_decision_fixed.c, by hand).
  EXPECT_EQ(names, (std::vector<std::string>{"reduce:linear", "reduce:pipeline", "reduce:chain", "reduce:linear",
                                             "bcast:linear", "bcast:linear", "bcast:binomial", "bcast:linear",
                                             "allgather:two-proc", "allgather:two-proc", "allgather:rdb",
                                             "allgather:rdb", "gather:binomial", "gather:linear-sync", "gather:linear",
                                             "gather:linear-sync"}));
  const std::vector<std::string> knomial{"platform", "bench", toy4,      "--np",          "2,4",  "--collectives", "bcast",
                                         "--bcast",  "knomial", "--elements", "512,40000", "--no-pingpong"};
  for (const Json& row : record_of(dir, "knomial", knomial).at("collectives")) {
    EXPECT_EQ(row.at("algorithm").get<std::string>(), "knomial");
    EXPECT_EQ(row.at("chosen_by").get<std::string>(), "--bcast");
  }
}

// --allreduce redbcast: Open MPI's calls the communicator's reduce and bcast, which mpirun
// forces (--reduce, --bcast) or chooses for the ranks and the whole vector's size; each row
// names both with how they were chosen, and under smpirun redbcast is composed of them (SMPI's
// own redbcast runs SMPI's default reduce whatever the run chose: a chain and a binomial tree
// gave the same time to the bit). wulf's own wulf-binomial has no Open MPI number: its
// redbcast runs Open MPI's choice instead, and the row says why.
TEST(platform, bench_redbcast_rows_run_and_name_their_reduce_and_bcast) {
  TestDir dir;
  const std::vector<std::string> args{"platform", "bench",    toy4,       "--np",         "4",
                                      "--collectives", "allreduce", "--allreduce", "redbcast", "--elements",
                                      "512,40000",     "--no-pingpong"};
  const Json d = record_of(dir, "default", args);
  ASSERT_EQ(d.at("collectives").size(), 2u);
  for (const Json& row : d.at("collectives")) {
    const std::string chosen = fmt::format("Open MPI 4.1's choice for 4 ranks and {} bytes", row.at("size").get<int>() * 8);
    EXPECT_EQ(row.at("algorithm").get<std::string>(), "redbcast");
    EXPECT_EQ(row.at("reduce").get<std::string>(),
              open_mpi_choice(Collective::reduce, 4, row.at("size").get<std::size_t>() * 8).name);
    EXPECT_EQ(row.at("bcast").get<std::string>(),
              open_mpi_choice(Collective::bcast, 4, row.at("size").get<std::size_t>() * 8).name);
    EXPECT_EQ(row.at("reduce_chosen_by").get<std::string>(), chosen);
    EXPECT_EQ(row.at("bcast_chosen_by").get<std::string>(), chosen);
  }
  const auto time_with = [&](const std::string& name, const std::string& reduce) {
    const Json r = record_of(dir, name, with(args, {"--reduce", reduce, "--bcast", "binomial"}));
    EXPECT_EQ(r.at("collectives")[1].at("reduce").get<std::string>(), reduce);
    EXPECT_EQ(r.at("collectives")[1].at("reduce_chosen_by").get<std::string>(), "--reduce");
    return r.at("collectives")[1].at("time_s").get<double>();
  };
  const double chain = time_with("chain", "chain"), binomial = time_with("binomial", "binomial");
  EXPECT_GT(chain, 1.1 * binomial) << "a chain of 4 ranks against a binomial tree";
  const Json own = record_of(dir, "own", with(args, {"--reduce", "wulf-binomial"}));
  for (const Json& row : own.at("collectives")) {
    EXPECT_EQ(row.at("reduce").get<std::string>(),
              open_mpi_choice(Collective::reduce, 4, row.at("size").get<std::size_t>() * 8).name);
    EXPECT_NE(row.at("reduce_chosen_by").get<std::string>().find("cannot run --reduce wulf-binomial"),
              std::string::npos);
  }
}

// --back-to-back: the calls in a row with no barrier between them, the time per call. The
// simulation keeps the ranks in step, so a symmetric allreduce takes what it takes after a
// barrier (within 2%: toy4 gives 1.2%), and the time is per call whatever the number of
// calls (within 2%).
TEST(platform, bench_back_to_back_times_calls_in_a_row_per_call) {
  TestDir dir;
  const std::vector<std::string> base{"platform", "bench",  toy4,    "--np",        "4",    "--elements",
                                      "8192",     "--collectives", "allreduce", "--allreduce", "rdb", "--no-pingpong"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const Json barrier = record_of(dir, "barrier", with({"--repeat", "4"}));
  const Json row4 = record_of(dir, "row4", with({"--repeat", "4", "--back-to-back"}));
  const Json row1 = record_of(dir, "row1", with({"--repeat", "1", "--back-to-back"}));
  const double t_barrier = barrier.at("collectives")[0].at("time_s").get<double>();
  const double t4 = row4.at("collectives")[0].at("time_s").get<double>();
  const double t1 = row1.at("collectives")[0].at("time_s").get<double>();
  EXPECT_NEAR(t4, t_barrier, 0.02 * t_barrier);
  EXPECT_NEAR(t4, t1, 0.02 * t1);
  EXPECT_TRUE(row4.at("config").at("back_to_back").get<bool>());
  EXPECT_FALSE(barrier.at("config").at("back_to_back").get<bool>());
  EXPECT_NE(row4.at("config").at("measured_as").at("collectives").get<std::string>().find("back to back"),
            std::string::npos);
}

// --eager-limit: with SMPI's default no data flows before the receive is posted, and
// recursive doubling back to back stays in step. With messages sent eagerly (as the testbed's
// Open MPI sends them), a rank that is ahead pushes its next call's data into a link still
// busy with the current call: at p = 8 the calls fall into a cycle of about 2.9 times the
// time (77 and 154 ms against 40.3, Bat Cave). After a barrier nothing changes.
TEST(platform, bench_eager_limit_lets_early_data_flow) {
  TestDir dir;
  const std::string bat = std::string(WULF_PLATFORMS_DIR) + "/batcave.xml";
  const std::vector<std::string> base{"platform", "bench", bat,    "--np",          "8",   "--elements",
                                      "16768",    "--collectives", "allreduce", "--allreduce", "rdb", "--no-pingpong",
                                      "--repeat", "40"};
  auto time_of = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const Json r = record_of(dir, name, args);
    return std::make_pair(r.at("collectives")[0].at("time_s").get<double>(), r.at("config"));
  };
  const auto [rendezvous, c1] = time_of("rendezvous", {"--back-to-back"});
  const auto [eager, c2] = time_of("eager", {"--back-to-back", "--eager-limit", "4194304"});
  const auto [eager_barrier, c3] = time_of("eager-barrier", {"--eager-limit", "4194304"});
  EXPECT_NEAR(rendezvous, 0.0403, 0.001);
  EXPECT_GT(eager, 1.5 * rendezvous);
  EXPECT_NEAR(eager_barrier, rendezvous, 0.01 * rendezvous);
  EXPECT_TRUE(c1.at("eager_limit_bytes").is_null());
  EXPECT_EQ(c2.at("eager_limit_bytes").get<long long>(), 4194304);
  // The record says which protocol each run had, and why the default is not the testbed's.
  EXPECT_EQ(c1.at("protocol").at("settings").at("smpi/async-small-thresh").get<long long>(), 0);
  EXPECT_NE(c1.at("protocol").at("why_not_the_testbeds").get<std::string>().find("experiments/testbed"),
            std::string::npos);
  EXPECT_EQ(c2.at("protocol").at("settings").at("smpi/send-is-detached-thresh").get<long long>(), 4194304);
  EXPECT_FALSE(c2.at("protocol").contains("why_not_the_testbeds"));
  expect_refused({"platform", "bench", bat, "--eager-limit", "5"}, {"--eager-limit: 5 must be at least 1024"});
  expect_refused({"train", "--problem", "xor", "--eager-limit", "65536"},
                 {"--eager-limit is for --engine sim or --engine testbed"});
}

// --unread-sums: reductions whose sums nobody reads (Comm::set_unread_storage, as a
// time-only training run declares its shared parameters and gradients) move the same
// messages without adding: every simulated time the same to the last bit.
TEST(platform, bench_unread_sums_change_no_simulated_time) {
  TestDir dir;
  const std::vector<std::string> base{"platform",   "bench",       toy4,           "--np",         "2,4",
                                      "--elements", "1024,16768", "--collectives", "allreduce,reduce",
                                      "--no-pingpong", "--repeat", "2"};
  std::vector<std::string> unread = base;
  unread.push_back("--unread-sums");
  const Json a = record_of(dir, "summed", base), b = record_of(dir, "unread", unread);
  ASSERT_EQ(a.at("collectives").size(), 8u);
  ASSERT_EQ(b.at("collectives").size(), 8u);
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(a.at("collectives")[i].at("time_s").get<double>(), b.at("collectives")[i].at("time_s").get<double>()) << i;
  EXPECT_FALSE(a.at("config").at("unread_sums").get<bool>());
  EXPECT_TRUE(b.at("config").at("unread_sums").get<bool>());
}

// A platform's <config> may set the model's parameters (network/..., cpu/..., smpi/bw-factor,
// smpi/lat-factor), each in a range SimGrid runs with; any other key, or a value out of its
// range, is refused by name, in one line, before any rank starts.
// Before, several threads (contexts/nthreads) aborted in malloc, a small stack
// (contexts/stack-size) crashed, an eager limit above SMPI's detached one aborted SimGrid
// mid-start, BMF aborted mid-run, factors SimGrid cannot read crashed the ranks (0 or less:
// an abort), maxmin/precision 0 crashed them, and a key smpirun or wulf sets on the command
// line (network/model, smpi/simulate-computation) was ignored without a word.
TEST(platform, a_config_key_a_run_cannot_take_is_refused_by_name) {
  TestDir dir;
  // Hosts a and b on one link, with a <config> and host a's properties as given.
  const auto two_hosts = [&](const std::string& name, const std::string& config, const std::string& a_props) {
    return dir.write(name, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                           "<platform version=\"4.1\">" + config + "<zone id=\"z\" routing=\"Full\">"
                           "<host id=\"a\" speed=\"1Gf\">" + a_props + "</host><host id=\"b\" speed=\"1Gf\"/>"
                           "<link id=\"l\" bandwidth=\"1MBps\" latency=\"1us\"/>"
                           "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route></zone></platform>\n");
  };
  const auto with_config = [&](const std::string& name, const std::string& key, const std::string& value) {
    return two_hosts(name, "<config><prop id=\"" + key + "\" value=\"" + value + "\"/></config>", "");
  };
  const std::vector<std::tuple<std::string, std::string, std::string>> refused{
      {"contexts/nthreads", "2", "SMPI's ranks crash"},
      {"contexts/stack-size", "16", "with a smaller stack they overflow it"},
      {"smpi/async-small-thresh", "100000", "--eager-limit"},
      {"smpi/simulate-computation", "yes", "wulf charges the compute itself"},
      {"network/model", "CM02", "smpirun sets it"},
      {"network/solver", "bmf", "max-min solver"},
      {"host/model", "ptask_L07", "default host model"},
      {"tracing", "yes", "not part of the platform's model"},
      {"smpi/privatization", "dlopen", "which SimGrid does not know here"},
      {"no/such-key", "1", "which SimGrid does not know here"},
      // The model's own keys, with a value SimGrid crashes on or no network has.
      {"smpi/bw-factor", "garbage", "'garbage' is not bytes:factor"},
      {"smpi/bw-factor", "0:1;65536:-1", "'65536:-1' is not bytes:factor"},
      {"smpi/lat-factor", "0:1e300", "a factor above 0 and at most 1e6"},
      {"maxmin/precision", "0", "to 0: it must be above 0 and at most 0.01"},
      {"network/TCP-gamma", "-1", "to -1: it must be at least 0"}};
  int i = 0;
  for (const auto& [key, value, why] : refused) {
    SCOPED_TRACE(key);
    const std::string file = with_config("config" + std::to_string(i++) + ".xml", key, value);
    const Outcome train = expect_train_refused(
        {"--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np", "2", "--platform", file},
        {"platform " + file + ": its <config> sets " + key, why});
    EXPECT_EQ(std::count(train.err.begin(), train.err.end(), '\n'), 1) << "one line: " << train.err;
    expect_refused({"platform", "bench", file, "--np", "2"}, {"its <config> sets " + key});
  }
  // So is a host's overhead of a message that SMPI cannot read (it aborted mid-run) or that no
  // machine has (1e300 s a message gave 1.8e-303 GFlop/s).
  for (const auto& [value, chunk] : std::vector<std::pair<std::string, std::string>>{
           {"garbage", "'garbage'"}, {"0:1e300:0", "'0:1e300:0'"}, {"0:-1", "'0:-1'"}, {"0:1e-5;64", "'64'"}}) {
    SCOPED_TRACE(value);
    const std::string file =
        two_hosts("overhead" + std::to_string(i++) + ".xml", "", "<prop id=\"smpi/ois\" value=\"" + value + "\"/>");
    expect_train_refused(
        {"--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np", "2", "--platform", file},
        {"platform " + file + ": host 'a': its smpi/ois " + chunk + " is not bytes:seconds[:seconds a byte]"});
  }
  // The model's own keys run, and change the time where they change the model.
  const auto time_with = [&](const std::string& name, const std::string& key, const std::string& value) {
    return record_of(dir, name,
                     {"train", "--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np",
                      "2", "--platform", with_config(name + ".xml", key, value), "--quiet"})
        .at("final")
        .at("time_s")
        .get<double>();
  };
  const double base = time_with("base", "network/crosstraffic", "1");
  EXPECT_LT(time_with("no-cross", "network/crosstraffic", "0"), base);
  EXPECT_GT(time_with("slower", "smpi/bw-factor", "0:0.5"), base);
}

TEST(platform, a_malformed_file_a_route_to_nowhere_or_too_few_cores_stop_the_run) {
  TestDir dir;
  const std::string bad = dir.write("bad.xml", "<?xml version='1.0'?>\n<platform version=\"4.1\"><zone id='z'");
  expect_refused({"platform", "info", bad}, {bad, "SimGrid cannot load it"});

  expect_train_refused({"--problem", "encoder:8", "--block", "4", "--engine", "sim", "--np", "3", "--platform",
                        platform("no-route.xml")},
                       {"no-route.xml", "no route from host 'a' to host 'c'"});
  // Two ranks use only a and b, which reach each other.
  expect_success({"train", "--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np", "2",
                  "--platform", platform("no-route.xml"), "--quiet"});

  // Zones without a route between them: SimGrid 3.32 crashes looking such a route up (a
  // segmentation fault), so the platform helper looks routes up in a child process, and
  // names the pair it was looking up, in one line.
  const std::string zones = platform("no-zone-route.xml");
  const std::string no_route = "no route from host 'c-0' to host 'x' (SimGrid stops looking it up";
  expect_train_refused({"--problem", "encoder:8", "--block", "4", "--engine", "sim", "--np", "3", "--platform", zones},
                       {"no-zone-route.xml", no_route});
  expect_success({"train", "--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np", "2",
                  "--platform", zones, "--quiet"});
  const Outcome info = expect_refused({"platform", "info", zones}, {"no-zone-route.xml", no_route});
  EXPECT_EQ(std::count(info.err.begin(), info.err.end(), '\n'), 1) << info.err;

  expect_refused({"platform", "bench", toy4, "--hosts", "toy-0,nobody"}, {"no host 'nobody'"});
}

// Platforms SimGrid loads (or aborts on) but no machine is like: no hosts, a link of 1e-30
// bytes/s (a message of 1e30 s), a negative latency, a host of no cores (SimGrid's loader
// aborts with a backtrace). Each is refused before any rank starts, by every command that
// reads a platform, in one line naming the file and the link or host.
TEST(platform, impossible_platforms_are_refused_before_any_rank_starts) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"no-hosts.xml", "it has no hosts"},
      {"tiny-bandwidth.xml", "link 'slow': bandwidth 1e-30 bytes/s; wulf takes a finite bandwidth from 1 to 1e+18 bytes/s"},
      {"negative-latency.xml", "latency -1e-05 s; a latency cannot be negative"},
      {"zero-cores.xml", "SimGrid cannot load it: host 'a': core must be a whole number of at least 1"}};
  for (const auto& [name, why] : cases) {
    SCOPED_TRACE(name);
    const std::string file = platform(name);
    const Outcome train = expect_train_refused(
        {"--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np", "2", "--platform", file},
        {"platform " + file + ": ", why});
    EXPECT_EQ(std::count(train.err.begin(), train.err.end(), '\n'), 1) << "one line: " << train.err;
    EXPECT_FALSE(contains(train.err, "smpirun")) << train.err;
    expect_refused({"platform", "info", file}, {"platform " + file + ": ", why});
    expect_refused({"platform", "bench", file, "--np", "2"}, {"platform " + file + ": ", why});
  }
  // The link named is one of the cluster's, whose lat="-10us" SimGrid gave every host link.
  expect_refused({"platform", "info", platform("negative-latency.xml")}, {"link 'neg_link_"});

  // Zero, negative and non-numeric speeds and bandwidths, a latency past the hour: each
  // named with its value and the bound it breaks, before smpirun starts (a bandwidth of 0
  // made SimGrid abort inside the run, "nan" a JSON error).
  TestDir dir;
  const std::vector<std::tuple<std::string, std::string, std::string>> values{
      {"speed=\"0f\"", "bandwidth=\"1MBps\" latency=\"1us\"", "host 'a': speed 0 flop/s; wulf takes a finite speed from 1 to 1e+18 flop/s"},
      {"speed=\"-1f\"", "bandwidth=\"1MBps\" latency=\"1us\"", "host 'a': speed -1 flop/s"},
      {"speed=\"1e300f\"", "bandwidth=\"1MBps\" latency=\"1us\"", "host 'a': speed 1e+300 flop/s; wulf takes a finite speed from 1 to 1e+18 flop/s"},
      {"speed=\"1Gf\"", "bandwidth=\"0MBps\" latency=\"1us\"", "link 'l': bandwidth 0 bytes/s; wulf takes a finite bandwidth from 1 to 1e+18 bytes/s"},
      {"speed=\"1Gf\"", "bandwidth=\"1e300Bps\" latency=\"1us\"", "link 'l': bandwidth 1e+300 bytes/s; wulf takes a finite bandwidth from 1 to 1e+18 bytes/s"},
      {"speed=\"1Gf\"", "bandwidth=\"nan\" latency=\"1us\"", "link 'l': bandwidth nan bytes/s"},
      {"speed=\"1Gf\"", "bandwidth=\"-5MBps\" latency=\"1us\"", "link 'l': bandwidth -5e+06 bytes/s"},
      {"speed=\"1Gf\"", "bandwidth=\"1MBps\" latency=\"1e30s\"", "link 'l': latency 1e+30 s, more than an hour"},
      {"speed=\"1Gf\"", "bandwidth=\"1MBps\" latency=\"infs\"", "link 'l': latency inf s; a latency must be a finite number"}};
  for (const auto& [speed, link, why] : values) {
    SCOPED_TRACE(speed + " " + link);
    const std::string file = dir.write("values.xml", "<?xml version='1.0'?>\n"
                                                     "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                                                     "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"
                                                     "<host id=\"a\" " + speed + "/><host id=\"b\" speed=\"1Gf\"/>"
                                                     "<link id=\"l\" " + link + "/>"
                                                     "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>"
                                                     "</zone></platform>\n");
    const Outcome train = expect_train_refused(
        {"--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np", "2", "--platform", file},
        {"platform " + file + ": ", why});
    EXPECT_EQ(std::count(train.err.begin(), train.err.end(), '\n'), 1) << "one line: " << train.err;
  }
}

// A cluster's radical="3-0" (SimGrid reads the numbers from 3 up to 0: none) said "it has no
// hosts (no <host> and no <cluster>)", and core="-2" SimGrid's "not 0": each is named as it
// is, in one line, before any rank starts.
TEST(platform, a_cluster_without_hosts_and_a_negative_core_count_are_named_as_they_are) {
  TestDir dir;
  const std::string head = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                           "<platform version=\"4.1\"><zone id=\"w\" routing=\"Full\">";
  const std::string radical = cluster_platform(dir, "radical.xml", "prefix=\"c-\" radical=\"3-0\"");
  const std::string negative = dir.write("negative.xml", head + "<host id=\"a\" speed=\"1Gf\" core=\"-2\"/><host id=\"b\" "
                                                                "speed=\"1Gf\"/></zone></platform>\n");
  for (const auto& [file, why] : std::vector<std::pair<std::string, std::string>>{
           {radical, "zone 'c' is a cluster without hosts: its radical names none (a range is FIRST-LAST with FIRST "
                     "<= LAST, e.g. radical=\"0-3\")"},
           {negative, "SimGrid cannot load it: host 'a': core must be a whole number of at least 1"}}) {
    SCOPED_TRACE(file);
    const Outcome info = expect_refused({"platform", "info", file}, {"platform " + file + ": " + why});
    EXPECT_FALSE(contains(info.err, "not 0")) << info.err;
    EXPECT_FALSE(contains(info.err, "no <host> and no <cluster>")) << info.err;
    const Outcome train = expect_train_refused(
        {"--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np", "2", "--platform", file},
        {"platform " + file + ": " + why});
    EXPECT_EQ(std::count(train.err.begin(), train.err.end(), '\n'), 1) << "one line: " << train.err;
  }
}

// A cluster's radical may name more hosts than any run places, and SimGrid makes them all:
// radical="0-2147483647" grew a vector of 2^31 numbers until the machine's memory ran out,
// "0-99999999" a hundred million hosts. wulf-platform runs in the address space of this
// machine's memory (here made 100 MB: 2 GiB with the program's own), and stops at the first
// host past 1 000 000, the most ranks wulf places (about 3 GB and 6 s of SimGrid's work, so
// the second case needs that much memory free).
TEST(platform, a_radical_of_absurd_size_is_refused_by_memory_or_by_its_hosts) {
  TestDir dir;
  const std::string endless = cluster_platform(dir, "endless.xml", "prefix=\"c-\" radical=\"0-2147483647\"");
  {
    const MemoryLimit limit("100e6");
    const Outcome info = expect_refused({"platform", "info", endless},
                                        {"platform " + endless + ": SimGrid ran out of memory loading it"});
    EXPECT_EQ(std::count(info.err.begin(), info.err.end(), '\n'), 1) << "one line: " << info.err;
  }
  const auto available = machine_memory();
  if (!available || available->bytes < 5e9) WULF_SKIP_ANYWHERE("less than 5 GB free for SimGrid's million hosts");
  const std::string many = cluster_platform(dir, "many.xml", "prefix=\"c-\" radical=\"0-99999999\"");
  expect_train_refused({"--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np", "2",
                        "--platform", many},
                       {"platform " + many + ": it declares more than 1000000 hosts, the most wulf reads"});
}

// Two hosts of core="2147483647": `platform info` said "4.29497e+09 cores", and `train
// --engine sim --np 2` grew past 1 GB writing a hostfile of a line per core, then hung. A
// host's cores are bounded by the most ranks wulf runs (--np 1 000 000); the hostfile holds a
// line per rank whatever the cores (test hostfile.one_line_per_rank_whatever_the_cores_a_host_declares).
TEST(platform, a_host_of_more_cores_than_wulf_runs_ranks_is_refused) {
  TestDir dir;
  const auto two_hosts = [&](const std::string& name, const std::string& cores) {
    return cluster_platform(dir, name, "prefix=\"c-\" radical=\"0-1\" core=\"" + cores + "\"");
  };
  const std::string absurd = two_hosts("absurd.xml", "2147483647");
  const std::string why = "platform " + absurd + ": host 'c-0': 2147483647 cores; wulf takes at most 1000000, the most "
                          "ranks it runs (--np)";
  expect_refused({"platform", "info", absurd}, {why});
  expect_train_refused({"--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim", "--np", "2",
                        "--platform", absurd},
                       {why});
  // The most cores wulf takes: two ranks on a host of a million cores, a hostfile of two lines.
  expect_success({"train", "--quiet", "--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim",
                  "--np", "2", "--platform", two_hosts("million.xml", "1000000")});
}

// --bw-scale 1e308 made SimGrid abort inside the run ("The Impossible Did Happen", exit
// 134, no record); --speed-scale 1e308 made every host infinitely fast (exit 0, a rate of
// nonsense). A scale is a number from 1e-06 to 1e+06, and each bandwidth, latency and
// speed it multiplies stays in the bounds a platform file's own numbers have, refused
// naming the option, the host or link and the bound, before any rank starts.
TEST(platform, what_if_scales_are_bounded_to_what_simgrid_computes) {
  TestDir dir;
  const std::vector<std::string> train{"--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim",
                                       "--np", "2", "--platform", toy4};
  for (const char* option : {"--bw-scale", "--lat-scale", "--speed-scale"})
    for (const char* scale : {"1e308", "1e-300", "inf", "0"}) {
      SCOPED_TRACE(std::string(option) + " " + scale);
      const std::string bound = std::string(scale) == "1e308" ? "is more than 1000000"
                                : std::string(scale) == "inf" ? "is not a number"
                                                              : "must be at least 1e-06";
      const Outcome o = expect_train_refused(with(train, {option, scale}), {std::string(option) + ": ", bound});
      EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line: " << o.err;
    }
  expect_refused({"platform", "bench", toy4, "--np", "2", "--bw-scale", "1e308"},
                 {"--bw-scale: 1e+308 is more than 1000000"});
  expect_refused({"platform", "bench", toy4, "--np", "2", "--lat-scale", "1e-9"},
                 {"--lat-scale: 1e-09 must be at least 1e-06"});
  // A record's what-if, re-run: the same bound, the field named.
  Json job = train_record(dir, "toy", train).at("config");
  job["what_if"]["bw_scale"] = 1e308;
  const std::string record = dir.write("scaled.json", Json{{"wulf_record", 1}, {"config", job}}.dump());
  expect_train_refused({"--rerun", record}, {"what_if.bw_scale: 1e+308 is not a number from 1e-06 to 1e+06"});

  // Scales inside their bounds that take a number of the platform out of its own: a link of
  // 1e15 bytes/s times 1e4, one of 1 kB/s times 1e-4, a latency of 1 s times 1e4, a host of
  // 100 flop/s times 1e-3. Each named with the option, the element and the bound.
  const std::string file = dir.write("edges.xml", R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="100f"/><host id="b" speed="1Gf"/>
    <link id="fast" bandwidth="1e15Bps" latency="1s"/><link id="slow" bandwidth="1kBps" latency="0s"/>
    <route src="a" dst="b"><link_ctn id="fast"/><link_ctn id="slow"/></route>
  </zone>
</platform>
)");
  const std::vector<std::string> on_edges{"--problem", "encoder:8", "--block", "4", "--epochs", "1", "--engine", "sim",
                                          "--np", "2", "--platform", file};
  for (const auto& [option, scale, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--bw-scale", "1e4", "--bw-scale 10000: link 'fast': bandwidth 1e+15 x 10000 = 1e+19 bytes/s; wulf takes a "
                                 "finite bandwidth from 1 to 1e+18 bytes/s"},
           {"--bw-scale", "1e-4", "--bw-scale 0.0001: link 'slow': bandwidth 1000 x 0.0001 = 0.1 bytes/s"},
           {"--lat-scale", "1e4", "--lat-scale 10000: link 'fast': latency 1 x 10000 = 10000 s; wulf takes a latency of "
                                  "at most an hour (3600 s)"},
           {"--speed-scale", "1e-3", "--speed-scale 0.001: host 'a': speed 100 x 0.001 = 0.1 flop/s; wulf takes a "
                                     "finite speed from 1 to 1e+18 flop/s"}}) {
    SCOPED_TRACE(option + " " + scale);
    const Outcome o = expect_train_refused(with(on_edges, {option, scale}), {"platform " + file + ": " + why});
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line: " << o.err;
    EXPECT_FALSE(contains(o.err, "smpirun")) << o.err;
    if (option != "--speed-scale")
      expect_refused({"platform", "bench", file, "--np", "2", option, scale}, {"platform " + file + ": " + why});
  }
  // At the bounds SimGrid computes: a million times toy4's links and hosts.
  const Json fast = train_record(dir, "fast", with(train, {"--bw-scale", "1e6", "--lat-scale", "1e6", "--speed-scale", "1e6"}));
  EXPECT_GT(fast.at("final").at("time_s").get<double>(), 0);
  expect_success({"platform", "bench", toy4, "--np", "2", "--collectives", "allreduce", "--elements", "1024", "--sizes",
                  "8,65536", "--bw-scale", "1e6", "--lat-scale", "1e-6"},
                 {"allreduce"});
}

// `platform info` on a large cluster looked up the routes from every 98th host to every host
// (100 000 hosts: a hundred million look-ups, 84 s). It samples hosts of every zone, about
// a million routes in all, and still compares every pair of zones: here a cluster of 3 000
// hosts beside one of three.
TEST(platform, info_on_a_large_platform_samples_every_zone_and_bounds_the_look_ups) {
  TestDir dir;
  const std::string file = two_clusters(dir, "large.xml", 3000);
  expect_success({"platform", "info", file, "--out", dir.file("info.json")}, {"3003 hosts"});
  const Json routes = read_json_file(dir.file("info.json")).at("platform").at("routes");
  ASSERT_EQ(routes.size(), 4u);  // left-left, left-right, right-left, right-right
  long long looked_up = 0;
  for (const Json& r : routes) {
    looked_up += r.at("routes_looked_up").get<long long>();
    EXPECT_EQ(r.at("bottleneck_link") == "narrow", r.at("from_zone") != r.at("to_zone")) << r;
  }
  EXPECT_LE(looked_up, 1024 * 1023) << "routes looked up";
  EXPECT_EQ(routes.at(3).at("routes_looked_up").get<long long>(), 6) << "all of the small cluster's pairs";
  EXPECT_EQ(routes.at(0).at("from").get<std::string>().substr(0, 2), "l-");
}

// --grow writes the cluster back as XML: an id, host names or a property holding & " < '
// come back escaped, so that SimGrid reads the grown platform and the same names in it.
TEST(platform, grow_writes_names_back_escaped) {
  TestDir dir;
  const std::string grown = dir.file("grown.xml");
  std::string out, err;
  ASSERT_EQ(run_program_captured({wulf_program("wulf-platform"), "grow", platform("odd-names.xml"), "4", grown}, out, err), 0)
      << err;
  ASSERT_EQ(run_program_captured({wulf_program("wulf-platform"), "hosts", grown}, out, err), 0) << err;
  out = out.substr(out.find('\n') + 1);  // after the price line
  EXPECT_EQ(out.substr(0, out.find(' ')), "n&\"<-0's") << out;
  EXPECT_TRUE(contains(out, "n&\"<-3's 1 1000000000")) << out;
  std::string json;
  ASSERT_EQ(run_program_captured({wulf_program("wulf-platform"), "info", grown}, json, err), 0) << err;
  const Json info = parse_json(json, grown);
  const Json& cluster = info.at("zone").at("zones").at(0);
  EXPECT_EQ(cluster.at("name"), "c&\"x") << info;
  EXPECT_EQ(cluster.at("properties").at("wulf:note"), "a & b") << info;
  expect_success({"platform", "bench", platform("odd-names.xml"), "--grow", "4", "--np", "4", "--no-pingpong",
                  "--collectives", "allreduce", "--elements", "1024"},
                 {"allreduce     4"});
}

// Every write of the grown platform is checked: a full disk is an error saying so, not a
// platform cut short that a run would then load.
TEST(platform, grow_onto_a_full_disk_fails_with_the_reason) {
  TestDir dir;
  const std::string full = full_device(dir);
  std::string out, err;
  EXPECT_EQ(run_program_captured({wulf_program("wulf-platform"), "grow", toy4, "8", full}, out, err), 2);
  EXPECT_TRUE(contains(err, "--grow: writing " + full + " failed: No space left on device")) << err;
  EXPECT_TRUE(std::filesystem::is_character_file(full));
}

TEST(platform, bench_refuses_collectives_the_memory_cannot_hold_unless_forced) {
  // A machine of 256 MiB: an allgather of 1 000 000 floats on 16 ranks holds 16 x 16 x 4 MB.
  const std::vector<std::string> small{"platform", "bench", toy4, "--no-pingpong", "--np", "2", "--elements", "16",
                                       "--collectives", "allgather", "--repeat", "1"};
  Outcome big, pingpong, refused, forced;
  {
    const MemoryLimit machine(std::to_string(256 << 20));
    big = wulf({"platform", "bench", test_platform("flat64.xml"), "--no-pingpong", "--np", "16", "--elements",
                "1000000", "--type", "float", "--collectives", "allgather", "--repeat", "1"});
    pingpong = wulf({"platform", "bench", toy4, "--sizes", "300000000", "--np", "2", "--elements", "8"});
  }
  {
    const MemoryLimit tiny("1000");
    refused = wulf(small);
    forced = wulf(with(small, {"--force"}));
  }
  expect_refusal(big, {"the allgather of 1000000 values on 16 ranks", "256.0 MiB", "allgather's receive buffer",
                       "--elements", "--np", "--force"});
  expect_refusal(pingpong, {"the ping-pong of 300000000 bytes", "--sizes"});
  expect_refusal(refused, {"memory estimate", "1000 bytes"});
  EXPECT_EQ(forced.code, exit_ok) << forced.err;
  EXPECT_TRUE(contains(forced.out, "allgather")) << forced.out;
}

TEST(platform, a_profile_that_lacks_a_phase_is_named) {
  TestDir dir;
  const std::string profile = dir.write("short.profile", "Tf_ms = 0.2\nTb_ms = 0.4\nTu_ms = 0.07\nTs_ms = 0.001\nTo_ms = 30\n");
  expect_input_error([&] { read_profile(profile); }, {profile, "Tm_ms"}, "a profile without Tm_ms was accepted");
  expect_train_refused(
      {"--problem", "function", "--engine", "sim", "--platform", toy4, "--compute", "calibrated", "--profile", profile},
      {"Tm_ms"});
}

// A profile line of bytes that are not text is named in plain words, not echoed raw.
TEST(platform, a_profile_of_binary_values_is_refused_in_plain_words) {
  TestDir dir;
  const std::string profile = dir.write("bin.profile", std::string("Tf_ms = \x7f\x45\xff\xfe") + std::string(500, 'x') + "\n");
  const std::string message = input_error([&] { read_profile(profile); });
  EXPECT_TRUE(contains(message, profile + ":1: '\\x7fE\\xff\\xfe")) << message;
  EXPECT_LT(message.size(), profile.size() + 120) << message;  // cut, not the 500 bytes
}

TEST(platform, a_profile_may_make_a_test_pattern_cheaper_than_a_forward_pass_but_not_free) {
  TestDir dir;
  const std::string base = "Tf_ms = 0.2\nTb_ms = 0.4\nTu_ms = 0.07\nTm_ms = 0\nTo_ms = 30\n";
  EXPECT_DOUBLE_EQ(read_profile(dir.write("ok.profile", base + "Ts_ms = -0.05\n")).Ts, -0.05e-3);
  const std::string bad = dir.write("bad.profile", base + "Ts_ms = -0.3\n");
  expect_input_error([&] { read_profile(bad); }, {bad, "Tf_ms + Ts_ms"}, "Tf + Ts < 0 was accepted");
  const std::string negative =
      dir.write("neg.profile", "Tf_ms = -0.2\nTb_ms = 0.4\nTu_ms = 0.07\nTm_ms = 0\nTs_ms = 0\nTo_ms = 30\n");
  expect_input_error([&] { read_profile(negative); }, {"-0.2"}, "a negative Tf was accepted");
}

}  // namespace
}  // namespace wulf

namespace wulf {
namespace {

// The machine the plans below are made for, whatever runs the tests: 2 cores, nothing else busy.
const PlanMachine kTwoIdleCores{2, 0.0};

// The testbed's plan from a platform: the hosts the ranks use, their own links' rates
// (SPLITDUPLEX: the _UP and _DOWN links), speeds and collective overhead, the dilation; Bat
// Cave's switch (a FATPIPE backbone as fast as the hosts' links) one node between them.
TEST(testbed, plans_the_star_of_the_hosts_the_ranks_use) {
  const std::string bat = std::string(WULF_PLATFORMS_DIR) + "/batcave.xml";
  const TestbedPlan plan = plan_testbed(bat, hosts_of_ranks(platform_hosts(bat, 4).hosts, 4), 4, 0, 1.0, false, kTwoIdleCores);
  ASSERT_EQ(plan.hosts.size(), 4u);
  EXPECT_EQ(plan.hosts[0].name, "batcave-0");
  EXPECT_EQ(plan.hosts[3].address, "198.18.0.4");
  EXPECT_DOUBLE_EQ(plan.hosts[1].up_Bps, 10.6e6);    // bw="10.6MBps"
  EXPECT_DOUBLE_EQ(plan.hosts[1].down_Bps, 10.6e6);
  EXPECT_DOUBLE_EQ(plan.hosts[2].speed_flops, 933e6);
  EXPECT_NEAR(plan.hosts[0].collective_overhead_s, 365.868e-6, 1e-12);
  EXPECT_EQ(plan.rank_host, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(plan.dilation, 10);  // 4 ranks on 2 cores: the default
  // With one of the cores kept busy by other work the ranks get the other, and it is said.
  const TestbedPlan loaded =
      plan_testbed(bat, hosts_of_ranks(platform_hosts(bat, 4).hosts, 4), 4, 0, 1.0, false, PlanMachine{2, 1.0});
  EXPECT_GT(loaded.dilation, plan.dilation);
  EXPECT_NE(loaded.dilation_from.find("busy with other work: the load average"), std::string::npos)
      << loaded.dilation_from;
  // Each host link's 10 us is held on its hop: 20 us host to host, as the platform's routes.
  EXPECT_TRUE(plan.notes.empty()) << plan.notes.front();
  EXPECT_NEAR(plan.route_latency_s, 20e-6, 1e-15);
  ASSERT_EQ(plan.network.nodes.size(), 5u);  // 4 hosts and the switch
  EXPECT_EQ(plan.network.nodes[4].kind, NetworkNode::Kind::junction);
  ASSERT_EQ(plan.network.veths.size(), 4u);  // one port a host, shaped both ways
  for (std::size_t h = 0; h < 4; ++h) {
    const auto v = std::find_if(plan.network.veths.begin(), plan.network.veths.end(),
                                [&](const Veth& x) { return x.a.node == h || x.b.node == h; });
    ASSERT_NE(v, plan.network.veths.end());
    const VethEnd& host = v->a.node == h ? v->a : v->b;
    const VethEnd& port = v->a.node == h ? v->b : v->a;
    EXPECT_EQ(host.link, "batcave_link_" + std::to_string(h) + "_UP");
    EXPECT_DOUBLE_EQ(host.rate_Bps, 10.6e6);
    EXPECT_EQ(port.node, 4u);
    EXPECT_EQ(port.link, "batcave_link_" + std::to_string(h) + "_DOWN");
    EXPECT_DOUBLE_EQ(port.rate_Bps, 10.6e6 * kSwitchFaster);  // the switch's port into the host
    EXPECT_DOUBLE_EQ(host.latency_s, 10e-6);
    EXPECT_DOUBLE_EQ(port.latency_s, 10e-6);
    EXPECT_EQ(plan.hosts[h].ports, 1);
  }
  EXPECT_EQ(plan.network.routes.size(), 4u * 3 + 4);  // each host to the 3 others, the switch to all 4
  const Json j = plan.to_json();
  EXPECT_DOUBLE_EQ(j.at("network").at("veths").at(0).at("a").at("shaped_bit_s").get<double>(), 10.6e6 * 8 / 10);
  EXPECT_DOUBLE_EQ(j.at("network").at("veths").at(0).at("a").at("held_s").get<double>(), 10e-6 * 10);  // times D
  // --bw-scale and --dilation: the what-if and the given D.
  const TestbedPlan scaled = plan_testbed(bat, hosts_of_ranks(platform_hosts(bat, 2).hosts, 2), 2, 25, 0.5, false, kTwoIdleCores);
  EXPECT_DOUBLE_EQ(scaled.hosts[0].up_Bps, 5.3e6);
  EXPECT_EQ(scaled.dilation, 25);
  EXPECT_EQ(scaled.dilation_from, "--dilation");
  EXPECT_TRUE(plan.latencies_held);
  // A later run of a bench whose first plan left the latencies out leaves them out at the
  // dilation that plan chose (before, it held them with forwarders too slow for it).
  const TestbedPlan dropped = plan_testbed(bat, hosts_of_ranks(platform_hosts(bat, 2).hosts, 2), 2, 25, 1.0, true, kTwoIdleCores);
  EXPECT_FALSE(dropped.latencies_held);
  for (const Veth& v : dropped.network.veths) EXPECT_EQ(v.a.latency_s + v.b.latency_s, 0.0);
  // The record's protocol: Open MPI's eager protocol up to the testbed's limit, or the given one.
  EXPECT_EQ(protocol_json(true, 0).at("settings").at("btl_tcp_eager_limit").get<long long>(), kTestbedEagerBytes);
  EXPECT_EQ(protocol_json(true, 65536).at("settings").at("btl_tcp_eager_limit").get<long long>(), 65536);
  EXPECT_EQ(protocol_json(true, 65536).at("settings").at("btl_tcp_max_send_size").get<long long>(), 128 << 10);
}

// What the simulation charges a message and the emulated links do not is said: SMPI's
// factors, SimGrid's defaults on toy4 (which sets none; 11.6 times the latency above 64 KiB),
// and nothing on Bat Cave, which sets them to 1.
TEST(testbed, says_when_the_simulation_scales_messages_the_links_do_not) {
  const TestbedPlan toy = plan_testbed(toy4, hosts_of_ranks(platform_hosts(toy4, 2).hosts, 2), 2, 10, 1.0, false, kTwoIdleCores);
  const auto said = std::find_if(toy.notes.begin(), toy.notes.end(),
                                 [](const std::string& n) { return n.find("smpi/lat-factor") != std::string::npos; });
  ASSERT_NE(said, toy.notes.end());
  EXPECT_NE(said->find("latency by up to 11.6 and its bandwidth by down to 0.338"), std::string::npos) << *said;
  const std::string bat = std::string(WULF_PLATFORMS_DIR) + "/batcave.xml";
  const TestbedPlan plan = plan_testbed(bat, hosts_of_ranks(platform_hosts(bat, 2).hosts, 2), 2, 10, 1.0, false, kTwoIdleCores);
  for (const std::string& n : plan.notes) EXPECT_EQ(n.find("smpi/lat-factor"), std::string::npos) << n;
}

// A fat tree is built as it is: a switch per leaf and one at the top, the uplinks shaped
// between them, each host one port into its leaf.
TEST(testbed, plans_a_fat_tree_with_its_switches_and_uplinks) {
  const std::string ft = std::string(WULF_TEST_PLATFORMS) + "/fattree8.xml";
  const TestbedPlan plan = plan_testbed(ft, hosts_of_ranks(platform_hosts(ft, 8).hosts, 8), 8, 0, 1.0, false, kTwoIdleCores);
  ASSERT_EQ(plan.hosts.size(), 8u);
  std::size_t switches = 0, uplinks = 0;
  for (const NetworkNode& n : plan.network.nodes) switches += n.kind == NetworkNode::Kind::junction;
  EXPECT_EQ(switches, 3u);
  for (const Veth& v : plan.network.veths) {
    const bool between_switches = v.a.node >= 8 && v.b.node >= 8;
    uplinks += between_switches;
    if (between_switches) {
      EXPECT_DOUBLE_EQ(v.a.rate_Bps, 10e6) << v.a.link;  // exact: they are the bottleneck
    }
  }
  EXPECT_EQ(uplinks, 2u);  // one cable a leaf, shaped both ways
  for (const TestbedHost& h : plan.hosts) EXPECT_EQ(h.ports, 1) << h.name;
  EXPECT_EQ(plan.network.most_hops, 4u);
  EXPECT_TRUE(plan.network.notes.empty());
}

// A torus has no switch: its hosts forward for each other, each with a port per neighbour
// link. SimGrid's dragonfly routes some pairs through a link between two other routers (df-4
// to df-6 crosses the black link from router 1 to 3 after the green one from 2 to 3), which
// no path of links can be: each link is built as a pair of namespaces of its own, said in a
// note, and every route crosses the links it names.
TEST(testbed, plans_a_torus_and_a_dragonfly_as_their_routes_go) {
  const std::string torus = std::string(WULF_TEST_PLATFORMS) + "/torus.xml";
  const TestbedPlan t = plan_testbed(torus, hosts_of_ranks(platform_hosts(torus, 16).hosts, 16), 16, 0, 1.0, false, kTwoIdleCores);
  for (const NetworkNode& n : t.network.nodes) EXPECT_EQ(n.kind, NetworkNode::Kind::host) << n.label;
  for (const TestbedHost& h : t.hosts) EXPECT_GE(h.ports, 2) << h.name;
  EXPECT_GT(t.network.most_hops, 2u);  // routes through other hosts
  const std::string df = std::string(WULF_TEST_PLATFORMS) + "/dragonfly.xml";
  const TestbedPlan d = plan_testbed(df, hosts_of_ranks(platform_hosts(df, 16).hosts, 16), 16, 0, 1.0, false, kTwoIdleCores);
  ASSERT_FALSE(d.network.notes.empty());
  EXPECT_NE(d.network.notes.back().find("do not form paths"), std::string::npos) << d.network.notes.back();
  std::size_t shaped = 0;
  for (const Veth& v : d.network.veths)
    for (const VethEnd* e : {&v.a, &v.b}) shaped += e->rate_Bps > 0;
  std::size_t pairs = 0;
  for (const NetworkNode& n : d.network.nodes) pairs += n.kind == NetworkNode::Kind::shared_in;
  EXPECT_EQ(shaped, pairs);  // one shaped hop a link
  EXPECT_GT(pairs, 32u);     // more than the hosts' own cables: routers' links too
  // With 8 hosts the routes are paths: switches, the routers' links shaped between them.
  const TestbedPlan d8 = plan_testbed(df, hosts_of_ranks(platform_hosts(df, 8).hosts, 8), 8, 0, 1.0, false, kTwoIdleCores);
  std::size_t switches = 0;
  for (const NetworkNode& n : d8.network.nodes) switches += n.kind == NetworkNode::Kind::junction;
  EXPECT_EQ(switches, 4u);
}

// The latency a packet from host `from` to host `to` is held on its way through the plan's
// network: the links' latencies of the hops it crosses, by each node's route to `to` (for
// packets from `from` where the node routes by source).
double held_on_the_way(const TestbedPlan& plan, std::size_t from, std::size_t to) {
  const TestbedNetwork& net = plan.network;
  const std::string &source = plan.hosts[from].address, &destination = plan.hosts[to].address;
  double held = 0;
  std::size_t at = from;
  for (std::size_t steps = 0; at != to; ++steps) {
    if (steps > net.nodes.size()) return -1;  // a loop
    const NodeRoute* chosen = nullptr;
    for (const NodeRoute& r : net.routes)
      if (r.node == at && r.destination == destination && (r.source.empty() || r.source == source))
        if (!chosen || !r.source.empty()) chosen = &r;
    if (!chosen) return -1;  // no route
    const Veth& v = net.veths[chosen->veth];
    held += chosen->end == 0 ? v.a.latency_s : v.b.latency_s;
    at = chosen->end == 0 ? v.b.node : v.a.node;
  }
  return held;
}

// Every route of the platform is held on the testbed for its latency (issue 32, item 5):
// each link's latency on the hop that emulates it, so that the hops a packet crosses add up
// to its route's latency as SimGrid gives it, on a star, a fat tree, a torus (routes through
// other hosts) and a dragonfly whose routes are no paths (each link a pair of nodes).
TEST(testbed, every_route_is_held_for_the_platforms_latency_of_that_route) {
  const std::vector<std::pair<std::string, int>> platforms{
      {std::string(WULF_PLATFORMS_DIR) + "/batcave.xml", 8}, {std::string(WULF_TEST_PLATFORMS) + "/fattree8.xml", 8},
      {std::string(WULF_TEST_PLATFORMS) + "/torus.xml", 16}, {std::string(WULF_TEST_PLATFORMS) + "/dragonfly.xml", 16},
      {std::string(WULF_TEST_PLATFORMS) + "/far2.xml", 2}, {std::string(WULF_PLATFORMS_DIR) + "/bunyip-reduced.xml", 17}};
  for (const auto& [file, n] : platforms) {
    SCOPED_TRACE(file);
    const TestbedPlan plan = plan_testbed(file, hosts_of_ranks(platform_hosts(file, n).hosts, n), n, 0, 1.0, false, kTwoIdleCores);
    std::string names, text, err;
    for (const TestbedHost& h : plan.hosts) names += (names.empty() ? "" : ",") + h.name;
    ASSERT_EQ(run_wulf_platform({"network", file, names}, text, err), 0) << err;
    const Json routes = parse_json(text, "wulf-platform network").at("routes");
    ASSERT_EQ(routes.size(), static_cast<std::size_t>(n * (n - 1)));
    double most = 0;
    for (const Json& r : routes) {
      const double latency = r.at("latency_s").get<double>();
      most = std::max(most, latency);
      EXPECT_NEAR(held_on_the_way(plan, r.at("from").get<std::size_t>(), r.at("to").get<std::size_t>()), latency,
                  1e-12)
          << r.dump();
    }
    EXPECT_GT(most, 0);
    EXPECT_DOUBLE_EQ(plan.route_latency_s, most);
  }
}

// Where the forwarders would need more dilation than the testbed may have (sorgan's 8 hosts,
// one rank each: 1 GB/s links, 4 delayed hops a route, D = 1 100 for the forwarders), the
// latencies are left out and said to be, and D is what the rest needs; a --dilation below
// what the forwarders need keeps them and says so.
TEST(testbed, latencies_whose_forwarders_need_too_much_dilation_are_left_out_and_said) {
  const std::string sorgan = std::string(WULF_PLATFORMS_DIR) + "/sorgan.xml";
  const auto placed = hosts_of_ranks(platform_hosts(sorgan, 8, 1).hosts, 8);
  const TestbedPlan plan = plan_testbed(sorgan, placed, 8, 0, 1.0, false, kTwoIdleCores);
  EXPECT_LE(plan.dilation, kDilationRange.hi);
  EXPECT_EQ(plan.network.most_delayed_hops, 0u);
  for (const Veth& v : plan.network.veths) EXPECT_EQ(v.a.latency_s + v.b.latency_s, 0) << v.a.link;
  ASSERT_FALSE(plan.notes.empty());
  EXPECT_NE(plan.notes.back().find("link latencies are not emulated: the forwarders that would hold them need a "
                                   "time dilation of 1100"),
            std::string::npos)
      << plan.notes.back();
  const TestbedPlan given = plan_testbed(sorgan, placed, 8, 100, 1.0, false, kTwoIdleCores);
  EXPECT_GT(given.network.most_delayed_hops, 0u);
  EXPECT_NE(given.notes.back().find("need a time dilation of 1100 here for their own time not to show; at "
                                    "--dilation 100 it may"),
            std::string::npos)
      << given.notes.back();
}

TEST(testbed, the_default_dilation_grows_with_the_ranks_per_core_and_the_links) {
  const auto hosts = [](int n, double rate) {
    std::vector<TestbedHost> h(static_cast<std::size_t>(n));
    for (auto& x : h) x.up_Bps = rate;
    return h;
  };
  EXPECT_EQ(default_dilation(hosts(8, 10.6e6), 8, 2), 10);    // Bat Cave at p = 8 on 2 cores
  // Other work keeping a core busy: 2 ranks a core left, 40; both busy: half a core left, 80.
  EXPECT_EQ(default_dilation(hosts(8, 10.6e6), 8, 2, 2, 0, 0.3), 10);
  EXPECT_EQ(default_dilation(hosts(8, 10.6e6), 8, 2, 2, 0, 1.0), 40);
  EXPECT_EQ(default_dilation(hosts(8, 10.6e6), 8, 2, 2, 0, 2.5), 80);
  EXPECT_EQ(default_dilation(hosts(16, 10.6e6), 16, 2), 20);  // 8 ranks a core
  EXPECT_EQ(default_dilation(hosts(8, 36.8e6), 8, 2), 10);    // Messner: 294 MB/s of links
  EXPECT_EQ(default_dilation(hosts(8, 1.25e9), 8, 2), 100);   // 10 Gbit/s links: 10 GB/s over 100 MB/s
  EXPECT_EQ(default_dilation(hosts(2, 10.6e6), 2, 16), 10);
  // Links with a latency: their forwarders carry each byte once a delayed hop, 15 MB/s a core.
  EXPECT_EQ(default_dilation(hosts(8, 10.6e6), 8, 2, 2, 2), 10);  // Bat Cave: 170 MB/s over 30 MB/s
  EXPECT_EQ(default_dilation(hosts(8, 36.8e6), 8, 2, 2, 2), 20);  // Messner: 589 MB/s over 30 MB/s
}

// `wulf testbed run`'s plan: dilation 1 whatever the machine, the latencies held; where this
// machine's cores cannot carry the links in real time (the default dilation's rule without
// its floor of 10), a note says what they carry and the --bw-scale that fits.
TEST(testbed, a_programs_plan_has_dilation_1_and_says_what_the_cores_carry) {
  const std::string bat = std::string(WULF_PLATFORMS_DIR) + "/batcave.xml";
  const TestbedPlan plan = plan_program_testbed(bat, hosts_of_ranks(platform_hosts(bat, 8).hosts, 8), 8, 1.0);
  EXPECT_EQ(plan.dilation, 1);
  EXPECT_TRUE(plan.latencies_held);
  EXPECT_EQ(plan.network.most_delayed_hops, 2u);
  for (const std::string& note : plan.notes) EXPECT_EQ(note.find("dilation"), std::string::npos) << note;
  // 8 links of 10.6 MB/s through 2 forwarders a route, 15 MB/s a core: 2 cores carry 15 MB/s
  // of the 84.8, a dilation of 5.65; 100 cores carry them.
  const PathLoad load = path_load(plan.hosts, 2, plan.network.most_hops, plan.network.most_delayed_hops);
  EXPECT_DOUBLE_EQ(load.links_Bps, 84.8e6);
  EXPECT_DOUBLE_EQ(load.dilation, 84.8e6 * 2 / 30e6);
  EXPECT_EQ(default_dilation(plan.hosts, 8, 2, plan.network.most_hops, plan.network.most_delayed_hops), 10);
  const std::string note = real_time_note(plan, 2, 1.0);
  EXPECT_NE(note.find("these links carry 84.8 MB/s"), std::string::npos) << note;
  EXPECT_NE(note.find("this machine's 2 cores hold about 15 MB/s at dilation 1"), std::string::npos) << note;
  EXPECT_NE(note.find("--bw-scale 0.17"), std::string::npos) << note;
  EXPECT_EQ(real_time_note(plan, 100, 1.0), "");
}

TEST(testbed, a_program_of_more_ranks_than_cores_is_told_its_compute_shares_them) {
  EXPECT_EQ(shared_cores_note(2, 2), "");
  EXPECT_EQ(shared_cores_note(1, 0), "");  // cores unknown: one at least
  const std::string note = shared_cores_note(4, 2);
  EXPECT_NE(note.find("4 ranks on this machine's 2 cores"), std::string::npos) << note;
  EXPECT_NE(note.find("as if its host had 0.5 of a core"), std::string::npos) << note;
  EXPECT_NE(shared_cores_note(3, 1).find("1 core:"), std::string::npos) << shared_cores_note(3, 1);
}

TEST(testbed, its_options_are_refused_where_they_mean_nothing) {
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"train", "--problem", "encoder:8", "--engine", "sim", "--np", "2", "--platform",
                     std::string(WULF_PLATFORMS_DIR) + "/batcave.xml", "--dilation", "10"},
                    out, err),
            exit_input);
  EXPECT_NE(err.str().find("--dilation is for --engine testbed"), std::string::npos) << err.str();
  std::ostringstream out2, err2;
  EXPECT_EQ(run_cli({"platform", "bench", std::string(WULF_PLATFORMS_DIR) + "/batcave.xml", "--dilation", "10"},
                    out2, err2),
            exit_input);
  EXPECT_NE(err2.str().find("--dilation is for --engine testbed"), std::string::npos) << err2.str();
  std::ostringstream out3, err3;
  EXPECT_EQ(run_cli({"testbed", "frobnicate"}, out3, err3), exit_input);
  // validate's --platform is the testbed's comparison on any platform; its algorithms are
  // Open MPI's choice on both engines.
  const std::string bat = std::string(WULF_PLATFORMS_DIR) + "/batcave.xml";
  std::ostringstream out4, err4;
  EXPECT_EQ(run_cli({"validate", "--platform", bat}, out4, err4), exit_input);
  EXPECT_NE(err4.str().find("--platform is for wulf validate --testbed"), std::string::npos) << err4.str();
  std::ostringstream out5, err5;
  EXPECT_EQ(run_cli({"validate", "--testbed", "--platform", bat, "--allreduce", "ring"}, out5, err5), exit_input);
  EXPECT_NE(err5.str().find("--allreduce is for wulf validate --testbed without --platform"), std::string::npos)
      << err5.str();
  std::ostringstream out6, err6;
  EXPECT_EQ(run_cli({"validate", "--testbed", "--platform", "/nonexistent/p.xml"}, out6, err6), exit_input);
  EXPECT_NE(err6.str().find("/nonexistent/p.xml"), std::string::npos) << err6.str();
  // Its record may not replace the platform it reads.
  TestDir dir;
  const std::string copy = dir.write("p.xml", read_text_file(bat, "platform"));
  std::ostringstream out7, err7;
  EXPECT_EQ(run_cli({"validate", "--testbed", "--platform", copy, "--out", copy}, out7, err7), exit_input);
  EXPECT_NE(err7.str().find("--out"), std::string::npos) << err7.str();
  EXPECT_EQ(read_text_file(copy, "platform"), read_text_file(bat, "platform"));
}

}  // namespace
}  // namespace wulf
