#include "comm/comm.hpp"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

namespace wulf {

double SerialComm::now() const {
  if (clock_) return clock_->now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SerialComm::allgather(std::span<const float> send, std::span<float> recv) {
  std::copy(send.begin(), send.end(), recv.begin());
}
void SerialComm::allgather(std::span<const double> send, std::span<double> recv) {
  std::copy(send.begin(), send.end(), recv.begin());
}
void SerialComm::gather(std::span<const double> send, std::span<double> recv, int) {
  std::copy(send.begin(), send.end(), recv.begin());
}
void SerialComm::gather(std::span<const float> send, std::span<float> recv, int) {
  std::copy(send.begin(), send.end(), recv.begin());
}
void SerialComm::scatter(std::span<const float> send, std::span<float> recv, int) {
  std::copy(send.begin(), send.begin() + static_cast<std::ptrdiff_t>(recv.size()), recv.begin());
}

std::unique_ptr<Comm> SerialComm::split(int color, int) {
  if (color == no_color) return nullptr;
  return clock_ ? std::make_unique<SerialComm>(*clock_) : std::make_unique<SerialComm>();
}

void SerialComm::alone() { throw std::logic_error("point-to-point message on a communicator of one rank"); }

void SerialComm::abort(const std::string& message, int code) {
  if (clock_) clock_->abort(message, code);
  std::cerr << "wulf: " << message << std::endl;
  std::exit(code);
}

std::vector<std::string> SerialComm::hosts() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {"unknown"};
  return {name};
}

}  // namespace wulf
