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

#include <sys/stat.h>
#include <unistd.h>

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
  EXPECT_TRUE(contains(input_error([&] { read_json_file(dir.file("missing.json")); }), "no such file"));
}

// A bad escape, bytes that are not UTF-8, and a bad escape at the end of a string of a
// megabyte: each named with the file, in a message of one short line of plain text (the
// library quotes the text it last read, which comes from the file).
TEST(json, bad_escapes_and_bytes_that_are_not_utf8_are_refused_in_plain_words) {
  TestDir dir;
  const std::vector<std::pair<std::string, std::string>> cases{
      {"escape.json", "{\"problem\": \"a\\qb\"}"},
      {"latin1.json", "{\"problem\": \"caf\xe9\"}"},
      {"binary.json", std::string("{\"a\": \"\x01\xff\xfe\x00\"}", 13)},
      {"long.json", "{\"a\": \"" + std::string(1 << 20, 'x') + "\\q\"}"}};
  for (const auto& [name, text] : cases) {
    SCOPED_TRACE(name);
    const std::string path = dir.write(name, text);
    const std::string message = input_error([&] { read_json_file(path); });
    EXPECT_TRUE(contains(message, path + ": not a JSON record: parse error at line 1")) << message;
    EXPECT_TRUE(plain_text(message)) << message;
    EXPECT_LT(message.size(), 600u);
  }
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

// A write that fails part way (here: the file size limit, as a full disk) leaves the file
// that was there byte for byte as it was, and nothing beside it.
TEST(json, a_failed_write_leaves_the_file_that_was_there_as_it_was) {
  const TestDir dir;
  const std::string path = dir.write("r.json", "{\"old\": true}\n");
  const std::string message = input_error([&] {
    const FileSizeLimit limit(100);
    write_file_atomically(path, std::string(10000, 'x'));
  });
  EXPECT_TRUE(contains(message, path + ": writing failed")) << message;
  EXPECT_TRUE(contains(message, "left as it was")) << message;
  EXPECT_EQ(read_text_file(path, "the record"), "{\"old\": true}\n");
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename(), "r.json") << "a temporary file was left: " << e.path();
}

// A device at the path (/dev/full, /dev/stdout) is written in place, never replaced by a
// rename; a full one is an error with the system's reason.
TEST(json, a_full_device_is_an_error_and_stays_a_device) {
  const TestDir dir;
  const std::string full = full_device(dir);
  const std::string message = input_error([&] { write_file_atomically(full, "{}\n"); });
  EXPECT_TRUE(contains(message, full + ": writing failed: No space left on device")) << message;
  EXPECT_TRUE(std::filesystem::is_character_file(full)) << full << " was replaced";
}

// The file written beside the record never has a name that exists: a link planted at a name
// a writer might pick (the record's name, ".tmp.", this process's id: the name wulf used
// before) is neither followed nor replaced.
TEST(json, a_planted_link_beside_the_record_is_never_followed) {
  const TestDir dir;
  const std::string victim = dir.write("victim.txt", "keep me\n");
  const std::string path = dir.file("r.json");
  std::filesystem::create_symlink(victim, path + ".tmp." + std::to_string(::getpid()));
  write_file_atomically(path, "{}\n");
  EXPECT_EQ(read_text_file(victim, "the victim"), "keep me\n");
  EXPECT_EQ(read_text_file(path, "the record"), "{}\n");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
}

// A key given twice in one object is refused, naming where: the library would let the last
// one win, and a hand-edited record would run another job than it shows.
TEST(json, a_key_given_twice_in_one_object_is_refused_naming_where) {
  TestDir dir;
  const std::string path = dir.write("twice.json", "{\"config\": {\"eta\": 0.5, \"block\": 4, \"eta\": 9}}\n");
  EXPECT_EQ(input_error([&] { read_json_file(path); }),
            path + ": config.eta: given twice in one object (each key is given once)");
  EXPECT_TRUE(contains(input_error([&] { parse_json("[{\"a\": 1}, {\"b\": 1, \"b\": 2}]", "the output"); }),
                       "the output: [].b: given twice"));
  // The same key in two objects, or at two levels, is no repeat.
  const Json ok = parse_json("{\"a\": {\"a\": 1}, \"h\": [{\"a\": 1}, {\"a\": 2}]}", "ok");
  EXPECT_EQ(ok.at("h").at(1).at("a"), 2);
}

// The new file takes the mode of the one it replaces (a record kept private stays 0600); a
// hard link to the old file keeps the old text, as the rename gives the path a new file.
TEST(json, replacing_a_file_keeps_its_mode_and_leaves_a_hard_link_the_old_text) {
  const TestDir dir;
  const std::string path = dir.write("r.json", "old\n");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  std::filesystem::create_hard_link(path, dir.file("link.json"));
  write_file_atomically(path, "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(read_text_file(path, "the record"), "new\n");
  EXPECT_EQ(read_text_file(dir.file("link.json"), "the link"), "old\n");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  write_file_atomically(path, "newer\n");
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

// While an InputLog lives, every file check_input_file sees is in it, once, under the name it
// was read as; check_output refuses any of them, naming it; outside one nothing is kept.
TEST(json, an_output_that_is_a_file_the_command_read_is_refused) {
  const TestDir dir;
  const std::string data = dir.write("data.txt", "1\n"), other = dir.write("other.txt", "2\n");
  read_text_file(data, "--config");  // no log: nothing kept, nothing refused
  check_output(data, "--out", {});
  {
    const InputLog log;
    read_text_file(data, "--config");
    read_text_file(data, "again");
    EXPECT_THROW(read_text_file(dir.file("none"), "--hosts"), InputError);
    ASSERT_EQ(log.files().size(), 2u);
    EXPECT_EQ(log.files()[0].option, "--config");
    EXPECT_EQ(log.files()[0].path, data);
    EXPECT_EQ(input_error([&] { check_output(data, "--out", {}); }),
              "--out " + data + " is the same file as --config " + data + ": writing it would destroy that");
    std::filesystem::create_symlink(data, dir.file("link"));
    EXPECT_TRUE(contains(input_error([&] { check_output(dir.file("link"), "--out", {}); }), "--config " + data));
    check_output(other, "--out", {});
    {
      const InputLog inner;
      read_text_file(other, "FANN data file");
      EXPECT_EQ(inner.files().size(), 1u);
      EXPECT_EQ(InputLog::current(), &inner);
    }
    EXPECT_EQ(InputLog::current(), &log);
  }
  EXPECT_EQ(InputLog::current(), nullptr);
  check_output(data, "--out", {});
}

// $TMPDIR that names no folder is said to be so, naming TMPDIR, not a library's exception.
TEST(json, a_tmpdir_that_is_no_folder_is_named) {
  const TestDir dir;
  const std::string file = dir.write("file", "x\n");
  for (const auto& [tmpdir, what] : std::vector<std::pair<std::string, std::string>>{
           {dir.file("missing"), "no such folder"}, {file, "is not a folder"}}) {
    const ScopedEnv env("TMPDIR", tmpdir);
    EXPECT_TRUE(contains(input_error([] { TempDir scratch("test"); }), "TMPDIR " + tmpdir + ": " + what));
    EXPECT_TRUE(contains(input_error([] { TempFile scratch("test", "x"); }), "TMPDIR " + tmpdir + ": " + what));
  }
  const ScopedEnv env("TMPDIR", dir.str());
  const TempDir inside("test");
  EXPECT_EQ(inside.path().parent_path(), dir.path());
}

}  // namespace
}  // namespace wulf
