#!/usr/bin/env python3
"""Generate platforms/bunyip.xml, the SimGrid platform of seed 002's Bunyip cluster.

Bunyip (seed 002, /work/shared/seeds/002_9eb09876eedc3eb3.txt, section 2 "Bunyip
Hardware Details"): 96 dual-PIII-550 nodes in four groups of 24 at the vertices of a
tetrahedron; every node has three 100 Mbit/s NICs, one per tetrahedron edge touching its
group; every edge is an HP Procurve 4000 48-port switch (3.8 Gb/s switching capacity)
joining the 24 nodes of each of its two groups; two servers on a 4-port gigabit switch
linked to two of the Procurves; two hot spares.

The output uses routing="Full" with one explicit, symmetrical <route> per host pair. It is
deterministic: the same parameters always give the same bytes. Standard library only.

    python3 platforms/bunyip/generate.py                 # writes platforms/bunyip.xml
    python3 platforms/bunyip/generate.py -o /tmp/b.xml --groups 3 --nodes-per-group 8
"""

import argparse
import os
import string
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUTPUT = os.path.normpath(os.path.join(HERE, "..", "bunyip.xml"))

DEFAULTS = {
    "groups": 4,
    "nodes_per_group": 24,
    "cpus_per_node": 2,
    "nic_mbit": 100.0,
    "switch_gbit": 3.8,
    "servers": 2,
    "spares": 2,
    "speed_mflops": 1090.0,
    "server_nic_mbit": 1000.0,
    "uplink_mbit": 1000.0,
    "gigabit_switch_gbit": 8.0,
    "nic_lat_us": 50.0,
    "uplinks": None,  # computed from groups: AB,CD for 4 groups
    "intra_group": "distance",
    # LAM/MPI's share of the nominal rate for messages of 6.6 MB, CALIBRATED: with it a
    # binomial MPI_Reduce of 1 729 440 floats over 194 ranks simulates in 8.5 s, as in
    # seed 002 section 5.1 (experiments/platform-calibration).
    "mpi_bw_factor": 0.456,
    # Section 2.1, "All up, the total cost was USD $150,913" (nodes with the two hot spares,
    # switches, servers, cables, three weeks of labour): section 7.3 divides it by 163.3
    # GFlop/s for 92.4 cents per MFlop/s.
    "cost_usd": 150913.0,
}


def fmt(x):
    """Shortest exact-enough decimal for a number in an XML attribute."""
    s = ("%.6f" % x).rstrip("0").rstrip(".")
    return s if s else "0"


def mbps(mbit):
    """Megabit/s to SimGrid's MBps (10^6 bytes/s)."""
    return fmt(mbit / 8.0) + "MBps"


def check_comment(text):
    # "--" is not allowed inside an XML comment (nor a trailing "-").
    if "--" in text or text.endswith("-"):
        raise SystemExit("internal error: generated comment would contain '--'")
    return text


def default_uplinks(groups):
    """Pair the groups (A-B, C-D, ...) so that every group touches one uplinked switch."""
    letters = string.ascii_uppercase[:groups]
    pairs = [letters[k] + letters[k + 1] for k in range(0, groups - 1, 2)]
    if groups % 2:
        pairs.append(letters[0] + letters[groups - 1])
    return pairs


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Write the SimGrid platform of seed 002's Bunyip cluster (routing=Full).")
    p.add_argument("-o", "--output", default=DEFAULT_OUTPUT,
                   help="output file (default: platforms/bunyip.xml next to this script's folder; '-' for stdout)")
    p.add_argument("--groups", type=int, default=DEFAULTS["groups"],
                   help="number of node groups, vertices of the complete graph of switches (default 4, a tetrahedron)")
    p.add_argument("--nodes-per-group", type=int, default=DEFAULTS["nodes_per_group"],
                   help="nodes in each group (default 24)")
    p.add_argument("--cpus-per-node", type=int, default=DEFAULTS["cpus_per_node"],
                   help="CPUs (SimGrid cores) per node, server and spare (default 2: dual PIII)")
    p.add_argument("--nic-mbit", type=float, default=DEFAULTS["nic_mbit"],
                   help="bandwidth of each node NIC in Mbit/s (default 100)")
    p.add_argument("--switch-gbit", type=float, default=DEFAULTS["switch_gbit"],
                   help="switching capacity of each edge switch in Gbit/s (default 3.8, HP Procurve 4000)")
    p.add_argument("--servers", type=int, default=DEFAULTS["servers"],
                   help="servers on the gigabit switch (default 2)")
    p.add_argument("--spares", type=int, default=DEFAULTS["spares"],
                   help="hot-spare nodes, attached to the gigabit switch by one NIC each (default 2)")
    p.add_argument("--speed-mflops", type=float, default=DEFAULTS["speed_mflops"],
                   help="host speed per CPU in Mflop/s (default 1090, Emmerald SGEMM peak on a PIII 550)")
    p.add_argument("--server-nic-mbit", type=float, default=DEFAULTS["server_nic_mbit"],
                   help="bandwidth of each server NIC in Mbit/s (default 1000)")
    p.add_argument("--uplink-mbit", type=float, default=DEFAULTS["uplink_mbit"],
                   help="bandwidth of each gigabit-switch-to-Procurve uplink in Mbit/s (default 1000)")
    p.add_argument("--gigabit-switch-gbit", type=float, default=DEFAULTS["gigabit_switch_gbit"],
                   help="capacity of the servers' gigabit switch in Gbit/s (default 8: 4 ports x 1 Gbit/s x 2 ways)")
    p.add_argument("--nic-lat-us", type=float, default=DEFAULTS["nic_lat_us"],
                   help="latency of every host-side link (node, server and spare NICs) in us (default 50)")
    p.add_argument("--uplinks", default=None,
                   help="comma-separated edge switches the gigabit switch is linked to "
                        "(default AB,CD for 4 groups; must touch every group)")
    p.add_argument("--mpi-bw-factor", type=float, default=DEFAULTS["mpi_bw_factor"],
                   help="share of a link's rate that MPI messages get (SMPI's smpi/bw-factor, all sizes; "
                        "default 0.456, calibrated against seed 002's 8.5 s library reduce)")
    p.add_argument("--mpi-lat-factor", type=float, default=0,
                   help="SMPI's latency factor, all sizes (smpi/lat-factor); 1 for a platform the testbed, "
                        "whose TCP adds no factor of its own, is compared with; 0: SMPI's own (default)")
    p.add_argument("--node-io-mbit", type=float, default=0,
                   help="what one node moves through all its NICs together, each way (PCI bus, TCP stack); "
                        "seed 002 section 5.2 stage 3 measured 185 Mbit/s into a node over 3 NICs; "
                        "0: no such limit (default)")
    p.add_argument("--shm-mbyte-s", type=float, default=0,
                   help="MB/s between the two CPUs of a node (SimGrid's loopback; seed 002 section 5.2 "
                        "stage 1: 6.6 MB in 0.18 s); 0: SimGrid's default loopback (default)")
    p.add_argument("--cost-usd", type=float, default=DEFAULTS["cost_usd"],
                   help="the machine's cost in USD, the zone property wulf:cost-usd that price/performance "
                        "(cents per MFlop/s) divides (default 150913, seed 002 section 2.1); 0: none")
    p.add_argument("--intra-group", choices=["distance", "lowest"], default=DEFAULTS["intra_group"],
                   help="edge switch used between two nodes of the same group: 'distance' picks edge "
                        "(|i-j|-1) mod (groups-1) of the group, 'lowest' always the edge to the "
                        "lowest-lettered other group (default distance)")
    a = p.parse_args(argv)

    if a.mpi_lat_factor < 0:
        p.error("--mpi-lat-factor must be at least 0")
    if a.cost_usd < 0:
        p.error("--cost-usd must be 0 (none) or positive")
    if not 2 <= a.groups <= 26:
        p.error("--groups must be between 2 and 26")
    for name in ("nodes_per_group", "cpus_per_node"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name.replace("_", "-"))
    for name in ("servers", "spares"):
        if getattr(a, name) < 0:
            p.error("--%s must not be negative" % name)
    for name in ("nic_mbit", "switch_gbit", "speed_mflops", "server_nic_mbit", "uplink_mbit",
                 "gigabit_switch_gbit"):
        if getattr(a, name) <= 0:
            p.error("--%s must be positive" % name.replace("_", "-"))
    if a.nic_lat_us < 0:
        p.error("--nic-lat-us must not be negative")

    letters = string.ascii_uppercase[:a.groups]
    edges = [x + y for k, x in enumerate(letters) for y in letters[k + 1:]]
    if a.uplinks is None:
        a.uplinks = default_uplinks(a.groups)
    else:
        ups = []
        for e in a.uplinks.split(","):
            e = "".join(sorted(e.strip().upper()))
            if e not in edges:
                p.error("--uplinks: %r is not an edge switch (edges: %s)" % (e, ",".join(edges)))
            if e not in ups:
                ups.append(e)
        a.uplinks = ups
    if a.servers + a.spares > 0:
        missing = [g for g in letters if not any(g in e for e in a.uplinks)]
        if missing:
            p.error("--uplinks must touch every group; no uplinked switch reaches group(s) %s"
                    % ",".join(missing))
    a.letters = letters
    a.edges = edges
    return a


def extra_options(a):
    """The options that default to off, as they are written when set."""
    out = ""
    if a.mpi_lat_factor > 0:
        out += " mpi-lat-factor=" + fmt(a.mpi_lat_factor)
    if a.node_io_mbit > 0:
        out += " node-io-mbit=" + fmt(a.node_io_mbit)
    if a.shm_mbyte_s > 0:
        out += " shm-mbyte-s=" + fmt(a.shm_mbyte_s)
    if a.cost_usd != DEFAULTS["cost_usd"]:
        out += " cost-usd=" + fmt(a.cost_usd)
    return out


def header(a, n_hosts, n_cores, n_links, n_routes):
    g, n, c = a.groups, a.nodes_per_group, a.cpus_per_node
    L = []
    w = L.append
    w("  bunyip: the Bunyip cluster of seed 002 (ultra-large-scale neural-network training on")
    w("  a PIII cluster, Gordon Bell price/performance winner).")
    w("")
    w("  GENERATED FILE, do not edit: written by platforms/bunyip/generate.py with")
    w("    groups=%d nodes-per-group=%d cpus-per-node=%d nic-mbit=%s switch-gbit=%s"
      % (g, n, c, fmt(a.nic_mbit), fmt(a.switch_gbit)))
    w("    servers=%d spares=%d speed-mflops=%s server-nic-mbit=%s uplink-mbit=%s"
      % (a.servers, a.spares, fmt(a.speed_mflops), fmt(a.server_nic_mbit), fmt(a.uplink_mbit)))
    w("    gigabit-switch-gbit=%s nic-lat-us=%s uplinks=%s intra-group=%s mpi-bw-factor=%s%s"
      % (fmt(a.gigabit_switch_gbit), fmt(a.nic_lat_us), ",".join(a.uplinks), a.intra_group, fmt(a.mpi_bw_factor),
         extra_options(a)))
    w("  (each parameter is the command-line option of the same name; regenerate with")
    w("  python3 platforms/bunyip/generate.py plus those options; see platforms/README.md).")
    w("  Result: %d hosts, %d CPUs (SimGrid cores), %d links, %d symmetrical routes."
      % (n_hosts, n_cores, n_links, n_routes))
    w("")
    w("  CALIBRATION: the NICs keep their nominal 100 Mbit/s; what LAM/MPI over TCP made of it")
    w("  is SMPI's bandwidth factor, set for all message sizes in the <config> below")
    w("  (mpi-bw-factor=%s). Seed 002 section 5.1: LAM's library reduce of 6.6 MB over 194"
      % fmt(a.mpi_bw_factor))
    w("  processes took 8.5 s in 8 stages; a binomial MPI_Reduce of 1 729 440 floats over the")
    w("  96 nodes and server-0 (194 ranks) simulates in 8.5 s with 0.456, in 4.13 s with")
    w("  SMPI's own factors (about 0.94 for large messages). The same paper's custom reduce")
    w("  moved 6.6 MB over one NIC in 0.66 s (stage 2, about 80 Mbit/s, a factor of 0.8): the")
    w("  library reduce lost the rest to waiting and LAM's TCP handling, which one factor for")
    w("  every message cannot tell apart (experiments/platform-calibration).")
    w("")
    if g == 4:
        w("  Topology (default parameters). Each letter is a group of %d nodes (bunyip-X-0..%d)," % (n, n - 1))
        w("  each [XY] an edge switch (link bunyip-procurve-XY): an HP Procurve 4000 joining")
        w("  the %d nodes of X and the %d nodes of Y. The tetrahedron drawn flat:" % (n, n))
        w("")
        w("        A ============[AB]============ B")
        w("        |  \\                        /  |")
        w("        |    [AD]              [BC]    |")
        w("      [AC]       \\            /      [BD]")
        w("        |           \\        /         |")
        w("        |             \\    /           |        (AD and BC are two separate")
        w("        |             /    \\           |         switches: they do not meet)")
        w("        |           /        \\         |")
        w("        |         /            \\       |")
        w("        C ============[CD]============ D")
        w("")
        w("  Every node has %d NICs (links bunyip-X-i-nic-XY, %s each way), one into each" % (g - 1, mbps(a.nic_mbit)))
        w("  of the %d switches of its vertex: A nodes into [AB], [AC], [AD], and so on." % (g - 1))
    else:
        w("  Topology: %d groups of %d nodes (bunyip-X-i); one edge switch per pair of groups"
          % (g, n))
        w("  (%d switches, links bunyip-procurve-XY); every node has %d NICs (links"
          % (len(a.edges), g - 1))
        w("  bunyip-X-i-nic-XY, %s each way), one into each switch of its group." % mbps(a.nic_mbit))
    if a.servers + a.spares > 0:
        w("")
        w("    bunyip-server-0..%d (%s NICs)   bunyip-spare-0..%d (%s NICs)"
          % (max(a.servers - 1, 0), mbps(a.server_nic_mbit), max(a.spares - 1, 0), mbps(a.nic_mbit)))
        w("                 \\                      /")
        w("            bunyip-gigabit-switch (Netgear 4-port gigabit, %s shared)"
          % mbps(a.gigabit_switch_gbit * 1000.0))
        w("                 /                      \\")
        w("     uplinks (bunyip-uplink-XY, %s each way) to the switches %s"
          % (mbps(a.uplink_mbit), " and ".join("[%s]" % e for e in a.uplinks)))
    w("")
    w("  Sources (seed 002 = /work/shared/seeds/002_9eb09876eedc3eb3.txt):")
    w("  - Section 1: \"98 dual 550 MHz processor PC's, each containing 384 MBytes of RAM")
    w("    ... and 3x100 Mb/s fast Ethernet cards\". Section 2 (Bunyip Hardware Details):")
    w("    \"three DEC Tulip compatible 100 Mb/s network interfaces\" per node;")
    w("    \"the 96 nodes are connected in four groups of 24 nodes arranged as a tetrahedron")
    w("    with a group of nodes at each vertex. Each node in a vertex has its three NICs")
    w("    assigned to one of the three edges emanating from the vertex. Each pair of vertices")
    w("    is connected by a 48-port Hewlett-Packard Procurve 4000 switch (24 ports connecting")
    w("    each way). The switching capacity of the Procurve switches is 3.8 Gb/s.\"")
    w("  - Section 2: \"Two server machines, more or less identical to the nodes ... are each")
    w("    connected to a Netgear 4-port Gigabit switch which is in turn connected to two of")
    w("    the HP Procurve switches via gigabit links.\" \"Two hot-spare nodes were also")
    w("    purchased\". Section 2.1: gigabit NICs bought for the servers; \"98 x $1282 ... on")
    w("    the computational nodes (including the two hot-spares)\".")
    w("  - Section 3.4: Emmerald SGEMM \"On a PIII 550 MHz (the processors in Bunyip) we")
    w("    achieve a peak of 1090 MFlops/s\"; the largest tested size ran at 940 MFlop/s.")
    w("  - Section 5.2: reduce over 194 processes, \"All 97 nodes (including the server)\";")
    w("    stage 2 \"Each node in group A can open a 100 Mb/s connection to any node in group")
    w("    B via switch 0\"; stage 3: three nodes send to a root \"via different NICs\",")
    w("    185 Mb/s into each root.")
    w("  - Section 7.3: \"Bunyip actually consists of 194 processors, however, we co-opted one")
    w("    of the hot-spare nodes ... to make up the other two processors\" (196 CPUs).")
    w("")
    w("  CPU arithmetic (why this file has %d CPUs and the paper says 196):" % n_cores)
    w("  - 98 dual PCs = 96 group nodes + 2 hot spares = 196 CPUs: the \"196 processor\"")
    w("    cluster of the abstract and section 1. The 2 servers are extra machines.")
    w("  - 194 processes of section 5 = 96 nodes x 2 + 1 server x 2 (\"97 nodes (including")
    w("    the server)\").")
    w("  - 196 CPUs of the record run (section 7.3) = those 194 + 1 co-opted hot spare x 2.")
    w("  - 96 x 2 + 2 servers x 2 is also 196, but that is a coincidence, not the paper's")
    w("    count. This file holds 96 nodes + %d servers + %d spares, all with %d CPUs."
      % (a.servers, a.spares, c))
    w("    Use bunyip-server-0 + the 96 nodes for the 194-process runs, and add")
    w("    bunyip-spare-0 for the 196-CPU run.")
    w("")
    w("  Numbers and what had to be assumed:")
    w("  - core=%d per host: dual PIII 550 (section 1/2). Servers are \"more or less" % c)
    w("    identical to the nodes\", so they get the same CPUs (ASSUMPTION for the servers).")
    w("  - speed=%sMf per CPU: Emmerald's SGEMM PEAK on a PIII 550 (section 3.4), used as the"
      % fmt(a.speed_mflops))
    w("    host speed for flop-driven compute. It is an upper bound: the largest tested")
    w("    matrices ran at 940 MFlop/s, and the record run sustained 163.3 GFlop/s on 196")
    w("    CPUs = 833 MFlop/s per CPU including communication (abstract, section 7.3).")
    if a.cost_usd > 0:
        w("  - wulf:cost-usd=%s (zone property): the machine's cost in USD, section 2.1 \"All up,"
          % fmt(a.cost_usd))
        w("    the total cost was USD $150,913\" (98 nodes with the 2 hot spares, switches, servers,")
        w("    cables, 3 weeks of labour). wulf train divides it by the run's flop rate for the")
        w("    price/performance of section 7.3 (92.4 cents per MFlop/s at 163.3 GFlop/s).")
    w("  - Node NICs: %s each way (100 Mbit/s full-duplex Fast Ethernet, DEC Tulip)," % mbps(a.nic_mbit))
    w("    SPLITDUPLEX. Section 5.2 stage 3 measured only 185 Mb/s into a node over 3 NICs")
    w("    (not 300): a per-node limit (PCI bus, TCP stack) that is NOT modelled; calibrate.")
    w("  - Edge switches: one SHARED link of %s (3.8 Gb/s switching capacity, section 2)"
      % mbps(a.switch_gbit * 1000.0))
    w("    per switch, so all traffic through a Procurve, both directions together, shares it.")
    w("    Section 5.2 stage 2 (24 A->B flows through one switch, 0.66 s for 6.6 MB) fits:")
    w("    24 x 10 MB/s = 240 MB/s is under the switch capacity, the NICs are the limit.")
    w("  - Same-group traffic: the real machine could use any of the group's %d switches"
      % (g - 1))
    w("    (each NIC on its own subnet; the choice came from the TCP/IP routing tables).")
    if a.intra_group == "distance":
        w("    Here (intra-group=distance) nodes i and j of group X use the k-th switch of X,")
        w("    k = (|i-j|-1) mod %d, switches of X in letter order (for A: AB, AC, AD). Nodes" % (g - 1))
        w("    1, 2 and 3 places away use three different switches, so the section 5.2 stage 3")
        w("    pattern (root 4m receives from 4m+1, 4m+2, 4m+3) uses three NICs, as in the paper.")
    else:
        w("    Here (intra-group=lowest) every same-group pair uses the switch to the")
        w("    lowest-lettered other group (A: AB, B: AB, C: AC, D: AD): deterministic, but it")
        w("    puts all same-group traffic of a node on one NIC.")
    w("  - Different groups X and Y: the XY switch, through the NIC of each node on that edge")
    w("    (route bunyip-X-i-nic-XY, bunyip-procurve-XY, bunyip-Y-j-nic-XY).")
    if a.servers + a.spares > 0:
        w("  - Servers: one gigabit NIC each (%s, SPLITDUPLEX) into the Netgear switch."
          % mbps(a.server_nic_mbit))
        w("    Netgear switch: ASSUMED non-blocking, one SHARED link of %s"
          % mbps(a.gigabit_switch_gbit * 1000.0))
        w("    (4 ports x 1 Gbit/s x 2 directions). Uplinks: %s each way (SPLITDUPLEX) to the"
          % mbps(a.uplink_mbit))
        w("    Procurves %s. WHICH two Procurves is not in the text (Figure 1 is not" % " and ".join(a.uplinks))
        w("    reproduced): ASSUMED so that every group is one switch away (a group X node is")
        w("    reached through the first listed uplinked switch that touches X, via its NIC on")
        w("    that switch). Server to server and server to spare: NIC, gigabit switch, NIC.")
        w("  - Hot spares: the text does not say how they are cabled (the Netgear's 4 ports are")
        w("    taken by 2 servers + 2 uplinks, every Procurve port by the 96 nodes). ASSUMPTION:")
        w("    each spare is present with %d CPUs and one %s NIC into the gigabit switch, so"
          % (c, mbps(a.nic_mbit)))
        w("    that it can stand in for the co-opted spare of section 7.3; its traffic to the")
        w("    nodes crosses the same uplinks as the servers'. Leave spares idle (or use")
        w("    spares=0) to model the 194-processor machine.")
    w("  - Latency: ASSUMPTION, %s us on every host-side link (node, server and spare NICs)," % fmt(a.nic_lat_us))
    w("    0 on switches and uplinks: node to node %s us one way. Not in the seed; calibrate."
      % fmt(2 * a.nic_lat_us))
    w("  - Split-duplex directions: for a NIC, UP is host to switch; for an uplink, UP is")
    w("    Procurve to gigabit switch. Routes are symmetrical: only one direction is written")
    w("    per host pair and SimGrid swaps UP and DOWN for the way back.")
    w("  - Shared memory between the 2 CPUs of a node (section 5.2 stage 1) is SimGrid's")
    w("    loopback; memory size (384 MB) and disks are not modelled.")
    text = "\n".join(L)
    return check_comment(text)


def generate(a):
    g, n, c = a.groups, a.nodes_per_group, a.cpus_per_node
    letters, edges = a.letters, a.edges
    speed = fmt(a.speed_mflops) + "Mf"
    lat = fmt(a.nic_lat_us) + "us"

    def edge(x, y):
        return "".join(sorted(x + y))

    group_edges = {x: [edge(x, y) for y in letters if y != x] for x in letters}

    def nic(x, i, e):
        return "bunyip-%s-%d-nic-%s" % (x, i, e)

    def sw(e):
        return "bunyip-procurve-" + e

    def io(x, i):
        return "bunyip-%s-%d-io" % (x, i)

    # hosts: (name, kind, data)
    hosts = []
    for x in letters:
        for i in range(n):
            hosts.append(("bunyip-%s-%d" % (x, i), "node", (x, i)))
    for s in range(a.servers):
        hosts.append(("bunyip-server-%d" % s, "ext", "bunyip-server-%d-nic" % s))
    for s in range(a.spares):
        hosts.append(("bunyip-spare-%d" % s, "ext", "bunyip-spare-%d-nic" % s))

    links = []  # (id, bandwidth, latency, policy)
    for x in letters:
        for i in range(n):
            for e in group_edges[x]:
                links.append((nic(x, i, e), mbps(a.nic_mbit), lat, "SPLITDUPLEX"))
    if a.node_io_mbit > 0:
        for x in letters:
            for i in range(n):
                links.append((io(x, i), mbps(a.node_io_mbit), "0us", "SPLITDUPLEX"))
    for e in edges:
        links.append((sw(e), mbps(a.switch_gbit * 1000.0), "0us", "SHARED"))
    has_ext = a.servers + a.spares > 0
    if has_ext:
        for s in range(a.servers):
            links.append(("bunyip-server-%d-nic" % s, mbps(a.server_nic_mbit), lat, "SPLITDUPLEX"))
        for s in range(a.spares):
            links.append(("bunyip-spare-%d-nic" % s, mbps(a.nic_mbit), lat, "SPLITDUPLEX"))
        links.append(("bunyip-gigabit-switch", mbps(a.gigabit_switch_gbit * 1000.0), "0us", "SHARED"))
        for e in a.uplinks:
            links.append(("bunyip-uplink-" + e, mbps(a.uplink_mbit), "0us", "SPLITDUPLEX"))

    def uplink_for(x):
        for e in a.uplinks:
            if x in e:
                return e
        raise AssertionError(x)

    def out_io(node):
        return [(io(*node), "UP")] if a.node_io_mbit > 0 else []

    def in_io(node):
        return [(io(*node), "DOWN")] if a.node_io_mbit > 0 else []

    def route(h1, h2):
        """Links from h1 to h2 as (id, direction) pairs; direction None for non-split links."""
        _, k1, d1 = h1
        _, k2, d2 = h2
        if k1 == "node" and k2 == "node":
            (x, i), (y, j) = d1, d2
            if x == y:
                if a.intra_group == "distance":
                    e = group_edges[x][(abs(i - j) - 1) % (g - 1)]
                else:
                    e = group_edges[x][0]
            else:
                e = edge(x, y)
            return (out_io((x, i)) + [(nic(x, i, e), "UP"), (sw(e), None), (nic(y, j, e), "DOWN")]
                    + in_io((y, j)))
        if k1 == "node" and k2 == "ext":
            x, i = d1
            e = uplink_for(x)
            return out_io((x, i)) + [(nic(x, i, e), "UP"), (sw(e), None), ("bunyip-uplink-" + e, "UP"),
                                     ("bunyip-gigabit-switch", None), (d2, "DOWN")]
        if k1 == "ext" and k2 == "ext":
            return [(d1, "UP"), ("bunyip-gigabit-switch", None), (d2, "DOWN")]
        raise AssertionError("hosts are ordered nodes first")

    out = []
    o = out.append
    o("<?xml version='1.0'?>")
    o('<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">')
    n_routes = len(hosts) * (len(hosts) - 1) // 2
    n_cores = len(hosts) * c
    o("<!--")
    o(header(a, len(hosts), n_cores, len(links), n_routes))
    o("-->")
    o('<platform version="4.1">')
    o('  <config>')
    o('    <prop id="smpi/bw-factor" value="0:%s"/>' % fmt(a.mpi_bw_factor))
    if a.mpi_lat_factor > 0:
        o('    <prop id="smpi/lat-factor" value="0:%s"/>' % fmt(a.mpi_lat_factor))
    if a.shm_mbyte_s > 0:
        o('    <prop id="network/loopback-bw" value="%s"/>' % fmt(a.shm_mbyte_s * 1e6))
    o('  </config>')
    o('  <zone id="bunyip" routing="Full">')
    o('    <prop id="wulf:source" value="seed 002 sections 1, 2, 2.1, 3.4 (Bunyip: 96 dual PIII 550 nodes, '
      'tetrahedron of 6 HP Procurve 4000 switches, 3 x 100 Mbit NICs per node, 2 servers on a gigabit switch, '
      '2 hot spares)"/>')
    o('    <prop id="wulf:generator" value="platforms/bunyip/generate.py groups=%d nodes-per-group=%d '
      'cpus-per-node=%d nic-mbit=%s switch-gbit=%s servers=%d spares=%d speed-mflops=%s server-nic-mbit=%s '
      'uplink-mbit=%s gigabit-switch-gbit=%s nic-lat-us=%s uplinks=%s intra-group=%s mpi-bw-factor=%s%s"/>'
      % (g, n, c, fmt(a.nic_mbit), fmt(a.switch_gbit), a.servers, a.spares, fmt(a.speed_mflops),
         fmt(a.server_nic_mbit), fmt(a.uplink_mbit), fmt(a.gigabit_switch_gbit), fmt(a.nic_lat_us),
         ",".join(a.uplinks), a.intra_group, fmt(a.mpi_bw_factor), extra_options(a)))
    if a.cost_usd > 0:
        o('    <prop id="wulf:cost-usd" value="%s"/>' % fmt(a.cost_usd))
    o("")
    o("    <!-- hosts: %d groups x %d nodes, %d servers, %d spares; %d CPUs each -->"
      % (g, n, a.servers, a.spares, c))
    # The group nodes carry what wulf's four-stage reduce (seed 002 section 5.2) reads:
    # their group, their index in it and their NICs (one per edge of the vertex).
    for name, kind, d in hosts:
        if kind == "node":
            o('    <host id="%s" speed="%s" core="%d">' % (name, speed, c))
            o('      <prop id="wulf:group" value="%s"/><prop id="wulf:node" value="%d"/>'
              '<prop id="wulf:nics" value="%d"/>' % (d[0], d[1], g - 1))
            o('    </host>')
        else:
            o('    <host id="%s" speed="%s" core="%d"/>' % (name, speed, c))
    o("")
    o("    <!-- links: node NICs, edge switches, then server side -->")
    for lid, bw, lt, pol in links:
        o('    <link id="%s" bandwidth="%s" latency="%s" sharing_policy="%s"/>' % (lid, bw, lt, pol))
    o("")
    o("    <!-- routes: one per host pair, symmetrical -->")
    for p in range(len(hosts)):
        for q in range(p + 1, len(hosts)):
            ctn = "".join(
                '<link_ctn id="%s"/>' % lid if d is None else '<link_ctn id="%s" direction="%s"/>' % (lid, d)
                for lid, d in route(hosts[p], hosts[q]))
            o('    <route src="%s" dst="%s">%s</route>' % (hosts[p][0], hosts[q][0], ctn))
    o("  </zone>")
    o("</platform>")
    return "\n".join(out) + "\n", len(hosts), n_cores, len(links), n_routes


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    text, n_hosts, n_cores, n_links, n_routes = generate(a)
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w", encoding="ascii", newline="\n") as f:
            f.write(text)
    sys.stderr.write("bunyip: %d hosts, %d CPUs, %d links, %d routes, %d bytes -> %s\n"
                     % (n_hosts, n_cores, n_links, n_routes, len(text), a.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
