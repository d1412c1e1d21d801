#include "train/strategy.hpp"

#include "train/trainer.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace wulf {

// The registry: one X(name) per strategy, whose descriptor name_strategy is defined in
// core/train/strategies/name.cpp. The order is --help's; block, the first, is the default.
#define WULF_STRATEGIES(X) X(block) X(average) X(ppt) X(scatter) X(root) X(session) X(cg) X(overlap) X(fsdp)

#define WULF_DECLARE(name) extern const StrategyDescriptor name##_strategy;
WULF_STRATEGIES(WULF_DECLARE)
#undef WULF_DECLARE

namespace {

#define WULF_LIST(name) Strategy(name##_strategy),
const Strategy registry[] = {WULF_STRATEGIES(WULF_LIST)};
#undef WULF_LIST

}  // namespace

Strategy::Strategy() : d_(&block_strategy) {}

std::string refuse_block_below_ranks(std::size_t b, int p, std::size_t) {
  if (b >= static_cast<std::size_t>(p)) return "";
  return "b = " + std::to_string(b) + " is below p = " + std::to_string(p) + ": a block must give every rank a pattern";
}

std::string_view to_string(Strategy s) { return s->name; }

std::span<const Strategy> registered_strategies() { return registry; }

Strategy parse_strategy(std::string_view name) {
  std::vector<std::string> expected;
  for (const Strategy s : registry) {
    if (s->name == name) return s;
    expected.emplace_back(s->name);
  }
  throw InputError("--strategy: unknown strategy '" + std::string(name) + "' (expected " + listed(expected) + ")");
}

const StrategyOption* StrategyDescriptor::option(std::string_view option_name) const {
  for (const StrategyOption& o : options)
    if (o.name == option_name) return &o;
  return nullptr;
}

bool StrategyDescriptor::runs(Learning l) const { return std::find(learning.begin(), learning.end(), l) != learning.end(); }

std::string strategies_that_run(Learning l) {
  return strategies_where([l](const StrategyDescriptor& d) { return d.runs(l); });
}

std::string strategies_where(const std::function<bool(const StrategyDescriptor&)>& keep) {
  std::vector<std::string> names;
  for (const Strategy s : registry)
    if (keep(*s)) names.emplace_back(s->name);
  return "--strategy " + listed(names);
}

const StrategyOption* any_strategy_option(std::string_view name) {
  for (const Strategy s : registry)
    if (const StrategyOption* o = s->option(name)) return o;
  return nullptr;
}

void StrategySettings::set(std::string_view option, double value) {
  for (auto& [name, v] : numbers_)
    if (name == option) return void(v = value);
  numbers_.emplace_back(option, value);
}

void StrategySettings::set_text(std::string_view option, std::string value) {
  for (auto& [name, v] : texts_)
    if (name == option) return void(v = std::move(value));
  texts_.emplace_back(option, std::move(value));
}

const double* StrategySettings::find(std::string_view option) const {
  for (const auto& [name, v] : numbers_)
    if (name == option) return &v;
  return nullptr;
}

const std::string* StrategySettings::find_text(std::string_view option) const {
  for (const auto& [name, v] : texts_)
    if (name == option) return &v;
  return nullptr;
}

namespace {

const StrategyOption& owned(const TrainConfig& config, std::string_view option) {
  const StrategyOption* o = config.strategy->option(option);
  if (!o)
    throw std::logic_error(fmt::format("--strategy {} has no option --{}", to_string(config.strategy), option));
  return *o;
}

}  // namespace

double setting(const TrainConfig& config, std::string_view option) {
  const StrategyOption& o = owned(config, option);
  const double* v = config.settings.find(option);
  return v ? *v : o.default_value;
}

std::size_t setting_count(const TrainConfig& config, std::string_view option) {
  return static_cast<std::size_t>(std::max(0.0, setting(config, option)));
}

std::string setting_text(const TrainConfig& config, std::string_view option) {
  const StrategyOption& o = owned(config, option);
  const std::string* v = config.settings.find_text(option);
  if (!v && !o.default_text.empty()) return std::string(o.default_text);
  if (!v) throw InputError(fmt::format("--strategy {} needs --{}", to_string(config.strategy), option));
  return *v;
}

void check_strategy(const TrainConfig& config, int np, bool numerics) {
  for (const StrategyOption& o : config.strategy->options) {
    if (o.kind == StrategyOption::Kind::text) {
      if (!config.settings.find_text(o.name) && o.default_text.empty())
        throw InputError(fmt::format("--strategy {} needs --{}, e.g. --{} \"{}\"", to_string(config.strategy), o.name,
                                     o.name, o.example));
      if (const std::string v = setting_text(config, o.name);
          !o.choices.empty() && std::ranges::find(o.choices, v) == o.choices.end())
        throw InputError(fmt::format("--{} \"{}\": expected {}", o.name, v, listed(o.choices)));
      continue;
    }
    Range range = o.range;
    range.whole = o.kind == StrategyOption::Kind::whole;
    check_in_range(setting(config, o.name), range, o.name);
  }
  if (config.strategy->check) config.strategy->check(config, np, numerics);
}

}  // namespace wulf
