#include "engine/delay_link.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

namespace wulf {

namespace {

// Frames held at once in one direction, at most: a link's whole queue (tbf's limit, 4 MiB of
// frames) over its delay fits many times. Past it frames are dropped, as a full queue would.
constexpr std::size_t kMostHeldBytes = 64u << 20;
constexpr std::size_t kFrameMax = 65536;

long long nanoseconds(const timespec& t) { return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec; }

long long now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);  // the clock of SO_TIMESTAMPNS
  return nanoseconds(t);
}

// A packet socket on one interface: every frame that arrives there, none that leaves.
int open_port(const std::string& ifname) {
  auto fail = [&](const char* what) {
    throw std::runtime_error("wulf testbed delay: interface " + ifname + ": " + what + ": " + std::strerror(errno));
  };
  const unsigned index = ::if_nametoindex(ifname.c_str());
  if (index == 0) fail("no such interface");
  const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
  if (fd < 0) fail("cannot open a packet socket");
  const int one = 1, buffer = 8 << 20;
  if (::setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0) fail("PACKET_IGNORE_OUTGOING");
  if (::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0) fail("SO_TIMESTAMPNS");
  // Room for every frame that arrives while the forwarder sleeps (root may force it).
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) != 0 &&
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer) != 0)
    fail("SO_RCVBUF");
  sockaddr_ll at{};
  at.sll_family = AF_PACKET;
  at.sll_protocol = htons(ETH_P_ALL);
  at.sll_ifindex = static_cast<int>(index);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) fail("cannot bind a packet socket");
  return fd;
}

struct Held {
  long long due_ns;
  std::vector<char> frame;
};

// One direction: frames from `in`, held `delay_ns` after the kernel received them, then
// sent by `out`.
struct Direction {
  int in = -1, out = -1;
  long long delay_ns = 0;
  std::deque<Held> held;
  std::size_t held_bytes = 0;

  // Reads every frame waiting at `in`; false when the interface is gone.
  bool take() {
    std::array<char, kFrameMax> buf;
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(timespec))> control;
    for (;;) {
      iovec iov{buf.data(), buf.size()};
      msghdr m{};
      m.msg_iov = &iov;
      m.msg_iovlen = 1;
      m.msg_control = control.data();
      m.msg_controllen = control.size();
      const ssize_t got = ::recvmsg(in, &m, 0);
      if (got < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      long long arrived = 0;
      for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
          timespec t{};
          std::memcpy(&t, CMSG_DATA(c), sizeof t);
          arrived = nanoseconds(t);
        }
      if (arrived == 0) arrived = now_ns();
      if (held_bytes + static_cast<std::size_t>(got) > kMostHeldBytes) continue;  // a full queue drops
      held.push_back({arrived + delay_ns, std::vector<char>(buf.data(), buf.data() + got)});
      held_bytes += static_cast<std::size_t>(got);
    }
  }

  // Sends every frame that is due; false when the interface is gone.
  bool give(long long now) {
    while (!held.empty() && held.front().due_ns <= now) {
      const std::vector<char>& f = held.front().frame;
      if (::send(out, f.data(), f.size(), 0) < 0) {
        if (errno == EAGAIN || errno == ENOBUFS) return true;  // the interface's queue is full: later
        if (errno != EMSGSIZE && errno != EINTR) return false;
      }
      held_bytes -= f.size();
      held.pop_front();
    }
    return true;
  }
};

[[noreturn]] void forward(Direction ab, Direction ba) {
  ::prctl(PR_SET_TIMERSLACK, 1UL);  // wake at the due time, not up to 50 us after it
  Direction* ways[] = {&ab, &ba};
  for (;;) {
    const long long now = now_ns();
    for (Direction* d : ways)
      if (!d->give(now)) ::_exit(0);
    long long next = -1;
    for (const Direction* d : ways)
      if (!d->held.empty() && (next < 0 || d->held.front().due_ns < next)) next = d->held.front().due_ns;
    pollfd fds[] = {{ab.in, POLLIN, 0}, {ba.in, POLLIN, 0}};
    timespec wait{};
    if (next >= 0) {
      const long long left = std::max(0LL, next - now_ns());
      wait = {static_cast<time_t>(left / 1000000000LL), static_cast<long>(left % 1000000000LL)};
    }
    const int ready = ::ppoll(fds, 2, next >= 0 ? &wait : nullptr, nullptr);
    if (ready < 0 && errno != EINTR) ::_exit(0);
    for (const pollfd& p : fds)
      if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) ::_exit(0);  // an interface is gone
    for (Direction* d : ways)
      if (!d->take()) ::_exit(0);
  }
}

}  // namespace

void start_delay_link(const DelayLinkSpec& spec) {
  for (const double s : {spec.a_to_b_s, spec.b_to_a_s})
    if (!(s >= 0 && s <= 60)) throw std::runtime_error("wulf testbed delay: a delay must lie in [0, 60] s");
  const int a = open_port(spec.a), b = open_port(spec.b);
  const auto ns = [](double s) { return static_cast<long long>(std::llround(s * 1e9)); };
  // The forwarder says on this pipe that it has left this process's group.
  int left[2];
  if (::pipe2(left, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("wulf testbed delay: cannot make a pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("wulf testbed delay: cannot fork: ") + std::strerror(errno));
  if (pid > 0) {
    // Returns only once the forwarder has a session of its own. Whoever runs this command
    // ends what is left in its process group when it exits (engine/process.hpp's run_child):
    // on a loaded machine a forwarder that had not yet called setsid was ended with it, its
    // link cut, and Open MPI's daemons then failed to start ("No route to host").
    ::close(left[1]);
    char said = 0;
    ssize_t got = 0;
    do got = ::read(left[0], &said, 1);
    while (got < 0 && errno == EINTR);
    ::close(left[0]);
    if (got != 1) throw std::runtime_error("wulf testbed delay: the forwarder ended as it started");
    return;
  }
  // The forwarder: a session of its own, so that it lives until its namespace is removed
  // (which ends every process in it) or its interfaces go; nothing of the caller's output.
  ::close(left[0]);
  ::setsid();
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) ::signal(signal, SIG_DFL);  // not wulf's handlers
  const int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
  const char ready = 1;
  if (::write(left[1], &ready, 1) != 1) ::_exit(1);
  ::close(left[1]);
  forward({a, b, ns(spec.a_to_b_s), {}, 0}, {b, a, ns(spec.b_to_a_s), {}, 0});
}

}  // namespace wulf
