#!/usr/bin/env python3
"""Print the platform of a ddp-witness cell: a cluster's network, with hosts that are this
machine's CPU as the witness measured it.

    make_platform.py NETWORK --device NAME [--ddp COSTS] [--source TEXT]...

NETWORK is batcave (platforms/batcave.xml's network: 8 hosts, a 100 Mbit/s link each,
calibrated there to 10.6 MB/s, 10 us a link, a non-blocking switch), batcave-bare (the same
links without their latency: the testbed then holds them without its latency forwarders, whose
CPU the witness's ranks would share) or batcave-bare-x2 (those at twice the rates). Its hosts have one core, the speed of Bat Cave's (933
Mflop/s: only the unit the measured times are charged in), wulf:device NAME (the device of the
`time` and `step` lines of the witness's layer file) and wulf:ddp COSTS (ddp_costs.py's
constants). Bat Cave's wulf:collective_overhead (seed 000's Ti, its MPI's cost per call) is
left out: the witness runs gloo, not that MPI, and the testbed does not add it to a program it
did not write.
"""
import argparse
import re
import sys

NETWORKS = {
    "batcave": ("10.6MBps", "10us", "12.5MBps", "Bat Cave's links and switch as platforms/batcave.xml calibrates them"),
    "batcave-bare": ("10.6MBps", "0us", "12.5MBps", "Bat Cave's links and switch without the links' 10 us latency"),
    "batcave-bare-x2": ("21.2MBps", "0us", "25MBps",
                        "Bat Cave's links and switch without their latency, at twice their rates"),
}

TEMPLATE = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!--
  ddp-witness: {what}, with hosts of this machine's CPU (experiments/ddp-witness).

    witness-0  witness-1  ...  witness-7     8 hosts, 1 core each; their compute is the
        |          |              |          measured times of wulf:device {device}
    ====+==========+==============+====      one {bw} link a host, latency {lat}, into a
              non-blocking switch            switch of {bb} a flow (FATPIPE)

  Network: platforms/batcave.xml (seed 000's Bat Cave; its header sources every number).
  Hosts: speed 933 Mflop/s is Bat Cave's and only the unit the measured seconds are charged in
  (a layer's `time` on the host's device, the `step`, and wulf:ddp's costs, all in seconds).
  wulf:ddp: {ddp_source}
{sources}-->
<platform version="4.1">
  <config>
    <prop id="smpi/bw-factor" value="0:1"/>
    <prop id="smpi/lat-factor" value="0:1"/>
  </config>
  <zone id="witness_zone" routing="Full">
    <cluster id="witness" prefix="witness-" suffix="" radical="0-7" speed="933Mf" core="1"
             bw="{bw}" lat="{lat}" sharing_policy="SPLITDUPLEX"
             bb_bw="{bb}" bb_lat="0us" bb_sharing_policy="FATPIPE">
      <prop id="wulf:device" value="{device}"/>
{ddp_prop}    </cluster>
  </zone>
</platform>
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("network", choices=sorted(NETWORKS))
    ap.add_argument("--device", required=True)
    ap.add_argument("--ddp", default="", help="the hosts' wulf:ddp (none: no DDP costs)")
    ap.add_argument("--source", action="append", default=[], help="a header line (repeatable)")
    a = ap.parse_args()
    for name, value in (("--device", a.device), ("--ddp", a.ddp)):
        if re.search(r'["<>&]|--', value):
            print("make_platform.py: %s %r: no quotes, <, >, & or -- in it" % (name, value), file=sys.stderr)
            sys.exit(2)
    bw, lat, bb, what = NETWORKS[a.network]
    sys.stdout.write(TEMPLATE.format(
        what=what, device=a.device, bw=bw, lat=lat, bb=bb,
        ddp_source="measured by ddp_costs.py on this machine" if a.ddp else "none (DDP charged nothing)",
        sources="".join("  %s\n" % s for s in a.source),
        ddp_prop='      <prop id="wulf:ddp" value="%s"/>\n' % a.ddp if a.ddp else ""))


if __name__ == "__main__":
    main()
