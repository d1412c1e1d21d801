// `wulf <command>`: the usage and the dispatch to the commands, each in its own file.
#include "cli/cli.hpp"

#include "job/memory_estimate.hpp"
#include "train/result_record.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/json.hpp"
#include "util/text.hpp"

#include <wulf/build_info.hpp>

#include "cli/train_options.hpp"

#include <boost/program_options/errors.hpp>
#include <boost/program_options/options_description.hpp>

#include <new>
#include <optional>
#include <ostream>

namespace po = boost::program_options;

namespace wulf {
namespace {

// ": this machine has 1.2 GiB (MemAvailable)", or nothing where that cannot be read.
std::string memory_left_to_say() {
  try {
    const std::optional<MachineMemory> machine = machine_memory();
    return machine ? ": this machine has " + human_bytes(machine->bytes) + " (" + machine->source + ")" : "";
  } catch (const std::exception&) {
    return "";
  }
}

const char* usage =
    "usage: wulf <command> [options]\n"
    "\n"
    "commands:\n"
    "  study      the main job: seed 000's Table VII by paper, model and simulator, and this machine\n"
    "  train      train a network on a problem and report its errors (wulf train --help)\n"
    "  platform   inspect a SimGrid platform (info) or measure it in simulation (bench)\n"
    "  model      seed 000's predicted speedup and efficiency from a calibration profile; --overlap: bucketed overlap on a platform\n"
    "  calibrate  measure seed 000's constants on this machine: a profile and a platform\n"
    "  validate   model and simulator against real mpirun on this machine (seed 000's Table VI)\n"
    "  recommend  the fastest strategy, p and b to a target error on a platform, or the fewest processors for a time per epoch\n"
    "  plot       draw the error curves of result records against time or iterations into one PNG\n"
    "  testbed    whether this machine can run --engine testbed (check), removing killed runs' leftovers (clean),\n"
    "             and any program on a platform's emulated cluster, e.g. torch.distributed's or MPI's (run)\n"
    "  clean      remove what killed runs left: temporary files and folders, testbed namespaces\n"
    "\n"
    "wulf --version prints the version and the libraries it was built with.\n";

}  // namespace

std::vector<std::pair<std::string, po::options_description>> command_options() {
  return {{"train", train_options()},         {"recommend", recommend_options()}, {"calibrate", calibrate_options()},
          {"validate", validate_options()},   {"study", study_options()},         {"model", model_options()},
          {"platform bench", bench_options()}, {"testbed run", testbed_run_options()}};
}

namespace {

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const InputLog inputs;  // every file the command reads, which none of its outputs may replace
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      (args.empty() ? err : out) << usage;
      return args.empty() ? exit_input : exit_ok;
    }
    if (args[0] == "--version") {
      out << "wulf " << build::version << "\n" << record_text(versions_json()) << "\n";
      return exit_ok;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] != "clean") remove_temp_leftovers();  // what killed runs left; never a live run's
    if (args[0] == "train") return train_command(rest, out, err);
    if (args[0] == "platform") return platform_command(rest, out, err);
    if (args[0] == "model") return model_command(rest, out, err);
    if (args[0] == "calibrate") return calibrate_command(rest, out, err);
    if (args[0] == "validate") return validate_command(rest, out, err);
    if (args[0] == "study") return study_command(rest, out, err);
    if (args[0] == "recommend") return recommend_command(rest, out, err);
    if (args[0] == "plot") return plot_command(rest, out, err);
    if (args[0] == "testbed") return testbed_command(rest, out, err);
    if (args[0] == "clean") return clean_command(rest, out, err);
    err << "wulf: unknown command '" << args[0] << "'\n" << usage;
    return exit_input;
  } catch (const Interrupted& e) {  // its children ended, its temporary files gone with the stack
    err << "wulf: " << safe_to_print(e.message) << "\n";
    return 128 + e.signal;
  } catch (const TimedOut& e) {
    err << "wulf: " << safe_to_print(e.message) << "\n";
    return exit_timeout;
  } catch (const InputError& e) {
    err << "wulf: error: " << e.what() << "\n";
    return exit_input;
  } catch (const po::error& e) {
    err << "wulf: error: " << safe_to_print(e.what()) << " (see wulf " << (args.empty() ? "" : args[0]) << " --help)\n";
    return exit_input;
  } catch (const std::bad_alloc&) {
    // wulf train says what shrinks its run (train.cpp); another command's options differ
    err << "wulf: error: out of memory in wulf " << (args.empty() ? "" : args[0]) << memory_left_to_say() << "\n";
    return exit_internal;
  } catch (const std::exception& e) {
    err << "wulf: internal error: " << safe_to_print(e.what()) << "\n";
    return exit_internal;
  }
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  // Whatever a command prints, from whatever file it read, reaches the terminal as plain text.
  SafeOstream safe_out(out), safe_err(err);
  return run_command(args, safe_out, safe_err);
}

}  // namespace wulf
