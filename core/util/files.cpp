#include "util/files.hpp"

#include "util/errors.hpp"
#include "util/proc.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace wulf {
namespace fs = std::filesystem;

namespace {

// "/tmp/wulf-<purpose>-<owner tag>-XXXXXX" as a buffer mkdtemp and mkstemp may fill in.
std::vector<char> temp_template(const std::string& purpose) {
  const std::string name = (temp_folder() / ("wulf-" + purpose + "-" + owner_tag() + "-XXXXXX")).string();
  return std::vector<char>(name.c_str(), name.c_str() + name.size() + 1);
}

// The temporary folder as a message names it: "/scratch (TMPDIR)", or "/tmp".
std::string temp_folder_named() {
  const char* env = std::getenv("TMPDIR");
  return temp_folder().string() + (env && *env ? " (TMPDIR)" : "");
}

// The owner tag in the name of a TempDir or TempFile, wulf-<purpose>-<owner tag>-XXXXXX;
// empty for any other name.
std::string temp_owner(const std::string& name) {
  constexpr std::size_t suffix = 7;  // "-XXXXXX"
  if (name.rfind("wulf-", 0) != 0 || name.size() < 5 + suffix || name[name.size() - suffix] != '-') return "";
  const std::size_t end = name.size() - suffix, start = name.rfind('-', end - 1) + 1;
  if (start <= 5) return "";  // no purpose before the tag
  const std::string tag = name.substr(start, end - start);
  return is_owner_tag(tag) ? tag : "";
}

// The live TempDirs' and TempFiles' paths, and their purposes (without_temp_paths).
std::mutex live_temp_mutex;
std::vector<std::pair<std::string, std::string>> live_temp;

void register_temp(const std::string& path, const std::string& purpose) {
  const std::lock_guard<std::mutex> lock(live_temp_mutex);
  live_temp.emplace_back(path, purpose);
}

void unregister_temp(const std::string& path) {
  const std::lock_guard<std::mutex> lock(live_temp_mutex);
  std::erase_if(live_temp, [&](const auto& t) { return t.first == path; });
}

// Writes all of text to fd; false on a short or failed write.
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The descriptor a path names directly, or -1: /dev/stdout, /dev/stderr, /dev/fd/N and
// /proc/self/fd/N. Written through that descriptor: opening the path again would start a
// file that the shell redirected there at its first byte, over what was written already.
int named_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"})
    if (path.rfind(prefix, 0) == 0 && path.size() > prefix.size() && path.size() - prefix.size() < 6 &&
        path.find_first_not_of("0123456789", prefix.size()) == std::string::npos)
      return std::stoi(path.substr(prefix.size()));
  return -1;
}

// What writing to path means: a descriptor (named_descriptor), a device or a pipe written in
// place, or a regular file at `file`, replaced in one rename: path itself, or the file a
// symbolic link at path leads to (written through, the link kept).
struct OutputTarget {
  int descriptor = -1;
  bool in_place = false;  // a device or a FIFO: opened and written, never replaced
  std::string file;
};

// Throws InputError naming option and path for what an output may not be: a folder, a
// socket, a block device, a FIFO that no process reads (the write would wait forever), a
// link that leads nowhere, or a folder that is missing or not writable.
OutputTarget output_target(const std::string& path, const std::string& option) {
  OutputTarget t;
  t.descriptor = named_descriptor(path);
  if (t.descriptor >= 0) {
    if (::fcntl(t.descriptor, F_GETFL) < 0) throw InputError(option + " " + path + ": descriptor is not open");
    return t;
  }
  const fs::path p(path);
  if (p.filename().empty()) throw InputError(option + " " + path + ": names a folder, not a file");
  struct stat link {};
  t.file = path;
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    std::error_code ec;
    const fs::path to = fs::canonical(p, ec);
    if (ec) throw InputError(option + " " + path + ": is a symbolic link to nothing (" + ec.message() + ")");
    t.file = to.string();
  }
  struct stat st {};
  if (::stat(t.file.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw InputError(option + " " + path + ": is a folder");
    if (S_ISSOCK(st.st_mode)) throw InputError(option + " " + path + ": is a socket, which wulf does not write");
    if (S_ISBLK(st.st_mode))  // a disk: a record written there would destroy what it holds
      throw InputError(option + " " + path + ": is a block device (a disk), which wulf does not write");
    if (!S_ISREG(st.st_mode)) {
      if (S_ISFIFO(st.st_mode)) {  // a reader must be there already, or the open would wait
        const int fd = ::open(t.file.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
          throw InputError(option + " " + path + ": is a FIFO " +
                           (errno == ENXIO ? std::string("that no process reads") : std::strerror(errno)));
        ::close(fd);
      }
      if (::access(t.file.c_str(), W_OK) != 0) throw InputError(option + " " + path + ": is not writable");
      t.in_place = true;
      return t;
    }
  }
  const fs::path file(t.file);
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(option + " " + path + ": folder " + dir.string() + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0) throw InputError(option + " " + path + ": folder " + dir.string() + " is not writable");
  return t;
}

// A new file beside path, "<path>.tmp-<pid>-<random>", created with O_EXCL: it never reuses,
// truncates or follows (a link planted at) a name that exists, even in a folder others can
// write to. Mode 0666 less the umask, as a file the program created by name would have.
std::pair<int, std::string> create_beside(const std::string& path) {
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp-%ld-%08x", static_cast<long>(::getpid()), random());
    const std::string tmp = path + suffix;
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return {fd, tmp};
    if (errno != EEXIST) throw InputError(path + ": cannot create a file beside it: " + std::strerror(errno));
  }
  throw InputError(path + ": cannot create a file beside it: every name tried exists");
}

// Writes text into the device or pipe at path, or through descriptor fd when it is not -1.
void write_in_place(const std::string& path, int fd, const std::string& text) {
  const bool own = fd < 0;
  if (own) fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open it for writing: " + std::strerror(errno));
  const bool written = write_all(fd, text);
  const int write_errno = errno;
  const bool closed = !own || ::close(fd) == 0;
  if (!written || !closed)
    throw InputError(path + ": writing failed: " + std::strerror(written ? errno : write_errno));
}

// The innermost InputLog of this thread (InputLog): set only where a command runs, never in
// a rank.
thread_local InputLog* innermost_log = nullptr;

}  // namespace

InputLog::InputLog() : outer_(innermost_log) { innermost_log = this; }

InputLog::~InputLog() { innermost_log = outer_; }

const InputLog* InputLog::current() { return innermost_log; }

void InputLog::note(const std::string& path, const std::string& what) {
  if (!innermost_log) return;
  std::vector<NamedPath>& files = innermost_log->files_;
  for (const NamedPath& f : files)
    if (f.path == path) return;
  files.push_back({what, path});
}

fs::path temp_folder() {
  const char* env = std::getenv("TMPDIR");
  if (!env || !*env) return "/tmp";
  const std::string dir = env;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  const char* how = "(wulf keeps its temporary files there: set TMPDIR to a folder, or unset it for /tmp)";
  if (!fs::exists(st)) throw InputError("TMPDIR " + dir + ": no such folder " + how);
  if (!fs::is_directory(st)) throw InputError("TMPDIR " + dir + ": is not a folder " + how);
  return dir;
}

void check_writable(const std::string& path, const std::string& option) { output_target(path, option); }

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  const fs::path x = fs::weakly_canonical(a, ec), y = fs::weakly_canonical(b, ec);
  return !ec && x == y;
}

void check_output(const std::string& path, const std::string& option, const std::vector<NamedPath>& others) {
  const OutputTarget target = output_target(path, option);
  if (target.descriptor >= 0 || target.in_place) return;
  const auto refuse_same = [&](const std::vector<NamedPath>& files) {
    for (const NamedPath& other : files)
      if (!other.path.empty() && same_file(path, other.path))
        throw InputError(option + " " + path + " is the same file as " + other.option + " " + other.path +
                         ": writing it would destroy that");
  };
  refuse_same(others);
  if (const InputLog* read = InputLog::current()) refuse_same(read->files());
}

void write_file_atomically(const std::string& path_given, const std::string& text) {
  const OutputTarget target = output_target(path_given, "output");
  if (target.descriptor >= 0 || target.in_place)
    return write_in_place(target.descriptor >= 0 ? path_given : target.file, target.descriptor, text);
  const std::string& path = target.file;  // the file a link leads to, which is replaced
  const auto [fd, tmp] = create_beside(path);
  // The file replaced keeps its permissions: the new one takes its mode.
  struct stat old {};
  const bool kept_mode = ::stat(path.c_str(), &old) != 0 || ::fchmod(fd, old.st_mode & 07777) == 0;
  // Every write and the close are checked (a full disk may fail either); on a failure the
  // file beside goes and path is left as it was.
  const bool written = kept_mode && write_all(fd, text);
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) {
    const std::string reason = std::strerror(written ? errno : write_errno);
    ::unlink(tmp.c_str());
    throw InputError(path + ": writing failed: " + reason + " (the file is left as it was)");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw InputError(path + ": cannot replace it: " + reason + " (the file is left as it was)");
  }
}

std::uintmax_t check_input_file(const std::string& path, const std::string& what, std::uintmax_t max_bytes) {
  InputLog::note(path, what);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(what + " " + path + ": " + (errno == ENOENT ? "no such file" : std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw InputError(what + " " + path + ": is a folder, not a file");
  if (!S_ISREG(st.st_mode))
    throw InputError(what + " " + path + ": is not a regular file (a device, a pipe or a socket), which wulf does not read");
  const auto bytes = static_cast<std::uintmax_t>(st.st_size);
  if (bytes > max_bytes)
    throw InputError(what + " " + path + ": is " + human_bytes(static_cast<double>(bytes)) + ", more than the " +
                     human_bytes(static_cast<double>(max_bytes)) + " wulf reads of such a file");
  return bytes;
}

std::string read_text_file(const std::string& path, const std::string& what, std::uintmax_t max_bytes) {
  check_input_file(path, what, max_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(what + " " + path + ": cannot open it");
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes)  // it grew since it was checked
      throw InputError(what + " " + path + ": holds more than the " + human_bytes(static_cast<double>(max_bytes)) +
                       " wulf reads of such a file");
  }
  if (in.bad()) throw InputError(what + " " + path + ": reading failed");
  return text;
}

TempDir::TempDir(const std::string& purpose) {
  std::vector<char> name = temp_template(purpose);
  if (!::mkdtemp(name.data())) {
    const std::string reason = std::strerror(errno);
    throw InputError("cannot create a folder in " + temp_folder_named() + " for " + purpose + ": " + reason);
  }
  path_ = name.data();
  register_temp(path_.string(), purpose);
}

TempDir::~TempDir() {
  unregister_temp(path_.string());
  std::error_code ec;
  fs::remove_all(path_, ec);
}

TempFile::TempFile(const std::string& purpose, const std::string& text) {
  std::vector<char> name = temp_template(purpose);
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    const std::string reason = std::strerror(errno);
    throw InputError("cannot create a file in " + temp_folder_named() + " for " + purpose + ": " + reason);
  }
  path_ = name.data();
  const bool written = write_all(fd, text);
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) {
    std::error_code ec;
    fs::remove(path_, ec);
    throw InputError("cannot write " + path_ + " (" + purpose + "): " + std::strerror(errno));
  }
  register_temp(path_, purpose);
}

TempFile::~TempFile() {
  unregister_temp(path_);
  std::error_code ec;
  fs::remove(path_, ec);
}

std::string without_temp_paths(std::string text) {
  std::vector<std::pair<std::string, std::string>> live;
  {
    const std::lock_guard<std::mutex> lock(live_temp_mutex);
    live = live_temp;
  }
  // The longest first: a TempFile inside a TempDir is named by its own purpose.
  std::sort(live.begin(), live.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [path, purpose] : live)
    for (std::size_t at = text.find(path); at != std::string::npos; at = text.find(path, at))
      text.replace(at, path.size(), "<temporary " + purpose + ">");
  return text;
}

std::string text_digest(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return fmt::format("fnv1a64:{:016x}:{}", h, bytes.size());
}

std::string file_digest(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(what + " " + path + ": cannot be read (" + std::strerror(errno) + ")");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw InputError(what + " " + path + ": a read failed");
  return text_digest(bytes.str());
}

int remove_temp_leftovers() {
  int removed = 0;
  std::error_code ec;
  fs::path folder;
  try {
    folder = temp_folder();
  } catch (const InputError&) {
    return 0;  // no folder to clean; the run itself says what is wrong with TMPDIR
  }
  std::vector<fs::path> left;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string owner = temp_owner(it->path().filename().string());
    if (!owner.empty() && !owner_alive(owner)) left.push_back(it->path());
  }
  for (const fs::path& path : left) {
    std::error_code gone;
    if (fs::remove_all(path, gone) > 0 && !gone) ++removed;
  }
  return removed;
}

}  // namespace wulf
