// A small JSON value and writer for result records. (Boost 1.74, the version Debian 12
// ships, has no Boost.JSON, and property_tree writes every number as a string.)
#pragma once

#include "util/errors.hpp"

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace wulf {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;  // keeps insertion order

  Json() : v_(nullptr) {}
  Json(std::nullptr_t) : v_(nullptr) {}
  Json(bool b) : v_(b) {}
  Json(int i) : v_(static_cast<std::int64_t>(i)) {}
  Json(long i) : v_(static_cast<std::int64_t>(i)) {}
  Json(long long i) : v_(static_cast<std::int64_t>(i)) {}
  Json(unsigned i) : v_(static_cast<std::int64_t>(i)) {}
  Json(unsigned long i) : v_(static_cast<std::int64_t>(i)) {}
  Json(unsigned long long i) : v_(static_cast<std::int64_t>(i)) {}
  Json(double d) : v_(d) {}  // NaN and infinities are written as null
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}
  Json(Array a) : v_(std::move(a)) {}

  static Json object() { Json j; j.v_ = Object{}; return j; }
  static Json array() { Json j; j.v_ = Array{}; return j; }

  // Object access: adds the key if missing (the value must be an object).
  Json& operator[](const std::string& key);
  // Array append (the value must be an array).
  void push_back(Json value);

  void write(std::ostream& out, int indent = 2) const;
  std::string dump(int indent = 2) const;

  // Reads JSON text (a result record); throws InputError with the offset of a fault.
  static Json parse(const std::string& text);
  bool is_null() const { return std::holds_alternative<std::nullptr_t>(v_); }
  bool is_number() const { return std::holds_alternative<double>(v_) || std::holds_alternative<std::int64_t>(v_); }
  bool is_object() const { return std::holds_alternative<Object>(v_); }
  bool is_array() const { return std::holds_alternative<Array>(v_); }
  // Reading: throw InputError when the value is not of the kind asked for.
  double number() const;
  const std::string& string() const;
  bool boolean() const;
  const Array& array_items() const;
  const Object& object_items() const;
  const Json& at(const std::string& key) const;  // throws if missing
  const Json* find(const std::string& key) const; // nullptr if missing

 private:
  void write(std::ostream& out, int indent, int depth) const;
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, Array, Object> v_;
};

// Parses the JSON file at path (a result record). Throws InputError naming the path when it
// cannot be read or is not JSON.
Json read_json_file(const std::string& path);

}  // namespace wulf
