// wulf-platform: reads a SimGrid platform file with SimGrid's own loader and prints what
// wulf needs of it. A program of its own so that SimGrid's engine, of which a process may
// hold one, never lives inside the wulf command or its tests.
//
//   wulf-platform hosts FILE.xml   one line per host: name, cores, speed in flop/s
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <cstdio>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "hosts") {
    std::fprintf(stderr, "usage: wulf-platform hosts FILE.xml\n");
    return 2;
  }
  try {
    int sg_argc = 2;
    char log[] = "--log=root.thres:critical";
    char* sg_argv[] = {argv[0], log, nullptr};
    simgrid::s4u::Engine engine(&sg_argc, sg_argv);
    engine.load_platform(argv[2]);
    for (const simgrid::s4u::Host* h : engine.get_all_hosts())
      std::printf("%s %d %.17g\n", h->get_cname(), h->get_core_count(), h->get_speed());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
