#include "util/json.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace wulf {

Json& Json::operator[](const std::string& key) {
  if (std::holds_alternative<std::nullptr_t>(v_)) v_ = Object{};
  auto& obj = std::get<Object>(v_);
  for (auto& [k, v] : obj)
    if (k == key) return v;
  obj.emplace_back(key, Json());
  return obj.back().second;
}

void Json::push_back(Json value) {
  if (std::holds_alternative<std::nullptr_t>(v_)) v_ = Array{};
  std::get<Array>(v_).push_back(std::move(value));
}

namespace {

void write_string(std::ostream& out, const std::string& s) {
  out << '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out << "\\\""; break;
      case '\\': out << "\\\\"; break;
      case '\n': out << "\\n"; break;
      case '\r': out << "\\r"; break;
      case '\t': out << "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out << buf;
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

}  // namespace

void Json::write(std::ostream& out, int indent) const { write(out, indent, 0); }

double Json::number() const {
  if (auto d = std::get_if<double>(&v_)) return *d;
  if (auto i = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*i);
  throw InputError("JSON: a number was expected");
}
const std::string& Json::string() const {
  if (auto s = std::get_if<std::string>(&v_)) return *s;
  throw InputError("JSON: a string was expected");
}
bool Json::boolean() const {
  if (auto b = std::get_if<bool>(&v_)) return *b;
  throw InputError("JSON: true or false was expected");
}
const Json::Array& Json::array_items() const {
  if (auto a = std::get_if<Array>(&v_)) return *a;
  throw InputError("JSON: an array was expected");
}
const Json::Object& Json::object_items() const {
  if (auto o = std::get_if<Object>(&v_)) return *o;
  throw InputError("JSON: an object was expected");
}
const Json* Json::find(const std::string& key) const {
  for (const auto& [k, v] : object_items())
    if (k == key) return &v;
  return nullptr;
}
const Json& Json::at(const std::string& key) const {
  if (const Json* v = find(key)) return *v;
  throw InputError("JSON: no key '" + key + "'");
}

namespace {

// A recursive-descent reader of RFC 8259 JSON (UTF-8 passed through, \u escapes of the
// Basic Multilingual Plane decoded).
class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Json document() {
    Json v = value();
    skip();
    if (i_ != s_.size()) fail("text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("JSON: " + what + " at offset " + std::to_string(i_));
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool take(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(const char* word) {
    for (const char* p = word; *p; ++p, ++i_)
      if (i_ >= s_.size() || s_[i_] != *p) fail(std::string("expected ") + word);
  }

  Json value() {
    skip();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return Json(text());
    if (c == 't') return expect("true"), Json(true);
    if (c == 'f') return expect("false"), Json(false);
    if (c == 'n') return expect("null"), Json(nullptr);
    return number();
  }

  Json object() {
    ++i_;
    Json o = Json::object();
    if (take('}')) return o;
    do {
      skip();
      if (i_ >= s_.size() || s_[i_] != '"') fail("expected a key");
      std::string key = text();
      if (!take(':')) fail("expected ':'");
      o[key] = value();
    } while (take(','));
    if (!take('}')) fail("expected ',' or '}'");
    return o;
  }

  Json array() {
    ++i_;
    Json a = Json::array();
    if (take(']')) return a;
    do a.push_back(value());
    while (take(','));
    if (!take(']')) fail("expected ',' or ']'");
    return a;
  }

  std::string text() {
    ++i_;  // the opening quote
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unfinished escape");
      c = s_[i_++];
      switch (c) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (i_ + 4 > s_.size()) fail("short \\u escape");
          const unsigned cp = static_cast<unsigned>(std::stoul(s_.substr(i_, 4), nullptr, 16));
          i_ += 4;
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: out += c;  // \" \\ \/
      }
    }
    if (i_ >= s_.size()) fail("unfinished string");
    ++i_;
    return out;
  }

  Json number() {
    const char* begin = s_.c_str() + i_;
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin) fail("unexpected character");
    const std::string token(begin, static_cast<std::size_t>(end - begin));
    i_ += static_cast<std::size_t>(end - begin);
    if (token.find_first_of(".eE") == std::string::npos && std::abs(v) < 9e15)
      return Json(static_cast<long long>(v));
    return Json(v);
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace

Json Json::parse(const std::string& text) { return Parser(text).document(); }

void Json::write(std::ostream& out, int indent, int depth) const {
  const std::string pad(static_cast<std::size_t>(indent * (depth + 1)), ' ');
  const std::string end_pad(static_cast<std::size_t>(indent * depth), ' ');
  const char* nl = indent > 0 ? "\n" : "";
  if (std::holds_alternative<std::nullptr_t>(v_)) {
    out << "null";
  } else if (auto b = std::get_if<bool>(&v_)) {
    out << (*b ? "true" : "false");
  } else if (auto i = std::get_if<std::int64_t>(&v_)) {
    out << *i;
  } else if (auto d = std::get_if<double>(&v_)) {
    if (!std::isfinite(*d)) {
      out << "null";
    } else {
      char buf[32];  // %.17g round-trips a double
      std::snprintf(buf, sizeof buf, "%.17g", *d);
      out << buf;
    }
  } else if (auto s = std::get_if<std::string>(&v_)) {
    write_string(out, *s);
  } else if (auto a = std::get_if<Array>(&v_)) {
    // Arrays of scalars stay on one line; arrays of objects get a line each.
    bool flat = true;
    for (const auto& e : *a)
      if (std::holds_alternative<Array>(e.v_) || std::holds_alternative<Object>(e.v_)) flat = false;
    out << '[';
    for (std::size_t k = 0; k < a->size(); ++k) {
      if (k) out << (flat ? ", " : ",");
      if (!flat) out << nl << pad;
      (*a)[k].write(out, indent, depth + 1);
    }
    if (!flat && !a->empty()) out << nl << end_pad;
    out << ']';
  } else if (auto o = std::get_if<Object>(&v_)) {
    out << '{';
    for (std::size_t k = 0; k < o->size(); ++k) {
      if (k) out << ',';
      out << nl << pad;
      write_string(out, (*o)[k].first);
      out << (indent > 0 ? ": " : ":");
      (*o)[k].second.write(out, indent, depth + 1);
    }
    if (!o->empty()) out << nl << end_pad;
    out << '}';
  }
}

std::string Json::dump(int indent) const {
  std::ostringstream s;
  write(s, indent);
  return s.str();
}

Json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return Json::parse(text.str());
  } catch (const std::exception& e) {
    throw InputError(path + ": not a JSON record: " + e.what());
  }
}

}  // namespace wulf
