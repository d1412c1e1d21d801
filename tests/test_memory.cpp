// Sizes checked before they can hurt: the counts that reach MPI (mpi_count and the
// collectives' buffers, comm.hpp) and the memory estimate of a run (job/memory_estimate.hpp)
// with its check against the machine's memory.
#include "comm/comm.hpp"
#include "job/memory_estimate.hpp"
#include "job/train_job.hpp"
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <climits>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace wulf {
namespace {

using namespace testing_support;

// The front end's job of `wulf train ARGS` (nothing is started).
TrainJob job_of(const std::vector<std::string>& args) {
  const auto options = train_options();
  return resolve(parse_train(args, options));
}

TEST(memory, mpi_count_takes_int_max_and_refuses_one_more_naming_the_count_and_the_remedy) {
  EXPECT_EQ(mpi_count(0, "x"), 0);
  EXPECT_EQ(mpi_count(INT_MAX, "x"), INT_MAX);
  expect_input_error([] { mpi_count(std::size_t{INT_MAX} + 1, "MPI_Allreduce", "a smaller net (--hidden)"); },
                     {"MPI_Allreduce", "2147483648 values", "2147483647", "a smaller net (--hidden)"});
  // The default remedy names what shrinks a message.
  expect_input_error([] { mpi_count(5'000'000'000ULL, "MPI_Bcast"); }, {"5000000000", "--hidden", "more ranks"});
}

TEST(memory, gathered_and_scattered_buffers_must_hold_ranks_times_the_block) {
  EXPECT_NO_THROW(check_gathered(3, 12, 4, "MPI_Allgather"));
  EXPECT_THROW(check_gathered(3, 11, 4, "MPI_Allgather"), std::length_error);
  EXPECT_THROW(check_gathered(3, 15, 4, "MPI_Gather"), std::length_error);
  EXPECT_NO_THROW(check_scattered(12, 3, 4, "MPI_Scatter"));
  EXPECT_THROW(check_scattered(13, 3, 4, "MPI_Scatter"), std::length_error);
  // One rank's communicator checks them too, before it copies.
  SerialComm one;
  std::vector<float> send(3, 1.0f), short_recv(2), long_recv(4);
  EXPECT_THROW(one.allgather(std::span<const float>(send), std::span<float>(short_recv)), std::length_error);
  EXPECT_THROW(one.gather(std::span<const float>(send), std::span<float>(long_recv), 0), std::length_error);
  EXPECT_THROW(one.scatter(std::span<const float>(send), std::span<float>(short_recv), 0), std::length_error);
  const std::vector<int> counts{2};
  EXPECT_THROW(one.scatterv(std::span<const float>(send), counts, std::span<float>(short_recv), 0), std::length_error);
}

// Comm::allreduce_sum_anywhere: one rank's sum is its data, where it stays; storage lent for
// the spare buffer changes nothing there (the MPI engines use it under SMPI only, where it
// is long enough and apart from the data: the engine tests' time-only runs).
TEST(memory, one_ranks_allreduce_anywhere_leaves_the_sum_in_its_data) {
  SerialComm one;
  std::vector<float> data{1.0f, 2.0f, 3.0f}, lent(3);
  one.lend_spare_storage(lent.data(), lent.size() * sizeof(float));
  const std::span<float> sum = one.allreduce_sum_anywhere(std::span<float>(data));
  EXPECT_EQ(sum.data(), data.data());
  EXPECT_EQ(std::vector<float>(sum.begin(), sum.end()), (std::vector<float>{1.0f, 2.0f, 3.0f}));
  std::vector<double> d{4.0, 5.0};
  EXPECT_EQ(one.allreduce_sum_anywhere(std::span<double>(d)).data(), d.data());
  EXPECT_EQ(d, (std::vector<double>{4.0, 5.0}));
}

TEST(memory, scatterv_displacements_are_checked_against_mpi_int) {
  const std::vector<int> counts{5, 7, 1};
  EXPECT_EQ(scatterv_displacements(13, counts, 7, 1, 3, false), (std::vector<int>{0, 5, 12}));
  EXPECT_THROW(scatterv_displacements(13, counts, 7, 1, 2, false), std::length_error);  // counts for 3 ranks
  EXPECT_THROW(scatterv_displacements(12, counts, 5, 0, 3, true), std::length_error);   // the root's send
  // Every count fits an int, their sum (the last displacement, or the whole) does not.
  const std::vector<int> big{INT_MAX, 1};
  expect_input_error([&] { scatterv_displacements(0, big, 1, 1, 2, false); }, {"scatterv", "2147483648", "2147483647"});
  const std::vector<int> past{INT_MAX, INT_MAX, 1};
  expect_input_error([&] { scatterv_displacements(0, past, 1, 2, 3, false); }, {"displacement of rank 2", "4294967294"});
}

TEST(memory, totals_count_what_passes_once_in_one_process_and_per_process_under_mpirun) {
  MemoryEstimate e;
  e.ranks = e.ranks_here = 4;
  e.parts = {{"held", 10, 5, MemoryPart::Kind::held, "--a"},
             {"load", 7, 9, MemoryPart::Kind::passing, "--b"},
             {"eval", 2, 3, MemoryPart::Kind::passing, "--c"},
             {"base", 100, 0, MemoryPart::Kind::process, ""}};
  total_memory(e, true);
  EXPECT_EQ(e.per_rank_bytes, 17);                   // max(10 + 7, 5 + 9)
  EXPECT_EQ(e.machine_bytes, 100 + 10 + 3 * 5 + 9);  // one rank at a time loads
  EXPECT_EQ(e.process_bytes, e.machine_bytes);
  EXPECT_EQ(e.weight(e.parts[1]), 9);
  EXPECT_EQ(e.biggest().what, "base");
  total_memory(e, false);  // four rank processes: each its own passing parts
  EXPECT_EQ(e.process_bytes, 17);
  EXPECT_EQ(e.machine_bytes, 100 + 17 + 3 * 14);
  EXPECT_EQ(e.weight(e.parts[1]), 7 + 3 * 9);
}

TEST(memory, ppt_on_jocr_at_196_ranks_is_estimated_from_its_allgather_buffers) {
  const std::vector<std::string> jocr{"--problem", "chars:3203", "--train-size", "163480", "--strategy", "ppt",
                                      "--engine", "sim", "--platform", "bunyip.xml", "--numerics", "off", "--force"};
  const TrainJob job = job_of(with(jocr, {"--np", "196"}));
  const MemoryEstimate e = estimate_memory(job);
  const double w = 400.0 * 480 + 480 + 480.0 * 3203 + 3203;  // seed 002's 400-480-3203 net
  ASSERT_EQ(job.spec.parameter_count(), static_cast<std::size_t>(w));
  const MemoryPart& big = e.biggest();
  EXPECT_TRUE(contains(big.what, "PPT's allgather")) << big.what;
  EXPECT_TRUE(contains(big.shrink, "--np") && contains(big.shrink, "--strategy block")) << big.shrink;
  // Each rank: its own w + 1 values and every rank's, in floats; all 196 in one process.
  EXPECT_EQ(e.weight(big), (w + 1) * 197 * 4 * 196);
  EXPECT_GT(e.machine_bytes, 266e9);
  EXPECT_LT(e.machine_bytes, 1.05 * e.weight(big));
  EXPECT_GT(e.per_rank_bytes, (w + 1) * 197 * 4);
  // The record carries it.
  EXPECT_EQ(job.config_json.at("memory_estimate").at("machine_bytes").get<double>(), std::round(e.machine_bytes));
  // At 16 ranks the buffers are (196 x 197) / (16 x 17) times smaller.
  const MemoryEstimate small = estimate_memory(job_of(with(jocr, {"--np", "16"})));
  EXPECT_EQ(small.weight(small.biggest()), (w + 1) * 17 * 4 * 16);
}

TEST(memory, machine_memory_is_the_limit_variable_or_memavailable) {
  {
    const MemoryLimit limit("123456789");
    const auto m = machine_memory();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->bytes, 123456789);
    EXPECT_EQ(m->source, "WULF_MEMORY_LIMIT_BYTES");
  }
  for (const char* bad : {"-1", "0", "lots", "inf"}) {
    const MemoryLimit limit(std::string{bad});
    expect_input_error([] { machine_memory(); }, {"WULF_MEMORY_LIMIT_BYTES", bad, "positive number of bytes"});
  }
  const MemoryLimit none(std::nullopt);
  const auto m = machine_memory();
  ASSERT_TRUE(m) << "no MemAvailable in /proc/meminfo";
  EXPECT_EQ(m->source, "MemAvailable");
  EXPECT_GT(m->bytes, 0);
}

TEST(memory, a_run_over_the_machines_memory_is_refused_naming_the_estimate_and_its_biggest_part_unless_forced) {
  MemoryEstimate e;
  e.where = "this process";
  e.parts = {{"the net", 3e9, 0, MemoryPart::Kind::held, "a smaller net (--hidden)"},
             {"wulf itself", 8e6, 0, MemoryPart::Kind::process, ""}};
  total_memory(e, true);
  const MachineMemory small{2.0 * 1024 * 1024 * 1024, "MemAvailable"};
  expect_input_error([&] { check_memory_fits(e, small, false, "wulf x"); },
                     {"wulf x: the memory estimate is 2.8 GiB (this process)", "2.0 GiB", "MemAvailable", "the net: 2.8 GiB",
                      "--hidden", "--force"});
  EXPECT_NO_THROW(check_memory_fits(e, small, true, "wulf x"));
  EXPECT_NO_THROW(check_memory_fits(e, MachineMemory{4e9, "MemAvailable"}, false, "wulf x"));
  EXPECT_NO_THROW(check_memory_fits(e, std::nullopt, false, "wulf x"));  // nothing known: nothing checked
}

TEST(memory, the_benchmarks_allgather_grows_as_elements_times_the_square_of_the_ranks) {
  const MemoryEstimate a = estimate_bench_memory("allgather", 196, 54912, 8, "default");
  EXPECT_TRUE(contains(a.biggest().what, "allgather")) << a.biggest().what;
  EXPECT_EQ(a.weight(a.biggest()), 54912.0 * 8 * 196 * 196);
  EXPECT_TRUE(contains(a.biggest().shrink, "--elements") && contains(a.biggest().shrink, "--np"));
  const MemoryEstimate r = estimate_bench_memory("allreduce", 196, 54912, 8, "default");
  EXPECT_LT(r.machine_bytes, a.machine_bytes / 10);
  const MemoryEstimate p = estimate_bench_memory("pingpong", 2, 1'000'000'000'000ULL, 1, "default");
  EXPECT_GT(p.machine_bytes, 2e12);
}

TEST(memory, smpi_maps_the_shared_memory_in_blocks_within_half_the_kernels_mappings) {
  const double GiB = 1024.0 * 1024 * 1024, MiB = 1024.0 * 1024;
  EXPECT_EQ(smpi_shared_block_bytes(0.5 * GiB, 65530), 1u << 20);  // SimGrid's default
  EXPECT_EQ(smpi_shared_block_bytes(32765 * MiB, 65530), 1u << 20);
  EXPECT_EQ(smpi_shared_block_bytes(32766 * MiB, 65530), 2u << 20);
  EXPECT_EQ(smpi_shared_block_bytes(84.2 * GiB, 65530), 4u << 20);  // 21 555 mappings
  EXPECT_EQ(smpi_shared_block_bytes(84.2 * GiB, 262144), 1u << 20);
}

TEST(memory, the_simulated_ranks_shared_memory_costs_this_machine_its_block_and_page_tables) {
  // T5-11B as DDP, time only, on 8 simulated ranks: the net (3 w values) and the buckets'
  // flat buffer (2 w) are SMPI's shared memory, 226 GB mapped, of which this machine holds a
  // block and the page tables (8 bytes a page of 4 KiB).
  const TrainJob job = job_of({"--problem", "layers:t5_11b", "--strategy", "overlap", "--engine", "sim", "--platform",
                               "batcave.xml", "--np", "8", "--numerics", "off", "--train-size", "8",
                               "--block", "8", "--test-size", "0"});
  const MemoryEstimate e = estimate_memory(job);
  const double w = static_cast<double>(job.spec.parameter_count());
  EXPECT_EQ(e.shared_bytes, 5 * w * 4);
  EXPECT_EQ(e.shared_block, smpi_shared_block_bytes(5 * w * 4));
  EXPECT_GT(e.machine_bytes, 5 * w * 4 / 512);
  EXPECT_LT(e.machine_bytes, 5 * w * 4 / 512 + 256.0 * 1024 * 1024);
  const Json j = e.to_json();
  EXPECT_EQ(j.at("shared_bytes").get<double>(), 5 * w * 4);
  EXPECT_EQ(j.at("shared_block_bytes").get<std::size_t>(), e.shared_block);
  // One mapping of the net's 3 w values: refused where the kernel grants less, naming the
  // part and the remedies, unless forced; nothing is checked where nothing limits it.
  const MachineMemory small{100.0 * 1024 * 1024 * 1024, "MemTotal and SwapTotal, vm.overcommit_memory 0"};
  expect_input_error([&] { check_shared_mapping(e, small, false); },
                     {"126.4 GiB of it the net's parameters, gradients and spare", "one mapping", "at most 100.0 GiB",
                      "vm.overcommit_memory 0", "--problem layers:FILE", "vm.overcommit_memory=1", "--force"});
  EXPECT_NO_THROW(check_shared_mapping(e, small, true));
  EXPECT_NO_THROW(check_shared_mapping(e, MachineMemory{200.0 * 1024 * 1024 * 1024, "x"}, false));
  EXPECT_NO_THROW(check_shared_mapping(e, std::nullopt, false));
  // With the arithmetic every rank holds its own: nothing is shared.
  const MemoryEstimate own = estimate_memory(
      job_of({"--problem", "digits", "--strategy", "overlap", "--engine", "sim", "--platform", "batcave.xml", "--np", "2"}));
  EXPECT_EQ(own.shared_bytes, 0);
  EXPECT_EQ(own.shared_block, 0u);
  EXPECT_FALSE(own.to_json().contains("shared_bytes"));
  EXPECT_EQ(own.largest_shared(), nullptr);
  EXPECT_NO_THROW(check_shared_mapping(own, MachineMemory{1, "x"}, false));
}

TEST(memory, human_bytes_reads_in_binary_units) {
  EXPECT_EQ(human_bytes(1000), "1000 bytes");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(3.0 * 1024 * 1024 * 1024), "3.0 GiB");
  EXPECT_EQ(human_bytes(2.0 * 1024 * 1024 * 1024 * 1024), "2.0 TiB");
}

}  // namespace
}  // namespace wulf
