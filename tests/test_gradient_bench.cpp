// The gradient benchmark's pieces (core/gradient_bench.hpp): its flop counts, its workload,
// and the rank bench's refusals and output, on one rank without MPI.
#include "comm/comm_bench.hpp"
#include "util/errors.hpp"
#include "comm/compute.hpp"
#include "data/dataset.hpp"
#include "comm/gradient_bench.hpp"
#include "util/json.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace wulf {
namespace {

TEST(gradient_bench, flop_counts_of_the_two_nets) {
  // 6w per pattern (KernelFlops::six_w): w = 1 729 440 weights for JOCR; 55 050 weights and
  // biases for digits.
  const NetSpec jocr = gradient_bench_net("jocr"), digits = gradient_bench_net("digits");
  EXPECT_EQ(jocr.parameter_count(), 1729440u);
  EXPECT_EQ(digits.parameter_count(), 55050u);
  EXPECT_DOUBLE_EQ(gradient_flops(jocr, 2), 2 * 6.0 * 1729440);
  EXPECT_DOUBLE_EQ(gradient_flops(digits, 1), 6.0 * 55050);
  // The products: forward and weight gradient of every layer, the delta product of every
  // layer but the first. JOCR: 2 (3 * 1 729 440 - 400 * 480); digits, without biases:
  // 2 (3 * 54 912 - 784 * 64).
  EXPECT_DOUBLE_EQ(gradient_gemm_flops(jocr, 1), 2.0 * (3 * 1729440 - 400 * 480));
  EXPECT_DOUBLE_EQ(gradient_gemm_flops(digits, 3), 3 * 2.0 * (3 * 54912 - 784 * 64));
  EXPECT_THROW(gradient_bench_net("lenet"), InputError);
}

TEST(gradient_bench, the_workload_is_a_deterministic_full_gradient) {
  const NetSpec spec{{5, 4, 3}, {Activation::tanh, Activation::tanh}, Loss::mse, false};
  GradientWorkload a(spec, 6, 3), b(spec, 6, 3);
  EXPECT_EQ(a.patterns(), 6u);
  const float ea = a.gradient(), eb = b.gradient();
  EXPECT_GT(ea, 0.0f);
  EXPECT_EQ(ea, eb);
  // Written over, not accumulated: a second call gives the same gradient again.
  const std::vector<float> first(a.net().gradients().begin(), a.net().gradients().end());
  EXPECT_EQ(a.gradient(), ea);
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(a.net().gradients()[i], first[i]) << i;
    EXPECT_EQ(b.net().gradients()[i], first[i]) << i;
  }
  double norm = 0;
  for (float g : first) norm += static_cast<double>(g) * g;
  EXPECT_GT(norm, 0.0);
}

// A gradient benchmark of nets of batches sizes, as the front end writes it for the ranks.
CommBenchConfig gradient_config(const std::string& net, std::vector<std::size_t> sizes, int sgemm, int repeat) {
  CommBenchConfig c;
  c.what = "gradient", c.net = net, c.sizes = std::move(sizes), c.sgemm_n = sgemm, c.repeat = repeat;
  return c;
}

TEST(gradient_bench, the_rank_bench_reads_its_json_and_refuses_what_cannot_run) {
  const CommBenchConfig c =
      comm_bench_from_json(comm_bench_json(gradient_config("digits", {8, 16}, 32, 2)), "the bench job");
  EXPECT_EQ(c.what, "gradient");
  EXPECT_EQ(c.net, "digits");
  EXPECT_EQ(c.sgemm_n, 32);
  EXPECT_EQ(c.repeat, 2);
  EXPECT_EQ(c.sizes, (std::vector<std::size_t>{8, 16}));
  EXPECT_THROW(comm_bench_from_json(comm_bench_json(gradient_config("lenet", {8}, 32, 1)), "b"), InputError);
  EXPECT_THROW(comm_bench_from_json(comm_bench_json(gradient_config("jocr", {8}, 0, 1)), "b"), InputError);
  EXPECT_THROW(comm_bench_from_json(comm_bench_json(gradient_config("jocr", {}, 16, 1)), "b"), InputError);
  Json missing = comm_bench_json(gradient_config("jocr", {8}, 16, 1));
  missing.erase("repeat");
  try {
    comm_bench_from_json(missing, "the bench job");
    FAIL() << "a job without repeat was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("repeat"), std::string::npos) << e.what();
  }
}

// Through the rank program's entry (the JSON read, then run_comm_bench), as `bench` of a gradient.
TEST(gradient_bench, one_rank_prints_a_line_per_batch) {
  SerialComm comm;
  std::ostringstream out;
  const auto compute = make_wall_compute();
  run_comm_bench(comm_bench_from_json(comm_bench_json(gradient_config("digits", {4, 10}, 16, 1)), "the bench job"),
                 comm, *compute, out);
  std::istringstream lines(out.str());
  std::string line;
  std::vector<Json> rows;
  while (std::getline(lines, line)) rows.push_back(parse_json(line, "the bench"));
  ASSERT_EQ(rows.size(), 2u);
  const Json& r = rows[1];
  EXPECT_EQ(r.at("what").get<std::string>(), "gradient");
  EXPECT_EQ(r.at("np").get<double>(), 1);
  EXPECT_EQ(r.at("patterns").get<double>(), 10);
  EXPECT_DOUBLE_EQ(r.at("flops").get<double>(), 10 * 6.0 * 55050);
  EXPECT_GT(r.at("gradient_s").get<double>(), 0);
  EXPECT_GE(r.at("with_reduce_s").get<double>(), r.at("gradient_s").get<double>());
  EXPECT_GT(r.at("sgemm_gflops_per_core").get<double>(), 0);
  EXPECT_NEAR(r.at("ratio_to_sgemm").get<double>(),
              r.at("gflops_per_core").get<double>() / r.at("sgemm_gflops_per_core").get<double>(), 1e-3);
  EXPECT_GT(r.at("gradient_on_cpu").get<double>(), 0);
}

TEST(gradient_bench, the_simulator_and_empty_shares_are_refused) {
  SerialComm comm;
  std::ostringstream out;
  EXPECT_THROW(run_gradient_bench({"jocr", {8}, 1, 16}, comm, true, out), InputError);
  EXPECT_THROW(run_gradient_bench({"jocr", {0}, 1, 16}, comm, false, out), InputError);
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace wulf
