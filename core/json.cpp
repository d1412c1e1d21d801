#include "json.hpp"

#include "dataset.hpp"

#include <cmath>
#include <cstdio>
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

void check_writable(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  if (p.filename().empty()) throw InputError(option + " " + path + ": names a folder, not a file");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(option + " " + path + ": folder " + dir.string() + " does not exist");
  if (fs::is_directory(p, ec)) throw InputError(option + " " + path + ": is a folder");
  if (::access(dir.c_str(), W_OK) != 0) throw InputError(option + " " + path + ": folder " + dir.string() + " is not writable");
}

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
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

}  // namespace wulf
