// Preloaded by delay_link_test.sh (LD_PRELOAD): setsid() waits half a second before it makes
// the session, as a loaded machine may delay a forked child's first steps. A program that
// forks a child to call setsid() and returns at once then returns while the child is still
// in its process group, every time.
#include <sys/syscall.h>
#include <unistd.h>

extern "C" pid_t setsid() {
  ::usleep(500000);
  return static_cast<pid_t>(::syscall(SYS_setsid));
}
