#include "util/json.hpp"
#include "util/files.hpp"

#include "util/text.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace wulf {

namespace {

// An array or object open while the text is read: an object's keys so far, the last one.
struct OpenLevel {
  bool object = false;
  std::set<std::string> keys;
  std::string key;
};

// Where the innermost key of open stands, as job_json's messages name fields: "config.eta",
// "history[].iteration".
std::string key_path(const std::vector<OpenLevel>& open) {
  std::string path;
  for (const OpenLevel& level : open) path += level.object ? (path.empty() ? "" : ".") + level.key : "[]";
  return path;
}

// Reads text without building it, as nlohmann's SAX interface hands it over, and refuses
// too deep a nesting and a key given twice in one object (which the library would let the
// last one win). Not the library's callback parser: that one looks through an array's
// elements again at the end of each object in it, so a record's history of 100 000
// iterations took 8 s to read and 400 000 took 136 s.
class Checker : public nlohmann::json_sax<Json> {
 public:
  Checker(const std::string& source, const std::string& kind) : source_(source), kind_(kind) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    OpenLevel& level = open_.back();
    level.key = key;
    if (!level.keys.insert(key).second)
      throw InputError(source_ + ": " + printable(key_path(open_), 200) +
                       ": given twice in one object (each key is given once)");
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    // The library's message ends with the token it last read, which comes from the file: it
    // may be long (a string of a megabyte) or hold bytes that are not UTF-8.
    throw InputError(source_ + ": not " + kind_ + ": " + printable(json_reason(e), 300));
  }

 private:
  bool open(bool object) {
    // json_max_depth levels may be open; one more is refused
    if (open_.size() >= static_cast<std::size_t>(json_max_depth))
      throw InputError(source_ + ": " + kind_ + " nested deeper than " + std::to_string(json_max_depth) +
                       " levels (wulf's are a few levels deep)");
    open_.push_back({object, {}, {}});
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  const std::string& source_;
  const std::string& kind_;
  std::vector<OpenLevel> open_;
};

Json parse(const std::string& text, const std::string& source, const std::string& kind) {
  Checker checker(source, kind);
  Json::sax_parse(text, &checker);  // throws InputError where the text is at fault
  return Json::parse(text);         // JSON the checker took: builds it in one pass
}

// A number, string, true, false or null as nlohmann writes it, except whole doubles.
std::string scalar_text(const Json& j) {
  if (j.is_number_float()) {
    // Whole doubles below 1e17 are written as integers, as printf's %.17g writes them: the
    // scripts that read records (Python's json) get 2 for a block size or a rank count, not 2.0.
    const double x = j.get<double>();
    if (std::isfinite(x) && x == std::floor(x) && std::abs(x) < 1e17) return std::to_string(static_cast<long long>(x));
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// lines: every key of an object, and every element of an array that holds arrays or
// objects, on a line of its own; otherwise all on one line.
void write(std::string& out, const Json& j, bool lines, int depth) {
  const std::string pad = lines ? "\n" + std::string(static_cast<std::size_t>(2 * (depth + 1)), ' ') : "";
  const std::string end_pad = lines ? "\n" + std::string(static_cast<std::size_t>(2 * depth), ' ') : "";
  const std::string between = lines ? "," + pad : ", ";
  if (j.is_object()) {
    out += '{';
    for (auto it = j.begin(); it != j.end(); ++it) {
      out += it == j.begin() ? pad : between;
      out += scalar_text(Json(it.key())) + ": ";
      write(out, it.value(), lines, depth + 1);
    }
    out += j.empty() ? "}" : end_pad + "}";
  } else if (j.is_array()) {
    bool flat = true;
    for (const Json& e : j) flat = flat && !e.is_structured();
    const std::string first = flat ? "" : pad, next = flat ? ", " : between;
    out += '[';
    for (auto it = j.begin(); it != j.end(); ++it) {
      out += it == j.begin() ? first : next;
      write(out, *it, lines, depth + 1);
    }
    out += flat || j.empty() ? "]" : end_pad + "]";
  } else {
    out += scalar_text(j);
  }
}

}  // namespace

Json parse_json(const std::string& text, const std::string& source) { return parse(text, source, "JSON"); }

Json read_json_file(const std::string& path, const std::string& what) {
  return parse(read_text_file(path, what, data_file_limit), path, "a JSON record");
}

std::string record_text(const Json& j) {
  std::string out;
  write(out, j, true, 0);
  return out;
}

std::string json_line(const Json& j) {
  std::string out;
  write(out, j, false, 0);
  return out;
}

std::string json_reason(const Json::exception& e) {
  const std::string what = e.what();
  const std::size_t tag_end = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && tag_end != std::string::npos ? what.substr(tag_end + 2) : what;
}

}  // namespace wulf
