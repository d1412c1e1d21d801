// What a framework's data parallelism costs on a host beside the net's own compute: the
// host's wulf:ddp property, which --strategy overlap --framework ddp charges (issue 61).
// Each is measured on the host by a microbenchmark (experiments/ddp-witness/ddp_costs.py for a
// CPU with gloo) or taken from a published measurement (GPUs with NCCL: the platform file
// sources it), never fitted to the iteration times it predicts. Where DDP 1.13 spends each,
// read from torch/csrc/distributed/c10d/reducer.cpp:
//   copy      bytes/s of a gradient copied into its bucket and divided by the world size on
//             the way (mark_variable_ready_dense: at::mul_out(bucket_view, grad, 1 / world))
//   copy_out  bytes/s of the bucket copied back into the gradient (finalize_bucket_dense ->
//             copy_bucket_to_grad: grad.copy_(bucket_view)), without gradient_as_bucket_view
//   scale     bytes/s of the division in place of a gradient that is its bucket's view
//             (gradient_as_bucket_view: bucket_view.div_(world))
//   tensor    seconds of a gradient's autograd hook (mark_variable_ready), on the compute thread
//   bucket    seconds of a bucket's launch on the compute thread (all_reduce_bucket: the
//             process group's work made and queued) and of its wait
//   iteration seconds of DDP's own work each iteration (forward's bookkeeping,
//             prepare_for_backward, finalize_backward)
//   comm_cpu  CPU seconds per byte a rank sends that the process group's threads spend (gloo:
//             its worker threads and its TCP device's loop): taken from the compute thread
//             where the host has no core to spare (ComputeConfig::comm_steal)
// A cost not given is 0 (a rate not given: a copy that takes no time). It lies in nn/, beside
// the host's efficiency per kind of layer (nn/layer_table.hpp), so that the front end's
// platform reader (engine/) and the ranks' compute (comm/) both read it.
#pragma once

#include "util/json.hpp"

#include <string>
#include <string_view>

namespace wulf {

struct FrameworkCosts {
  double copy_Bps = 0, copy_out_Bps = 0, scale_Bps = 0;  // 0: not given (free)
  double tensor_s = 0, bucket_s = 0, iteration_s = 0;
  double comm_cpu_s_per_B = 0;
  std::string text;  // as the host gives it ("": none)

  // Seconds of moving `bytes` at `rate` (0 where the rate is not given).
  static double seconds(double bytes, double rate) { return rate > 0 ? bytes / rate : 0; }
  // For the record: each constant by its name, and the text it was read from.
  Json to_json() const;
};

// Reads "copy=1.2e10, copy_out=1.5e10, scale=1.8e10, tensor=6e-7, bucket=4e-4,
// iteration=4e-4, comm_cpu=1e-9" (any of them, each once, blanks allowed); the rates in
// bytes/s, the times in seconds, comm_cpu in seconds per byte. Throws InputError naming
// `what`, the item and what is wrong (an unknown name, a negative, infinite or missing number).
FrameworkCosts parse_framework_costs(std::string_view text, const std::string& what);

}  // namespace wulf
