// The GPU clusters of platforms/ (platforms/gpu/README.md): dgx1-v100.xml, roce-4gpu.xml, dgx-a100.xml, dgx-h100.xml and
// eth10g-4gpu.xml have the GPUs, speeds and links their sources give, messages take the
// routes the files mean (an NVLink, two NVLinks through a third GPU, PCIe, a NIC and the
// switch), and each is what platforms/gpu/generate.py writes from the options it records.
#include "cli/cli.hpp"
#include "util/json.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <sys/wait.h>

namespace wulf {
namespace {

using namespace testing_support;

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

struct Shape {
  std::size_t hosts = 0;
  std::map<double, int> speeds;      // flop/s -> hosts
  std::map<double, int> link_rates;  // bytes/s -> links (a SPLITDUPLEX link is two, _UP and _DOWN)
  std::map<std::string, int> zone_hosts;
  Json zone;
};

// What `wulf platform info` says of the platform at path.
Shape shape_of(const std::string& path) {
  TestDir dir;
  const Json info = record_of(dir, "info", {"platform", "info", path}).at("platform");
  Shape s;
  s.hosts = info.at("hosts").size();
  for (const Json& h : info.at("hosts")) {
    EXPECT_EQ(h.at("cores").get<double>(), 1) << h.at("name").get<std::string>();  // one rank a GPU
    s.speeds[h.at("speed_flops").get<double>()] += 1;
  }
  for (const Json& l : info.at("links")) s.link_rates[l.at("bandwidth_Bps").get<double>()] += 1;
  s.zone = info.at("zone");
  for (const Json& z : s.zone.at("zones")) s.zone_hosts[z.at("name").get<std::string>()] = z.at("hosts").get<int>();
  return s;
}

// A ping-pong between hosts a and b of file: {latency (8 bytes, one way), bytes/s of 64 MiB}.
struct PingPong {
  double latency_s, rate_Bps;
};
PingPong pingpong(const std::string& file, const std::string& a, const std::string& b) {
  TestDir dir;
  const Json r = record_of(dir, "pp",
                           {"platform", "bench", file, "--hosts", a + "," + b, "--sizes", "8,67108864", "--np", "2",
                            "--collectives", "allreduce", "--elements", "1", "--repeat", "1"});
  const Json& rows = r.at("pingpong");
  EXPECT_EQ(rows.size(), 2u);
  PingPong p{};
  for (const Json& row : rows) {
    const double bytes = row.at("bytes").get<double>(), t = row.at("time_s").get<double>();
    if (bytes == 8) p.latency_s = t;
    if (bytes == 67108864) p.rate_Bps = bytes / t;
  }
  return p;
}

// The link latencies and rates are the whole model (SMPI's factors are 1): a ping-pong takes
// the route's latency plus the bytes over its narrowest link, so 0.5% is room for the 8
// bytes and the latency inside the 64 MiB.
void expect_route(const std::string& file, const std::string& a, const std::string& b, double latency_s,
                  double rate_Bps) {
  SCOPED_TRACE(file + ": " + a + " <-> " + b);
  const PingPong p = pingpong(file, a, b);
  EXPECT_NEAR(p.latency_s, latency_s, 0.005 * latency_s);
  EXPECT_NEAR(p.rate_Bps, rate_Bps, 0.005 * rate_Bps);
}

TEST(gpu_platforms, dgx1_has_8_servers_of_8_v100s_with_their_nvlinks_pcie_and_infiniband) {
  const Shape s = shape_of(wulf_platform("dgx1-v100.xml"));
  EXPECT_EQ(s.hosts, 64u);
  EXPECT_EQ(s.speeds.at(15.7e12), 64);  // V100 SXM2: 15.7 TFLOP/s FP32 (datasheet)
  EXPECT_EQ(s.zone_hosts.size(), 8u);   // a zone per server
  for (const auto& [zone, hosts] : s.zone_hosts) EXPECT_EQ(hosts, 8) << zone;
  // Per server: 24 NVLinks (6 a V100, whitepaper) as 8 single links and 8 bonded pairs of
  // 50 GB/s; 8 PCIe 3.0 x16; 4 EDR NICs. Each both ways; and its port of the switch.
  EXPECT_EQ(s.link_rates.at(25e9), 8 * 8 * 2);
  EXPECT_EQ(s.link_rates.at(50e9), 8 * 8 * 2);
  EXPECT_EQ(s.link_rates.at(15.75e9), 8 * 8 * 2);
  EXPECT_EQ(s.link_rates.at(12.5e9), 8 * 4 * 2 + 8);
  EXPECT_EQ(s.link_rates.size(), 4u);  // no other link (no PCIe switch uplink or QPI: unused)
  const auto& props = s.zone.at("properties");
  EXPECT_TRUE(contains(props.at("wulf:source").get<std::string>(), "WP-08437-002"));
  // Every GPU says what it is and which server holds it.
  const std::string text = file_text(wulf_platform("dgx1-v100.xml"));
  EXPECT_EQ(count_of(text, "<prop id=\"wulf:device\" value=\"V100-SXM2-16GB\"/>"), 64u);
  for (int n = 0; n < 8; ++n)
    EXPECT_EQ(count_of(text, "<prop id=\"wulf:node\" value=\"" + std::to_string(n) + "\"/>"), 8u) << n;
}

TEST(gpu_platforms, dgx1_gpus_talk_over_their_nvlinks_or_through_a_third_gpu_and_across_servers_over_infiniband) {
  const std::string f = wulf_platform("dgx1-v100.xml");
  // nvidia-smi topo -m of a DGX-1: GPU0-GPU3 NV2 (two bonded links), GPU0-GPU1 NV1.
  expect_route(f, "dgx1-0-gpu0", "dgx1-0-gpu3", 1e-6, 50e9);
  expect_route(f, "dgx1-0-gpu0", "dgx1-0-gpu1", 1e-6, 25e9);
  // No NVLink between GPU0 and GPU5: through GPU1 (NV1 then NV2), two links' latency, the
  // narrower link's rate; GPU0-GPU7 through GPU4 (NV2 and NV2) keeps 50 GB/s.
  expect_route(f, "dgx1-0-gpu0", "dgx1-0-gpu5", 2e-6, 25e9);
  expect_route(f, "dgx1-0-gpu0", "dgx1-0-gpu7", 2e-6, 50e9);
  // Another server: PCIe, the pair's EDR NIC (100 Gbit/s), the switch (the two servers' ports), NIC,
  // PCIe: 0.5 + 0.5 + 0.05 + 0.05 + 0.5 + 0.5 us.
  expect_route(f, "dgx1-0-gpu0", "dgx1-1-gpu5", 2.1e-6, 12.5e9);
  // GPUs 2k and 2k+1 share NIC k (their PCIe switch's): GPU1 leaves through nic-0, GPU2 through nic-1.
  const std::string text = file_text(f);
  EXPECT_TRUE(contains(text,
                       "<route src=\"dgx1-3-gpu1\" dst=\"dgx1-3-gw\"><link_ctn id=\"dgx1-3-pcie-1\" "
                       "direction=\"UP\"/><link_ctn id=\"dgx1-3-nic-0\" direction=\"UP\"/></route>"));
  EXPECT_TRUE(contains(text,
                       "<route src=\"dgx1-3-gpu2\" dst=\"dgx1-3-gw\"><link_ctn id=\"dgx1-3-pcie-2\" "
                       "direction=\"UP\"/><link_ctn id=\"dgx1-3-nic-1\" direction=\"UP\"/></route>"));
}

TEST(gpu_platforms, roce_has_horovods_128_servers_of_4_pascal_gpus_on_25_gbit_ethernet) {
  const Shape s = shape_of(wulf_platform("roce-4gpu.xml"));
  EXPECT_EQ(s.hosts, 512u);
  EXPECT_EQ(s.speeds.at(9.3e12), 512);  // P100 for PCIe: 9.3 TFLOP/s FP32 (datasheet; the GPU assumed)
  EXPECT_EQ(s.zone_hosts.size(), 128u);
  EXPECT_EQ(s.link_rates.at(3.125e9), 128 * 3);  // one 25 Gbit/s NIC a server, and its port of the switch
  EXPECT_EQ(s.link_rates.at(15.75e9), 512 * 2);      // a PCIe 3.0 x16 link a GPU
  const std::string f = wulf_platform("roce-4gpu.xml");
  expect_route(f, "roce-5-gpu0", "roce-5-gpu3", 1e-6, 15.75e9);      // one server: through its PCIe switch
  expect_route(f, "roce-0-gpu1", "roce-127-gpu2", 3.5e-6, 3.125e9);  // 0.5 + 1 + 0.5 + 1 + 0.5 us
}

TEST(gpu_platforms, eth10g_has_8_servers_of_4_gpus_on_10_gbit_ethernet) {
  const Shape s = shape_of(wulf_platform("eth10g-4gpu.xml"));
  EXPECT_EQ(s.hosts, 32u);
  EXPECT_EQ(s.speeds.at(9.3e12), 32);
  EXPECT_EQ(s.link_rates.at(1.25e9), 8 * 3);
  // MPI over TCP: tens of us one way (0.5 + 12 + 1 + 12 + 0.5); of 10 Gbit/s on the wire, the
  // TCP payload of full Ethernet frames, 1 448 bytes of each 1 538 (smpi/bw-factor).
  expect_route(wulf_platform("eth10g-4gpu.xml"), "eth10g-0-gpu0", "eth10g-7-gpu3", 26e-6, 1.25e9 * 1448 / 1538);
}

bool have_python3() { return std::system("python3 -c '' >/dev/null 2>&1") == 0; }

// Runs platforms/gpu/generate.py with these options, writing out; true when it succeeded.
bool generate(const std::vector<std::string>& options, const std::string& out) {
  std::string command = "python3 '" + wulf_platform("gpu/generate.py") + "'";
  for (const std::string& o : options) command += " '" + o + "'";
  command += " -o '" + out + "' 2>/dev/null";
  return std::system(command.c_str()) == 0;
}

// Runs generate.py with these arguments under a shell prefix (a ulimit, say): its exit code
// and what it printed on standard error.
std::pair<int, std::string> generate_said(const std::vector<std::string>& args, const std::string& prefix = "") {
  std::string command = prefix + "python3 '" + wulf_platform("gpu/generate.py") + "'";
  for (const std::string& a : args) command += " '" + a + "'";
  command += " 2>&1 >/dev/null";
  std::string said;
  FILE* pipe = ::popen(("bash -c \"" + command + "\"").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) said.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, said};
}

// The time of one allreduce of 16 Mi floats (64 MiB) on np ranks of file, by algorithm.
double allreduce_s(const std::string& file, int np, const std::string& algorithm) {
  TestDir dir;
  const HugePagesForLargeBuffers pages;  // 16 ranks of 64 MiB: 6.3 s under tcmalloc, 3.7 s so
  const Json r = record_of(dir, "ar",
                           {"platform", "bench", file, "--np", std::to_string(np), "--collectives", "allreduce",
                            "--allreduce", algorithm, "--elements", "16777216", "--type", "float", "--no-pingpong",
                            "--repeat", "1", "--unread-sums"});
  const Json& row = r.at("collectives").at(0);
  EXPECT_EQ(row.at("algorithm").get<std::string>(), algorithm);
  return row.at("time_s").get<double>();
}

// `platform bench --allreduce hierarchical` runs wulf's own schedule over the servers (the
// hosts' wulf:node), as wulf train does; before, it fell to the library's default, 2.6 times
// the ring here. On one DGX-1 it is the ring within the server: 14 steps of 8 MiB over the
// ring's narrowest NVLink (GPU0 to GPU1, 25 GB/s), 4.70 ms. On two, the same plus a ring of 2
// across them: 2 steps of 4 MiB, each GPU pair sharing a NIC (6.25 GB/s each), 1.34 ms; the
// ring of all 16 GPUs is slower. 2% is room for the latencies (about 30 us).
TEST(gpu_platforms, bench_runs_the_hierarchical_allreduce_over_the_servers) {
  if (!have_python3()) WULF_SKIP("no python3 to run platforms/gpu/generate.py");
  TestDir dir;
  const std::string f = dir.file("dgx1-2.xml");
  ASSERT_TRUE(generate({"--preset", "dgx1-v100", "--nodes", "2"}, f));
  const double bytes = 16777216.0 * 4;
  const double within = 14 * (bytes / 8) / 25e9, across = 2 * (bytes / 16) / 6.25e9;
  const double ring8 = allreduce_s(f, 8, "ring"), hier8 = allreduce_s(f, 8, "hierarchical");
  EXPECT_NEAR(ring8, within, 0.02 * within);
  EXPECT_NEAR(hier8, ring8, 0.005 * ring8);
  const double hier16 = allreduce_s(f, 16, "hierarchical");
  EXPECT_NEAR(hier16, within + across, 0.02 * (within + across));
  EXPECT_LT(hier16, 0.7 * allreduce_s(f, 16, "ring"));
}

// --allreduce rings on two DGX-1 (4 NICs each): the generator's 4 rings a server, each
// entering and leaving it through a NIC of its own, each ring over its NVLinks alone. Each ring
// reduces a quarter of 64 MiB around 16 GPUs: 30 steps of 1 MiB, each crossing a NIC whose
// direction carries that ring's data and 5% of the other way's (SimGrid's network/crosstraffic,
// its acknowledgements), 12.5 / 1.05 GB/s, plus the 2.1 us between servers: 2.71 ms. The one
// ring crosses one NIC with all of it: 30 steps of 4 MiB, about 4 times as long.
TEST(gpu_platforms, bench_runs_the_rings_allreduce_one_ring_through_each_nic) {
  if (!have_python3()) WULF_SKIP("no python3 to run platforms/gpu/generate.py");
  TestDir dir;
  const std::string f = dir.file("dgx1-2.xml");
  ASSERT_TRUE(generate({"--preset", "dgx1-v100", "--nodes", "2"}, f));
  const double bytes = 16777216.0 * 4, rings = 30 * ((bytes / 64) * 1.05 / 12.5e9 + 2.1e-6);
  const double rings16 = allreduce_s(f, 16, "rings");
  EXPECT_NEAR(rings16, rings, 0.01 * rings);
  EXPECT_GT(allreduce_s(f, 16, "ring"), 3.5 * rings16);
  // A platform without wulf:rings is refused before any rank starts, naming the host.
  expect_refused({"platform", "bench", wulf_platform("batcave.xml"), "--np", "4", "--collectives", "allreduce",
                  "--allreduce", "rings", "--elements", "1024", "--no-pingpong"},
                 {"rings allreduce", "batcave.xml", "has no wulf:rings"});
}

TEST(gpu_platforms, each_file_is_what_the_generator_writes_from_the_options_it_records) {
  if (!have_python3()) WULF_SKIP("no python3 to run platforms/gpu/generate.py");
  TestDir dir;
  for (const std::string file : {"dgx1-v100.xml", "roce-4gpu.xml", "eth10g-4gpu.xml", "dgx-a100.xml", "dgx-h100.xml"}) {
    SCOPED_TRACE(file);
    const std::string shipped = file_text(wulf_platform(file));
    // <prop id="wulf:generator" value="platforms/gpu/generate.py preset=... nodes=8 ...">
    const std::string key = "<prop id=\"wulf:generator\" value=\"platforms/gpu/generate.py ";
    const std::size_t from = shipped.find(key);
    ASSERT_NE(from, std::string::npos);
    std::istringstream recorded(
        shipped.substr(from + key.size(), shipped.find('"', from + key.size()) - from - key.size()));
    std::vector<std::string> options;
    for (std::string part; recorded >> part;) {
      const std::size_t eq = part.find('=');
      ASSERT_NE(eq, std::string::npos) << part;
      options.insert(options.end(), {"--" + part.substr(0, eq), part.substr(eq + 1)});
    }
    ASSERT_TRUE(generate(options, dir.file(file)));
    EXPECT_TRUE(file_text(dir.file(file)) == shipped) << "regenerate it: python3 platforms/gpu/generate.py "
                                                         "--preset ... (platforms/gpu/README.md)";
  }
}

TEST(gpu_platforms, the_generator_routes_gpus_without_an_nvlink_over_pcie_and_qpi_when_told) {
  if (!have_python3()) WULF_SKIP("no python3 to run platforms/gpu/generate.py");
  TestDir dir;
  const std::string f = dir.file("dgx1-pcie.xml");
  ASSERT_TRUE(generate({"--preset", "dgx1-v100", "--nodes", "1", "--no-nvlink-route", "pcie"}, f));
  // GPU0 to GPU5: its PCIe x16 link, its PCIe switch's link to CPU 0, QPI (0 us), CPU 1's to
  // GPU5's switch, GPU5's x16: 4 x 0.5 us at 15.75 GB/s. GPU0-GPU3 keeps its NVLinks.
  expect_route(f, "dgx1-0-gpu0", "dgx1-0-gpu5", 2e-6, 15.75e9);
  expect_route(f, "dgx1-0-gpu0", "dgx1-0-gpu3", 1e-6, 50e9);
  const Shape s = shape_of(f);
  EXPECT_EQ(s.hosts, 8u);
  EXPECT_EQ(s.link_rates.at(38.4e9), 2);  // QPI, both ways: two 9.6 GT/s links of 2 bytes
}

// The generator refuses numbers no machine has or the file cannot write (inf, nan, 1e30, a
// latency finer than its 6 decimals), an -o it cannot write, and a file larger than the disk
// holds, each with exit 2 and the option named, no traceback; it writes the file one server at
// a time (1 000 servers, 89 MB, in 40 MB of address space, where it once held the whole file)
// by a temporary file beside it, so that a failed run leaves the file that was there.
TEST(gpu_platforms, the_generator_refuses_what_it_cannot_write_and_streams_the_file) {
  if (!have_python3()) WULF_SKIP("no python3 to run platforms/gpu/generate.py");
  TestDir dir;
  const std::string out = dir.file("g.xml");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused{
      {{"--nic-gbit", "inf"}, "--nic-gbit inf: expected a number of Gbit/s from 0.001 to 1e+06"},
      {{"--gpu-tflops", "inf"}, "--gpu-tflops inf"},
      {{"--nic-lat-us", "inf"}, "--nic-lat-us inf"},
      {{"--gpu-tflops", "nan"}, "--gpu-tflops nan"},
      {{"--nic-gbit", "1e30"}, "--nic-gbit 1e+30"},
      {{"--pcie-gbyte", "1e-30"}, "--pcie-gbyte 1e-30"},
      {{"--nic-lat-us", "1e-30"}, "--nic-lat-us 1e-30: the file writes 6 decimals of us, which would make it 0"},
      {{"-o", dir.file("no/such/folder.xml")}, "the folder " + dir.file("no/such") + " does not exist"},
      {{"-o", dir.str()}, "is a folder"},
      {{"--nodes", "100000"}, "100000 servers: a route for each pair of them"},
  };
  for (const auto& [options, fragment] : refused) {
    std::vector<std::string> args{"--preset", "dgx1-v100", "-o", out};
    args.insert(args.end(), options.begin(), options.end());
    const auto [code, said] = generate_said(args);
    EXPECT_EQ(code, 2) << said;
    EXPECT_TRUE(contains(said, fragment)) << said;
    EXPECT_FALSE(contains(said, "Traceback")) << said;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto [code, said] = generate_said({"--preset", "dgx1-v100", "--nodes", "1000", "-o", out}, "ulimit -v 40000; ");
  EXPECT_EQ(code, 0) << said;
  EXPECT_TRUE(contains(said, "1000 servers, 8000 GPUs")) << said;
  EXPECT_EQ(std::filesystem::file_size(out), 89108640u);
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string(), "g.xml") << "a temporary file is left";
  std::filesystem::remove(out);
}

// A zone routed by Floyd's or Dijkstra's algorithm has its routes only once SimGrid seals the
// platform, as smpirun does before any rank starts: wulf's own reading of the file seals it too,
// so that a generator may join servers through a switch zone without a route for every pair.
TEST(gpu_platforms, a_floyd_zones_routes_are_found_through_the_hosts_between) {
  TestDir dir;
  const std::string f = dir.write("floyd.xml", R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Floyd">
    <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/>
    <link id="ab" bandwidth="1GBps" latency="1us"/><link id="bc" bandwidth="2GBps" latency="2us"/>
    <route src="a" dst="b"><link_ctn id="ab"/></route>
    <route src="b" dst="c"><link_ctn id="bc"/></route>
  </zone>
</platform>
)");
  expect_success({"platform", "info", f}, {"a -> c: 2 links, latency 3 us"});
  // A ping-pong from a to c runs over both links: their latencies and more (SMPI's own factors
  // are this file's defaults), at no more than the narrower link's rate.
  const PingPong p = pingpong(f, "a", "c");
  EXPECT_GE(p.latency_s, 3e-6);
  EXPECT_LE(p.rate_Bps, 1e9);
}

}  // namespace
}  // namespace wulf
