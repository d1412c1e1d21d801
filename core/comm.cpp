#include "comm.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

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

void SerialComm::abort(const std::string& message, int code) {
  if (clock_) clock_->abort(message, code);
  std::cerr << "wulf: " << message << std::endl;
  std::exit(code);
}

}  // namespace wulf
