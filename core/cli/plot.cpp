// `wulf plot`: the error curves of result records in one image. The drawing is
// core/cli/wulf_plot.py (matplotlib), run with the Python 3 found when wulf was configured
// (WULF_PLOT_PYTHON; the environment variable WULF_PYTHON overrides it). This command
// checks what it is given before anything is drawn: every file is a `wulf train` record,
// and the records are of one problem, in one unit of error, unless --mixed.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "data/dataset.hpp"
#include "util/json.hpp"
#include "cli/options.hpp"
#include "util/files.hpp"
#include "engine/process.hpp"
#include "util/paths.hpp"
#include "util/text.hpp"

#include <wulf/build_info.hpp>

#include <boost/program_options.hpp>

#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace po = boost::program_options;

namespace wulf {
namespace {

// What one record says about itself: enough to refuse a mix.
struct PlotInput {
  std::string path, problem, metric;
};

// object's key as a string, or fallback where it is missing or null; of another type, an
// InputError naming path and key. The text is the record's, as a message shows it: every
// byte that is not printable ASCII as \xNN (a line break or an escape sequence in a field
// cannot forge a line of wulf's output or recolour the terminal).
std::string string_or(const Json& object, const std::string& key, const std::string& fallback,
                      const std::string& path) {
  const auto v = object.find(key);
  if (v == object.end() || v->is_null()) return fallback;
  return printable(read_fields(path + ": " + key, [&] { return v->get<std::string>(); }), 200);
}

// by_np (--x np): a `wulf train` record is one point, a `wulf model` record (its grid) lines.
PlotInput read_input(const std::string& path, bool by_np) {
  namespace fs = std::filesystem;
  if (!fs::exists(path)) throw InputError(path + ": no such file");
  if (fs::is_directory(path)) throw InputError(path + ": a folder, not a result record");
  const Json record = read_json_file(path);
  if (!record.is_object() || !record.contains("wulf_record") || !record.contains("config") ||
      !record.at("config").is_object())
    throw InputError(path + ": not a wulf result record (JSON without wulf_record and config)");
  const Json& config = record.at("config");
  const std::string command = string_or(config, "command", "", path);
  const bool model = command.starts_with("model --");
  if (model && !by_np)
    throw InputError(path + ": a record of `wulf " + command +
                     "`: its grid holds times per iteration, not a training curve (wulf plot --x np draws them "
                     "against the processors)");
  if (model) {
    if (!record.contains("grid") || !record.at("grid").is_array())
      throw InputError(path + ": a wulf model record without a grid");
    return {path, string_or(config, "problem", "?", path), ""};
  }
  if (command != "train")
    throw InputError(path + ": a record of `wulf " + (command.empty() ? "?" : command) +
                     "`, not of `wulf train`: it holds no training curve");
  if (!record.contains("history") || !record.at("history").is_array())
    throw InputError(path + ": a wulf train record without a history (cut short?)");
  if (const auto ended = record.find("ended"); ended != record.end() && ended->is_object())
    throw InputError(path + ": the run was ended before it finished (" +
                     string_or(*ended, "status", "?", path) + ": " + string_or(*ended, "message", "", path) +
                     "): its record holds no training curve");
  return {path, string_or(config, "problem", "?", path), string_or(config, "error_metric", "?", path)};
}

// "a.json (function), b.json (encoder)": each file with what tells it apart.
std::string listing(const std::vector<PlotInput>& inputs, std::string PlotInput::*what) {
  std::string s;
  for (const PlotInput& in : inputs) s += (s.empty() ? "" : ", ") + in.path + " (" + in.*what + ")";
  return s;
}

std::string plot_python() {
  if (const char* env = std::getenv("WULF_PYTHON"); env && *env) return env;
  return build::plot_python;
}

po::options_description plot_options() {
  po::options_description options("wulf plot REC.json... --out F.png [options]", 110, 55);
  options.add_options()
      ("help,h", "print this help")
      ("out", po::value<std::string>(), "the image to write: F.png (or .pdf, .svg)")
      ("x", one_of({"time", "iterations", "np"}, "--x: '{}' (expected time, iterations or np)")->default_value("time"),
       "the horizontal axis: time (time_s: simulated on sim, wall on seq and real) or iterations; np: the time per "
       "iteration against the processors, a point per wulf train record and a line per setting of a wulf model "
       "record (--log-time and --log-error: logarithmic axes of processors and time)")
      ("log-time", "a logarithmic horizontal axis (iteration 0, at 0, is left out)")
      ("error", one_of({"test", "train", "test-count"}, "--error: '{}' (expected test, train or test-count)"),
       "what is drawn: test (test_error), train (train_error), test-count (wrong test patterns, classifiers) "
       "(default: test, or train where a record has no test set, said on the output)")
      ("log-error", "a logarithmic vertical axis")
      ("labels", po::value<std::vector<std::string>>()->multitoken(),
       "one label per curve, in the order of the records (default: engine, p, b, strategy, platform)")
      ("title", po::value<std::string>(), "the title (default: the problem)")
      ("xlim", po::value<std::string>(), "LO:HI of the horizontal axis (either may be empty)")
      ("ylim", po::value<std::string>(), "LO:HI of the vertical axis")
      ("mixed", "draw records of different problems or error units together, each label naming its problem")
      ("records", po::value<std::vector<std::string>>(), "the result records (wulf train --out)");
  return options;
}

// The records drawn together: one problem and one unit of error, unless --mixed.
// units: whether the errors drawn have a unit (not counts of wrong patterns, nor times).
void check_alike(const std::vector<PlotInput>& inputs, bool units) {
  for (const PlotInput& in : inputs) {
    if (in.problem != inputs.front().problem)
      throw InputError("records of different problems: " + listing(inputs, &PlotInput::problem) +
                       "; plot each problem apart, or pass --mixed to draw them together with the problem in "
                       "each label");
    // Errors in different units (rmse against a fraction wrong) on one axis would mislead.
    if (units && in.metric != inputs.front().metric)
      throw InputError("records whose errors are in different units: " + listing(inputs, &PlotInput::metric) +
                       " (wulf train --error); pass --mixed to draw them together anyway");
  }
}

// The drawing script's command: every value as --option=VALUE and the records after "--", so
// that a value or a path that starts with '-' ("--ylim -1:", a label "-p") is not taken for an
// option of the script's.
std::vector<std::string> script_command(const po::variables_map& vm, const std::string& python,
                                        const std::string& script, const std::string& image,
                                        const std::string& error) {
  std::vector<std::string> argv{python, script, "--out=" + image, "--x=" + vm["x"].as<std::string>()};
  if (!error.empty()) argv.push_back("--error=" + error);
  if (vm.count("log-time")) argv.push_back("--log-time");
  if (vm.count("log-error")) argv.push_back("--log-error");
  if (vm.count("mixed")) argv.push_back("--mixed");
  for (const char* key : {"title", "xlim", "ylim"})
    if (vm.count(key)) argv.push_back(std::string("--") + key + "=" + vm[key].as<std::string>());
  if (vm.count("labels"))
    for (const std::string& label : vm["labels"].as<std::vector<std::string>>()) argv.push_back("--label=" + label);
  argv.push_back("--");
  const auto records = vm["records"].as<std::vector<std::string>>();
  argv.insert(argv.end(), records.begin(), records.end());
  return argv;
}

// Runs the drawing script; a WULF_PYTHON that cannot start is the user's input.
int run_script(const std::vector<std::string>& argv, std::string& script_out, std::string& script_err) {
  try {
    return run_program_captured(argv, script_out, script_err);
  } catch (const InputError&) {
    throw;
  } catch (const std::runtime_error& e) {  // the program could not start
    const char* env = std::getenv("WULF_PYTHON");
    if (!env || !*env) throw;
    throw InputError("WULF_PYTHON=" + printable(env, 200) + ": " + e.what() +
                     " (set it to a python3 that has matplotlib, or unset it)");
  }
}

}  // namespace

int plot_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = plot_options();
  po::positional_options_description positional;
  positional.add("records", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    out << options << "\n"
        << "Each record is one curve (a --strategy session record: one per session). The drawing is\n"
        << plot_script() << ", run with " << (plot_python().empty() ? "(none found)" : plot_python())
        << " (WULF_PYTHON overrides).\n";
    return exit_ok;
  }
  if (!vm.count("records")) throw InputError("wulf plot: no result records given (wulf plot REC.json... --out F.png)");
  if (!vm.count("out")) throw InputError("wulf plot: --out F.png is required");
  const std::string image = vm["out"].as<std::string>();
  const std::string ext = std::filesystem::path(image).extension().string();
  if (ext != ".png" && ext != ".pdf" && ext != ".svg")
    throw InputError("--out " + image + ": the image must end in .png, .pdf or .svg");
  check_writable(image, "--out");
  const std::string error = vm.count("error") ? vm["error"].as<std::string>() : "";

  std::vector<PlotInput> inputs;
  const bool by_np = vm["x"].as<std::string>() == "np";
  if (by_np && !error.empty()) throw InputError("--error with --x np: it draws times per iteration, not errors");
  for (const std::string& path : vm["records"].as<std::vector<std::string>>())
    inputs.push_back(read_input(path, by_np));
  if (!vm.count("mixed")) check_alike(inputs, !by_np && error != "test-count");

  const std::string python = plot_python();
  if (python.empty())
    throw InputError("wulf plot: no Python 3 with matplotlib was found when wulf was configured; install "
                     "python3-matplotlib and reconfigure, or set WULF_PYTHON to a python3 that has it");
  const std::string script = plot_script();
  if (!std::filesystem::exists(script)) throw InputError("wulf plot: the drawing script " + script + " is missing");

  std::string script_out, script_err;
  const int code = run_script(script_command(vm, python, script, image, error), script_out, script_err);
  out << script_out;
  err << script_err;
  if (code == 0) return exit_ok;
  // The script says what is wrong with the records (exit 2); anything else is a fault of
  // the drawing or of this machine's Python.
  if (code == 2) return exit_input;
  err << "wulf plot: " << python << " " << script << " failed (exit code " << code << ")\n";
  return exit_internal;
}

}  // namespace wulf
