// Typed Boost.Program_options values that are checked as they are read: text that names no
// choice is refused at once with wulf's own message (an InputError naming the option), so
// the code that uses an option gets a value it need not check again.
#pragma once

#include "util/errors.hpp"
#include "util/text.hpp"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace wulf {

// Boost's typed_value<T> reads text with a validate() found for T. ParsedValue reads it with
// its own parse instead, but the base class still names one, so wulf's enums get this one,
// which is never reached.
template <class T>
  requires std::is_enum_v<T>
void validate(boost::any&, const std::vector<std::string>&, T*, int) {
  throw std::logic_error("an option of an enum type is read by ParsedValue, not by Boost's validate");
}

// An option whose text parse turns into a T; parse throws InputError for text it refuses.
// Help shows it as Boost shows any value: "arg (=the default's text)".
template <class T>
class ParsedValue : public boost::program_options::typed_value<T> {
 public:
  explicit ParsedValue(std::function<T(const std::string&)> parse)
      : boost::program_options::typed_value<T>(nullptr), parse_(std::move(parse)) {}

  void xparse(boost::any& store, const std::vector<std::string>& tokens) const override {
    namespace validators = boost::program_options::validators;
    validators::check_first_occurrence(store);  // an option given twice is refused, as Boost's own are
    store = parse_(validators::get_single_string(tokens));
  }

 private:
  std::function<T(const std::string&)> parse_;
};

template <class T>
ParsedValue<T>* parsed(std::function<T(const std::string&)> parse) {
  return new ParsedValue<T>(std::move(parse));  // the options_description owns it
}

// A number option's value with its range (util/text.hpp), checked as it is read; its help
// shows the range where Boost shows "arg": "--np arg in [1, 1000000] (=1)". Every numeric
// option of every command is one (test cli.every_numeric_option_states_and_checks_its_range).
class RangedOption {
 public:
  virtual ~RangedOption() = default;
  virtual const Range& range() const = 0;
};

template <class T>
class RangedValue : public ParsedValue<T>, public RangedOption {
 public:
  // note: added to every refusal, in parentheses ("" for none).
  RangedValue(const std::string& option, Range range, const std::string& note = "")
      : ParsedValue<T>([option, range, note](const std::string& text) {
          try {
            return static_cast<T>(number_in_range(text, range, option));
          } catch (const InputError& e) {
            if (note.empty()) throw;
            throw InputError(std::string(e.what()) + " (" + note + ")");
          }
        }),
        range_(range) {
    this->value_name("arg in " + range_text(range));
  }
  const Range& range() const override { return range_; }

 private:
  Range range_;
};

// --option NUMBER in [lo, hi] (lo_open: more than lo):  number_in("eta", {.lo = 0, .hi = 1e6, .lo_open = true})
inline RangedValue<double>* number_in(const std::string& option, Range range, const std::string& note = "") {
  return new RangedValue<double>(option, range, note);  // the options_description owns it
}
// --option N, a whole number in [lo, hi]:  whole_in("np", {.lo = 1, .hi = 1e6})
inline RangedValue<long long>* whole_in(const std::string& option, Range range) {
  range.whole = true;
  return new RangedValue<long long>(option, range);
}

// One of a few names, each standing for a value; other text is refused with `refusal`, in
// which {} stands for the text given:
//   one_of<bool>({{"float", false}, {"double", true}}, "--precision: '{}' (expected float or double)")
template <class T>
ParsedValue<T>* one_of(std::vector<std::pair<std::string, T>> choices, std::string refusal) {
  return parsed<T>([choices = std::move(choices), refusal = std::move(refusal)](const std::string& text) -> T {
    for (const auto& [name, value] : choices)
      if (name == text) return value;
    throw InputError(fmt::format(fmt::runtime(refusal), text));
  });
}

// The same for an option whose value is its name (an algorithm handed on to MPI as it is).
inline ParsedValue<std::string>* one_of(const std::vector<std::string>& names, std::string refusal) {
  std::vector<std::pair<std::string, std::string>> choices;
  for (const std::string& name : names) choices.emplace_back(name, name);
  return one_of<std::string>(std::move(choices), std::move(refusal));
}

// on|off, and yes|no, true|false, 1|0: "--option: 'text' is neither on nor off" for others.
template <class T>
ParsedValue<T>* on_off_as(const std::string& option, T on, T off) {
  return one_of<T>({{"on", on}, {"yes", on}, {"true", on}, {"1", on}, {"off", off}, {"no", off}, {"false", off}, {"0", off}},
                   "--" + option + ": '{}' is neither on nor off");
}
inline ParsedValue<bool>* on_off(const std::string& option) { return on_off_as<bool>(option, true, false); }
// The same read as the word "on" or "off", for an option handed on to `wulf train`.
inline ParsedValue<std::string>* on_off_word(const std::string& option) {
  return on_off_as<std::string>(option, "on", "off");
}

// A group of the options `names` of another command's table, declared there once: the same
// names, values, defaults and help (e.g. wulf train's options that recommend passes on).
inline boost::program_options::options_description options_named(
    const boost::program_options::options_description& from, const std::string& caption,
    const std::vector<std::string>& names) {
  boost::program_options::options_description group(caption, 110, 55);
  for (const std::string& name : names) {
    const auto& all = from.options();
    const auto at = std::find_if(all.begin(), all.end(), [&](const auto& o) { return o->long_name() == name; });
    if (at == all.end()) throw std::logic_error("no option --" + name + " to share");
    group.add(*at);
  }
  return group;
}

}  // namespace wulf
