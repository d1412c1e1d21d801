// The result-record writer: valid JSON, key order kept, non-finite numbers as null, and
// files replaced whole.
#include "data/dataset.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/files.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace wulf {
namespace {

TEST(json, writes_objects_arrays_and_scalars_in_order) {
  Json j = Json::object();
  j["b"] = 1;
  j["a"] = "x\"y\n";
  j["list"] = Json::Array{Json(1.5), Json(true), Json(nullptr)};
  j["nested"]["k"] = 2;
  EXPECT_EQ(j.dump(0), R"({"b":1,"a":"x\"y\n","list":[1.5, true, null],"nested":{"k":2}})");
}

TEST(json, non_finite_numbers_become_null_and_doubles_round_trip) {
  Json j = Json::array();
  j.push_back(std::nan(""));
  j.push_back(INFINITY);
  j.push_back(0.1);
  EXPECT_EQ(j.dump(0), "[null, null, 0.10000000000000001]");
}

TEST(json, atomic_write_replaces_the_file_whole) {
  const auto dir = std::filesystem::temp_directory_path() / "wulf_test_json";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "r.json").string();
  write_file_atomically(path, "first\n");
  write_file_atomically(path, "second\n");
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), "second\n");
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename(), "r.json") << "a temporary file was left: " << e.path();
  std::filesystem::remove_all(dir);
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
