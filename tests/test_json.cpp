// JSON in and out: records keep their key order and layout, non-finite numbers are written
// as null and doubles read back exactly, writing never fails on bad UTF-8, and reading
// refuses bad text, nesting far beyond any record's and missing fields with an InputError
// naming the file. Also: files are replaced whole.
#include "data/dataset.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/files.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cmath>
#include <filesystem>

namespace wulf {
namespace {

using namespace testing_support;

TEST(json, records_keep_key_order_and_plain_arrays_on_one_line) {
  Json j = Json::object();
  j["b"] = 1;
  j["a"] = "x\"y\n";
  j["list"] = Json::array({1.5, true, nullptr});
  j["rows"] = Json::array({Json{{"k", 2}}, Json::array()});
  j["empty"] = Json::object();
  EXPECT_EQ(record_text(j), R"({
  "b": 1,
  "a": "x\"y\n",
  "list": [1.5, true, null],
  "rows": [
    {
      "k": 2
    },
    []
  ],
  "empty": {}
})");
  EXPECT_EQ(json_line(j), R"({"b": 1, "a": "x\"y\n", "list": [1.5, true, null], "rows": [{"k": 2}, []], "empty": {}})");
}

TEST(json, non_finite_numbers_become_null_and_doubles_round_trip) {
  const Json j = Json::array({std::nan(""), INFINITY, -INFINITY, 0.1, 2.0, -3.0, 1e17, 1.0 / 3});
  const std::string text = record_text(j);
  EXPECT_EQ(text, "[null, null, null, 0.1, 2, -3, 1e+17, 0.3333333333333333]");
  const Json back = parse_json(text, "the test");
  EXPECT_EQ(back.at(3).get<double>(), 0.1);
  EXPECT_EQ(back.at(7).get<double>(), 1.0 / 3);
  EXPECT_EQ(back.at(6).get<double>(), 1e17);
}

TEST(json, a_string_that_is_not_utf8_is_written_with_a_replacement_character) {
  const Json j = {{"path", std::string("caf\xe9.json")}};
  std::string text;
  EXPECT_NO_THROW(text = record_text(j));
  EXPECT_EQ(text, "{\n  \"path\": \"caf\xef\xbf\xbd.json\"\n}");
  EXPECT_NO_THROW(parse_json(text, "the test"));
}

TEST(json, a_record_reads_back_as_it_was_written) {
  TestDir dir;
  Json record = {{"wulf_record", 1}, {"config", {{"command", "train"}, {"eta", 0.35}}}};
  record["history"] = Json::array({Json{{"iteration", 0}, {"train_error", nullptr}}});
  const std::string path = dir.write("r.json", record_text(record) + "\n");
  const Json back = read_json_file(path);
  EXPECT_EQ(back, record);
  EXPECT_EQ(back.begin().key(), "wulf_record");  // the order of the keys, not sorted
  EXPECT_EQ(json_field<double>(back, "/config/eta", path), 0.35);
}

TEST(json, nesting_far_deeper_than_a_record_is_refused_before_it_is_built) {
  TestDir dir;
  // Unclosed, and closed: neither is built, so nothing recurses 200 000 levels deep.
  for (const std::string& tail : {std::string(), std::string(200000, ']')}) {
    const std::string path = dir.write("deep.json", std::string(200000, '[') + tail);
    const std::string message = input_error([&] { read_json_file(path); });
    EXPECT_TRUE(contains(message, path + ": a JSON record nested deeper than 100 levels")) << message;
  }
  // As deep as allowed still reads.
  const std::string deepest = std::string(json_max_depth, '[') + std::string(json_max_depth, ']');
  EXPECT_NO_THROW(parse_json(deepest, "the test"));
  EXPECT_TRUE(contains(input_error([&] { parse_json("[" + deepest + "]", "the output"); }),
                       "the output: JSON nested deeper than 100 levels"));
}

TEST(json, text_that_is_not_json_is_refused_with_where) {
  TestDir dir;
  const std::string path = dir.write("bad.json", "{\"a\": 1,\n \"b\": tru}\n");
  const std::string message = input_error([&] { read_json_file(path); });
  EXPECT_TRUE(contains(message, path + ": not a JSON record: parse error at line 2, column")) << message;
  EXPECT_TRUE(contains(input_error([&] { read_json_file(dir.file("missing.json")); }), "cannot be read"));
}

TEST(json, a_missing_field_or_one_of_another_type_is_an_input_error_naming_the_file) {
  const Json record = {{"final", {{"time_s", "soon"}}}};
  EXPECT_EQ(input_error([&] { json_field<double>(record, "/final/iterations", "r.json"); }),
            "r.json: /final/iterations: key 'iterations' not found");
  EXPECT_EQ(input_error([&] { json_field<double>(record, "/final/time_s", "r.json"); }),
            "r.json: /final/time_s: type must be number, but is string");
  EXPECT_EQ(input_error([&] { read_fields("r.json", [&] { return record.at("history").size(); }); }),
            "r.json: key 'history' not found");
}

TEST(json, atomic_write_replaces_the_file_whole) {
  const TestDir dir;
  const std::string path = dir.file("r.json");
  write_file_atomically(path, "first\n");
  write_file_atomically(path, "second\n");
  EXPECT_EQ(read_text_file(path, "the record"), "second\n");
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename(), "r.json") << "a temporary file was left: " << e.path();
}

TEST(json, unwritable_places_are_refused_before_anything_runs) {
  EXPECT_THROW(check_writable("/nonexistent/folder/r.json", "--out"), InputError);
  EXPECT_THROW(check_writable(std::filesystem::temp_directory_path().string(), "--out"), InputError);
  try {
    check_writable("/nonexistent/folder/r.json", "--out");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/folder"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wulf
