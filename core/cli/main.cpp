#include "cli/cli.hpp"

#include <iostream>

int main(int argc, char** argv) {
  return wulf::run_cli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
