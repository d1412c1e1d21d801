#!/usr/bin/env python3
"""Generate SimGrid platforms of GPU clusters: one SimGrid host (1 core, one rank) per GPU.

Six presets, five of them the platforms shipped in platforms/ (platforms/gpu/README.md gives
every source):

    dgx1-v100     8 NVIDIA DGX-1 servers with Tesla V100: NVLink 2.0 hybrid cube-mesh inside a
                  server, 4 EDR InfiniBand NICs per server (one per GPU pair), one IB switch
    bigbasin-p100 32 Facebook Big Basin servers of 8 Tesla P100 (SXM2): the DGX-1 cube-mesh with
                  one NVLink 1.0 per GPU pair, one 50 Gbit/s Ethernet NIC per server (Goyal et al.)
    roce-4gpu     128 servers of 4 Pascal GPUs on 25 Gbit/s RoCE (Horovod's benchmark cluster)
    eth10g-4gpu   8 servers of 4 Pascal GPUs on 10 Gbit/s Ethernet (a commodity cluster)
    dgx-a100      8 NVIDIA DGX A100 (8 A100 SXM4 80 GB on NVSwitch, third-generation NVLink), one
                  200 Gbit/s HDR InfiniBand NIC per GPU, one IB fabric
    dgx-h100      8 NVIDIA DGX H100 (8 H100 SXM5 80 GB on NVSwitch, fourth-generation NVLink), one
                  400 Gbit/s NDR InfiniBand NIC per GPU, one IB fabric

Every option of a preset can be changed, e.g. 128 DGX-1 servers (1024 GPUs) in one command:

    python3 platforms/gpu/generate.py --preset dgx1-v100 --nodes 128 -o /tmp/dgx1-128.xml

Layout of the output (SimGrid 3.32, DTD 4.1): the top zone (routing="Full") holds one zone
per server (routing="Full": its GPUs, the links inside it, a gateway router), and one
zoneRoute per pair of servers through the cluster's switch: the two servers' ports of it, a
FATPIPE link per server. So the file grows with the
GPUs of a server squared times the servers, plus the servers squared, not with the square
of all GPUs: 128 DGX-1 (1024 GPUs) make 4 608 routes and 8 128 zoneRoutes, about 2.4 MB,
where one Full zone of all GPUs would need 523 776 routes. (A Floyd top zone with one route
per server to a switch zone would grow with the servers only, but SimGrid computes Floyd
and Dijkstra routes when the platform is sealed, which wulf's platform reader does not do:
it finds no route between the servers.)

The output is deterministic (the same options give the same bytes); its header and the
zone property wulf:generator record every option. Standard library only.
"""

import argparse
import os
import re
import shutil
import sys
import tempfile

PRESETS = {
    "dgx1-v100": {
        "name": "dgx1",
        "nodes": 8,
        "gpus_per_node": 8,
        "topology": "cube-mesh",
        "nics_per_node": 4,
        "nic_gbit": 100.0,
        "nic_lat_us": 0.5,
        "switch_lat_us": 0.1,
        "nvlink_gbyte": 25.0,
        "nvlink_lat_us": 1.0,
        "pcie_gbyte": 15.75,
        "pcie_lat_us": 0.5,
        "qpi_gbyte": 38.4,
        "no_nvlink_route": "nvb",
        "gpu_tflops": 15.7,
        "device": "V100-SXM2-16GB",
        "smpi_factors": "one",
    },
}
# Horovod's benchmark cluster: 4-GPU servers on one PCIe switch each, 25 GbE RoCE.
PRESETS["roce-4gpu"] = {**PRESETS["dgx1-v100"], "name": "roce", "nodes": 128, "gpus_per_node": 4,
                        "topology": "pcie", "nics_per_node": 1, "nic_gbit": 25.0, "nic_lat_us": 1.0,
                        "switch_lat_us": 0.5, "gpu_tflops": 9.3, "device": "P100-PCIe-16GB"}
# Goyal et al.'s cluster: Big Basin servers of 8 P100 (SXM2) "interconnected with NVIDIA NVLink",
# one ConnectX-4 50 Gbit Ethernet NIC each; 32 servers are their 256 GPUs.
PRESETS["bigbasin-p100"] = {**PRESETS["dgx1-v100"], "name": "bigbasin", "nodes": 32, "nics_per_node": 1,
                            "nic_gbit": 50.0, "nic_lat_us": 1.0, "switch_lat_us": 0.5, "nvlink_gbyte": 20.0,
                            "gpu_tflops": 10.6, "device": "P100-SXM2-16GB"}

# The commodity cluster: the RoCE cluster's servers on 10 GbE (a what-if, no source).
# MPI runs over TCP there, so its messages get the TCP payload share of each Ethernet frame.
PRESETS["eth10g-4gpu"] = {**PRESETS["roce-4gpu"], "name": "eth10g", "nodes": 8, "nic_gbit": 10.0, "nic_lat_us": 12.0,
                     "switch_lat_us": 1.0, "smpi_factors": "tcp"}

# NVIDIA DGX A100: 8 A100 SXM4 80GB, each with 12 third-generation NVLinks (25 GB/s each way)
# to the server's NVSwitches; 8 ConnectX-6 HDR (200 Gbit/s) NICs for compute, GPU g and NIC g on
# one PCIe Gen4 switch. Latencies as the DGX-1's (ASSUMPTIONS, platforms/gpu/README.md); the
# NVLink latency is half a DGX-1 NVLink's on each side of the NVSwitch.
PRESETS["dgx-a100"] = {**PRESETS["dgx1-v100"], "name": "dgxa100", "topology": "nvswitch", "nics_per_node": 8,
                       "nic_gbit": 200.0, "nvlink_lat_us": 0.5, "pcie_gbyte": 31.5, "gpu_tflops": 19.5,
                       "device": "A100-SXM4-80GB", "nvlinks_per_gpu": 12, "memory": 81920 * 1024 * 1024,
                       "gpu_tflops16": 312.0}
# NVIDIA DGX H100: 8 H100 SXM5 80GB, 18 fourth-generation NVLinks each (25 GB/s each way) to four
# NVSwitch chips; 8 ConnectX-7 NDR (400 Gbit/s) NICs for compute; PCIe Gen5.
PRESETS["dgx-h100"] = {**PRESETS["dgx-a100"], "name": "dgxh100", "nic_gbit": 400.0, "pcie_gbyte": 63.0,
                       "gpu_tflops": 67.0, "device": "H100-SXM5-80GB", "nvlinks_per_gpu": 18,
                       "memory": 81559 * 1024 * 1024, "gpu_tflops16": 989.4}

# TCP over Ethernet at an MTU of 1 500 bytes: the payload of a full frame (the MTU less the IPv4
# header, 20 bytes, and TCP's, 20, with the timestamps option Linux sends, 12) against what it
# takes on the wire (the MTU plus Ethernet's header, 14, FCS, 4, preamble, 8, and gap, 12).
TCP_PAYLOAD_BYTES = 1500 - 20 - 20 - 12
TCP_WIRE_BYTES = 1500 + 14 + 4 + 8 + 12
TCP_PAYLOAD_SHARE = TCP_PAYLOAD_BYTES / TCP_WIRE_BYTES

# The options in the order the header and wulf:generator record them: (key, type).
OPTIONS = [
    ("name", str), ("nodes", int), ("gpus_per_node", int), ("topology", str), ("nics_per_node", int),
    ("nic_gbit", float), ("nic_lat_us", float), ("switch_lat_us", float), ("nvlink_gbyte", float),
    ("nvlink_lat_us", float), ("pcie_gbyte", float), ("pcie_lat_us", float), ("qpi_gbyte", float),
    ("no_nvlink_route", str), ("gpu_tflops", float), ("device", str), ("smpi_factors", str),
]

# Options recorded only where the preset or the command gives them (after OPTIONS, in this
# order), so that the files of the presets without them keep their bytes: (key, type).
# nvlinks_per_gpu: topology nvswitch only; memory: the host property wulf:memory;
# gpu_tflops16: the host property wulf:speed16, the dense BF16/FP16 tensor rate.
EXTRA_OPTIONS = [("nvlinks_per_gpu", int), ("memory", int), ("gpu_tflops16", float)]
# wulf:memory's range (bytes): core/engine/launch.hpp's kMostDeviceMemory, 1 PiB.
MOST_MEMORY = 1 << 50

# What each number option may be (a value, the unit it is given in): a machine's, never inf
# or nan, and no finer than the file's 6 decimals show of it in the unit it is written in.
RANGES = {
    "nic_gbit": (1e-3, 1e6, "Gbit/s"),
    "nic_lat_us": (0, 1e6, "us"),
    "switch_lat_us": (0, 1e6, "us"),
    "nvlink_gbyte": (1e-3, 1e6, "GB/s"),
    "nvlink_lat_us": (0, 1e6, "us"),
    "pcie_gbyte": (1e-3, 1e6, "GB/s"),
    "pcie_lat_us": (0, 1e6, "us"),
    "qpi_gbyte": (1e-3, 1e6, "GB/s"),
    "gpu_tflops": (1e-6, 1e6, "TFLOP/s"),
}
# Those written in another unit than given: the factor and the unit (a NIC's Gbit/s as GB/s,
# half the switch's latency on each side, a GPU's TFLOP/s as Gflop/s).
SCALE_WRITTEN = {"nic_gbit": 1 / 8.0, "switch_lat_us": 0.5, "gpu_tflops": 1000.0}
WRITTEN_UNIT = {"nic_gbit": "GB/s", "switch_lat_us": "us (half of it each side)", "gpu_tflops": "Gflop/s"}

# The costs a wulf:ddp names (core/nn/framework_costs.hpp).
DDP_COSTS = ("copy", "copy_out", "scale", "tensor", "bucket", "iteration", "comm_cpu")
# The kinds of layer a wulf:efficiency names (core/nn/layer_table.hpp).
KINDS = ["conv", "linear", "norm", "embedding", "attention", "pool", "other"]

# NVIDIA DGX-1 with Tesla V100: NVLinks between each pair of GPUs, as `nvidia-smi topo -m`
# prints them on the machine (NV1: one link, NV2: two bonded links; absent: none).
DGX1_NVLINKS = {
    (0, 1): 1, (0, 2): 1, (0, 3): 2, (0, 4): 2,
    (1, 2): 2, (1, 3): 1, (1, 5): 2,
    (2, 3): 2, (2, 6): 1,
    (3, 7): 1,
    (4, 5): 1, (4, 6): 1, (4, 7): 2,
    (5, 6): 2, (5, 7): 1,
    (6, 7): 2,
}


def nvlinks(a):
    """The cube-mesh's NVLinks per GPU pair: V100 (6 links a GPU) doubles some pairs; P100
    (4 links a GPU: two fully connected quads, GPU g to g+4) has one link on each edge."""
    if a.preset == "bigbasin-p100":
        return {pair: 1 for pair in DGX1_NVLINKS}
    return DGX1_NVLINKS


def fmt(x):
    """Shortest exact-enough decimal for a number in an XML attribute."""
    s = ("%.6f" % x).rstrip("0").rstrip(".")
    return s if s else "0"


def gbps(gbyte):
    """GB/s (10^9 bytes/s) as SimGrid's unit."""
    return fmt(gbyte) + "GBps"


def us(x):
    return fmt(x) + "us"


def check_comment(text):
    # "--" is not allowed inside an XML comment (nor a trailing "-").
    if "--" in text or text.endswith("-"):
        raise SystemExit("internal error: generated comment would contain '--'")
    return text


def opt_name(key):
    return key.replace("_", "-")


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Write the SimGrid platform of a GPU cluster: one host (1 core) per GPU, one zone per "
                    "server, the servers on one non-blocking switch. A preset gives every number; any "
                    "option below changes one.")
    p.add_argument("--preset", required=True, choices=sorted(PRESETS),
                   help="the machine: dgx1-v100 (platforms/dgx1-v100.xml), roce-4gpu (platforms/roce-4gpu.xml), "
                        "eth10g-4gpu (platforms/eth10g-4gpu.xml), dgx-a100 (platforms/dgx-a100.xml), dgx-h100 "
                        "(platforms/dgx-h100.xml), bigbasin-p100 (no shipped file: Goyal et al.'s 32 Big Basin "
                        "servers, experiments/published)")
    p.add_argument("-o", "--output", required=True, help="output file ('-' for standard output)")
    p.add_argument("--name", help="prefix of every name in the file (dgx1, roce, eth10g, dgxa100, dgxh100)")
    p.add_argument("--nodes", type=int, help="servers (8, 128, 8, 8, 8)")
    p.add_argument("--gpus-per-node", type=int, help="GPUs per server (8, 4, 4, 8, 8); cube-mesh needs 8")
    p.add_argument("--topology", choices=["cube-mesh", "pcie", "nvswitch"],
                   help="inside a server: cube-mesh (DGX-1's NVLink hybrid cube-mesh, GPU pairs on 4 PCIe "
                        "switches, 2 per CPU), pcie (every GPU and NIC on one PCIe switch) or nvswitch (every GPU "
                        "one link of --nvlinks-per-gpu NVLinks to a non-blocking NVSwitch; GPU g and its NIC on "
                        "a PCIe switch)")
    p.add_argument("--nics-per-node", type=int,
                   help="NICs per server (4, 1, 1, 8, 8); pcie and nvswitch: GPU g uses NIC g*nics/gpus; cube-mesh: "
                        "1, 2 or 4, NIC k on PCIe switch k*4/nics, a GPU uses the nearest")
    p.add_argument("--nic-gbit", type=float, help="each NIC's rate in Gbit/s, each way (100, 25, 10, 200, 400)")
    p.add_argument("--nic-lat-us", type=float, help="latency of each NIC link in us (0.5, 1, 12)")
    p.add_argument("--switch-lat-us", type=float,
                   help="latency through the cluster's switch in us (0.1, 0.5, 1), half on the way in, half out")
    p.add_argument("--nvlink-gbyte", type=float, help="cube-mesh, nvswitch: one NVLink's rate in GB/s each way (25)")
    p.add_argument("--nvlink-lat-us", type=float,
                   help="cube-mesh: latency of a GPU pair's NVLink in us (1); nvswitch: of a GPU's link to the "
                        "NVSwitch (0.5; GPU to GPU crosses two)")
    p.add_argument("--nvlinks-per-gpu", type=int,
                   help="nvswitch: the NVLinks of a GPU to the NVSwitch, one link of this many times --nvlink-gbyte "
                        "(12 on A100, 18 on H100)")
    p.add_argument("--pcie-gbyte", type=float,
                   help="a PCIe x16 link's rate in GB/s each way (15.75, PCIe 3.0; 31.5, PCIe 4.0; 63, PCIe 5.0)")
    p.add_argument("--pcie-lat-us", type=float, help="latency of each PCIe link in us (0.5)")
    p.add_argument("--qpi-gbyte", type=float,
                   help="cube-mesh: the CPUs' QPI in GB/s each way (38.4), used by PCIe routes across the CPUs")
    p.add_argument("--no-nvlink-route", choices=["nvb", "pcie"],
                   help="cube-mesh: two GPUs without an NVLink between them talk through an intermediate GPU's "
                        "NVLinks (nvb, NCCL's PATH_NVB; default) or over PCIe and QPI (pcie)")
    p.add_argument("--gpu-tflops", type=float, help="each GPU's peak FP32 rate in TFLOP/s (15.7, 9.3, 9.3, 19.5, 67)")
    p.add_argument("--device", help="the GPU model, host property wulf:device (V100-SXM2-16GB, P100-PCIe-16GB, "
                                    "A100-SXM4-80GB, H100-SXM5-80GB)")
    p.add_argument("--memory", type=int,
                   help="host property wulf:memory, the bytes of each GPU's memory (dgx-a100 85899345920, dgx-h100 "
                        "85520809984: nvidia-smi's total; recorded only where given or the preset gives it)")
    p.add_argument("--gpu-tflops16", type=float,
                   help="host property wulf:speed16, each GPU's dense BF16/FP16 Tensor Core rate in TFLOP/s, at which "
                        "wulf train --precision bf16 charges the conv, linear and attention layers (dgx-a100 312, "
                        "dgx-h100 989.4; recorded only where given or the preset gives it)")
    p.add_argument("--efficiency",
                   help="host property wulf:efficiency, the share of the peak each kind of layer reaches, "
                        "e.g. other=0.45 or conv=0.5,linear=0.6,other=0.4 (kinds: " + ", ".join(KINDS) + "; "
                        "an unnamed kind takes other's, other defaults to 1); default: none set, the peak")
    p.add_argument("--ddp",
                   help="host property wulf:ddp, what PyTorch DDP costs on each GPU beside its compute "
                        "(--strategy overlap --framework ddp), e.g. copy=2.56e11,tensor=3.8e-6,bucket=8.4e-6 (names: "
                        + ", ".join(DDP_COSTS) + "; core/nn/framework_costs.hpp); default: none set")
    p.add_argument("--smpi-factors", choices=["one", "tcp", "simgrid"],
                   help="one: smpi/bw-factor and smpi/lat-factor set to 1, the file's numbers are what MPI sees "
                        "(dgx1-v100, roce-4gpu); tcp: smpi/bw-factor the share of a full Ethernet frame that is TCP "
                        "payload (%d of %d bytes at an MTU of 1 500), smpi/lat-factor 1: MPI over TCP on Ethernet "
                        "(eth10g-4gpu); simgrid: SimGrid's own factors (fitted to TCP over Gigabit Ethernet)"
                        % (TCP_PAYLOAD_BYTES, TCP_WIRE_BYTES))
    a = p.parse_args(argv)

    preset = PRESETS[a.preset]
    a.changed = []  # options set to another value than the preset's
    given = {key for key, kind in OPTIONS + EXTRA_OPTIONS if getattr(a, key) is not None}
    for key, kind in OPTIONS + EXTRA_OPTIONS:
        value = getattr(a, key)
        if value is None:
            setattr(a, key, preset.get(key))
        elif value != preset.get(key):
            a.changed.append(key)

    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.]*", a.name):
        p.error("--name must be a letter then letters, digits, '_' or '.' (no '-': names are joined by '-')")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", a.device) or "--" in a.device:
        p.error("--device must be letters, digits, '_', '.', '+' or single '-' (e.g. V100-SXM2-16GB)")
    if a.efficiency is not None:
        check_named_values(p, "--efficiency", a.efficiency, KINDS, "KIND=FRACTION with a KIND",
                           lambda v: 0 < v <= 1, "a fraction of the peak in (0, 1]")
    if a.ddp is not None:
        check_named_values(p, "--ddp", a.ddp, DDP_COSTS, "NAME=VALUE with a NAME",
                           lambda v: 0 <= v < float("inf"), "a number from 0")
    if a.nodes < 1 or a.nodes > 100000:
        p.error("--nodes must be between 1 and 100000")
    if a.gpus_per_node < 1 or a.gpus_per_node > 1024:
        p.error("--gpus-per-node must be between 1 and 1024")
    if a.topology == "cube-mesh":
        if a.gpus_per_node != 8:
            p.error("--topology cube-mesh (DGX-1) has 8 GPUs per node, not %d" % a.gpus_per_node)
        if a.nics_per_node not in (1, 2, 4):
            p.error("--topology cube-mesh takes 1, 2 or 4 NICs per node (one per PCIe switch at most)")
    elif a.nics_per_node < 1 or a.nics_per_node > a.gpus_per_node:
        p.error("--nics-per-node must be between 1 and the GPUs per node (%d)" % a.gpus_per_node)
    if a.topology == "nvswitch":
        if a.nvlinks_per_gpu is None:
            p.error("--topology nvswitch needs --nvlinks-per-gpu (the NVLinks of a GPU to the NVSwitch)")
        if not 1 <= a.nvlinks_per_gpu <= 1000:
            p.error("--nvlinks-per-gpu must be between 1 and 1000")
        if a.nvlinks_per_gpu * a.nvlink_gbyte > 1e6:
            p.error("--nvlinks-per-gpu %d x --nvlink-gbyte %s: above 10^6 GB/s"
                    % (a.nvlinks_per_gpu, fmt_given(a.nvlink_gbyte)))
    elif "nvlinks_per_gpu" in given:
        p.error("--nvlinks-per-gpu applies to --topology nvswitch only")
    else:
        a.nvlinks_per_gpu = None  # the preset's, for its NVSwitch: not this topology's
        if "nvlinks_per_gpu" in a.changed:
            a.changed.remove("nvlinks_per_gpu")
    if a.gpu_tflops16 is not None and not 1e-6 <= a.gpu_tflops16 <= 1e6:
        p.error("--gpu-tflops16 %g: expected a rate in TFLOP/s, from 1e-06 to 1e+06" % a.gpu_tflops16)
    if a.memory is not None and not 1 <= a.memory <= MOST_MEMORY:
        p.error("--memory %d: expected the bytes of a GPU's memory, from 1 to %d (1 PiB)" % (a.memory, MOST_MEMORY))
    for key, (lo, hi, unit) in RANGES.items():
        value = getattr(a, key)
        if not lo <= value <= hi:  # nan and inf too
            p.error("--%s %s: expected a number of %s from %g to %g" % (opt_name(key), fmt_given(value), unit, lo, hi))
        written = float(fmt(value * SCALE_WRITTEN.get(key, 1))) / SCALE_WRITTEN.get(key, 1)
        if abs(written - value) > 1e-6 * value:
            p.error("--%s %s: the file writes 6 decimals of %s, which would make it %s"
                    % (opt_name(key), fmt_given(value), WRITTEN_UNIT.get(key, unit), fmt_given(written)))
    check_output(p, a.output)
    return a


def check_named_values(p, option, text, names, form, ok, wanted):
    """A list NAME=VALUE,... (--efficiency, --ddp): each name one of names, once, each value
    a number ok() takes; else p.error naming the option, the item and what is wrong."""
    seen = set()
    for item in text.split(","):
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or name not in names:
            p.error("%s %r: %r is not %s of %s" % (option, text, item, form, ", ".join(names)))
        if name in seen:
            p.error("%s %r: %s is given twice" % (option, text, name))
        seen.add(name)
        try:
            v = float(value)
        except ValueError:
            v = float("nan")
        if not ok(v):
            p.error("%s %r: %s's %r is not %s" % (option, text, name, value, wanted))


def fmt_given(x):
    """A number as the user may have typed it, for a message."""
    return "%.10g" % x


def check_output(p, path):
    """-o: standard output, or a file whose folder exists and that is not a folder."""
    if path == "-":
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        p.error("-o %s: is a folder; name the file to write" % path)
    if not os.path.isdir(folder):
        p.error("-o %s: the folder %s does not exist" % (path, folder))
    if not os.access(folder, os.W_OK):
        p.error("-o %s: the folder %s cannot be written" % (path, folder))


def recorded_options(a):
    """Every option as key=value, in OPTIONS order: what the header and wulf:generator record.
    `generate.py --preset P --KEY VALUE ...` with these gives the same file."""
    parts = ["preset=" + a.preset]
    for key, kind in OPTIONS:
        value = getattr(a, key)
        parts.append("%s=%s" % (opt_name(key), fmt(value) if kind is float else value))
    for key, kind in EXTRA_OPTIONS:  # recorded only when set, so files without them keep their bytes
        if getattr(a, key) is not None:
            value = getattr(a, key)
            parts.append("%s=%s" % (opt_name(key), fmt(value) if kind is float else "%d" % value))
    if a.efficiency is not None:  # recorded only when given, so files without it keep their bytes
        parts.append("efficiency=" + a.efficiency.replace(" ", ""))
    if a.ddp is not None:  # the same
        parts.append("ddp=" + a.ddp.replace(" ", ""))
    return parts


class Node:
    """One server's routing: its links and the routes between its GPUs and to its gateway."""

    def __init__(self, a, n):
        self.a = a
        self.n = n
        self.p = "%s-%d" % (a.name, n)
        self.links = []  # (id, bandwidth, latency, policy)
        self.routes = []  # (src, dst, [(link, direction)])

    def gpu(self, g):
        return "%s-gpu%d" % (self.p, g)

    def gateway(self):
        return self.p + "-gw"


def nic_of_gpu(a, g):
    """The NIC GPU g sends through: pcie, g*K/G; cube-mesh, the one on its own PCIe switch,
    else the first on its CPU, else the first."""
    k = a.nics_per_node
    if a.topology in ("pcie", "nvswitch"):
        return g * k // a.gpus_per_node
    switches = [nic * 4 // k for nic in range(k)]  # NIC -> PCIe switch
    own = g // 2
    for nic, s in enumerate(switches):
        if s == own:
            return nic
    for nic, s in enumerate(switches):
        if s // 2 == own // 2:
            return nic
    return 0


def node_rings(a):
    """The rings of --allreduce rings in a server: one per NIC, each the server's GPUs in an
    order that enters and leaves the server through that NIC (its first and last GPU send
    through it), as NCCL's channels do (src/graph/search.cc: a ring per NIC, NET -> GPUs ->
    NET). cube-mesh: every hop a direct NVLink; each NIC's ring the one that adds least to the
    busiest NVLink direction (rings using it over its links), then to the sum of them, then
    the first in lexicographic order; rings cross from server to server in the same order, so
    each NVLink direction of a server carries its rings' share of the data. pcie: one ring,
    the GPUs in index order (the PCIe switch joins them all). nvswitch: one ring per NIC, the
    GPUs in index order from NIC k's first GPU round to the GPU before it, so that ring k
    enters a server through NIC k and leaves it through NIC k - 1 (the NIC of its last GPU):
    every NIC direction carries one ring, and every GPU's link to the NVSwitch the rings
    that pass it (the NVSwitch joins any two GPUs)."""
    G = a.gpus_per_node
    if a.topology == "nvswitch":
        rings = []
        for k in range(a.nics_per_node):
            first = min(g for g in range(G) if nic_of_gpu(a, g) == k)
            rings.append([(first + i) % G for i in range(G)])
        return rings
    if a.topology != "cube-mesh":
        return [list(range(G))]
    links = nvlinks(a)

    def width(x, y):
        return links.get((min(x, y), max(x, y)), 0)

    def paths(first, ends):
        """Every order of the 8 GPUs from `first` to a GPU of `ends` over direct NVLinks."""
        found = []

        def walk(path, seen):
            if len(path) == 8:
                if path[-1] in ends:
                    found.append(list(path))
                return
            for y in range(8):
                if y not in seen and width(path[-1], y):
                    path.append(y)
                    seen.add(y)
                    walk(path, seen)
                    seen.discard(y)
                    path.pop()

        walk([first], {first})
        return found

    load = {}  # (x, y): rings on the NVLink from x to y, over its links
    rings = []
    for k in range(a.nics_per_node):
        mine = [g for g in range(G) if nic_of_gpu(a, g) == k]
        if len(mine) < 2:
            raise AssertionError("NIC %d serves fewer than 2 GPUs: no ring enters and leaves by it" % k)
        best = None
        for first in mine:
            for ring in paths(first, set(mine) - {first}):
                after = dict(load)
                for x, y in zip(ring, ring[1:]):
                    after[(x, y)] = after.get((x, y), 0) + 1.0 / width(x, y)
                key = (max(after.values()), sum(after.values()), ring)
                if best is None or key < best[0]:
                    best = (key, ring, after)
        rings.append(best[1])
        load = best[2]
    return rings


def nvb_via(a, x, y):
    """The intermediate GPU of a pair without an NVLink: the common neighbour whose two links
    have the widest narrower one (NCCL's path search keeps the widest), lowest index on a tie."""
    best = None
    for c in range(8):
        l1 = nvlinks(a).get((min(x, c), max(x, c)))
        l2 = nvlinks(a).get((min(c, y), max(c, y)))
        if c in (x, y) or not l1 or not l2:
            continue
        width = min(l1, l2)
        if best is None or width > best[1]:
            best = (c, width)
    if best is None:
        raise AssertionError("no intermediate GPU between %d and %d" % (x, y))
    return best


def build_node(a, n):
    node = Node(a, n)
    p = node.p
    split = "SPLITDUPLEX"
    G = a.gpus_per_node
    nic_bw = gbps(a.nic_gbit / 8.0)

    def pcie(g):
        return "%s-pcie-%d" % (p, g)

    def nic(k):
        return "%s-nic-%d" % (p, k)

    for g in range(G):
        node.links.append((pcie(g), gbps(a.pcie_gbyte), us(a.pcie_lat_us), split))
    for k in range(a.nics_per_node):
        node.links.append((nic(k), nic_bw, us(a.nic_lat_us), split))

    if a.topology == "pcie":
        for x in range(G):
            for y in range(x + 1, G):
                node.routes.append((node.gpu(x), node.gpu(y), [(pcie(x), "UP"), (pcie(y), "DOWN")]))
        for g in range(G):
            node.routes.append((node.gpu(g), node.gateway(), [(pcie(g), "UP"), (nic(nic_of_gpu(a, g)), "UP")]))
        return node

    if a.topology == "nvswitch":
        # Every GPU one link to the NVSwitch (its NVLinks bonded: nvlinks_per_gpu x nvlink_gbyte),
        # the NVSwitch a point (non-blocking); GPU to GPU up one link, down the other's.
        def nvs(g):
            return "%s-nvl-%d" % (p, g)

        for g in range(G):
            node.links.append((nvs(g), gbps(a.nvlinks_per_gpu * a.nvlink_gbyte), us(a.nvlink_lat_us), split))
        for x in range(G):
            for y in range(x + 1, G):
                node.routes.append((node.gpu(x), node.gpu(y), [(nvs(x), "UP"), (nvs(y), "DOWN")]))
        for g in range(G):
            node.routes.append((node.gpu(g), node.gateway(), [(pcie(g), "UP"), (nic(nic_of_gpu(a, g)), "UP")]))
        return node

    # cube-mesh (DGX-1): NVLinks, PCIe switch s = g // 2, CPU c = g // 4.
    def nvl(x, y):
        return "%s-nvl-%d-%d" % (p, min(x, y), max(x, y))

    def nvl_hop(x, y):
        return (nvl(x, y), "UP" if x < y else "DOWN")

    def sw(s):
        return "%s-pcie-sw-%d" % (p, s)

    qpi = p + "-qpi"
    for (x, y), count in sorted(nvlinks(a).items()):
        node.links.append((nvl(x, y), gbps(count * a.nvlink_gbyte), us(a.nvlink_lat_us), split))
    nic_switch = [k * 4 // a.nics_per_node for k in range(a.nics_per_node)]
    uses_tree = a.no_nvlink_route == "pcie" or any(nic_switch[nic_of_gpu(a, g)] != g // 2 for g in range(G))
    uses_qpi = a.no_nvlink_route == "pcie" or any(nic_switch[nic_of_gpu(a, g)] // 2 != g // 4 for g in range(G))
    if uses_tree:
        for s in range(4):
            node.links.append((sw(s), gbps(a.pcie_gbyte), us(a.pcie_lat_us), split))
    if uses_qpi:
        node.links.append((qpi, gbps(a.qpi_gbyte), "0us", split))

    def tree(s1, s2):
        """Links from PCIe switch s1 up to its CPU and down to PCIe switch s2 (none if s1 == s2)."""
        if s1 == s2:
            return []
        hops = [(sw(s1), "UP")]
        if s1 // 2 != s2 // 2:
            hops.append((qpi, "UP" if s1 // 2 < s2 // 2 else "DOWN"))
        return hops + [(sw(s2), "DOWN")]

    for x in range(G):
        for y in range(x + 1, G):
            if (x, y) in nvlinks(a):
                hops = [nvl_hop(x, y)]
            elif a.no_nvlink_route == "nvb":
                c, _ = nvb_via(a, x, y)
                hops = [nvl_hop(x, c), nvl_hop(c, y)]
            else:
                hops = [(pcie(x), "UP")] + tree(x // 2, y // 2) + [(pcie(y), "DOWN")]
            node.routes.append((node.gpu(x), node.gpu(y), hops))
    for g in range(G):
        k = nic_of_gpu(a, g)
        hops = [(pcie(g), "UP")] + tree(g // 2, nic_switch[k]) + [(nic(k), "UP")]
        node.routes.append((node.gpu(g), node.gateway(), hops))
    return node


SOURCES = {
    "dgx1-v100": "NVIDIA DGX-1 with Tesla V100 (whitepaper WP-08437-002: 8 x V100 SXM2, NVLink 2.0 hybrid "
                 "cube-mesh, 25 GB/s per link each way, 4 x 100 Gbit/s EDR InfiniBand); V100 datasheet 15.7 "
                 "TFLOP/s FP32; nvidia-smi topo -m of a DGX-1 V100 (NVLinks per pair, NIC per GPU pair); "
                 "latencies and the IB fabric assumed",
    "roce-4gpu": "Horovod benchmark cluster (Sergeev and Del Balso, arXiv:1802.05799; Horovod docs: 128 servers "
                 "with 4 Pascal GPUs each, RoCE-capable 25 Gbit/s network); GPU assumed P100 PCIe (P100 datasheet "
                 "9.3 TFLOP/s FP32); PCIe layout, switch and latencies assumed",
    "bigbasin-p100": "Facebook Big Basin servers as in Goyal et al. (arXiv:1706.02677, section 4.3: 8 Tesla P100 "
                     "interconnected with NVLink, ConnectX-4 50 Gbit Ethernet, Wedge100 switches); P100 SXM2 10.6 "
                     "TFLOP/s FP32, 4 NVLinks of 20 GB/s each way (NVIDIA Pascal whitepaper WP-08019-001); the "
                     "DGX-1 cube-mesh, PCIe layout, NIC place, fabric and latencies assumed",
    "eth10g-4gpu": "commodity cluster (not from a paper): 8 servers of 4 P100 PCIe GPUs (P100 datasheet 9.3 "
                   "TFLOP/s FP32), one 10 GbE NIC each, one non-blocking 10 GbE switch; layout and latencies "
                   "assumed",
    "dgx-a100": "NVIDIA DGX A100 (whitepaper WP-10083-001, DGX A100 User Guide: 8 x A100 SXM4 80GB on "
                "NVSwitch, 12 third-generation NVLinks of 25 GB/s each way per GPU, 8 x 200 Gbit/s HDR "
                "InfiniBand ConnectX-6, GPU and NIC on a PCIe Gen4 switch); A100 datasheet 19.5 TFLOP/s FP32; "
                "nvidia-smi 81920 MiB; latencies, the NVSwitch as a non-blocking point and the IB fabric "
                "assumed",
    "dgx-h100": "NVIDIA DGX H100 (DGX H100 User Guide, DGX SuperPOD reference architecture: 8 x H100 SXM5 80GB "
                "on four NVSwitch chips, 18 fourth-generation NVLinks of 25 GB/s each way per GPU, 8 x 400 "
                "Gbit/s NDR InfiniBand ConnectX-7, PCIe Gen5); H100 datasheet 67 TFLOP/s FP32; nvidia-smi "
                "81559 MiB; latencies, the NVSwitch as a non-blocking point (no NVLink SHARP) and the IB "
                "fabric assumed",
}


# The PCI Express generation of each preset's GPU and NIC links (the header's words only).
PCIE_GEN = {"dgx-a100": "4.0", "dgx-h100": "5.0"}


def pcie_gen(a):
    return PCIE_GEN.get(a.preset, "3.0")


def header(a, n_links, n_routes):
    """The comment that opens the file: topology, sources, numbers and assumptions."""
    L = []
    w = L.append
    G = a.gpus_per_node
    N = a.nodes
    name = a.name
    changed = set(a.changed)

    def mark(*keys):
        """' (CHANGED from the preset)' when any of keys was set by an option."""
        return " (CHANGED from the preset: not the source's number)" if changed & set(keys) else ""

    titles = {
        "dgx1-v100": "%s: %d NVIDIA DGX-1 servers with Tesla V100 (%d GPUs) on one EDR InfiniBand switch",
        "roce-4gpu": "%s: %d servers of 4 Pascal GPUs on 25 Gbit/s RoCE (%d GPUs), Horovod's benchmark cluster",
        "bigbasin-p100": "%s: %d Facebook Big Basin servers of 8 Tesla P100 (%d GPUs) on 50 Gbit/s Ethernet",
        "eth10g-4gpu": "%s: a commodity cluster, %d servers of 4 GPUs on 10 Gbit/s Ethernet (%d GPUs)",
        "dgx-a100": "%s: %d NVIDIA DGX A100 servers (%d A100 SXM4 80GB GPUs) on one HDR InfiniBand fabric",
        "dgx-h100": "%s: %d NVIDIA DGX H100 servers (%d H100 SXM5 80GB GPUs) on one NDR InfiniBand fabric",
    }
    w("  " + titles[a.preset] % (name, N, N * G))
    w("")
    w("  GENERATED by platforms/gpu/generate.py (platforms/gpu/README.md); do not edit by hand.")
    w("  Options (each is generate.py's option of that name; the same options give the same bytes):")
    opts = recorded_options(a)
    line = "   "
    for part in opts:
        if len(line) + len(part) + 1 > 92:
            w(line)
            line = "   "
        line += " " + part
    w(line)
    if a.topology == "pcie":
        w("  (nvlink-gbyte, nvlink-lat-us, qpi-gbyte and no-nvlink-route apply to topology=cube-mesh only.)")
    if a.topology == "nvswitch":
        w("  (qpi-gbyte and no-nvlink-route apply to topology=cube-mesh only.)")
    if a.changed:
        w("  Options changed from the preset %s: %s." % (a.preset, ", ".join(opt_name(k) for k in a.changed)))
    w("  %d GPUs (hosts of 1 core, one rank each), %d links (%d in SimGrid, which makes two of each"
      % (N * G, n_links, 2 * n_links - N))
    w("  SPLITDUPLEX one), %d routes inside the servers," % n_routes)
    w("  %d zoneRoutes (one per pair of servers)." % (N * (N - 1) // 2))
    w("")
    nic_bw = gbps(a.nic_gbit / 8.0)
    if a.topology == "cube-mesh":
        w("  One server (zone %s-n, n = 0..%d; GPU g is host %s-n-gpu<g>):" % (name, N - 1, name))
        w("")
        if a.preset == "bigbasin-p100":
            w("    NVLinks between GPU pairs (one NVLink 1.0 link %s each way; '.': no NVLink):"
              % gbps(a.nvlink_gbyte))
        else:
            w("    NVLinks between GPU pairs (one link %s each way; NV2: a bonded pair of links,"
              % gbps(a.nvlink_gbyte))
            w("    modelled as ONE link of %s; '.': no NVLink):" % gbps(2 * a.nvlink_gbyte))
        w("")
        w("          " + "".join("%6s" % ("gpu%d" % y) for y in range(8)))
        for x in range(8):
            cells = []
            for y in range(8):
                c = nvlinks(a).get((min(x, y), max(x, y)))
                cells.append("%6s" % ("X" if x == y else "NV%d" % c if c else "."))
            w("      gpu%d" % x + "".join(cells))
        w("")
        w("    PCIe and %s (%s-n-pcie-g: GPU g's PCIe 3.0 x16 link; %s-n-nic-k: NIC k):"
          % ("Ethernet" if a.preset == "bigbasin-p100" else "InfiniBand", name, name))
        w("")
        w("      gpu0  gpu1   gpu2  gpu3   gpu4  gpu5   gpu6  gpu7     pcie-g: %s each way, %s"
          % (gbps(a.pcie_gbyte), us(a.pcie_lat_us)))
        w("         \\  /         \\  /         \\  /         \\  /")
        w("        [sw 0]       [sw 1]       [sw 2]       [sw 3]       PCIe switches (points, no links)")
        nic_line = ""
        for k in range(a.nics_per_node):
            nic_line = nic_line.ljust(8 + 13 * (k * 4 // a.nics_per_node)) + "nic %d" % k
        w(nic_line.ljust(60) + "nic-k: %s each way, %s" % (nic_bw, us(a.nic_lat_us)))
        w("          \\____________\\_______ _______/____________/")
        w("                               |")
        w("                         %s-n-gw                          the server's gateway (a router)" % name)
        if a.no_nvlink_route == "pcie" or a.nics_per_node != 4:
            w("")
            w("    Between PCIe switches (no-nvlink-route=pcie, or a NIC on another switch than the GPU's):")
            w("")
            w("        [sw 0]  [sw 1]            [sw 2]  [sw 3]   pcie-sw-s: switch s to its CPU, %s, %s"
              % (gbps(a.pcie_gbyte), us(a.pcie_lat_us)))
            w("           \\      /                  \\      /")
            w("           [CPU 0] ====== qpi ====== [CPU 1]       qpi: %s each way, 0 us" % gbps(a.qpi_gbyte))
    elif a.topology == "nvswitch":
        w("  One server (zone %s-n, n = 0..%d; GPU g is host %s-n-gpu<g>):" % (name, N - 1, name))
        w("")
        shown = list(range(G)) if G <= 8 else [0, 1, None, G - 1]
        span = 8 * (len(shown) - 1) + 1  # from the first column's bar to the last's

        def row(cell):
            return ("    " + "".join("%-8s" % ("..." if g is None else cell(g)) for g in shown)).rstrip()

        bars = ("    " + "".join("%-8s" % ("" if g is None else "  |") for g in shown)).rstrip()
        w(("      " + "[NVSwitch]".center(span)).rstrip())
        w("      " + "_" * span)
        w(bars)
        w(row(lambda g: "gpu%d" % g))
        w(bars)
        w("    [PCIe switches%s]" % (": GPU g and its NIC on one" if a.nics_per_node == G else ""))
        w(bars)
        if a.nics_per_node == G:
            w(row(lambda g: "nic%d" % g))
        else:
            w(("      " + ("nic 0..%d (GPU g uses NIC g x nics / gpus)" % (a.nics_per_node - 1)).center(span)).rstrip())
        w(bars)
        w("      " + "_" * span)
        w(("      " + "|".center(span)).rstrip())
        w(("      " + ("%s-n-gw" % name).center(span)).rstrip())
        w("")
        w("    nvl-g: GPU g's %d NVLinks as ONE link to the NVSwitch, %s each way, %s"
          % (a.nvlinks_per_gpu, gbps(a.nvlinks_per_gpu * a.nvlink_gbyte), us(a.nvlink_lat_us)))
        w("    pcie-g: GPU g's PCIe %s x16 link, %s each way, %s"
          % (pcie_gen(a), gbps(a.pcie_gbyte), us(a.pcie_lat_us)))
        w("    nic-k: NIC k, %s each way, %s" % (nic_bw, us(a.nic_lat_us)))
        w("    The NVSwitch chips are one point (non-blocking), the PCIe switches points (no links);")
        w("    %s-n-gw is the server's gateway (a router)." % name)
    else:
        w("  One server (zone %s-n, n = 0..%d; GPU g is host %s-n-gpu<g>):" % (name, N - 1, name))
        w("")
        shown = ["gpu%d" % g for g in range(G)] if G <= 8 else ["gpu0", "gpu1", "...", "gpu%d" % (G - 1)]
        w(("      " + "   ".join(shown)).ljust(40) + "pcie-g: GPU g's PCIe 3.0 x16 link,")
        w(("        " + "______".join("|" for _ in shown)).ljust(40)
          + "%s each way, %s" % (gbps(a.pcie_gbyte), us(a.pcie_lat_us)))
        w("             [PCIe switch]")
        w("                   |")
        w(("                 nic %s" % ("0" if a.nics_per_node == 1 else "0..%d" % (a.nics_per_node - 1))).ljust(40)
          + "nic-k: %s each way, %s" % (nic_bw, us(a.nic_lat_us)))
        w("                   |")
        w(("              %s-n-gw" % name).ljust(40) + "the server's gateway (a router)")
    w("")
    w("  The cluster (top zone %s, routing Full):" % name)
    w("")
    if N <= 3:
        servers = ["%s-%d" % (name, n) for n in range(N)]
    else:
        servers = ["%s-0" % name, "%s-1" % name, "...", "%s-%d" % (name, N - 1)]
    w(("      " + "    ".join(servers)).ljust(50) + " " * (len("      " + "    ".join(servers)) >= 50)
      + "server zones, gateways %s-n-gw" % name)
    w("         \\        |               /")
    w("      ==== %s-n-port, one per server ====" % name)
    w("         one non-blocking switch, as a FATPIPE link per server (its port): a flow gets %s" % nic_bw)
    w("         however many share a port, %s through the switch, half at each port. Server i to" % us(a.switch_lat_us))
    w("         server j: one zoneRoute from gateway to gateway holding port i, then port j. (One")
    w("         FATPIPE link for the whole switch gives the same times, but SimGrid solves the")
    w("         flows of all servers together on it: 2.4 times the CPU at 256 GPUs.)")
    w("")
    w("  Routes:")
    if a.topology == "cube-mesh":
        w("  - GPU x to GPU y in one server, with an NVLink between them: that link (nvl-x-y).")
        if a.no_nvlink_route == "nvb":
            w("  - GPU x to GPU y without one (ASSUMPTION, what NCCL does): through an intermediate GPU's")
            w("    NVLinks, NCCL's PATH_NVB (src/graph/paths.cc, on by default, NCCL_NVB_DISABLE=0):")
            pairs = []
            for x in range(8):
                for y in range(x + 1, 8):
                    if (x, y) not in nvlinks(a):
                        c, width = nvb_via(a, x, y)
                        pairs.append("%d>%d via %d (%s)" % (x, y, c, gbps(width * a.nvlink_gbyte)))
            for k in range(0, len(pairs), 4):
                w("      " + ", ".join(pairs[k:k + 4]) + ("," if k + 4 < len(pairs) else ""))
            w("    The intermediate is the common neighbour whose narrower link is the widest (lowest")
            w("    index on a tie), as NCCL's path search keeps the widest path. Every such pair is on")
            w("    two CPUs, so the other way is PCIe and QPI (NCCL's SYS), slower than either link.")
        else:
            w("  - GPU x to GPU y without one (ASSUMPTION, no-nvlink-route=pcie): PCIe up to the CPU,")
            w("    QPI, PCIe down: pcie-x, pcie-sw-s(x), qpi, pcie-sw-s(y), pcie-y (nvidia-smi's SYS).")
        w("  - GPU g to another server: pcie-g, nic-k of g's PCIe switch (GPUs 2k and 2k+1 share NIC k),")
        w("    its server's port and the other's, the other server's nic and pcie links.")
    elif a.topology == "nvswitch":
        w("  - GPU x to GPU y in one server: nvl-x up to the NVSwitch, nvl-y down (two links' latency).")
        w("  - GPU g to another server: pcie-g, nic-k (k = g x nics / gpus%s),"
          % (": its own NIC g" if a.nics_per_node == G else ""))
        w("    its server's port and the other's, the other server's nic and pcie links.")
    else:
        w("  - GPU x to GPU y in one server: pcie-x up, pcie-y down (through the PCIe switch).")
        w("  - GPU g to another server: pcie-g, nic-k (k = g x nics / gpus), its server's port and the")
        w("    other's, the other server's nic and pcie links.")
    w("  Links are SPLITDUPLEX (full duplex): UP is from the lower-numbered GPU to the higher, or")
    w("  from the GPU towards the switch; routes are symmetrical (SimGrid swaps UP and DOWN back).")
    w("")
    w("  Sources (full citations in platforms/gpu/README.md):")
    if a.preset == "bigbasin-p100":
        w("  - Goyal et al., \"Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour\",")
        w("    arXiv:1706.02677 (v2, 2018), section 4.3: Big Basin servers; \"Each server contains 8")
        w("    NVIDIA Tesla P100 GPUs that are interconnected with NVIDIA NVLink\"; a Mellanox ConnectX-4")
        w("    50Gbit Ethernet network card; Wedge100 Ethernet switches.")
        w("  - NVIDIA Tesla P100 whitepaper WP-08019-001 (GP100 Pascal): four NVLinks per GPU, 160 GB/s")
        w("    bidirectional in all (20 GB/s each way per link); 10.6 TFLOP/s FP32 for the SXM2 module.")
        w("  - The cube-mesh of the first DGX-1 (P100): two fully connected quads of 4 GPUs, GPU g")
        w("    linked to g+4; the V100 DGX-1's pairs (dgx1-v100.xml) with one link each.")
    elif a.preset == "dgx1-v100":
        w("  - NVIDIA, \"NVIDIA DGX-1 With Tesla V100 System Architecture\", white paper WP-08437-002:")
        w("    8 Tesla V100 in a hybrid cube-mesh; each V100 has six NVLinks, \"each providing a")
        w("    point-to-point connection to another GPU at a peak bandwidth of 25 GB/s in each")
        w("    direction. Multiple NVLink connections can be aggregated\"; \"all twelve edges connected")
        w("    through NVLink (some edges have two NVLink connections), and with two of the six faces")
        w("    having their diagonals connected\"; V100's 16 PCIe 3.0 lanes connect CPUs, GPUs and the")
        w("    \"four 100 Gb InfiniBand network interface cards\".")
        w("  - Which pairs have one or two NVLinks: nvidia-smi topo -m on a DGX-1 with V100, as printed")
        w("    in Microway's \"nvidia-smi: Control Your GPUs\" and in microsoft/msccl-tools")
        w("    tests/test_topologies.py (the matrix above; GPU0: NV1 to 1 and 2, NV2 to 3 and 4, none")
        w("    to 5, 6, 7). The same output puts mlx5_0 on GPU0/1's PCIe switch (PIX), mlx5_1 on 2/3,")
        w("    mlx5_2 on 4/5, mlx5_3 on 6/7, and GPUs 0..3 on CPU 0, 4..7 on CPU 1.")
        w("  - NVIDIA DGX best practices, \"DGX-1 Networking\": \"four EDR InfiniBand cards (100 Gb/s")
        w("    each)\"; \"every two GPUs are connected to a single PCIe switch ... The switch also")
        w("    connects to an InfiniBand (IB) network card\"; QPI \"is a very slow link for GPU traffic\".")
        w("  - NVIDIA Tesla V100 datasheet: V100 SXM2 (NVLink), 15.7 TFLOP/s single precision.")
        w("  - NCCL (github.com/NVIDIA/nccl) src/graph/paths.cc finds PATH_NVB paths, \"Connection")
        w("    through NVLink using an intermediate GPU\" (src/include/graph.h), unless NCCL_NVB_DISABLE=1.")
    elif a.preset == "dgx-a100":
        w("  - NVIDIA, \"NVIDIA DGX A100 System Architecture\", white paper WP-10083-001, and the")
        w("    \"NVIDIA DGX A100 User Guide\" (DU-09821-001): 8 A100 SXM4 GPUs joined by six NVSwitches,")
        w("    each GPU 12 third-generation NVLinks (600 GB/s bidirectional per GPU); 8 single-port")
        w("    ConnectX-6 200 Gb/s HDR InfiniBand NICs for the compute fabric, each GPU and its NIC on")
        w("    one PCIe Gen4 switch (two GPUs and two compute NICs a switch).")
        w("  - NCCL's maintainer (S. Jeaugey) in NVIDIA/nccl-tests issue #149: on A100 \"Each NVLink")
        w("    has a line rate of 25GB/s (in each direction)\", 12 of them a GPU.")
        w("  - NVIDIA A100 Tensor Core GPU datasheet: A100 80GB SXM, FP32 19.5 TFLOP/s; BF16/FP16")
        w("    Tensor Core 312 TFLOP/s dense (624 with sparsity); 80GB HBM2e, 2 039 GB/s.")
        w("  - nvidia-smi's total memory of an A100-SXM4-80GB: 81920MiB (modal-labs/modal-client")
        w("    pull request #2797 lists it; nvidia-smi outputs in many issues show it).")
        w("  - PCI Express 4.0: 16 GT/s per lane, 128b/130b coding: x16 = 31.5 GB/s each way.")
    elif a.preset == "dgx-h100":
        w("  - NVIDIA DGX H100 User Guide and the NVIDIA DGX SuperPOD reference architecture (DGX")
        w("    H100): 8 H100 SXM5 GPUs joined by four NVSwitch chips (fourth-generation NVLink,")
        w("    18 links a GPU, 900 GB/s bidirectional per GPU); 8 ConnectX-7 400 Gb/s NDR InfiniBand")
        w("    NICs for the compute fabric, one per GPU; PCIe Gen5.")
        w("  - NCCL's maintainer (S. Jeaugey) in NVIDIA/nccl-tests issue #212: on H100 \"450GB/s is")
        w("    the line rate\" of a GPU's NVLinks (each way); nvidia-smi topo -m shows NV18 between")
        w("    every pair of an 8-GPU H100 server (NVIDIA/nccl-tests issue #232).")
        w("  - NVIDIA H100 Tensor Core GPU datasheet: H100 SXM, FP32 67 TFLOP/s; BF16 Tensor Core")
        w("    1 979 TFLOP/s with sparsity, 989 dense; 80GB HBM3, 3.35 TB/s.")
        w("  - nvidia-smi's total memory of an H100 80GB HBM3: 81559MiB (modal-labs/modal-client")
        w("    pull request #2797 lists it; nvidia-smi outputs in many issues show it).")
        w("  - PCI Express 5.0: 32 GT/s per lane, 128b/130b coding: x16 = 63 GB/s each way.")
    else:
        if a.preset == "roce-4gpu":
            w("  - Sergeev and Del Balso, \"Horovod: fast and easy distributed deep learning in")
            w("    TensorFlow\", arXiv:1802.05799 (2018), section \"Horovod Benchmarks\"; Horovod's docs")
            w("    (docs/benchmarks.rst, README): \"The above benchmark was done on 128 servers with 4")
            w("    Pascal GPUs each connected by a RoCE-capable 25 Gbit/s network\".")
        else:
            w("  - No paper: a commodity cluster of the same servers as roce-4gpu.xml on plain 10 GbE")
            w("    (IEEE 802.3ae, 10 Gbit/s each way), the what-if beside the RDMA platforms.")
        w("  - NVIDIA Tesla P100 datasheet: P100 for PCIe, 9.3 TFLOP/s single precision (P100 for")
        w("    NVLink servers, SXM2: 10.6).")
        w("  - PCI Express 3.0: 8 GT/s per lane, 128b/130b coding: x16 = 15.75 GB/s each way.")
    w("")
    w("  Numbers and what had to be assumed:")
    w("  - speed=%sGf, core=1 per GPU host: the GPU's PEAK FP32 rate (%s TFLOP/s, no tensor cores)%s."
      % (fmt(a.gpu_tflops * 1000), fmt(a.gpu_tflops), mark("gpu_tflops")))
    w("    Host properties: wulf:device=%s, wulf:node = the server's index." % a.device + mark("device"))
    if a.memory is not None:
        gib = a.memory / float(1 << 30)
        w("    wulf:memory=%d bytes (%d MiB, %s GiB), each GPU's memory%s" % (a.memory, a.memory >> 20, fmt(gib),
                                                                            "." if mark("memory") else ":"))
        if mark("memory"):
            w("   " + mark("memory") + ".")
        if a.preset in ("dgx-a100", "dgx-h100") and "memory" not in changed:
            w("    the total nvidia-smi reports for this GPU, in MiB of 2^20 bytes (the datasheet says")
            w("    \"80GB\"). A process gets less: its CUDA context and the framework's own take some.")
    if a.gpu_tflops16 is not None:
        w("    wulf:speed16=%s flop/s: the dense BF16/FP16 Tensor Core rate (%s TFLOP/s%s), at which"
          % (fmt(a.gpu_tflops16 * 1e12), fmt(a.gpu_tflops16),
             ", datasheet" if a.preset in ("dgx-a100", "dgx-h100") and "gpu_tflops16" not in changed else "")
          + mark("gpu_tflops16"))
        w("    wulf train's 16-bit precisions (bf16, fp16) charge the conv, linear and attention")
        w("    layers; the host speed stays the FP32 peak.")
    rings = node_rings(a)
    w("    wulf:rings = the GPU's place in each ring of the rings allreduce (the server's GPUs in")
    w("    order, the rings crossing from server to server in that order):")
    for k, ring in enumerate(rings):
        if a.topology == "nvswitch" and len(rings) > 1:
            w("      ring %d: %s, in through nic %d, out through nic %d"
              % (k, " ".join("gpu%d" % g for g in ring), nic_of_gpu(a, ring[0]), nic_of_gpu(a, ring[-1])))
            continue
        w("      ring %d: %s%s" % (k, " ".join("gpu%d" % g for g in ring),
                                  "" if len(rings) == 1 and a.topology != "cube-mesh"
                                  else ", in and out through nic %d" % k))
    if a.topology == "nvswitch" and len(rings) > 1:
        w("    As NCCL's channels (a ring per NIC): each NIC direction carries one ring's data, each")
        w("    GPU's link to the NVSwitch the rings that pass through it.")
    if a.topology == "cube-mesh":
        w("    As NCCL's channels (src/graph/search.cc: a ring per NIC, NET -> GPUs -> NET): each")
        w("    ring enters and leaves the server by its NIC's GPUs over direct NVLinks, found by")
        w("    platforms/gpu/generate.py's node_rings (fewest rings on the busiest NVLink direction).")
    if a.efficiency is None:
        w("    No wulf:efficiency is set: what share of the peak a net reaches is not assumed here.")
    else:
        w("    wulf:efficiency=%s (GIVEN, option efficiency: the share of the peak each kind of layer" % a.efficiency)
        w("    reaches; not a number of the sources above).")
    if a.ddp is not None:
        w("    wulf:ddp=%s (GIVEN, option ddp: what PyTorch DDP costs on a GPU beside its compute," % a.ddp.replace(" ", ""))
        w("    which overlap's framework ddp charges; the caller sources it).")
    if a.preset == "bigbasin-p100":
        w("  - Inside a server: ASSUMPTION, the first DGX-1's layout (Goyal et al. say only \"NVLink\"):")
        w("    the cube-mesh above, GPU pairs on 4 PCIe switches, 2 per CPU, as dgx1-v100.xml. The one")
        w("    NIC: ASSUMPTION, on PCIe switch 0; GPUs on other switches reach it over PCIe (and QPI).")
    if a.topology == "nvswitch":
        w("  - NVLink: %s each way per link; a GPU's %d NVLinks to the NVSwitches are ONE link"
          % (gbps(a.nvlink_gbyte), a.nvlinks_per_gpu))
        w("    of %s each way (NCCL and CUDA stripe a transfer over them; a SimGrid route is"
          % gbps(a.nvlinks_per_gpu * a.nvlink_gbyte))
        w("    one path).")
        if mark("nvlink_gbyte", "nvlinks_per_gpu", "topology"):
            w("   " + mark("nvlink_gbyte", "nvlinks_per_gpu", "topology") + ".")
        w("    The NVSwitch chips: ASSUMPTION, one point that never limits a flow (a non-blocking")
        w("    crossbar), so any GPU pair gets the full per-GPU rate when nothing else shares the two")
        w("    GPUs' links. NOT modelled: NVLink SHARP (NVLS), the in-switch reduction of DGX H100's")
        w("    NVSwitch chips (DGX A100's have none) that NCCL's NVLS algorithms use; allreduces here")
        w("    move all their data GPU to GPU.")
        w("  - NVLink latency %s per GPU link: ASSUMPTION, GPU to GPU %s through the NVSwitch, as"
          % (us(a.nvlink_lat_us), us(2 * a.nvlink_lat_us)))
        w("    dgx1-v100.xml's direct NVLink (CUDA IPC over NVLink as MPI sees it); no source gives it.")
    if a.topology == "pcie":
        if a.preset == "roce-4gpu":
            w("  - GPU: ASSUMPTION. Horovod says only \"Pascal\"; a 4-GPU server of 2017 with RoCE NICs")
            w("    most likely holds P100 for PCIe (the SXM2 P100 comes in NVLink servers such as the")
            w("    8-GPU DGX-1). Use gpu-tflops=10.6 device=P100-SXM2-16GB for the other.")
        else:
            w("  - GPU: ASSUMPTION, the P100 for PCIe of roce-4gpu.xml: the same servers on plain")
            w("    Ethernet, so that the two files differ in the network only.")
        w("  - Inside a server: ASSUMPTION, all %d GPUs and the NIC on one PCIe switch (x16 each, %s"
          % (G, gbps(a.pcie_gbyte)))
        w("    nominal; NCCL's topo.h takes 12 GB/s), GPU to GPU peer to peer through it; no NVLink.%s"
          % mark("pcie_gbyte", "topology"))
        w("    Were the GPUs split over two CPUs, pairs across them would cross QPI as well.")
    if a.topology == "cube-mesh":
        if a.preset == "bigbasin-p100":
            w("  - NVLink: %s each way per link (whitepaper: 20 GB/s per direction)%s."
              % (gbps(a.nvlink_gbyte), mark("nvlink_gbyte")))
        else:
            w("  - NVLink: %s each way per link (whitepaper: 25 GB/s peak per direction)%s. A pair with two"
              % (gbps(a.nvlink_gbyte), mark("nvlink_gbyte")))
            w("    links (NV2) is ONE link of %s, not two links: CUDA and NCCL stripe a transfer over a"
              % gbps(2 * a.nvlink_gbyte))
            w("    bonded pair, and a SimGrid route is one path, so two parallel links in a route would")
            w("    carry the flow in series at 25 GB/s. One link keeps the pair's aggregate.")
        w("  - NVLink latency %s per link: ASSUMPTION, a small message between two GPUs as MPI sees"
          % us(a.nvlink_lat_us))
        w("    it (CUDA IPC over NVLink, a few us); no source gives it for this machine.")
    w("  - PCIe x16 links: %s each way (PCIe %s nominal)%s, latency %s each: ASSUMPTION."
      % (gbps(a.pcie_gbyte), pcie_gen(a), mark("pcie_gbyte"), us(a.pcie_lat_us)))
    if a.topology == "nvswitch":
        w("  - The PCIe switches are points, not links (non-blocking); GPU g reaches its NIC through")
        w("    its own x16 link; a NIC's own x16 link (%s) is faster than its port and not modelled."
          % gbps(a.pcie_gbyte))
    if a.topology == "cube-mesh":
        if a.no_nvlink_route == "pcie" or a.nics_per_node != 4:
            w("  - QPI: %s each way: the two 9.6 GT/s QPI links of the Xeon E5-2698 v4 (Intel ARK),"
              % gbps(a.qpi_gbyte))
            w("    2 bytes per transfer each: 2 x 19.2 GB/s. Latency folded into the PCIe links.")
        w("  - The PCIe switches are points, not links (non-blocking); a NIC's own x16 link (15.75 GB/s)")
        w("    is faster than its port and not modelled.")
    nic_text = {"dgx1-v100": "EDR InfiniBand, 100 Gbit/s data rate per port",
                "roce-4gpu": "25 GbE, RDMA over Converged Ethernet",
                "eth10g-4gpu": "10 GbE, MPI over TCP",
                "bigbasin-p100": "Mellanox ConnectX-4, 50 Gbit/s Ethernet",
                "dgx-a100": "ConnectX-6 HDR InfiniBand, 200 Gbit/s data rate per port",
                "dgx-h100": "ConnectX-7 NDR InfiniBand, 400 Gbit/s data rate per port"}[a.preset]
    w("  - NICs: %d per server, %s each way, SPLITDUPLEX" % (a.nics_per_node, nic_bw))
    w("    (%s)." % nic_text)
    if mark("nic_gbit", "nics_per_node"):
        w("   " + mark("nic_gbit", "nics_per_node") + ".")
    w("    Latency %s per NIC link: ASSUMPTION" % us(a.nic_lat_us) + {
        "dgx1-v100": " (EDR host adapter to host adapter is about 1 us,",
        "roce-4gpu": " (RoCE adapter to adapter is 1 to 2 us,",
        "eth10g-4gpu": " (MPI over TCP on 10 GbE takes tens of us one way, most",
        "bigbasin-p100": " (Gloo's transport is not named; RDMA-class",
        "dgx-a100": " (HDR host adapter to host adapter is about 1 us,",
        "dgx-h100": " (NDR host adapter to host adapter is about 1 us,",
    }[a.preset])
    w({"dgx1-v100": "    half each side).",
       "roce-4gpu": "    half each side).",
       "eth10g-4gpu": "    of it in the kernel's TCP stack: %s per side)." % us(a.nic_lat_us),
       "bigbasin-p100": "    adapters take 1 to 2 us, half each side).",
       "dgx-a100": "    half each side, as dgx1-v100.xml's EDR).",
       "dgx-h100": "    half each side, as dgx1-v100.xml's EDR)."}[a.preset])
    fabric = {
        "dgx1-v100": ("  - The InfiniBand fabric: ASSUMPTION, one non-blocking switch. NVIDIA's DGX-1 networking",
                      "    guide asks for all four cards on a fabric of \"full bisectional bandwidth\"; a",
                      "    full-bisection fat tree of EDR switches behaves so. Latency %s through it:"
                      % us(a.switch_lat_us),
                      "    ASSUMPTION (about one EDR switch hop)."),
        "roce-4gpu": ("  - The Ethernet fabric: ASSUMPTION, one non-blocking 25 GbE switch (lossless, as RoCE",
                      "    needs; the docs name no switch or topology). Latency %s through it: ASSUMPTION."
                      % us(a.switch_lat_us),
                      ""),
        "bigbasin-p100": ("  - The Ethernet fabric: ASSUMPTION, non-blocking Wedge100 (100 GbE) switches, the",
                          "    topology not given. Latency %s through it: ASSUMPTION." % us(a.switch_lat_us),
                          ""),
        "eth10g-4gpu": ("  - One non-blocking 10 GbE switch: ASSUMPTION. Latency %s through it: ASSUMPTION."
                        % us(a.switch_lat_us),
                        "", ""),
        "dgx-a100": ("  - The InfiniBand fabric: ASSUMPTION, one non-blocking switch (a full-bisection fat",
                     "    tree of HDR switches behaves so). Latency %s through it: ASSUMPTION (about one"
                     % us(a.switch_lat_us),
                     "    switch hop, as dgx1-v100.xml)."),
        "dgx-h100": ("  - The InfiniBand fabric: ASSUMPTION, one non-blocking switch (a full-bisection fat",
                     "    tree of NDR switches behaves so). Latency %s through it: ASSUMPTION (about one"
                     % us(a.switch_lat_us),
                     "    switch hop, as dgx1-v100.xml)."),
    }[a.preset]
    for f in fabric:
        if f:
            w(f)
    one_way = 2 * a.pcie_lat_us + 2 * a.nic_lat_us + a.switch_lat_us
    w("    GPU to GPU across servers: %s one way, %s at most." % (us(one_way), nic_bw))
    if a.smpi_factors == "one":
        w("  - SMPI's smpi/bw-factor and smpi/lat-factor are set to 1 (the <config> below): the")
        w("    latencies above are what MPI sees, and the bandwidths are NOMINAL rates, an upper bound")
        w("    (SimGrid's own factors are fitted to TCP over Gigabit Ethernet, not to RDMA or NVLink).")
    elif a.smpi_factors == "tcp":
        w("  - MPI over TCP (smpi-factors=tcp): SMPI's smpi/bw-factor is %s (the <config> below)," % fmt(round(TCP_PAYLOAD_SHARE, 6)))
        w("    the share of a full Ethernet frame that is TCP payload at an MTU of 1500 bytes: %d bytes" % TCP_PAYLOAD_BYTES)
        w("    (less the IPv4 header, 20, and TCP's with timestamps, 32) of %d on the wire (with" % TCP_WIRE_BYTES)
        w("    Ethernet's header, FCS, preamble and gap, 38). The link rates above are the wire's; a")
        w("    message's data moves at this share of them, as on the testbed, which charges every frame")
        w("    its wire bytes (experiments/today/README.md, item 5: a 16 MiB ping-pong takes 14.28 ms on")
        w("    both). smpi/lat-factor is 1: the latencies above are what MPI sees. SMPI applies the")
        w("    factor to every message, also to those between GPUs of one server, which go over PCIe")
        w("    and not over TCP: those it makes 6% slower than the links above.")
    else:
        w("  - SMPI's own smpi/bw-factor and smpi/lat-factor apply (smpi-factors=simgrid): fitted to")
        w("    TCP over Gigabit Ethernet, they scale latencies by up to 11.6 and bandwidths by 0.34 to 1.09.")
    if a.memory is None:
        w("  - GPU memory, the CPUs and host memory are not modelled; a GPU is a host that computes")
        w("    at its peak rate and sends from where it is.")
    else:
        w("  - GPU memory is its size alone (wulf:memory, which a run's device memory must fit); its")
        w("    bandwidth, the CPUs and host memory are not modelled; a GPU is a host that computes at")
        w("    its peak rate and sends from where it is.")
    return check_comment("\n".join(L))


def zone_route(a, i, j):
    """Server i to server j through the switch."""
    pi, pj = "%s-%d" % (a.name, i), "%s-%d" % (a.name, j)
    return ('    <zoneRoute src="%s" dst="%s" gw_src="%s-gw" gw_dst="%s-gw"><link_ctn id="%s-port"/>'
            '<link_ctn id="%s-port"/></zoneRoute>' % (pi, pj, pi, pj, pi, pj))


def generate(a):
    """The file's lines, one server at a time: (lines, links, routes, an estimate of its bytes).
    Its memory is one server's; the file itself grows with the square of the servers (a route
    for each pair of them through the switch)."""
    name = a.name
    first = build_node(a, 0)  # every server has the same links and routes
    n_links = (len(first.links) + 1) * a.nodes
    n_routes = len(first.routes) * a.nodes
    nic_bw = gbps(a.nic_gbit / 8.0)
    speed = fmt(a.gpu_tflops * 1000) + "Gf"
    rings = node_rings(a)

    def server(nd):
        yield ""
        yield '    <zone id="%s" routing="Full">' % nd.p
        for g in range(a.gpus_per_node):
            yield '      <host id="%s" speed="%s" core="1">' % (nd.gpu(g), speed)
            yield '        <prop id="wulf:device" value="%s"/><prop id="wulf:node" value="%d"/>' % (a.device, nd.n)
            yield '        <prop id="wulf:rings" value="%s"/>' % ",".join(str(r.index(g)) for r in rings)
            if a.memory is not None:
                yield '        <prop id="wulf:memory" value="%d"/>' % a.memory
            if a.gpu_tflops16 is not None:
                yield '        <prop id="wulf:speed16" value="%s"/>' % fmt(a.gpu_tflops16 * 1e12)
            if a.efficiency is not None:
                yield '        <prop id="wulf:efficiency" value="%s"/>' % a.efficiency.replace(" ", "")
            if a.ddp is not None:
                yield '        <prop id="wulf:ddp" value="%s"/>' % a.ddp.replace(" ", "")
            yield "      </host>"
        yield '      <router id="%s"/>' % nd.gateway()
        for lid, bw, lat, pol in nd.links:
            yield '      <link id="%s" bandwidth="%s" latency="%s" sharing_policy="%s"/>' % (lid, bw, lat, pol)
        for src, dst, hops in nd.routes:
            ctn = "".join('<link_ctn id="%s" direction="%s"/>' % (lid, d) for lid, d in hops)
            yield '      <route src="%s" dst="%s">%s</route>' % (src, dst, ctn)
        yield "    </zone>"

    def lines():
        yield "<?xml version='1.0'?>"
        yield '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
        yield "<!--"
        yield header(a, n_links, n_routes)
        yield "-->"
        yield '<platform version="4.1">'
        if a.smpi_factors in ("one", "tcp"):
            bw_factor = "1" if a.smpi_factors == "one" else fmt(round(TCP_PAYLOAD_SHARE, 6))
            yield "  <config>"
            yield '    <prop id="smpi/bw-factor" value="0:%s"/>' % bw_factor
            yield '    <prop id="smpi/lat-factor" value="0:1"/>'
            yield "  </config>"
        yield '  <zone id="%s" routing="Full">' % name
        yield '    <prop id="wulf:source" value="%s"/>' % SOURCES[a.preset]
        yield '    <prop id="wulf:generator" value="platforms/gpu/generate.py %s"/>' % " ".join(recorded_options(a))
        for n in range(a.nodes):
            yield from server(first if n == 0 else build_node(a, n))
        yield ""
        yield "    <!-- the cluster's switch, non-blocking: each server's port (SimGrid wants a zone's links"
        yield "         after its zones) -->"
        for n in range(a.nodes):
            yield ('    <link id="%s-%d-port" bandwidth="%s" latency="%s" sharing_policy="FATPIPE"/>'
                   % (name, n, nic_bw, us(a.switch_lat_us / 2)))
        yield ""
        yield "    <!-- server to server through the switch: one route per pair, symmetrical -->"
        for i in range(a.nodes):
            for j in range(i + 1, a.nodes):
                yield zone_route(a, i, j)
        yield "  </zone>"
        yield "</platform>"

    last = a.nodes - 1
    estimate = (a.nodes * sum(len(x) + 1 for x in server(first))
                + a.nodes * (a.nodes - 1) // 2 * (len(zone_route(a, last, last)) + 1))
    return lines(), n_links, n_routes, estimate


def write_file(path, lines):
    """lines into path by a temporary file beside it, renamed once complete: a file that was
    there is replaced whole or left as it was. The bytes written."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, part = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".part")
    written = 0
    try:
        with os.fdopen(fd, "w", encoding="ascii", newline="\n") as f:
            for line in lines:
                f.write(line)
                f.write("\n")
                written += len(line) + 1
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(part, 0o666 & ~umask)  # as open() would have made it, not mkstemp's 0600
        os.replace(part, path)
    except BaseException:
        os.unlink(part)
        raise
    return written


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    lines, n_links, n_routes, estimate = generate(a)
    if a.output == "-":
        written = 0
        for line in lines:
            sys.stdout.write(line + "\n")
            written += len(line) + 1
    else:
        free = shutil.disk_usage(os.path.dirname(os.path.abspath(a.output))).free
        if estimate > free:
            sys.stderr.write("generate.py: error: -o %s: the file would take about %.3g GB (%d servers: a route "
                             "for each pair of them), more than the %.3g GB free there\n"
                             % (a.output, estimate / 1e9, a.nodes, free / 1e9))
            return 2
        try:
            written = write_file(a.output, lines)
        except OSError as e:
            sys.stderr.write("generate.py: error: -o %s: %s\n" % (a.output, e.strerror or e))
            return 2
    sys.stderr.write("%s: %d servers, %d GPUs, %d links, %d routes, %d bytes -> %s\n"
                     % (a.preset, a.nodes, a.nodes * a.gpus_per_node, n_links, n_routes, written, a.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
