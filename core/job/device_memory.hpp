// What one rank's device (a GPU) holds at its peak when it trains a net given by its layers
// (layers:FILE) as the job says, in parts: the parameters, the gradients, the optimizer's
// state, the activations the backward pass needs, and the collectives' buffers. This is the
// memory of the modelled cluster, not of the machine that simulates it (memory_estimate.hpp);
// a platform's hosts that give theirs (wulf:memory) are held to it before any rank starts.
//
// The count is that of the ZeRO paper (Rajbhandari et al., SC20, section 3.1: parameters,
// gradients and the optimizer's states, each Psi values; section 5: which of them a stage
// shards) and of PyTorch FSDP's (Zhao et al., PVLDB 16(12), section 3.2: a unit's parameters
// unsharded only from its all-gather to its free, at most --gather-limit prefetched), with the
// activations the layer file gives (activations=, values per sample the layer keeps for its
// backward), summed as all held at once: the peak at the end of the forward pass of a block.
// What it leaves out, and says so in the record: the framework's own (CUDA context, allocator
// caches and fragmentation, workspaces), and the temporaries of a library's allreduce.
#pragma once

#include "job/train_job.hpp"
#include "util/json.hpp"

#include <string>
#include <vector>

namespace wulf {

struct DevicePart {
  std::string what;
  double bytes = 0;
  std::string shrink;  // what makes it smaller
};

struct DeviceMemory {
  std::vector<DevicePart> parts;
  double total = 0;               // per rank: the parts summed
  bool activations_given = true;  // the layer file gives activations= (without, they count as 0)
  Json to_json() const;           // the record's config.device_memory
};

// The memory of one rank of a job whose net is a layer file, under its strategy (block,
// overlap or fsdp). ranks: the job's np; value_bytes: of one parameter (4 float, 8 double).
DeviceMemory device_memory(const NetSpec& spec, const TrainConfig& config, int ranks, double value_bytes);
DeviceMemory device_memory(const TrainJob& job);

// The bytes as people read them: "12.4 GiB".
std::string gib(double bytes);

// Where a rank's device holds `memory` bytes and the job needs more, the refusal: the parts,
// largest first, and what would make the run fit; "" where it fits.
std::string device_memory_fault(const DeviceMemory& need, double memory, const std::string& where);

}  // namespace wulf
