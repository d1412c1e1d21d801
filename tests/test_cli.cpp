// The `wulf` command end to end, in process: a real run writes its record, and every bad
// input gets one clear message, naming the input, and a non-zero exit before training.
#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <boost/program_options.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

namespace wulf {
namespace {

namespace fs = std::filesystem;

using namespace testing_support;

class cli : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }
  std::string write(const std::string& name, const std::string& text) const { return dir_.write(name, text); }
  // Expects an input error (exit 2) whose message holds every one of the fragments, before training.
  void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& fragments) {
    const Outcome r = testing_support::expect_refused(args, fragments);
    EXPECT_EQ(r.out.find("iter "), std::string::npos) << "training started: " << r.out;
  }
  TestDir dir_;
};

TEST_F(cli, trains_and_writes_a_complete_record) {
  const std::string out = path("r.json");
  expect_success({"train", "--problem", "encoder:8", "--epochs", "3", "--block", "2", "--out", out}, {"iter     3"});
  const std::string j = read_text_file(out, "the record");
  for (const char* key : {"\"config\"", "\"history\"", "\"final\"", "\"phases\"", "\"versions\"", "\"parameters\": 59",
                          "\"engine\": \"seq\"", "\"block\": 2", "\"block_step\": \"mean\"", "\"time_s\"", "\"train_error\"", "\"forward_s\"",
                          "\"backward_s\"", "\"update_s\"", "\"test_s\"", "\"eigen\"", "\"status\": \"max_iterations\""})
    EXPECT_NE(j.find(key), std::string::npos) << key << " missing from\n" << j;
}

TEST_F(cli, help_lists_every_option_with_its_default) {
  expect_success({"train", "--help"}, {"--problem arg (=digits)", "--precision arg (=float)", "--bias arg (=on)",
                                       "--seed arg in [0, 1e+18] (=1)", "--block", "--eta", "--alpha", "--epochs",
                                       "--np arg in [1, 1000000] (=1)", "--dilation arg in [1, 600]", "--target-error",
                                       "--out", "--config", "--engine arg (=seq)", "encoder[:N]", "fann:PATH"});
}

TEST_F(cli, options_can_come_from_a_config_file_and_the_command_line_wins) {
  const std::string cfg = write("run.cfg", "problem = encoder:8\nepochs = 2\nblock = 4\n");
  expect_success({"train", "--config", cfg, "--epochs", "1", "--quiet"}, {"ran all 1 iterations"});
  const std::string bad = write("bad.cfg", "problemm = encoder:8\n");
  expect_refused({"train", "--config", bad}, {bad, "problemm"});
  expect_refused({"train", "--config", path("none.cfg")}, {"none.cfg", "no such file"});
}

// Every file wulf reads must be a regular file, read only up to a stated limit: a folder, a
// device or a pipe is refused before any read (a read of /dev/zero would never end), and so is
// a file past the limit. /dev/null stands for the devices: read, it would end at once.
TEST_F(cli, inputs_must_be_regular_files_within_a_stated_limit) {
  const std::string folder = path("folder");
  fs::create_directory(folder);
  expect_refused({"train", "--config", folder}, {"--config", folder, "is a folder"});
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--config", "/dev/null"},
                                             {"--problem", "fann:/dev/null"},
                                             {"--problem", "encoder:8", "--weights-in", "/dev/null"},
                                             {"--problem", "encoder:8", "--engine", "sim", "--platform",
                                              wulf_platform("batcave.xml"), "--compute", "calibrated", "--profile",
                                              "/dev/null"}}) {
    SCOPED_TRACE(args[1]);
    std::vector<std::string> cmd{"train"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    expect_refused(cmd, {"/dev/null", "is not a regular file"});
  }
  // A FIFO is refused the same way whichever input names it (its writer never comes: a read
  // would wait forever), the platform too (once "no such file").
  const std::string fifo = path("input.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string batcave = wulf_platform("batcave.xml");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"train", "--config", fifo},
           {"train", "--problem", "fann:" + fifo},
           {"train", "--problem", "encoder:8", "--weights-in", fifo},
           {"train", "--problem", "encoder:8", "--engine", "sim", "--np", "1", "--platform", fifo},
           {"train", "--problem", "encoder:8", "--engine", "sim", "--np", "1", "--platform", batcave, "--hosts", fifo},
           {"train", "--problem", "encoder:8", "--engine", "real", "--np", "1", "--hostfile", fifo},
           {"train", "--problem", "encoder:8", "--engine", "sim", "--platform", batcave, "--compute", "calibrated",
            "--profile", fifo},
           {"train", "--rerun", fifo},
           {"platform", "info", fifo},
           {"model", "--profile", fifo}}) {
    SCOPED_TRACE(args[1] + " " + args.back());
    expect_refused(args, {fifo, "is not a regular file"});
  }
  expect_refused({"train", "--problem", "digits", "--data-dir", fifo}, {"--data-dir", fifo, "is not a folder"});
  // A sparse file one byte past the 64 MiB of a --config: refused by its size, unread.
  const std::string big = path("big.cfg");
  { std::ofstream(big) << "epochs = 1\n"; }
  fs::resize_file(big, text_file_limit + 1);
  expect_refused({"train", "--config", big}, {"--config", big, "more than the 64.0 MiB wulf reads of such a file"});
  EXPECT_TRUE(contains(input_error([&] { read_text_file(big, "--config"); }), "64.0 MiB")) << big;
}

// An output never replaces what is not a plain file of the run's own: a link is written
// through, a FIFO no one reads, a link to nothing and a folder are refused before the run,
// /dev/stdout gets the record on the standard output, and an output naming an input or the
// other output is refused, naming both.
TEST_F(cli, outputs_write_through_links_and_never_replace_inputs) {
  const std::vector<std::string> run{"train", "--problem", "encoder:8", "--epochs", "1", "--block", "4", "--quiet"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = run;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  // A link to a file: the file gets the record and the weights, the links stay links.
  const std::string record = write("record.json", "old\n"), weights = write("weights.txt", "old\n");
  fs::create_symlink(record, path("record-link"));
  fs::create_symlink(weights, path("weights-link"));
  testing_support::expect_success(with({"--out", path("record-link"), "--weights-out", path("weights-link")}));
  EXPECT_TRUE(fs::is_symlink(path("record-link")));
  EXPECT_TRUE(fs::is_symlink(path("weights-link")));
  EXPECT_TRUE(read_text_file(record, "record").find("wulf_record") != std::string::npos);
  EXPECT_TRUE(read_text_file(weights, "weights").find("wulf") != std::string::npos);
  // A link to nothing, a folder, a FIFO that no process reads: refused, nothing run.
  fs::create_symlink(path("nowhere/x.json"), path("dangling"));
  expect_refused(with({"--out", path("dangling")}), {"--out", "symbolic link to nothing"});
  expect_refused(with({"--weights-out", path("dangling")}), {"--weights-out", "symbolic link to nothing"});
  fs::create_directory(path("folder"));
  expect_refused(with({"--out", path("folder")}), {"--out", "is a folder"});
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  expect_refused(with({"--out", path("fifo")}), {"--out", "is a FIFO that no process reads"});
  // /dev/stdout: the record on the standard output of the wulf process.
  std::string out, err;
  ASSERT_EQ(run_program_captured({std::string(WULF_BINARY_DIR) + "/wulf", "train", "--problem", "encoder:8", "--epochs",
                                  "1", "--block", "4", "--quiet", "--out", "/dev/stdout"},
                                 out, err),
            0)
      << err;
  EXPECT_TRUE(out.find("\"wulf_record\"") != std::string::npos) << out;
  // An output that is an input, or the other output (through a link too): refused, naming both.
  const std::string cfg = write("run.cfg", "problem = encoder:8\nepochs = 1\nblock = 4\n");
  expect_refused({"train", "--config", cfg, "--out", cfg}, {"--out " + cfg + " is the same file as --config " + cfg});
  fs::create_symlink(cfg, path("cfg-link"));
  expect_refused({"train", "--config", cfg, "--weights-out", path("cfg-link")}, {"--weights-out", "--config " + cfg});
  expect_refused(with({"--out", path("same.json"), "--weights-out", path("same.json")}),
                 {"--weights-out", "is the same file as --out"});
  expect_refused(with({"--weights-in", weights, "--weights-out", weights}), {"is the same file as --weights-in " + weights});
  EXPECT_EQ(read_text_file(cfg, "config"), "problem = encoder:8\nepochs = 1\nblock = 4\n");
  // The other commands' outputs are kept from their inputs too.
  const std::string platform = path("bat.xml"), profile = path("bat.profile");
  fs::copy_file(wulf_platform("batcave.xml"), platform);
  fs::copy_file(wulf_platform("profiles/batcave-function.profile"), profile);
  expect_refused({"platform", "info", platform, "--out", platform}, {"--out", "is the same file as FILE " + platform});
  expect_refused({"model", "--profile", profile, "--out", profile}, {"is the same file as --profile " + profile});
  EXPECT_EQ(read_text_file(profile, "profile"), read_text_file(wulf_platform("profiles/batcave-function.profile"), "p"));
}

// No output replaces a file the run reads, whatever made the run read it (util/files.hpp's
// InputLog): MNIST's four IDX files under --data-dir (once replaced by the record, so that the
// next run found "wrong magic number ... 0x7b0a2020"), a FANN test set, the platform, mpirun's
// hostfile, a --hosts file, a profile, the record --rerun reads; recommend's --out too. Each
// is refused before the run, naming both, and the file stays as it was.
TEST_F(cli, no_output_replaces_a_file_the_run_reads) {
  const std::string mnist = small_mnist(dir_, 40, 20);
  const std::vector<std::string> digits{"train", "--problem", "digits", "--data-dir",
                                        mnist,   "--epochs",  "1",      "--quiet"};
  testing_support::expect_success(with(digits, {"--out", path("digits.json")}));  // the folder is MNIST's, small
  for (const std::string name :
       {"t10k-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "train-labels-idx1-ubyte", "train-images-idx3-ubyte"}) {
    const std::string file = mnist + "/" + name;
    const std::string before = read_text_file(file, "IDX file", data_file_limit);
    fs::create_symlink(file, path(name + "-link"));
    for (const std::string option : {"--out", "--weights-out"}) {
      SCOPED_TRACE(option + " " + name);
      expect_refused(with(digits, {option, file}), {option + " " + file + " is the same file as IDX file " + file});
      expect_refused(with(digits, {option, path(name + "-link")}), {"is the same file as IDX file " + file});
      EXPECT_EQ(read_text_file(file, "IDX file", data_file_limit), before);
    }
  }
  // recommend reads them in its probe of a simulation.
  expect_refused({"recommend", "--platform", toy4, "--problem", "digits", "--data-dir", mnist, "--target-error", "0.5",
                  "--out", mnist + "/t10k-labels-idx1-ubyte"},
                 {"is the same file as IDX file " + mnist + "/t10k-labels-idx1-ubyte"});
  testing_support::expect_success(with(digits, {"--out", path("digits.json")}));  // and it still reads
  // A FANN test set; --test-data with a problem that reads none is refused, not ignored.
  const std::string train = write("train.data", "2 1 1\n0\n0\n1\n1\n"), test = write("test.data", "1 1 1\n1\n1\n");
  const std::vector<std::string> fann{"train", "--problem", "fann:" + train, "--test-data", test, "--epochs", "1"};
  expect_refused(with(fann, {"--out", test}), {"--out " + test + " is the same file as FANN data file " + test});
  expect_refused(with(fann, {"--weights-out", train}), {"is the same file as FANN data file " + train});
  expect_refused({"train", "--problem", "encoder:8", "--test-data", test}, {"--test-data is for --problem fann:PATH"});
  // The platform and the files that place the ranks, read when the run starts.
  const std::string platform = path("toy4.xml"), hosts = write("hosts.txt", "toy-0\n"),
                    hostfile = write("hostfile", "localhost\n");
  fs::copy_file(toy4, platform);
  const std::vector<std::string> sim{"train", "--problem", "encoder:8",  "--engine", "sim",
                                     "--np",  "1",         "--platform", platform};
  expect_refused(with(sim, {"--out", platform}), {"--out " + platform + " is the same file as --platform " + platform});
  expect_refused(with(sim, {"--hosts", hosts, "--weights-out", hosts}), {"is the same file as --hosts " + hosts});
  expect_refused(
      {"train", "--problem", "encoder:8", "--engine", "real", "--np", "1", "--hostfile", hostfile, "--out", hostfile},
      {"is the same file as --hostfile " + hostfile});
  const std::string profile =
      write("toy.profile", "Tf_ms = 0.1\nTb_ms = 0.1\nTu_ms = 0.1\nTm_ms = 0.1\nTs_ms = 0.1\nTo_ms = 1\n");
  expect_refused(with(sim, {"--compute", "calibrated", "--profile", profile, "--out", profile}),
                 {"is the same file as --profile " + profile});
  EXPECT_EQ(read_text_file(platform, "platform"), read_text_file(toy4, "platform"));
  // The record a re-run reads.
  const std::string record = path("digits.json"), kept = read_text_file(record, "record");
  expect_refused({"train", "--rerun", record, "--out", record}, {"is the same file as --rerun " + record});
  EXPECT_EQ(read_text_file(record, "record"), kept);
  // validate's problems are read in its runs, and their shapes before: an unknown one is
  // refused there, and --out is none of their files.
  expect_refused({"validate", "--problems", "fann:" + train, "--out", train},
                 {"--out " + train + " is the same file as FANN data file " + train});
  expect_refused({"validate", "--problems", "encoder:8,nonsense"}, {"nonsense"});
  EXPECT_EQ(read_text_file(train, "FANN data"), "2 1 1\n0\n0\n1\n1\n");
  // study's runs read Bat Cave's platform and profile (a link to it here). Were the check
  // missing, its first run would time out and the study write nothing.
  const std::string batcave = path("batcave-link.xml");
  fs::create_symlink(std::string(WULF_PLATFORMS_DIR) + "/batcave.xml", batcave);
  expect_refused({"study", "--out", batcave, "--timeout", "0.01"}, {"is the same file as Bat Cave's platform"});
}

// --out /dev/null, as root: the device stays a device; a block device (a disk) is refused.
// Run in a private mount namespace with a /dev of its own (tmpfs, the nodes made there; the
// disk's is of a loop device number no machine has), never on the host's /dev.
TEST_F(cli, out_to_dev_null_leaves_the_device_in_a_private_mount_namespace) {
  if (::geteuid() != 0) WULF_SKIP("needs root to make a mount namespace and a device node");
  const std::string wulf = "\"" + std::string(WULF_BINARY_DIR) + "/wulf\" train --problem encoder:8 --epochs 1 --block 4 ";
  const std::string script =
      "mount -t tmpfs wulf-dev /dev && mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/wulf-disk b 7 250 && " +
      wulf + "--quiet --out /dev/null --weights-out /dev/null && " + wulf +
      "--out /dev/wulf-disk 2>&1; echo \"exit $?\"; stat -c %F /dev/null";
  std::string out, err;
  const int code = run_program_captured({"unshare", "--mount", "--propagation", "private", "sh", "-c", script}, out, err);
  if (code != 0 && err.find("unshare") != std::string::npos) WULF_SKIP("no mount namespace here: " + err);
  ASSERT_EQ(code, 0) << out << err;
  EXPECT_TRUE(out.size() >= 23 && out.substr(out.size() - 23) == "character special file\n") << out << err;
  EXPECT_TRUE(contains(out, "--out /dev/wulf-disk: is a block device (a disk), which wulf does not write\nexit 2\n"))
      << out;
}

// What a message quotes from a file reaches the terminal as plain text: an escape sequence
// as \x1b, a NUL as \x00 with the rest of the message after it.
TEST_F(cli, messages_show_control_characters_from_files_escaped) {
  const std::string esc = "\x1b[31m";
  const std::string nul(1, '\0');
  const std::string cfg = write("escape.cfg", "problem = encoder:8\nbad" + esc + "key" + nul + "tail = 1\n");
  const Outcome config = testing_support::expect_refused({"train", "--config", cfg}, {"\\x1b[31m"});
  EXPECT_EQ(config.err.find('\x1b'), std::string::npos) << config.err;
  const std::string host = write("hosts.txt", "a" + esc + "b" + nul + "c\n");
  const Outcome hosts =
      testing_support::expect_refused({"train", "--problem", "encoder:8", "--engine", "sim", "--platform",
                                       wulf_platform("batcave.xml"), "--np", "1", "--hosts", host},
                                      {"\\x1b[31m"});
  EXPECT_EQ(hosts.err.find('\x1b'), std::string::npos) << hosts.err;
  EXPECT_EQ(hosts.err.find('\0'), std::string::npos) << hosts.err;
  EXPECT_EQ(safe_to_print("x" + esc + nul + "y\tz\n\x7f\xc3\xa9"), "x\\x1b[31m\\x00y\tz\n\\x7f\xc3\xa9");
}

// One rule for everything wulf prints (issue 62): control characters, C1 controls (CSI,
// 0xc2 0x9b, which some terminals take as ESC [) and bytes that are not UTF-8 are escaped,
// and well-formed UTF-8 stays, also when a stream's writes cut a character in two.
TEST(safe_output, escapes_controls_and_malformed_utf8_and_keeps_utf8) {
  EXPECT_EQ(safe_to_print("a\xc2\x9b" "31mb"), "a\\xc2\\x9b31mb");
  EXPECT_EQ(safe_to_print("\xff\xfe caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\\xff\\xfe caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(safe_to_print("\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xc3"),  // overlong, surrogate, past U+10FFFF, cut
            "\\xc0\\xaf \\xed\\xa0\\x80 \\xf4\\x90\\x80\\x80 \\xc3");
  std::ostringstream to;
  {
    SafeOstream out(to);
    out << "caf\xc3";
    out << "\xa9 \x1b[0m" << 42 << '\n';
    out << "\xe2\x82";  // cut at the end: escaped when the stream ends
  }
  EXPECT_EQ(to.str(), "caf\xc3\xa9 \\x1b[0m42\n\\xe2\\x82");
}

// Every reader's text, printed by the command that reads it, is plain: a platform's names in
// `platform info`, a hostfile's names in an error (a layer file's and a record's, printed by
// the ranks: layer_table.a_files_text_is_printed_escaped_by_the_ranks_and_a_rerun).
TEST_F(cli, text_from_every_input_file_is_printed_escaped) {
  const std::string esc = "\x1b[31m", csi = "\xc2\x9b" "31m", bad = "\xff";
  auto expect_plain = [](const Outcome& o, const std::string& what) {
    for (const std::string& text : {o.out, o.err}) {
      EXPECT_EQ(text.find('\x1b'), std::string::npos) << what << ": " << text;
      EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << what << ": " << text;
      EXPECT_EQ(text.find('\xff'), std::string::npos) << what << ": " << text;
    }
  };
  const std::string platform = write("hostile.xml", R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z&#x9b;31m" routing="Full">
    <host id="a&#x9b;31m" speed="1Gf"/><host id="b" speed="1Gf"/>
    <link id="l" bandwidth="1GBps" latency="1us"/>
    <route src="a&#x9b;31m" dst="b"><link_ctn id="l"/></route>
  </zone>
</platform>
)");
  // SimGrid hands the C1 character on as its Latin-1 byte: refused as no UTF-8, escaped.
  const Outcome info = testing_support::expect_refused({"platform", "info", platform}, {"z\\x9b31m", "not UTF-8"});
  expect_plain(info, "platform");
  const std::string hosts = write("hostile.hosts", "a" + csi + bad + "\n");
  expect_plain(wulf({"train", "--problem", "encoder:8", "--engine", "sim", "--platform", toy4, "--np", "1",
                     "--hosts", hosts}),
               "hostfile");
}

TEST_F(cli, unknown_problem_option_or_command_is_refused) {
  expect_refused({"train", "--problem", "xor"}, {"unknown problem 'xor'"});
  expect_refused({"train", "--etaa", "1"}, {"etaa"});
  expect_refused({"train", "--eta", "fast"}, {"eta"});
  expect_refused({"fly"}, {"unknown command 'fly'"});
  expect_refused({"train", "--engine", "sim"}, {"--engine", "sim"});
  expect_refused({"train", "--precision", "half"}, {"--precision", "half"});
  expect_refused({"train", "--problem", "encoder:8", "--block-step", "total"}, {"--block-step", "total", "sum or mean"});
}

// Regression targets no output of the net can reach (near 1 000 under a sigmoid) train to a
// useless error: said before training, and not for an output that can reach them. The record
// names what wulf trains FANN data with, which is not FANN's own default.
TEST_F(cli, targets_outside_the_output_range_are_warned_of_before_training) {
  const std::string data = write("big.data", "4 1 1\n0\n1000\n1\n990\n2\n1010\n3\n1000\n");
  const std::vector<std::string> run{"train", "--problem", "fann:" + data, "--epochs", "1", "--quiet", "--out", path("r.json")};
  const Outcome warned = expect_success(run);
  EXPECT_TRUE(contains(warned.err, "warning: the training targets of fann:" + data + " lie in [990, 1010], outside [0, 1]"))
      << warned.err;
  const Outcome linear = expect_success(with(run, {"--output-activation", "linear"}));
  EXPECT_FALSE(contains(linear.err, "warning")) << linear.err;
  const std::string source = read_json_file(path("r.json")).at("config").at("defaults_from").get<std::string>();
  EXPECT_TRUE(contains(source, "RPROP")) << source;
}

TEST_F(cli, zero_or_negative_sizes_are_refused) {
  expect_refused({"train", "--problem", "encoder:8", "--block", "0"}, {"--block", "at least 1"});
  expect_refused({"train", "--problem", "encoder:8", "--block", "-3"}, {"--block", "-3"});
  expect_refused({"train", "--problem", "encoder:8", "--epochs", "-1"}, {"--epochs"});
  expect_refused({"train", "--problem", "encoder:8", "--hidden", "0"}, {"--hidden", "0"});
  expect_refused({"train", "--problem", "encoder:8", "--hidden", "8,-2"}, {"--hidden", "-2"});
  expect_refused({"train", "--problem", "function", "--train-size", "-1"}, {"--train-size"});
  expect_refused({"train", "--problem", "encoder:8", "--eta", "0"}, {"--eta"});
}

TEST_F(cli, a_block_larger_than_the_training_set_is_refused) {
  expect_refused({"train", "--problem", "parity:3", "--block", "9"}, {"--block", "9", "8 patterns"});
}

TEST_F(cli, missing_or_truncated_mnist_files_are_named) {
  expect_refused({"train", "--problem", "digits", "--data-dir", path("nothing")}, {path("nothing"), "does not exist"});
  // A folder with the real label files but a training-image file cut short.
  fs::create_directories(path("cut"));
  for (const char* f : {"train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    fs::copy_file(mnist_dir() + "/" + f, path("cut") + "/" + f);
  {
    std::ifstream in(mnist_dir() + "/train-images-idx3-ubyte", std::ios::binary);
    std::vector<char> head(16 + 784 * 100);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(path("cut") + "/train-images-idx3-ubyte", std::ios::binary)
        .write(head.data(), static_cast<std::streamsize>(head.size()));
  }
  expect_refused({"train", "--problem", "digits", "--data-dir", path("cut")},
                 {path("cut") + "/train-images-idx3-ubyte"});
  // Without the image file at all.
  fs::remove(path("cut") + "/train-images-idx3-ubyte");
  expect_refused({"train", "--problem", "digits", "--data-dir", path("cut")},
                 {path("cut") + "/train-images-idx3-ubyte"});
}

TEST_F(cli, a_fann_file_whose_counts_disagree_with_its_header_is_named) {
  const std::string f = write("short.data", "3 2 1\n0 0\n0\n0 1\n1\n");
  expect_refused({"train", "--problem", "fann:" + f}, {f, "header"});
  const std::string nan = write("nan.data", "2 2 1\n0 0\n0\nnan 1\n1\n");
  expect_refused({"train", "--problem", "fann:" + nan}, {nan});
  const std::string good = write("good.data", "4 2 1\n0 0\n0\n0 1\n1\n1 0\n1\n1 1\n0\n");
  const std::string test3 = write("test3.data", "1 3 1\n0 0 0\n0\n");
  expect_refused({"train", "--problem", "fann:" + good, "--test-data", test3}, {test3, "3 inputs"});
}

TEST_F(cli, diverging_training_stops_with_a_message_and_keeps_the_record) {
  const std::string out = path("div.json");
  const Outcome r =
      wulf({"train", "--problem", "function", "--hidden", "16", "--activation", "linear", "--output-activation",
            "linear", "--eta", "10000", "--block", "4", "--epochs", "20", "--init-range", "1", "--out", out});
  EXPECT_EQ(r.code, exit_diverged) << r.out << r.err;
  EXPECT_NE(r.err.find("diverged"), std::string::npos) << r.err;
  ASSERT_TRUE(fs::exists(out));
  EXPECT_NE(read_text_file(out, "the record").find("\"status\": \"diverged\""), std::string::npos);
}

TEST_F(cli, an_unwritable_record_path_is_refused_before_training) {
  expect_refused({"train", "--problem", "encoder:8", "--out", path("no/such/dir/r.json")}, {"--out", "does not exist"});
}

TEST_F(cli, a_failed_run_never_leaves_a_half_written_record) {
  const std::string out = write("keep.json", "{\"old\": true}\n");
  expect_refused({"train", "--problem", "encoder:8", "--block", "0", "--out", out}, {"--block"});
  EXPECT_EQ(read_text_file(out, "the record"), "{\"old\": true}\n");
}

// Boost reads "[name]" as a section header, and a file of them alone (a JSON file of
// brackets) would set nothing: the run would go on with the defaults as if all was well.
TEST_F(cli, a_config_file_of_brackets_or_sections_is_refused_with_its_line) {
  const std::string deep = write("deep.cfg", std::string(200000, '[') + std::string(200000, ']') + "\n");
  expect_refused({"train", "--config", deep, "--problem", "encoder:8", "--epochs", "1"},
                 {deep + ":1: '[[[[", "bytes)' is no line of key = value"});
  const std::string section = write("section.cfg", "# a run\n\n  [run]\nepochs = 1\n");
  expect_refused({"train", "--config", section, "--problem", "encoder:8"}, {section + ":3: '[run]'"});
  // A line of bytes that are not text: named, in plain words.
  const Outcome o = testing_support::expect_refused(
      {"train", "--config", write("binary.cfg", "\x7f\x45\x4c\x46\x02\x01\xff\xfe\n"), "--problem", "encoder:8"},
      {"binary.cfg"});
  EXPECT_TRUE(plain_text(o.err.substr(0, o.err.find('\n')))) << o.err;
}

// A JSON file of 200 000 brackets given as a profile, to each command that reads one: the
// profile's first line named, no crash.
TEST_F(cli, a_deeply_nested_json_file_as_a_profile_is_refused) {
  const std::string deep = write("deep.json", std::string(200000, '[') + std::string(200000, ']') + "\n");
  expect_refused({"model", "--profile", deep}, {"--profile " + deep + ":1: expected 'key = value'"});
  expect_refused({"train", "--problem", "function", "--engine", "sim", "--platform", toy4, "--compute", "calibrated",
                  "--profile", deep},
                 {"--profile " + deep + ":1: expected 'key = value'"});
  expect_refused({"recommend", "--problem", "function", "--platform", toy4, "--compute", "calibrated", "--profile",
                  deep, "--target-error", "0.1"},
                 {"--profile " + deep + ":1: expected 'key = value'"});
}

// --out on a full disk: an error naming the file and the reason, exit 2, and the record that
// was there stays byte for byte (the file size limit fails the write as a full disk does).
TEST_F(cli, a_record_that_cannot_be_written_is_an_error_and_the_old_one_stays) {
  const std::string full = full_device(dir_);
  for (const auto& args : {std::vector<std::string>{"model", "--profile", "batcave-function"},
                           std::vector<std::string>{"train", "--problem", "encoder:8", "--epochs", "1", "--quiet"}}) {
    SCOPED_TRACE(args[0]);
    testing_support::expect_refused(with(args, {"--out", full}), {full + ": writing failed: No space left on device"});
    EXPECT_TRUE(fs::is_character_file(full));
    const std::string old = write("old.json", "{\"wulf_record\": 1, \"old\": true}\n");
    Outcome o;
    {
      const FileSizeLimit limit(200);
      o = wulf(with(args, {"--out", old}));
    }
    expect_refusal(o, {old + ": writing failed", "left as it was"});
    EXPECT_EQ(read_text_file(old, "the record"), "{\"wulf_record\": 1, \"old\": true}\n");
  }
  for (const auto& e : fs::directory_iterator(dir_.path()))
    EXPECT_TRUE(e.path().filename() == "old.json" || e.path() == full) << "left behind: " << e.path();
}

TEST_F(cli, a_timeout_must_be_a_positive_number_of_seconds) {
  for (const std::string bad : {"0", "-1"})
    expect_refused({"train", "--problem", "encoder:8", "--timeout", bad}, {"--timeout: " + bad + " must be more than 0"});
  for (const std::string bad : {"soon", "nan", "inf"})
    expect_refused({"train", "--problem", "encoder:8", "--timeout", bad}, {"--timeout: '" + bad + "' is not a number"});
  for (const std::string command : {"calibrate", "validate", "study", "recommend"})
    expect_refused({command, "--timeout", "-1"}, {"--timeout: -1 must be more than 0"});
  expect_refused({"platform", "bench", toy4, "--timeout", "x"}, {"--timeout: 'x' is not a number"});
}

// A limit past the steady clock's range once overflowed into the past: every run timed out at
// once ("timed out after 1e+20 s", exit 4, a timed_out record). Such limits are refused up
// front, on every command that takes one; no record is written.
TEST_F(cli, a_timeout_longer_than_31_years_is_refused_not_past_at_once) {
  const std::string out = path("r.json");
  for (const std::string big : {"9.3e9", "1e10", "1e20", "1e300"}) {
    expect_refused({"train", "--problem", "encoder:8", "--epochs", "1", "--timeout", big, "--out", out},
                   {"--timeout: ", " is more than 1000000000"});
    expect_refused({"train", "--problem", "encoder:8", "--epochs", "1", "--engine", "sim", "--platform", toy4,
                    "--timeout", big, "--out", out},
                   {"--timeout: ", " is more than 1000000000"});
    for (const std::string command : {"calibrate", "validate", "study", "recommend"})
      expect_refused({command, "--timeout", big}, {"--timeout: ", " is more than 1000000000"});
    expect_refused({"platform", "bench", toy4, "--timeout", big}, {"--timeout: ", " is more than 1000000000"});
  }
  EXPECT_FALSE(fs::exists(out));
  // The longest limit there is still runs.
  expect_success({"train", "--problem", "encoder:8", "--epochs", "1", "--quiet", "--timeout", "1e9", "--out", out});
}

// Every number option of every command states its range (its help shows "arg in [lo, hi]")
// and refuses a value outside it, or one that is no number, naming itself, before anything
// runs. Only --measured-scale has no upper bound of wulf's.
TEST_F(cli, every_numeric_option_states_and_checks_its_range) {
  namespace po = boost::program_options;
  int ranged = 0;
  for (const auto& [command, table] : command_options())
    for (const auto& o : table.options()) {
      const std::string name = o->long_name();
      SCOPED_TRACE("wulf " + command + " --" + name);
      const auto* r = dynamic_cast<const RangedOption*>(o->semantic().get());
      if (!r) {
        EXPECT_FALSE(dynamic_cast<const po::typed_value<double>*>(o->semantic().get()) ||
                     dynamic_cast<const po::typed_value<long long>*>(o->semantic().get()) ||
                     dynamic_cast<const po::typed_value<int>*>(o->semantic().get()))
            << "a number option without a range";
        continue;
      }
      ++ranged;
      const Range& range = r->range();
      EXPECT_TRUE(contains(o->format_parameter(), "arg in " + range_text(range))) << o->format_parameter();
      // Only --measured-scale has no upper bound of wulf's; the what-if scales stop where
      // SimGrid does (platform.what_if_scales_are_bounded_to_what_simgrid_computes).
      EXPECT_EQ(std::isfinite(range.hi), name != "measured-scale") << range_text(range);
      const auto refused = [&](const std::string& text, const std::string& what) {
        boost::any value;
        try {
          o->semantic()->parse(value, {text}, true);
          ADD_FAILURE() << text << " taken";
        } catch (const InputError& e) {
          EXPECT_TRUE(contains(e.what(), "--" + name + ": ")) << e.what();
          EXPECT_TRUE(contains(e.what(), what)) << e.what();
        }
      };
      refused(number_text(range.lo - 1), range.lo_open    ? "must be more than"
                                         : range.lo == 0 ? "is negative"
                                                         : "must be at least");
      if (range.lo_open) refused(number_text(range.lo), "must be more than");
      if (name != "measured-scale") refused(std::isinf(range.hi) ? "1e300" : number_text(range.hi * 2 + 1), "");
      if (range.whole) refused(number_text(range.lo + 0.5), "is not a whole number");
      refused("1e309", "is not a number");
      refused("x", "is not a number");
      boost::any value;
      EXPECT_NO_THROW(o->semantic()->parse(value, {number_text(range.lo_open ? range.lo + 0.5 : range.lo)}, true));
    }
  EXPECT_GT(ranged, 60);
}

// wulf decides its mpirun's processes, hosts and program: --mpirun-args may add to it but
// not undo it, and a --hostfile must be one Open MPI reads (mpirun would otherwise refuse it
// after printing its banner, exit 1). All refused as the job is resolved, before mpirun.
TEST_F(cli, mpirun_args_and_a_hostfile_cannot_get_around_the_checks) {
  const auto resolved = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"--problem", "encoder:8", "--epochs", "1", "--engine", "real", "--np", "2"});
    return resolve(parse_train(args, train_options()));
  };
  const auto refused = [&](const std::vector<std::string>& args, const std::vector<std::string>& fragments) {
    try {
      resolved(args);
      ADD_FAILURE() << args.back() << ": not refused";
    } catch (const InputError& e) {
      for (const std::string& f : fragments) EXPECT_TRUE(contains(e.what(), f)) << "'" << f << "' not in: " << e.what();
    }
  };
  const std::string np = "sets the number of processes, which wulf's --np does";
  const std::string hosts = "sets the hosts, which wulf's --hostfile does";
  const std::string program = "wulf starts its own rank program";
  refused({"--mpirun-args", "-np 1000 --oversubscribe"}, {"--mpirun-args: '-np' " + np});
  for (const std::string count : {"-n 4", "--n 4", "-c 4", "--np 4", "-N 2", "--npernode 2", "-npersocket 1",
                                  "--pernode", "--ppr 2:node"})
    refused({"--mpirun-args", count}, {"--mpirun-args: '" + count.substr(0, count.find(' ')) + "' " + np});
  refused({"--mpirun-args", "--map-by ppr:4:node"}, {"'--map-by ppr:4:node' " + np});
  for (const std::string where : {"-H a,b", "--host a", "-host a", "--hostfile f", "-machinefile f",
                                  "--default-hostfile f", "--rankfile f"})
    refused({"--mpirun-args", where}, {"--mpirun-args: '" + where.substr(0, where.find(' ')) + "' " + hosts});
  refused({"--mpirun-args", "--oversubscribe"}, {"'--oversubscribe' sets oversubscription, which wulf's --oversubscribe"});
  refused({"--mpirun-args", "--map-by node:OVERSUBSCRIBE"}, {"sets oversubscription"});
  refused({"--mpirun-args", "--app f"}, {"'--app' sets the program; " + program});
  refused({"--mpirun-args", "-x A : /bin/true"}, {"':' starts a second program; " + program});
  refused({"--mpirun-args", "--bind-to none /bin/sh"}, {"'/bin/sh' is no option's value", program});
  refused({"--mpirun-args", "--report-bindings sh"}, {"'sh' is no option's value"});
  refused({"--mpirun-args", "--version"}, {"'--version' starts no ranks"});
  refused({"--mpirun-args", "--np=4"}, {"'--np=4' is no option of Open MPI 4.1's mpirun"});
  refused({"--mpirun-args", "--mca btl"}, {"'--mca' takes 2 values"});
  // What adds to wulf's mpirun is taken.
  const TrainJob fine = resolved({"--mpirun-args", "--mca btl tcp,self --bind-to none -x FOO --map-by node "
                                                   "--report-bindings -mca btl_tcp_if_include lo"});
  EXPECT_EQ(fine.mpirun_args.size(), 13u);

  // The hostfile: what Open MPI 4.1 reads, and enough slots for --np unless oversubscribed.
  const auto hostfile = [&](const std::string& text) { return write("hosts", text); };
  refused({"--hostfile", hostfile("localhost slots=abc\n")},
          {"--hostfile " + path("hosts") + ":1: 'localhost slots=abc'", "slots=abc is not a whole number"});
  refused({"--hostfile", hostfile("# two\nlocalhost slots=2\nslots=2\n")}, {":3: 'slots=2' begins with a setting"});
  refused({"--hostfile", hostfile("localhost colour=blue\n")}, {":1:", "'colour' is no setting"});
  refused({"--hostfile", hostfile("localhost 4\n")}, {":1:", "'4' after the host, not key=value"});
  refused({"--hostfile", hostfile("# none\n\n")}, {"it names no host"});
  refused({"--hostfile", hostfile("localhost slots=1\n")}, {"it gives 1 slot, fewer than --np 2 ranks",
                                                             "--oversubscribe on"});
  EXPECT_EQ(resolved({"--hostfile", hostfile("localhost slots=1\n"), "--oversubscribe", "on"}).np, 2);
  EXPECT_EQ(resolved({"--hostfile", hostfile("# the nodes\nlocalhost slots = 1 max_slots=4  # here\n"
                                             "127.0.0.1 slots=1 user=me\n")}).np, 2);
  EXPECT_EQ(resolved({"--hostfile", hostfile("localhost\n")}).np, 2);  // slots: the host's cores
}

// The values the third sweep of hostile inputs gave, refused before anything runs.
TEST_F(cli, numbers_out_of_their_range_are_refused_before_anything_runs) {
  const std::string out = path("r.json");
  expect_refused({"train", "--problem", "encoder:8", "--strategy", "root", "--threads", "1000000"},
                 {"--threads: 1000000 is more than 1024"});
  expect_refused({"train", "--problem", "encoder:8", "--engine", "testbed", "--platform", toy4, "--dilation", "1e300"},
                 {"--dilation: 1e+300 is more than 600"});
  expect_refused({"platform", "bench", toy4, "--engine", "testbed", "--dilation", "1e300"},
                 {"--dilation: 1e+300 is more than 600"});
  expect_refused({"train", "--problem", "encoder:8", "--eta", "1e300"}, {"--eta: 1e+300 is more than 1000000"});
  expect_refused({"train", "--problem", "encoder:8", "--seed", "1e300"}, {"--seed: 1e+300 is more than 1e+18"});
  expect_refused({"train", "--problem", "encoder:8", "--history-every", "1e300"}, {"--history-every: "});
  expect_refused({"train", "--problem", "encoder:8", "--alpha", "1"}, {"--alpha: 1 must be less than 1"});
  expect_refused({"model", "--profile", "batcave-function", "--n", "1e300", "--out", out}, {"--n: 1e+300 is more than"});
  expect_refused({"recommend", "--finalists", "1e9"}, {"--finalists: 1000000000 is more than 1000"});
  expect_refused({"calibrate", "--problem", "xor", "--iterations", "1e300"}, {"--iterations: 1e+300 is more than"});
  expect_refused({"validate", "--repeat", "1e9"}, {"--repeat: 1000000000 is more than 1000"});
  expect_refused({"platform", "bench", toy4, "--grow", "1e9"}, {"--grow: 1000000000 is more than 100000"});
  // Lists too: each item in its range (calibrate and validate start their ranks here).
  expect_refused({"train", "--problem", "encoder:8", "--hidden", "8,1e10"}, {"--hidden: 10000000000 is more than"});
  expect_refused({"calibrate", "--problem", "xor", "--np", "2,1000000000"}, {"--np: 1000000000 is more than 1024"});
  // A layer net has no arithmetic to calibrate, and calibrate has no --numerics to offer.
  const Outcome layers = testing_support::expect_refused({"calibrate", "--problem", "layers:resnet50"},
                                        {"--problem layers:resnet50", "a net given by its layers has none"});
  EXPECT_FALSE(contains(layers.err, "--numerics")) << layers.err;
  expect_refused({"validate", "--np", "1,5000"}, {"--np: 5000 is more than 1024"});
  expect_refused({"model", "--profile", "batcave-function", "--np", "1e16"}, {"--np: 1e+16 is more than 1000000"});
  expect_refused({"platform", "bench", toy4, "--sizes", "1,1e12"}, {"--sizes: 1000000000000 is more than 1073741824"});
  expect_refused({"platform", "bench", toy4, "--elements", "0"}, {"--elements: 0 must be at least 1"});
  // The allreduce algorithms are wulf's names on every engine (comm/collective_choice).
  expect_refused({"platform", "bench", toy4, "--allreduce", "lr"}, {"--allreduce: unknown algorithm 'lr'", "ring"});
  expect_refused({"validate", "--allreduce", "ring"}, {"--allreduce is for wulf validate --testbed"});
  expect_refused({"validate", "--testbed", "--allreduce", "rab"}, {"--allreduce: unknown algorithm 'rab'"});
  // validate --testbed --platform's grid: its sizes (--elements) and calls a cell (--repeat), there only.
  expect_refused({"validate", "--elements", "4096"}, {"--elements is for wulf validate --testbed --platform"});
  expect_refused({"validate", "--testbed", "--elements", "4096"}, {"--elements is for wulf validate --testbed --platform"});
  expect_refused({"validate", "--testbed", "--repeat", "2"}, {"--repeat is for wulf validate without --testbed"});
  expect_refused({"validate", "--testbed", "--platform", toy4, "--elements", "4096,0"},
                 {"--elements: 0 must be at least 1"});
  expect_refused({"validate", "--testbed", "--platform", toy4, "--elements", "1e9"},
                 {"--elements: 1000000000 is more than 100000000"});
  EXPECT_FALSE(fs::exists(out));
}

// The record says why: the run's config, no history, "ended": timed_out and the message.
TEST_F(cli, a_sequential_run_past_its_timeout_ends_with_exit_4_and_a_record_that_says_so) {
  const std::string out = path("r.json");
  const Outcome r = wulf({"train", "--problem", "encoder:8", "--epochs", "100000000", "--quiet", "--timeout", "0.5",
                          "--out", out});
  EXPECT_EQ(r.code, exit_timeout) << r.out << r.err;
  EXPECT_EQ(r.err, "wulf: timed out after 0.5 s\n");
  const Json record = read_json_file(out);
  EXPECT_EQ(record.at("ended").at("status").get<std::string>(), "timed_out");
  EXPECT_EQ(record.at("ended").at("message").get<std::string>(), "timed out after 0.5 s");
  EXPECT_EQ(record.at("config").at("problem").get<std::string>(), "encoder:8");
  EXPECT_TRUE(record.at("history").empty());
  expect_refused({"plot", out, "--out", path("r.png")}, {out, "ended before it finished (timed_out: timed out after 0.5 s)"});
  const Outcome sweep = wulf({"train", "--problem", "encoder:8", "--strategy", "session", "--sweep", "eta=0.5,1.5",
                              "--epochs", "100000000", "--quiet", "--timeout", "0.5"});
  EXPECT_EQ(sweep.code, exit_timeout) << sweep.out << sweep.err;
  EXPECT_EQ(sweep.err, "wulf: timed out after 0.5 s\n");
  // The limit was this run's: the next run has none.
  expect_success({"train", "--problem", "encoder:8", "--epochs", "5", "--quiet"});
}

// A run ended by --timeout (or a signal: the same code) never replaces a record of a run that
// finished at --out: that stays byte for byte, and the ended run's record goes beside it,
// OUT.ended.json, which the next ended run replaces. An --out that holds only an ended run's
// record gets the new one; a beside file that holds a finished record is left too.
TEST_F(cli, an_ended_run_keeps_the_finished_record_at_out_and_writes_its_own_beside_it) {
  const std::string out = path("r.json"), beside = path("r.ended.json");
  expect_success({"train", "--problem", "encoder:8", "--epochs", "3", "--quiet", "--out", out});
  const std::string finished = read_text_file(out, "record");
  const std::vector<std::string> endless{"train",   "--problem", "encoder:8", "--epochs", "100000000",
                                         "--quiet", "--timeout", "0.5",       "--out",    out};
  for (int run = 0; run < 2; ++run) {
    const Outcome r = wulf(endless);
    EXPECT_EQ(r.code, exit_timeout) << r.err;
    EXPECT_EQ(r.err, "wulf: timed out after 0.5 s; --out " + out + " keeps the record it held, this run's is " +
                         beside + "\n");
    EXPECT_EQ(read_text_file(out, "record"), finished);
    EXPECT_EQ(read_json_file(beside).at("ended").at("status").get<std::string>(), "timed_out");
  }
  fs::rename(beside, out);  // only an ended run's record at --out: replaced
  const Outcome replaced = wulf(endless);
  EXPECT_EQ(replaced.err, "wulf: timed out after 0.5 s\n");
  EXPECT_EQ(read_json_file(out).at("ended").at("status").get<std::string>(), "timed_out");
  EXPECT_FALSE(fs::exists(beside));
  write("r.json", finished);
  write("r.ended.json", finished);
  const Outcome both = wulf(endless);
  EXPECT_TRUE(contains(both.err, beside + " holds a record too: nothing written")) << both.err;
  EXPECT_EQ(read_text_file(out, "record"), finished);
  EXPECT_EQ(read_text_file(beside, "record"), finished);
}

// A run that --force took past the memory estimate and that then runs out of memory is told
// its estimate and what shrinks it, and --precision float only where it computes in double
// (once "try --train-size or --precision float" to a float run). The wulf program runs under
// a limit of 1 GB of address space, the net takes 1.6 GB of floats.
TEST_F(cli, a_forced_run_that_runs_out_of_memory_is_told_what_shrinks_it) {
#ifdef __SANITIZE_ADDRESS__
  WULF_SKIP_ANYWHERE("AddressSanitizer reserves terabytes of shadow address space as wulf starts, which a "
                     "limit of 1 GB (ulimit -v) refuses: the unsanitized suite runs this test");
#endif
  for (const std::string precision : {"float", "double"}) {
    SCOPED_TRACE(precision);
    std::string out, err;
    const int code =
        run_program_captured({"sh", "-c", "ulimit -v 1000000 && WULF_MEMORY_LIMIT_BYTES=100e6 exec \"$0\" \"$@\"",
                              std::string(WULF_BINARY_DIR) + "/wulf", "train", "--problem", "encoder:8", "--hidden",
                              "20000,20000", "--epochs", "1", "--quiet", "--force", "--precision", precision},
                             out, err);
    EXPECT_EQ(code, exit_internal) << err;
    EXPECT_TRUE(contains(err, "wulf: error: out of memory: the run's memory estimate is ")) << err;
    EXPECT_TRUE(contains(err, "this machine has 95.4 MiB (WULF_MEMORY_LIMIT_BYTES)")) << err;
    EXPECT_TRUE(contains(err, "to shrink it: ")) << err;
    EXPECT_EQ(contains(err, "--precision float"), precision == "double") << err;
  }
}

TEST_F(cli, train_help_lists_the_exit_codes) {
  expect_success({"train", "--help"}, {"--timeout", "4 timed out (--timeout)", "130 SIGINT", "143"});
}

}  // namespace
}  // namespace wulf
