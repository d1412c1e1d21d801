// Nets given by their layers (--problem layers:FILE, nn/layer_table.hpp, issue 34 item 1): the
// reader and its refusals, the shipped nets' parameter totals against the published ones, the
// order their gradients are bucketed in, and time-only runs whose simulated times are worked
// out by hand.
#include "nn/layer_table.hpp"
#include "job/job_json.hpp"
#include "job/train_job.hpp"
#include "train/buckets.hpp"
#include "engine/process.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace wulf {
namespace {

using namespace testing_support;

// 3 inputs, 2 outputs; 62 parameters; forward 3 500 flops a sample, backward 6 000 (a's and
// the pool's twice their forward, b's given).
constexpr const char* tiny = R"(# a tiny net
wulf-layers 1
name tiny
samples 8 4
inputs 3
outputs 2
layer a linear 1000 10x3 10
layer pool pool 500     # no tensors
layer b linear 2000 backward=3000 2x10 2
time V100 a 1e-6 2e-6
)";

TEST(layer_table, a_file_gives_its_layers_tensors_and_flops) {
  const LayerTable t = parse_layer_table(tiny, "tiny.layers");
  EXPECT_EQ(t.name, "tiny");
  EXPECT_EQ(t.train_samples, 8u);
  EXPECT_EQ(t.test_samples, 4u);
  EXPECT_EQ(t.inputs, 3);
  EXPECT_EQ(t.outputs, 2);
  ASSERT_EQ(t.layers.size(), 3u);
  EXPECT_EQ(t.layers[0].kind, LayerKind::linear);
  EXPECT_EQ(t.layers[1].kind, LayerKind::pool);
  EXPECT_EQ(t.layers[0].tensors[0].shape, "10x3");
  EXPECT_EQ(t.layers[0].tensors[0].values, 30u);
  EXPECT_EQ(t.layers[1].tensors.size(), 0u);
  EXPECT_EQ(t.parameter_count(), 62u);
  EXPECT_EQ(t.tensor_count(), 4u);
  EXPECT_EQ(t.forward_flops(), 3500.0);
  EXPECT_EQ(t.layers[0].backward_flops, 2000.0);  // twice the forward unless given
  EXPECT_EQ(t.backward_flops(), 6000.0);
  ASSERT_NE(t.layers[0].time_on("V100"), nullptr);
  EXPECT_EQ(t.layers[0].time_on("V100")->backward_s, 2e-6);
  EXPECT_EQ(t.layers[2].time_on("V100"), nullptr);  // not every layer has a time on V100
  EXPECT_EQ(t.step_on("V100"), nullptr);              // nor a step
  const LayerTable stepped = parse_layer_table(std::string(tiny) + "step V100 3e-6\n", "tiny.layers");
  ASSERT_NE(stepped.step_on("V100"), nullptr);
  EXPECT_EQ(*stepped.step_on("V100"), 3e-6);
}

// A layer's activations= and the file's units (fsdp's, as FSDP wraps a transformer block).
TEST(layer_table, activations_and_units_are_read) {
  const LayerTable t = parse_layer_table("wulf-layers 1\nlayer emb embedding 0 10x4\nunit block.0\n"
                                         "layer fc linear 80 backward=100 activations=12 4x4 4\nlayer act other 4\n"
                                         "unit head\nlayer out linear 8 4\n",
                                         "units.layers");
  ASSERT_EQ(t.layers.size(), 4u);
  EXPECT_EQ(t.layers[1].activations, 12.0);
  EXPECT_EQ(t.layers[1].backward_flops, 100.0);
  EXPECT_EQ(t.layers[0].activations, 0.0);  // not given
  ASSERT_EQ(t.units.size(), 2u);
  EXPECT_EQ(t.units[0].name, "block.0");
  EXPECT_EQ(t.units[0].first, 1u);
  EXPECT_EQ(t.units[1].first, 3u);
}

TEST(layer_table, every_fault_is_refused_with_the_file_and_line) {
  const std::string head = "wulf-layers 1\n";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {"layer a conv 1 3\n", {"line 1", "wulf-layers 1"}},
      {"wulf-layers 2\n", {"line 1", "version 2"}},
      {head + "layer a dense 1 3\n", {"line 2", "kind \"dense\"", "conv, linear"}},
      {head + "layer a conv 1 3x0\n", {"line 2", "must be at least 1"}},
      {head + "layer a conv 1 3xx4\n", {"line 2", "an empty size"}},
      {head + "layer a conv -1 3\n", {"line 2", "forward flops -1 is negative"}},
      {head + "layer a conv lots 3\n", {"line 2", "\"lots\" is not a number"}},
      {head + "layer a conv 1 3\nlayer a conv 1 3\n", {"line 3", "layer a is given twice"}},
      {head + "layer a conv 1 3 backward=2\n", {"line 2", "backward= and then activations= come right after the flops"}},
      {head + "layer a conv 1 activations=5 backward=2 3\n", {"line 2", "backward= and then activations="}},
      {head + "layer a conv 1 activations=-1 3\n", {"line 2", "activations -1 is negative"}},
      {head + "unit u\nlayer a conv 1 3\nunit u\nlayer b conv 1 3\n", {"line 4", "unit u is given twice"}},
      {head + "unit\nlayer a conv 1 3\n", {"line 2", "unit takes the unit's name"}},
      {head + "layer a conv 1 3\nunit u\n", {"unit u holds no layer"}},
      {head + "unit u\nunit v\nlayer a conv 1 3\n", {"unit u holds no layer"}},
      {head + "layer a conv\n", {"line 2", "layer takes NAME KIND FLOPS"}},
      {head + "time V100 a 1 1\nlayer a conv 1 3\n", {"line 2", "no layer a above this line"}},
      {head + "layer a conv 1 3\ntime V100 a 1 1\ntime V100 a 1 1\n", {"line 4", "given twice"}},
      {head + "step V100 1\nstep V100 2\n", {"line 3", "step on V100 is given twice"}},
      {head + "layer a conv 1 3\ntime V100 a 0 1e-6\n", {"line 3", "a layer with flops takes more than 0 s"}},
      {head + "layer a conv 1 3\ntime V100 a 1e-6 0\n", {"line 3", "a layer with flops takes more than 0 s"}},
      {head + "step V100\n", {"line 2", "step takes DEVICE SECONDS"}},
      {head + "step V100 -1\n", {"line 2", "step's seconds -1 is negative"}},
      {head + "samples 0 0\nlayer a conv 1 3\n", {"line 2", "training samples 0 must be at least 1"}},
      {head + "samples 8 4\nsamples 8 4\n", {"line 3", "samples is given twice"}},
      {head + "inputs 2.5\n", {"line 2", "not a whole number"}},
      {head + "weights 3\n", {"line 2", "\"weights\" is not one of name, samples"}},
      {head + "wulf-layers 1\n", {"line 2", "a second format line"}},
      {head + "layer a conv 1 1000000x1000000x2\n", {"line 2", "more than"}},
      {head, {"no layer"}},
      {head + "layer p pool 5\n", {"no layer has a parameter tensor"}},
      {"# only a comment\n", {"empty"}},
  };
  for (const auto& [text, parts] : cases)
    expect_input_error([&] { parse_layer_table(text, "bad.layers"); }, with({"layer file bad.layers"}, parts));
}

// The shipped nets hold the published parameter totals: ResNet-50 25 557 032, VGG-16 138 357 544
// (torchvision's counts, which the papers round to 25.6 M and 138 M), BERT-large 335 141 888
// (Hugging Face's BertModel; Devlin et al.'s "340 M" counts the pre-training heads too), and
// the others as their definitions give them.
TEST(layer_table, the_shipped_nets_hold_the_published_parameter_totals) {
  struct Net {
    const char* file;
    std::size_t parameters, tensors;
  };
  for (const Net& n : {Net{"resnet50", 25557032, 161}, Net{"resnet101", 44549160, 314}, Net{"vgg16", 138357544, 32},
                       Net{"inception_v3", 27161264, 292}, Net{"bert_large", 335141888, 391},
                       Net{"gpt2", 124439808, 148}, Net{"llama2_7b", 6738415616, 291},
                       Net{"llama2_13b", 13015864320, 363}, Net{"llama2_70b", 68976648192, 723},
                       Net{"gpt3_175b", 175215501312, 1157}, Net{"t5_11b", 11307321344, 509}}) {
    const LayerTable t = read_layer_table(wulf_platform(std::string("nets/") + n.file + ".layers"));
    EXPECT_EQ(t.parameter_count(), n.parameters) << n.file;
    EXPECT_EQ(t.tensor_count(), n.tensors) << n.file;
    EXPECT_GT(t.forward_flops(), 2.0 * static_cast<double>(n.parameters) * 0.9) << n.file;  // each weight used at least once
  }
}

TEST(layer_table, the_gradients_are_bucketed_in_the_reverse_of_the_parameters_order) {
  NetSpec spec;
  spec.sizes = {3, 2};
  spec.activations = {Activation::linear};
  spec.table = std::make_shared<LayerTable>(parse_layer_table(tiny, "tiny.layers"));
  EXPECT_EQ(spec.parameter_count(), 62u);
  EXPECT_EQ(spec.timed_layers(), 3);
  EXPECT_EQ(spec.layer_backward_flops(3), 3000.0);
  EXPECT_EQ(spec.flops().update, 4 * 62.0);
  // a: weights [0, 30), biases [30, 40); b: weights [40, 60), biases [60, 62).
  const std::vector<GradientTensor> t = backward_tensors(spec);
  ASSERT_EQ(t.size(), 4u);
  const std::vector<std::pair<int, std::size_t>> order{{3, 60}, {3, 40}, {1, 30}, {1, 0}};
  for (std::size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t[i].layer, order[i].first) << i;
    EXPECT_EQ(t[i].at, order[i].second) << i;
  }
  // 64 bytes (16 floats): b's 22 values are ready after layer 3 (its weights a bucket of their
  // own), a's after layer 1.
  const std::vector<BucketCut> cut = cut_buckets(t, 4, 64);
  ASSERT_EQ(cut.size(), 4u);
  EXPECT_EQ(cut[1].ready_after, 3);
  EXPECT_EQ(cut[3].ready_after, 1);
  // An MLP's tensors know their places too: 2-3-1 with biases, W2 at 9, b2 at 12, W1 at 0, b1 at 6.
  const std::vector<GradientTensor> mlp = backward_tensors({2, 3, 1}, true);
  EXPECT_EQ(mlp[0].at, 9u);
  EXPECT_EQ(mlp[1].at, 12u);
  EXPECT_EQ(mlp[2].at, 0u);
  EXPECT_EQ(mlp[3].at, 6u);
}

// One rank on toy4 (1 Gflop/s): 8 samples in blocks of 4, then the test pass of 4.
//   forward 8 x 3 500 = 28 000 flops, backward 8 x 6 000 = 48 000, 2 updates of 4 x 62,
//   test 4 x 3 500 = 14 000: 90 496 flops, 90.496 us an iteration.
TEST(layer_table, a_layer_net_runs_time_only_and_takes_the_time_its_flops_give) {
  TestDir dir;
  const std::string file = dir.write("tiny.layers", tiny);
  const std::vector<std::string> run{"--problem", "layers:" + file, "--numerics", "off", "--engine", "sim",
                                     "--platform", toy4, "--block", "4", "--epochs", "1"};
  const Json one = train_record(dir, "one", with(run, {"--np", "1"}));
  EXPECT_NEAR(one.at("history")[1].at("time_s").get<double>(), 90.496e-6, 1e-12);
  EXPECT_NEAR(one.at("phases").at("backward_s").get<double>(), 48e-6, 1e-12);
  EXPECT_EQ(one.at("config").at("problem").get<std::string>(), "layers:" + file);
  // Four ranks, a bucket per tensor: four buckets, each its own allreduce under way while the
  // backward pass goes on.
  const Json four = train_record(dir, "four", with(run, {"--np", "4", "--strategy", "overlap", "--bucket-bytes", "0"}));
  EXPECT_EQ(four.at("history")[1].at("buckets").get<double>(), 4.0);
  EXPECT_GT(four.at("phases").at("comm_s").get<double>(), 0.0);
  const Json block = train_record(dir, "block", with(run, {"--np", "4"}));
  EXPECT_EQ(block.at("phases").at("forward_patterns").get<double>(), 2.0);  // rank 0's share of the 8
}

// A file without a samples line (one written by hand) takes the epoch from --train-size and
// --test-size: the same 90.496 us as tiny's 8 and 4 samples; without them it has 1 and 0,
// which a block of 4 refuses. With the line, the options only cut the file's epoch.
TEST(layer_table, a_file_without_samples_takes_its_epoch_from_the_options) {
  TestDir dir;
  std::string text = tiny;
  text.erase(text.find("samples 8 4\n"), std::string("samples 8 4\n").size());
  const std::string file = dir.write("nosamples.layers", text);
  EXPECT_FALSE(parse_layer_table(text, "nosamples.layers").samples_given);
  EXPECT_TRUE(parse_layer_table(tiny, "tiny.layers").samples_given);
  const std::vector<std::string> run{"--problem", "layers:" + file, "--numerics", "off", "--engine", "sim",
                                     "--platform", toy4, "--np", "1", "--block", "4", "--epochs", "1"};
  const Json r = train_record(dir, "r", with(run, {"--train-size", "8", "--test-size", "4"}));
  EXPECT_NEAR(r.at("history")[1].at("time_s").get<double>(), 90.496e-6, 1e-12);
  EXPECT_EQ(r.at("config").at("train_size").get<double>(), 8.0);
  expect_train_refused(run, {"--block: 4 is larger than the training set (1 patterns)"});
}

TEST(layer_table, a_hosts_efficiency_is_read_per_kind_and_refused_when_it_is_no_fraction) {
  const KindEfficiency e = parse_kind_efficiency("conv=0.5, norm=0.1,other=0.25", "wulf:efficiency");
  EXPECT_EQ(efficiency_of(e, LayerKind::conv), 0.5);
  EXPECT_EQ(efficiency_of(e, LayerKind::norm), 0.1);
  EXPECT_EQ(efficiency_of(e, LayerKind::linear), 0.25);  // not named: other's
  EXPECT_EQ(efficiency_of(parse_kind_efficiency("conv=0.5", "x"), LayerKind::pool), 1.0);
  expect_input_error([] { parse_kind_efficiency("conv=0", "host g: wulf:efficiency"); },
                     {"host g: wulf:efficiency", "conv's efficiency \"0\"", "(0, 1]"});
  expect_input_error([] { parse_kind_efficiency("conv=1.5", "e"); }, {"(0, 1]"});
  expect_input_error([] { parse_kind_efficiency("dense=0.5", "e"); }, {"\"dense=0.5\" is not KIND=FRACTION"});
  expect_input_error([] { parse_kind_efficiency("conv=0.5,conv=0.6", "e"); }, {"conv is given twice"});
}

// A platform of one host g of 1 Gflop/s with these <prop> elements, in dir.
std::string one_host_platform(const TestDir& dir, const std::string& name, const std::string& props) {
  return dir.write(name, R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="one" routing="Full">
    <host id="g" speed="1Gf">)" + props + R"(</host>
  </zone>
</platform>
)");
}

// A host of 1 Gflop/s that runs linear layers at half its peak and pooling at a quarter, and
// whose device D1 has a measured time for layer a (1 us forward, 2 us backward a sample):
//   a sample's forward  1 us + 500 / 0.25 + 2 000 / 0.5 = 1 us + 6 000 flops = 7 us,
//   its backward        2 us + 1 000 / 0.25 + 3 000 / 0.5 = 2 us + 10 000 flops = 12 us;
//   8 samples, 2 updates of 248 flops (other: the peak), 4 test samples:
//   8 x 19 + 0.496 + 4 x 7 = 180.496 us an iteration.
TEST(layer_table, a_host_charges_its_efficiency_per_kind_and_its_devices_measured_times) {
  TestDir dir;
  const std::string file = dir.write("tiny.layers", std::string(tiny) + "time D1 a 1e-6 2e-6\n");
  const std::string platform = one_host_platform(
      dir, "gpu1.xml", R"(<prop id="wulf:device" value="D1"/><prop id="wulf:efficiency" value="linear=0.5, pool=0.25"/>)");
  const std::vector<std::string> run{"--problem", "layers:" + file, "--numerics", "off", "--engine", "sim",
                                     "--np",      "1",               "--block",    "4",   "--epochs", "1"};
  const Json r = train_record(dir, "r", with(run, {"--platform", platform}));
  EXPECT_NEAR(r.at("history")[1].at("time_s").get<double>(), 180.496e-6, 1e-12);
  EXPECT_NEAR(r.at("phases").at("backward_s").get<double>(), 8 * 12e-6, 1e-12);
  // Without the time on D1 (another device) layer a is charged its flops at half the peak.
  const std::string other = one_host_platform(
      dir, "gpu2.xml", R"(<prop id="wulf:device" value="D2"/><prop id="wulf:efficiency" value="linear=0.5, pool=0.25"/>)");
  const Json r2 = train_record(dir, "r2", with(run, {"--platform", other}));
  EXPECT_NEAR(r2.at("phases").at("forward_s").get<double>(), 8 * (2000 + 6000) * 1e-9, 1e-12);
  // With the step measured on D1 (5 us an update) the update is charged that instead of
  // its 248 flops: 180.496 - 2 x 0.248 + 2 x 5 = 190 us.
  dir.write("tiny.layers", std::string(tiny) + "time D1 a 1e-6 2e-6\nstep D1 5e-6\n");
  const Json r3 = train_record(dir, "r3", with(run, {"--platform", platform}));
  EXPECT_NEAR(r3.at("history")[1].at("time_s").get<double>(), 190e-6, 1e-12);
  EXPECT_NEAR(r3.at("phases").at("update_s").get<double>(), 2 * 5e-6, 1e-12);
  // A fraction out of (0, 1] is refused before any rank starts, with the host named.
  const std::string bad = one_host_platform(dir, "bad.xml", R"(<prop id="wulf:efficiency" value="conv=2"/>)");
  expect_train_refused(with(run, {"--platform", bad}), {"host g: wulf:efficiency", "conv's efficiency \"2\""});
}

// A rank trains the net the front end checked: its layer file is checked against the digest
// of the one the front end read, and --rerun refuses a file that changed since the record
// unless told to take it (issue 62: an edit from 11 000 to 1 001 000 parameters was
// simulated silently, and files replaced during runs gave ranks of different nets).
TEST(layer_table, ranks_and_reruns_refuse_a_layer_file_that_changed) {
  TestDir dir;
  const std::string file = dir.write("net.layers", tiny);
  const Json first = train_record(dir, "first", {"--problem", "layers:" + file, "--numerics", "off", "--engine", "sim",
                                                 "--platform", toy4, "--np", "2", "--epochs", "1", "--block", "8"});
  const std::string digest = first.at("config").at("layer_file_digest").get<std::string>();
  EXPECT_TRUE(digest.starts_with("fnv1a64:")) << digest;
  // A rank's load of a file that is not the one the front end read.
  TrainJob job = job_from_json(first.at("config"), "the job");
  job.layer_file_digest = "fnv1a64:0000000000000000:1";
  expect_input_error([&] { load_problem(job, RankPlace{0, 2, true}); },
                     {"layer file " + file + " changed after wulf read it for this run", "run it again"});
  // The file edited (a layer 100 times larger), then the record run again.
  std::string bigger(tiny);
  bigger.replace(bigger.find("10x3 10"), 7, "1000x3 1000");
  dir.write("net.layers", bigger);
  expect_train_refused({"--rerun", dir.file("first.json")},
                       {"first.json: the layer file " + file + " is not the one the record's run read",
                        "--take-changed-inputs"});
  const Json again = record_of(dir, "again", {"train", "--rerun", dir.file("first.json"), "--take-changed-inputs"});
  EXPECT_NE(again.at("config").at("layer_file_digest").get<std::string>(), digest);
  EXPECT_GT(again.at("config").at("parameters").get<double>(), first.at("config").at("parameters").get<double>());
  expect_train_refused({"--problem", "layers:" + file, "--take-changed-inputs"}, {"--take-changed-inputs is for --rerun"});
}

// A layer file's name reaches the terminal escaped (control characters, a C1 CSI, a byte
// that is not UTF-8) where the ranks print the run's description, on the run and its re-run
// (issue 62: every reader's text through one rule, util/text.hpp's SafeOstream).
TEST(layer_table, a_files_text_is_printed_escaped_by_the_ranks_and_a_rerun) {
  TestDir dir;
  const std::string esc = "\x1b[31m", csi = "\xc2\x9b" "31m", bad = "\xff";
  const std::string layers = dir.write("hostile.layers", "wulf-layers 1\nname red" + esc + csi + bad +
                                                         "\nsamples 8 4\nlayer a linear 100 10x3 10\n");
  const auto program = [](std::vector<std::string> args) {  // the wulf program, its output captured
    args.insert(args.begin(), wulf_program("wulf"));
    ChildOptions options;
    options.capture = true;
    const ChildResult r = run_child(args, options);
    EXPECT_EQ(r.code, exit_ok) << r.out << r.err;
    return r;
  };
  const auto expect_plain = [](const ChildResult& r, const std::string& what) {
    for (const std::string& text : {r.out, r.err}) {
      EXPECT_EQ(text.find('\x1b'), std::string::npos) << what << ": " << text;
      EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << what << ": " << text;
      EXPECT_EQ(text.find('\xff'), std::string::npos) << what << ": " << text;
    }
  };
  const ChildResult trained =
      program({"train", "--problem", "layers:" + layers, "--numerics", "off", "--engine", "sim", "--platform", toy4,
               "--np", "2", "--epochs", "1", "--block", "8", "--out", dir.file("h.json")});
  EXPECT_TRUE(contains(trained.out, "red\\x1b[31m\\xc2\\x9b31m\\xff")) << trained.out;
  expect_plain(trained, "layer file");
  expect_plain(program({"train", "--rerun", dir.file("h.json")}), "record");
}

TEST(layer_table, a_layer_net_is_refused_what_it_cannot_do) {
  TestDir dir;
  const std::string file = dir.write("tiny.layers", tiny);
  const std::vector<std::string> run{"--problem", "layers:" + file, "--engine", "sim", "--platform", toy4, "--np", "2"};
  expect_train_refused(run, {"has no arithmetic", "--numerics off"});
  const std::vector<std::string> off = with(run, {"--numerics", "off"});
  expect_train_refused(with(off, {"--strategy", "ppt"}), {"--strategy ppt", "block, overlap or fsdp"});
  expect_train_refused(with(off, {"--hidden", "5"}), {"--hidden", "given by its layers"});
  expect_train_refused(with(off, {"--train-size", "9"}), {"--train-size: 9 is more than the 8 training samples"});
  expect_train_refused(with(off, {"--target-error", "0.1"}), {"--target-error", "time-only run", "no error to reach"});
  expect_refused({"recommend", "--platform", toy4, "--problem", "layers:" + file, "--target-error", "0.1"},
                 {"wulf recommend searches for the time to a target error", "no arithmetic"});
  const std::vector<std::string> elsewhere{"--numerics", "off", "--engine", "sim", "--platform", toy4, "--np", "2"};
  expect_train_refused(with(elsewhere, {"--problem", "layers:no-such-net"}), {"no net", "no-such-net.layers", "resnet50"});
  {
    // A net too large for this machine (3e9 parameters) is told to shrink by its layer file,
    // not by --hidden, which a layer net refuses.
    const MemoryLimit limit("1000000000");
    const std::string huge = dir.write("huge.layers", "wulf-layers 1\nlayer a linear 1 50000x60000\n");
    const Outcome o = expect_train_refused(with(elsewhere, {"--problem", "layers:" + huge, "--block", "2", "--train-size", "8"}),
                                           {"memory estimate", "a layer file of fewer parameters"});
    EXPECT_FALSE(contains(o.err, "--hidden")) << o.err;
  }
  dir.write("bad.layers", "wulf-layers 1\nlayer a conv 1 3\nlayer a conv 1 3\n");
  expect_train_refused(with(elsewhere, {"--problem", "layers:" + dir.file("bad.layers")}),
                       {"bad.layers, line 3", "layer a is given twice"});
}

}  // namespace
}  // namespace wulf
