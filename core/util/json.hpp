// JSON for result records and the files and program output wulf reads: nlohmann's JSON
// with the keys kept in the order they were set, and the few things wulf adds to it (a
// depth limit, the layout of record files, and errors that name the file at fault).
#pragma once

#include "util/errors.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace wulf {

using Json = nlohmann::ordered_json;

// The deepest nesting wulf reads. Its records are a few levels deep; refusing deeper text
// while it is parsed keeps a file of 200 000 '[' from reaching code that recurses level by
// level (record_text, and whatever walks a record) and would overflow the stack.
inline constexpr int json_max_depth = 100;

// Parses JSON text that came from source (a file name, or the program that printed it).
// Text that is not JSON, is nested deeper than json_max_depth, or gives a key twice in one
// object, is an InputError naming source and where the fault is ("r.json: config.eta: given
// twice ...").
Json parse_json(const std::string& text, const std::string& source);

// Parses the JSON file at path (a result record). Throws InputError naming the path when it
// cannot be read (what names the file there, as check_input_file's: "--rerun"), is not JSON
// or is nested too deep.
Json read_json_file(const std::string& path, const std::string& what = "JSON record");

// The text of a record file: two spaces of indent per level, one key per line, and arrays
// of plain values (numbers, strings) on one line. Doubles are written in the fewest digits
// that read back to the same double, whole ones below 1e17 as integers (2, not 2.0); NaN
// and infinities are written as null, and bytes of a string that are not UTF-8 as U+FFFD:
// writing a record never fails.
std::string record_text(const Json& j);

// The same on one line, `{"key": value, "other": value}`: a row of a benchmark's output.
std::string json_line(const Json& j);

// What a JSON exception says, without the library's "[json.exception.type_error.302] ".
std::string json_reason(const Json::exception& e);

// Runs read, which takes fields from a JSON document that came from source (a file the
// user gave, a record of a run wulf started, a program's output). A missing field or a
// field of another type is the input's fault, not wulf's: the library's exception becomes
// an InputError naming source ("r.json: key 'final' not found").
template <class Read>
auto read_fields(const std::string& source, Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const Json::exception& e) {
    throw InputError(source + ": " + json_reason(e));
  }
}

// The value at pointer (e.g. "/final/time_s") of doc, a document that came from source, as
// a T; missing, or of another type: an InputError naming source and pointer.
template <class T>
T json_field(const Json& doc, const std::string& pointer, const std::string& source) {
  return read_fields(source + ": " + pointer, [&] { return doc.at(Json::json_pointer(pointer)).get<T>(); });
}

}  // namespace wulf
