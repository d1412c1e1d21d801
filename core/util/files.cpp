#include "util/files.hpp"

#include "util/errors.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fcntl.h>
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

}  // namespace

void check_writable(const std::string& path, const std::string& option) {
  const fs::path p(path);
  if (p.filename().empty()) throw InputError(option + " " + path + ": names a folder, not a file");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(option + " " + path + ": folder " + dir.string() + " does not exist");
  if (fs::is_directory(p, ec)) throw InputError(option + " " + path + ": is a folder");
  if (::access(dir.c_str(), W_OK) != 0) throw InputError(option + " " + path + ": folder " + dir.string() + " is not writable");
}

void write_file_atomically(const std::string& path, const std::string& text) {
  check_writable(path, "output");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path + ": cannot create " + tmp);
    out << text;
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp);
      throw InputError(path + ": writing failed (disk full?)");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp);
    throw InputError(path + ": cannot replace it: " + ec.message());
  }
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(what + " " + path + ": is a folder");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(what + " " + path + ": cannot open it");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(what + " " + path + ": reading failed");
  return text.str();
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
