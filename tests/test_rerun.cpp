// A run is data: the job the front end resolves is the record's config, every rank reads it,
// and `wulf train --rerun RECORD` runs it again, on the same or another engine.
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "job/job_json.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace wulf {
namespace {

using namespace testing_support;

const std::string calibrated_profile = std::string(WULF_TEST_PLATFORMS) + "/example.profile";

// The front end's job of `wulf train ARGS`, written as JSON, read back and written again: the
// two texts are the same when the JSON holds the whole job.
void expect_round_trip(const std::vector<std::string>& args) {
  SCOPED_TRACE(fmt::format("wulf train {}", fmt::join(args, " ")));
  const auto options = train_options();
  TrainJob job = resolve(parse_train(args, options));
  const Json first = job_json(job);
  TrainJob back = job_from_json(first, "the job");
  load_problem(back, RankPlace{});
  check_job(back);
  back.load_seconds = job.load_seconds;
  EXPECT_EQ(json_line(job_json(back)), json_line(first));
  EXPECT_EQ(back.engine, job.engine);
  EXPECT_EQ(back.spec.describe(), job.spec.describe());
  EXPECT_EQ(back.config.block, block_size(job.config, job.problem.train_total));
}

TEST(rerun, the_job_reads_back_as_it_was_written_for_every_engine_and_strategy) {
  expect_round_trip({"--problem", "encoder:8", "--epochs", "2"});
  expect_round_trip({"--problem", "parity:4", "--learning", "pattern", "--eta", "0.3", "--momentum", "damped"});
  expect_round_trip({"--problem", "encoder:8", "--learning", "rprop", "--rprop-increase", "1.3"});
  expect_round_trip({"--problem", "function", "--strategy", "cg", "--cg-step", "0.5", "--cg-refinements", "3"});
  expect_round_trip({"--problem", "encoder:8", "--engine", "real", "--np", "2", "--allreduce", "rdb",
                     "--mpirun-args", "--mca btl self,vader", "--oversubscribe", "on"});
  expect_round_trip({"--problem", "encoder:8", "--engine", "sim", "--np", "4", "--platform", toy4, "--strategy",
                     "ppt", "--error-window", "3", "--bw-scale", "2", "--lat-scale", "0.5", "--eager-limit", "65536",
                     "--hosts", "toy-0,toy-1,toy-2,toy-3"});
  expect_round_trip({"--problem", "encoder:8", "--engine", "sim", "--np", "4", "--platform", toy4, "--strategy",
                     "session", "--sweep", "eta=0.5,1.5", "--target-error", "0.1"});
  expect_round_trip({"--problem", "function", "--bias", "off", "--engine", "sim", "--np", "2", "--platform", toy4,
                     "--compute", "calibrated", "--profile", calibrated_profile, "--precision", "double"});
  expect_round_trip({"--problem", "encoder:8", "--engine", "sim", "--np", "4", "--platform", toy4, "--numerics",
                     "off", "--strategy", "cg", "--cg-probes", "2.5"});
}

// Every strategy's options reach the job and its record from the descriptor alone: each
// registered strategy's job (its options' defaults, a text option's example) reads back as
// it was written, and its options are refused with another strategy.
TEST(rerun, every_registered_strategy_reads_back_and_owns_its_options) {
  for (const Strategy s : registered_strategies()) {
    std::vector<std::string> args{"--problem", "encoder:8", "--engine", "sim", "--np", "2", "--platform", toy4,
                                  "--strategy", std::string(to_string(s))};
    for (const StrategyOption& o : s->options)
      if (o.kind == StrategyOption::Kind::text) args.insert(args.end(), {"--" + std::string(o.name), std::string(o.example)});
    expect_round_trip(args);
    const Strategy other = registered_strategies()[to_string(s) == "block" ? 1 : 0];
    for (const StrategyOption& o : s->options) {
      if (other->option(o.name)) continue;
      SCOPED_TRACE(std::string(o.name));
      const std::vector<std::string> given{"--problem", "encoder:8", "--strategy", std::string(to_string(other)),
                                           "--" + std::string(o.name), o.kind == StrategyOption::Kind::text ? "x" : "1"};
      try {
        resolve(parse_train(given, train_options()));
        ADD_FAILURE() << "--" << o.name << " was taken with --strategy " << to_string(other);
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("--" + std::string(o.name) + " is for --strategy " + std::string(to_string(s))),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

// `wulf train --rerun R ARGS` into DIR/NAME.json.
Json rerun(const TestDir& dir, const std::string& record, const std::string& name,
           const std::vector<std::string>& args = {}) {
  return record_of(dir, name, with({"train", "--quiet", "--rerun", record}, args));
}

const std::vector<std::string> encoder{"--problem", "encoder:16", "--epochs", "3", "--block", "8"};

TEST(rerun, seq_and_sim_give_the_same_errors_to_the_bit_and_the_same_simulated_times) {
  TestDir dir;
  const Json seq = train_record(dir, "seq", encoder);
  const Json seq2 = rerun(dir, dir.file("seq.json"), "seq2");
  expect_same_history(seq, seq2, "train_error");
  EXPECT_EQ(seq.at("final").at("train").at("rmse"), seq2.at("final").at("train").at("rmse"));
  const Json sim = train_record(dir, "sim", with(encoder, {"--engine", "sim", "--np", "4", "--platform", toy4}));
  const Json sim2 = rerun(dir, dir.file("sim.json"), "sim2");
  EXPECT_EQ(sim.at("history"), sim2.at("history"));  // errors and simulated times, every iteration
  EXPECT_EQ(sim.at("final"), sim2.at("final"));
  Json c1 = sim.at("config"), c2 = sim2.at("config");
  for (Json* c : {&c1, &c2}) c->erase("load_s"), c->erase("out"), c->erase("versions");
  EXPECT_EQ(c1, c2);
}

// An allreduce the record's run took by default is chosen again for the re-run's ranks (the
// ring for an 8-1000-8 encoder's 68 032 bytes on 2 ranks, Rabenseifner's on 4); one the
// user named stays named.
TEST(rerun, a_default_allreduce_is_chosen_again_for_the_reruns_ranks) {
  TestDir dir;
  const std::vector<std::string> wide{"--problem", "encoder:8", "--hidden", "1000", "--epochs", "1", "--numerics", "off",
                                      "--engine", "sim", "--platform", toy4};
  const auto allreduce = [](const Json& r) {
    return r.at("config").at("collectives").at("allreduce").get<std::string>() + " / " +
           r.at("config").at("allreduce_chosen_by").get<std::string>();
  };
  EXPECT_EQ(allreduce(train_record(dir, "two", with(wide, {"--np", "2"}))),
            "ring / default, Open MPI 4.1's choice for 2 ranks and 68032 bytes, the gradients' size");
  EXPECT_EQ(allreduce(rerun(dir, dir.file("two.json"), "four", {"--np", "4"})),
            "rabenseifner / default, Open MPI 4.1's choice for 4 ranks and 68032 bytes, the gradients' size");
  train_record(dir, "named", with(wide, {"--np", "2", "--allreduce", "rdb"}));
  EXPECT_EQ(allreduce(rerun(dir, dir.file("named.json"), "named4", {"--np", "4"})), "rdb / --allreduce");
  // So is every other collective: the reduce is linear for 2 ranks, binomial for 4 (block's
  // only reduce is redbcast's: chosen for the allreduce's size, its gradients here).
  const auto reduce = [](const Json& r) {
    return r.at("config").at("collectives").at("reduce").get<std::string>() + " / " +
           r.at("config").at("reduce_chosen_by").get<std::string>();
  };
  EXPECT_EQ(reduce(read_json_file(dir.file("two.json"))),
            "linear / default, Open MPI 4.1's choice for 2 ranks and 68032 bytes, the allreduce's size "
            "(this strategy's only reduce and broadcast are redbcast's)");
  EXPECT_EQ(reduce(read_json_file(dir.file("four.json"))),
            "binomial / default, Open MPI 4.1's choice for 4 ranks and 68032 bytes, the allreduce's size "
            "(this strategy's only reduce and broadcast are redbcast's)");
  EXPECT_EQ(reduce(rerun(dir, dir.file("named.json"), "chain4", {"--np", "4", "--reduce", "chain"})),
            "chain / --reduce");
}

TEST(rerun, a_simulated_run_checked_on_real_mpi_gives_the_real_runs_errors) {
  TestDir dir;
  const std::vector<std::string> sim_args = with(encoder, {"--np", "2", "--allreduce", "rdb"});
  train_record(dir, "sim", with(sim_args, {"--engine", "sim", "--platform", toy4}));
  const Json real = train_record(dir, "real", with(sim_args, {"--engine", "real"}));
  const Json checked = rerun(dir, dir.file("sim.json"), "checked", {"--engine", "real"});
  EXPECT_EQ(checked.at("config").at("engine"), "real");
  EXPECT_EQ(checked.at("config").at("platform"), nullptr);
  expect_same_history(real, checked, "train_error");
  const Json again = rerun(dir, dir.file("real.json"), "again");
  expect_same_history(real, again, "train_error");
}

TEST(rerun, records_of_older_wulfs_and_hand_edited_ones_are_refused_naming_the_field) {
  TestDir dir;
  const Json sim = train_record(dir, "sim", with(encoder, {"--engine", "sim", "--np", "2", "--platform", toy4}));
  const auto edited = [&](const std::string& name, auto edit) {
    Json r = sim;
    edit(r.at("config"));
    return dir.write(name, record_text(r));
  };
  expect_train_refused({"--rerun", edited("old.json", [](Json& c) { c.erase("job_format"); })},
                       {"old.json: config.job_format: missing", "older"});
  expect_train_refused({"--rerun", edited("eta.json", [](Json& c) { c["eta"] = "fast"; })},
                       {"eta.json: config.eta: expected a number"});
  expect_train_refused({"--rerun", edited("np.json", [](Json& c) { c["np"] = 2.5; })},
                       {"np.json: config.np: 2.5 is not a whole number"});
  expect_train_refused({"--rerun", edited("act.json", [](Json& c) { c["activations"][0] = "relu6"; })},
                       {"act.json: config.activations: 'relu6'"});
  expect_train_refused({"--rerun", edited("coll.json", [](Json& c) { c["collectives"].erase("bcast"); })},
                       {"coll.json: config.collectives.bcast: missing"});
  expect_train_refused({"--rerun", edited("layers.json", [](Json& c) { c["layers"][0] = 9; })},
                       {"the data has 16 inputs", "the job's net"});
  // Options that would make another job, and an output onto the record itself.
  expect_train_refused({"--rerun", dir.file("sim.json"), "--eta", "0.5"}, {"--eta: --rerun runs the record's job"});
  expect_train_refused({"--rerun", dir.file("sim.json"), "--out", dir.file("sim.json")},
                       {"--out", "--rerun", "same file"});
  expect_train_refused({"--rerun", dir.file("sim.json"), "--engine", "real", "--platform", toy4},
                       {"--platform"});
  // What a record asks of wulf's mpirun is checked as the options are: a hand-edited one
  // cannot start other ranks than its --np.
  expect_train_refused({"--rerun", edited("mpirun.json",
                                          [](Json& c) {
                                            c["engine"] = "real", c["compute"] = "wall", c["platform"] = nullptr;
                                            c["mpirun_args"] = Json::array({"-np", "1000"});
                                          })},
                       {"--mpirun-args: '-np' sets the number of processes, which wulf's --np does"});
  expect_train_refused({"--rerun", dir.file("sim.json"), "--engine", "real", "--mpirun-args", "--host a,b"},
                       {"--mpirun-args: '--host' sets the hosts"});
  expect_train_refused({"--rerun", dir.file("sim.json"), "--engine", "testbed", "--dilation", "1e300"},
                       {"--dilation: 1e+300 is more than 600"});
  // Values are held to their options' ranges, named with the file and the field (issue 62).
  expect_train_refused({"--rerun", edited("eta-1.json", [](Json& c) { c["eta"] = -1; })},
                       {"eta-1.json: config.eta: --eta: -1 must be more than 0 (the option's range is (0, 1000000])"});
  expect_train_refused({"--rerun", edited("eta-big.json", [](Json& c) { c["eta"] = 1e308; })},
                       {"eta-big.json: config.eta: ", "more than 1000000"});
  expect_train_refused({"--rerun", edited("alpha.json", [](Json& c) { c["alpha"] = 1; })},
                       {"alpha.json: config.alpha: "});
  // Another command's record is named as such, not as an older wulf's.
  expect_train_refused({"--rerun", edited("recommend.json", [](Json& c) {
                          c = Json::object();
                          c["command"] = "recommend";
                        })},
                       {"recommend.json: config.command: \"recommend\": --rerun runs the records of wulf train"});
  // A layer net's record with its numerics turned on: the record is named, not --numerics.
  const std::string net = dir.write("tiny.layers", "wulf-layers 1\nname tiny\nsamples 8 4\nlayer a linear 100 10x3 10\n");
  const Json layers = train_record(dir, "layers", {"--problem", "layers:" + net, "--numerics", "off", "--engine", "sim",
                                                   "--np", "2", "--platform", toy4, "--epochs", "1", "--block", "8"});
  Json on = layers;
  on.at("config")["numerics"] = true;
  const Outcome o = expect_train_refused({"--rerun", dir.write("on.json", record_text(on))},
                                         {"on.json: config.numerics: true", "the record was changed"});
  EXPECT_FALSE(contains(o.err, "add --numerics off")) << o.err;
  // A data file the record's run read, changed since: refused unless taken as it is now.
  const std::string data = dir.write("d.data", "4 1 1\n0\n0.1\n1\n0.2\n2\n0.3\n3\n0.4\n");
  const Json fann = train_record(dir, "fann", {"--problem", "fann:" + data, "--epochs", "2"});
  ASSERT_EQ(fann.at("config").at("input_files").size(), 1u) << fann.at("config").dump();
  EXPECT_EQ(fann.at("config").at("input_files")[0].at("what").get<std::string>(), "FANN data file");
  dir.write("d.data", "4 1 1\n0\n0.1\n1\n0.2\n2\n0.3\n3\n0.5\n");
  expect_train_refused({"--rerun", dir.file("fann.json")},
                       {"fann.json: the FANN data file " + data, "is not what the record's run read",
                        "--take-changed-inputs"});
  const Json taken = record_of(dir, "taken", {"train", "--rerun", dir.file("fann.json"), "--take-changed-inputs"});
  EXPECT_NE(taken.at("config").at("input_files")[0].at("digest"), fann.at("config").at("input_files")[0].at("digest"));
  // The platform file smpirun loads: recorded, and a changed one refused in the same way.
  const std::string toy = read_text_file(toy4, "toy4");
  const std::string platform = dir.write("p.xml", toy);
  const Json on_copy = train_record(dir, "sim", {"--problem", "encoder:8", "--engine", "sim", "--np", "2", "--platform",
                                             platform, "--epochs", "1"});
  const Json& files = on_copy.at("config").at("input_files");
  ASSERT_EQ(files.size(), 1u) << files.dump();
  EXPECT_EQ(files[0].at("what").get<std::string>(), "platform");
  EXPECT_EQ(files[0].at("path").get<std::string>(), platform);
  dir.write("p.xml", toy + "<!-- another cluster under the same name -->\n");
  expect_train_refused({"--rerun", dir.file("sim.json")},
                       {"sim.json: the platform " + platform, "is not what the record's run read", "--take-changed-inputs"});
  const Json moved = record_of(dir, "moved", {"train", "--rerun", dir.file("sim.json"), "--take-changed-inputs"});
  EXPECT_NE(moved.at("config").at("input_files")[0].at("digest"), files[0].at("digest"));
}

}  // namespace
}  // namespace wulf
