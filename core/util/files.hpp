// Files wulf writes: results that a reader never sees half-written, and scratch folders
// and files of its own in /tmp that go away with the object that made them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace wulf {

// Writes text to path so that a reader never sees a half-written file: it goes to a new
// file of its own in the same folder first (created with O_EXCL, never a name that exists),
// then replaces path in one rename. Every write is checked: when one fails (a full disk),
// the new file is removed and a file already at path is left byte for byte as it was. The
// new file takes the permissions of the one it replaces (a record of mode 0600 stays 0600);
// a hard link to the old file keeps the old text, as the rename gives path a new file.
// What is not a regular file is never replaced: a symbolic link is written through (the file
// it leads to is replaced, the link stays); a device or a FIFO (/dev/null, /dev/full) is
// written in place; /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are written
// through that descriptor. Throws InputError naming the path for what check_writable
// refuses, or when a write fails (with the system's reason: "No space left on device").
void write_file_atomically(const std::string& path, const std::string& text);
// Throws InputError unless a file could be written at path, option naming the input in the
// message ("--out"): a folder, a socket, a block device (a disk), a FIFO no process reads, a
// link to nothing, a missing or unwritable folder, or a device that is not writable.
void check_writable(const std::string& path, const std::string& option);
// Whether paths a and b name one file: the same file once links are followed, or the same
// path once made absolute and normal where either does not exist yet.
bool same_file(const std::string& a, const std::string& b);
// An input or another output of a run, as an option and its path ("--config", "run.cfg").
struct NamedPath {
  std::string option, path;
};
// check_writable, and then refuses an output that is the same file (same_file) as one of
// others (another of the command's outputs, say) or as any file the command has read so far
// (InputLog): writing it would destroy that. The message names both. Devices and pipes are
// not compared (two records written to /dev/null destroy nothing); empty paths are skipped.
void check_output(const std::string& path, const std::string& option, const std::vector<NamedPath>& others);

// The files one command reads, so that none of its outputs replaces one (check_output),
// whatever option or problem made it read them. While an InputLog lives, check_input_file,
// through which every reader of wulf's passes (read_text_file, the IDX, FANN, weights and
// profile readers, JSON records), adds each file it is given on this thread to the innermost
// InputLog, under the name it was read as ("IDX file", "--config"). run_cli keeps one for
// each command; where none lives (the rank programs) nothing is kept.
class InputLog {
 public:
  InputLog();
  ~InputLog();
  InputLog(const InputLog&) = delete;
  InputLog& operator=(const InputLog&) = delete;

  // The files read while it lived, each once, in the order they were first read.
  const std::vector<NamedPath>& files() const { return files_; }
  // The innermost InputLog of this thread, or null.
  static const InputLog* current();
  // Adds path, read as what, to the innermost InputLog of this thread, if any.
  static void note(const std::string& path, const std::string& what);

 private:
  std::vector<NamedPath> files_;
  InputLog* outer_;
};
// The most wulf reads of one file, named in a refusal: text a user writes (a --config, a
// profile, a hostfile) and data (a FANN data file, a weights file, an IDX file, a JSON record).
constexpr std::uintmax_t text_file_limit = std::uintmax_t{64} << 20;  // 64 MiB
constexpr std::uintmax_t data_file_limit = std::uintmax_t{64} << 30;  // 64 GiB
// A platform file, which SimGrid reads: a generated one that lists every route may be large
// (Bunyip at 20 times its size, 3 920 CPUs and 1.9 million routes: 367 MiB,
// experiments/bunyip-bigger).
constexpr std::uintmax_t platform_file_limit = std::uintmax_t{1} << 30;  // 1 GiB

// The size of the regular file at path. Throws InputError naming what (e.g. "--config") and
// the path, before anything is read, for a path that is missing, a folder, a device, a pipe or
// a socket (a read of /dev/zero would never end), or a file larger than max_bytes. The file
// is noted in the InputLog, if one lives (InputLog::note).
std::uintmax_t check_input_file(const std::string& path, const std::string& what, std::uintmax_t max_bytes);
// The whole regular file at path (check_input_file), at most max_bytes of it; throws
// InputError naming what and the path when it cannot be read, or grows past max_bytes.
std::string read_text_file(const std::string& path, const std::string& what,
                           std::uintmax_t max_bytes = text_file_limit);

// The system's temporary folder, where wulf and the MPI it starts keep their scratch files:
// $TMPDIR where it is set and not empty, else /tmp. Throws InputError naming TMPDIR when it
// names no folder (missing, or a file).
std::filesystem::path temp_folder();

// text with the path of every TempDir and TempFile of this process that is alive replaced by
// "<temporary PURPOSE>": what two processes running the same command differ by (the sweep
// runner's comparison of the launcher's processes' lists, cli/runner.hpp).
std::string without_temp_paths(std::string text);

// A digest of a file's bytes, to tell whether it changed: "fnv1a64:<16 hex digits>:<bytes>"
// (FNV-1a, not cryptographic: it detects an edit or a different file, not an attacker).
// Throws InputError naming `what` where it cannot be read.
std::string file_digest(const std::string& path, const std::string& what);
// The same digest of bytes in memory (a file's text once read).
std::string text_digest(std::string_view bytes);

// A folder of wulf's own in the system's temporary folder (mkdtemp: a name no other process
// has, created with mode 0700), removed with everything in it when the object goes. Its name
// holds its purpose and its owner's tag (util/proc.hpp, owner_tag): "recommend" ->
// /tmp/wulf-recommend-4242.1234567-Xa3k9Q, so that what a killed run left can be told from
// what a live run holds (remove_temp_leftovers).
class TempDir {
 public:
  explicit TempDir(const std::string& purpose);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // A path inside the folder (the file is not created).
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// A file of wulf's own in the system's temporary folder (mkstemp, mode 0600), holding text,
// removed when the object goes. Named as a TempDir is: /tmp/wulf-hostfile-4242.1234567-Xa3k9Q.
class TempFile {
 public:
  TempFile(const std::string& purpose, const std::string& text);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Removes the temporary files and folders (TempDir, TempFile) in the system's temporary
// folder whose owner is gone: a run killed by SIGKILL leaves them (Open MPI's session folder,
// the ranks' status file, a hostfile, SimGrid's copies of the rank program). An item is
// removed only when its name carries an owner tag whose process no longer runs
// (owner_alive); one of a live run, or with no tag (another program's, an older wulf's), is
// never touched. Returns how many it removed. Every wulf command calls it as it starts;
// `wulf clean` calls it alone.
int remove_temp_leftovers();

}  // namespace wulf
