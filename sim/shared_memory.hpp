// The memory the simulated ranks share under --numerics off (compute_sim.cpp), SMPI's shared
// memory, from which and into which SMPI copies no message (sim/s4u_messages.cpp does as it).
#pragma once

#include <cstddef>

namespace wulf {

// Whether [data, data + bytes) lies wholly inside one block of it.
bool in_shared_memory(const void* data, std::size_t bytes);

}  // namespace wulf
