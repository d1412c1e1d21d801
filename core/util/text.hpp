// Reading numbers and words out of option values and small text files.
#pragma once

#include "util/errors.hpp"

#include <optional>
#include <ostream>
#include <streambuf>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wulf {

// s without leading and trailing blanks (spaces, tabs, carriage returns).
std::string trim(std::string_view s);
// The finite number that all of text (blanks around it allowed) spells, or nothing.
std::optional<double> parse_number(std::string_view text);

// The items of a comma-separated option value, each trimmed: "4, 16,64" -> {"4", "16", "64"}
// (another separator for lists of lists: "eta=0.5,1.5;alpha=0.9" split at ';').
std::vector<std::string> split_list(std::string_view text, char separator = ',');
// The values a number option accepts: lo to hi, both included, but lo itself refused where
// lo_open ("more than 0") and hi where hi_open ("less than 1"); whole: only whole numbers; hi
// infinite: no upper bound but a finite number. Every numeric option of every command states
// one (its help shows range_text) and is checked against it as it is read.
struct Range {
  double lo = 0, hi = 0;
  bool whole = false;
  bool lo_open = false, hi_open = false;
};
// The most ranks wulf runs (--np, --ranks-per-host, --grow's hosts; a record's np): a hostfile
// and a placement hold a line per rank. wulf-platform (sim/platform_checks.cpp) holds a
// platform's hosts and a host's cores to the same number.
inline constexpr long long kMostRanks = 1'000'000;
// --np and the lists of ranks of every command: 1 to kMostRanks.
inline constexpr Range kRanksRange{.lo = 1, .hi = static_cast<double>(kMostRanks)};
// The longest time limit a run may have (--timeout): 1e9 s, about 31 years. A limit is a
// point on the steady clock, whose nanoseconds in 64 bits reach about 292 years past its
// start; a longer limit would overflow it into the past. Longer ones given to the
// front end's waits (engine/process.hpp) are cut to it.
inline constexpr double kLongestTimeoutSeconds = 1e9;

// Names as a message lists them: "a, b or c" (last: " or ", or " and ").
std::string listed(const std::vector<std::string>& names, std::string_view last = " or ");
// The same of a table's names (a std::array or C array of string_views).
std::string listed(std::span<const std::string_view> names, std::string_view last = " or ");

// How help and messages show a range: "[1, 1024]", "(0, 1000000]", "[0, 1)", "(0, inf)".
std::string range_text(const Range& range);
// v as messages show it: whole numbers in full ("1000000"), others as %g ("1e+300").
std::string number_text(double v);
// Throws InputError naming --option unless v lies in range: "--np: 0 must be at least 1",
// "--eta: 0 must be more than 0", "--epochs: -1 is negative", "--threads: 2000 is more than
// 1024", "--alpha: 1 must be less than 1", "--block: 2.5 is not a whole number".
void check_in_range(double v, const Range& range, std::string_view option);
// The number all of text spells, checked against range: check_in_range, and "--eta: 'x' is
// not a number" for text that spells no finite number.
double number_in_range(std::string_view text, const Range& range, std::string_view option);

// A list of whole numbers, each in range (check_in_range: "--np: 2000 is more than 1024").
// Throws InputError naming --option for an item that is not one and for an empty list.
std::vector<long long> whole_list(std::string_view text, const std::string& option, Range range);
// The same, each from least to 1e15.
std::vector<long long> whole_list(std::string_view text, const std::string& option, long long least = 1);
// A list of finite numbers (each in range, where one is given). Throws InputError naming
// --option for an item that is not a number or out of range, and for an empty list.
std::vector<double> number_list(std::string_view text, const std::string& option);
std::vector<double> number_list(std::string_view text, const std::string& option, Range range);

// whole_list's numbers as counts and sizes (ranks, elements, bytes): same checks, same messages.
std::vector<std::size_t> size_list(std::string_view text, const std::string& option, Range range);
// Whether value is one of choices: the check of an option that takes one of a few words.
bool is_one_of(std::string_view value, std::initializer_list<std::string_view> choices);

// safe_to_print of text appended to out; where !final, a UTF-8 sequence cut at the end of
// text is left for the next call. Returns the bytes of text taken.
std::size_t append_safe(std::string& out, std::string_view text, bool final);

// Everything wulf prints goes through one of these (run_cli and the rank programs wrap their
// output streams): safe_to_print applied to all of it, whatever file the text came from, a
// platform's names, a layer file's, a record's, a child's output passed on.
class SafeOutputBuf : public std::streambuf {
 public:
  explicit SafeOutputBuf(std::ostream& to);
  ~SafeOutputBuf() override;
  SafeOutputBuf(const SafeOutputBuf&) = delete;
  SafeOutputBuf& operator=(const SafeOutputBuf&) = delete;

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void drain(bool final);
  std::ostream& to_;
  std::string pending_;  // a UTF-8 sequence a write cut
};
class SafeOstream : public std::ostream {
 public:
  explicit SafeOstream(std::ostream& to);
  ~SafeOstream() override;

 private:
  SafeOutputBuf buf_;
};

// Text from a file, as a message shows it: at most `most` bytes (then "... (N bytes)"), and
// every byte that is not printable ASCII as \xNN, so that binary garbage or bytes that are
// not UTF-8 keep a message one short line of plain text.
std::string printable(std::string_view text, std::size_t most = 40);

// Bytes for people: "1.4 GiB", "512.0 KiB", "1000 bytes".
std::string human_bytes(double bytes);

}  // namespace wulf

namespace wulf {

// A SimGrid duration: a number with s, ms, us or ns ("365.868us"); a plain number is
// seconds. Throws InputError naming what (e.g. "platform property wulf:collective_overhead").
double parse_duration(const std::string& text, const std::string& what);

}  // namespace wulf
