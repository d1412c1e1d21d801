// The options of `wulf train`: the table --help prints, the parse of a command line (and a
// --config file), and which options only one engine, strategy or reduce reads.
#pragma once

#include "comm/compute.hpp"

#include "train/trainer.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <boost/program_options.hpp>

#include <limits>
#include <string>
#include <vector>

namespace wulf {

// Every option of `wulf train`. Options whose default depends on the problem have no
// Boost default; their help says "the problem's" and ProblemDefaults fills them in.
boost::program_options::options_description train_options();

// The values of --reduce and --bcast, which `wulf train` and `wulf platform bench` share:
// job/train_job.hpp's reduce_algorithms and bcast_algorithms; others are refused.
boost::program_options::typed_value<std::string>* reduce_value();
boost::program_options::typed_value<std::string>* bcast_value();
// --precision (float or double) and --allreduce (default, rdb or redbcast), which the
// commands that start training runs share with `wulf train`.
boost::program_options::typed_value<std::string>* precision_value();
boost::program_options::typed_value<std::string>* allreduce_value();

// Ranges that options of several commands share: --train-size and --test-size (0: all; as
// many patterns as the readers take, an int), and the platform's what-if scales (--bw-scale,
// --lat-scale, --speed-scale, --measured-scale: any positive factor).
inline constexpr Range kPatternCountRange{.lo = 0, .hi = 2147483647};
// Ranks that calibrate and validate start on this machine (more than its cores oversubscribe it).
inline constexpr Range kRanksHereRange{.lo = 1, .hi = 1024};
// Values per rank in the collectives that platform bench, calibrate and validate time (up to
// 800 MB of doubles).
inline constexpr Range kBenchElementsRange{.lo = 1, .hi = 1e8};
// Block sizes, patterns per update (and intervals from 0): as many as a training set holds.
inline constexpr Range kBlockRange{.lo = 1, .hi = kPatternCountRange.hi};
inline constexpr Range kScaleRange{.lo = 0, .hi = std::numeric_limits<double>::infinity(), .lo_open = true};
// A what-if scale (--bw-scale, --lat-scale, --speed-scale of train and platform bench): from
// least_what_if_scale to most_what_if_scale (comm/compute.hpp), what SimGrid computes.
inline constexpr Range kWhatIfScaleRange{.lo = least_what_if_scale, .hi = most_what_if_scale};

// --timeout SECONDS, which every command that starts runs takes: a positive number of
// seconds up to kLongestTimeoutSeconds (engine/process.hpp, about 31 years); others are
// refused ("--timeout: 1e+20 is more than 1000000000"), none treated as no limit.
inline constexpr Range kTimeoutRange{.lo = 0, .hi = kLongestTimeoutSeconds, .lo_open = true};
boost::program_options::typed_value<double>* timeout_value();
// Its help line, the same for every command, after what (e.g. "each run: ").
std::string timeout_help(const std::string& what);

// args, and under them the lines of a --config file (the command line wins).
boost::program_options::variables_map parse_train(const std::vector<std::string>& args,
                                                  const boost::program_options::options_description& options);

// Refuses an option given where the engine, strategy or reduce chosen would ignore it:
// "--cg-step is for --strategy cg".
void check_option_scopes(const boost::program_options::variables_map& vm, const std::string& engine,
                         Strategy strategy, const std::string& reduce);

// The values of the options config.strategy owns (StrategyDescriptor::options) into its
// settings; the others keep their defaults. check_strategy checks them.
void read_strategy_settings(const boost::program_options::variables_map& vm, TrainConfig& config);

}  // namespace wulf
