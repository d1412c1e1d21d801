#include "util/files.hpp"

#include "util/errors.hpp"

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <fstream>
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

// "/tmp/wulf-<purpose>-XXXXXX" as a buffer mkdtemp and mkstemp may fill in.
std::vector<char> temp_template(const std::string& purpose) {
  const std::string name = (fs::temp_directory_path() / ("wulf-" + purpose + "-XXXXXX")).string();
  return std::vector<char>(name.c_str(), name.c_str() + name.size() + 1);
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

// True when path is something other than a regular file or a folder: a device (/dev/full,
// /dev/stdout), a pipe or a socket. Such a thing is written in place: replacing it by a
// rename would put a regular file where the device was.
bool is_special_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
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

// Writes text into the device or pipe at path (see is_special_file).
void write_in_place(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open it for writing: " + std::strerror(errno));
  const bool written = write_all(fd, text);
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed)
    throw InputError(path + ": writing failed: " + std::strerror(written ? errno : write_errno));
}

}  // namespace

void check_writable(const std::string& path, const std::string& option) {
  const fs::path p(path);
  if (p.filename().empty()) throw InputError(option + " " + path + ": names a folder, not a file");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(option + " " + path + ": folder " + dir.string() + " does not exist");
  if (fs::is_directory(p, ec)) throw InputError(option + " " + path + ": is a folder");
  if (is_special_file(path)) {  // written in place: the device itself must take writes
    if (::access(path.c_str(), W_OK) != 0) throw InputError(option + " " + path + ": is not writable");
    return;
  }
  if (::access(dir.c_str(), W_OK) != 0) throw InputError(option + " " + path + ": folder " + dir.string() + " is not writable");
}

void write_file_atomically(const std::string& path, const std::string& text) {
  check_writable(path, "output");
  if (is_special_file(path)) return write_in_place(path, text);
  const auto [fd, tmp] = create_beside(path);
  // Every write and the close are checked (a full disk may fail either); on a failure the
  // file beside goes and path is left as it was.
  const bool written = write_all(fd, text);
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

namespace {

// n bytes in the largest unit that keeps it whole or near: "64 MiB", "1.5 GiB".
std::string byte_text(std::uintmax_t n) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char text[48];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.4g %s", v, units[u]);
  return text;
}

}  // namespace

std::uintmax_t check_input_file(const std::string& path, const std::string& what, std::uintmax_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(what + " " + path + ": " + (errno == ENOENT ? "no such file" : std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw InputError(what + " " + path + ": is a folder, not a file");
  if (!S_ISREG(st.st_mode))
    throw InputError(what + " " + path + ": is not a regular file (a device, a pipe or a socket), which wulf does not read");
  const auto bytes = static_cast<std::uintmax_t>(st.st_size);
  if (bytes > max_bytes)
    throw InputError(what + " " + path + ": is " + byte_text(bytes) + ", more than the " + byte_text(max_bytes) +
                     " wulf reads of such a file");
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
      throw InputError(what + " " + path + ": holds more than the " + byte_text(max_bytes) +
                       " wulf reads of such a file");
  }
  if (in.bad()) throw InputError(what + " " + path + ": reading failed");
  return text;
}

TempDir::TempDir(const std::string& purpose) {
  std::vector<char> name = temp_template(purpose);
  if (!::mkdtemp(name.data()))
    throw InputError("cannot create a folder in " + fs::temp_directory_path().string() + " for " + purpose + ": " +
                     std::strerror(errno));
  path_ = name.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

TempFile::TempFile(const std::string& purpose, const std::string& text) {
  std::vector<char> name = temp_template(purpose);
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    throw InputError("cannot create a file in " + fs::temp_directory_path().string() + " for " + purpose + ": " +
                     std::strerror(errno));
  path_ = name.data();
  const bool written = write_all(fd, text);
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) {
    std::error_code ec;
    fs::remove(path_, ec);
    throw InputError("cannot write " + path_ + " (" + purpose + "): " + std::strerror(errno));
  }
}

TempFile::~TempFile() {
  std::error_code ec;
  fs::remove(path_, ec);
}

}  // namespace wulf
