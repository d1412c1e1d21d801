"""Seed 000's rule of thumb, put to the test: "the ratio of processor speed (in GHz) to
communication bandwidth (in MBit) should be at least 1:500" for parallel backpropagation to
be faster than one processor.

On Bat Cave's platform (platforms/batcave.xml: 933 MHz PIII, 100 Mbit, seed 000's Table II
and V constants), this sweep makes the network s times faster and finds, for each problem,
block size b and processor count p, the s at which one parallel iteration takes as long as
the sequential one (speedup 1). Two what-ifs:

  bandwidth  only the links' bandwidth times s (--bw-scale s); the per-call cost Ti of the
             allreduce (MPI and TCP set-up, 366 us) and the link latency stay;
  network    the whole network s times faster: bandwidth times s, link latency and Ti
             divided by s (a copy of the platform file with wulf:collective_overhead / s).

Each crossing is found twice: by seed 000's model (eq. 7 is linear in Tw and Ti, so the
crossing has a closed form from two `wulf model` runs) and by simulation (`wulf train
--engine sim --compute calibrated --numerics off`, one iteration, a bracketed search in
log s to 0.5% in speedup). The crossing is reported as the ratio 0.933 GHz : 100 s Mbit,
i.e. 1 : (107 s).

  /usr/bin/python3 experiments/rule-of-thumb/sweep.py [build dir]

Writes records/ (every run's record), results.csv, rule-of-thumb.png; prints progress and
the wall time.
"""
import concurrent.futures
import csv
import json
import math
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = pathlib.Path(__file__).resolve().parent
root = here.parent.parent
build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "build"
wulf = str(build / "wulf")
records = here / "records"
records.mkdir(exist_ok=True)

GHZ, MBIT = 0.933, 100.0  # Bat Cave, seed 000 Table I
RULE = 500.0  # Mbit per GHz
PROCS = [2, 4, 8, 16, 32]  # beyond 8: Bat Cave grown to 32 hosts (--grow 32)
BLOCKS = {"function": [16, 32, 64, 128, 256, 1024], "encoder": [16, 32, 64, 128, 256],
          "digits": [16, 64, 256, 1024, 4096]}
S_MIN, S_MAX = 1e-4, 1e5  # the range searched; beyond S_MAX: "never"
platform_text = (root / "platforms" / "batcave.xml").read_text()
TI_US = float(re.search(r'wulf:collective_overhead" value="([0-9.]+)us"', platform_text).group(1))
tmp = pathlib.Path(tempfile.mkdtemp(prefix="wulf-rule-"))


def platform(variant, s):
    if variant == "bandwidth":
        return str(root / "platforms" / "batcave.xml")
    path = tmp / f"batcave-network-{s:.6g}.xml"
    if not path.exists():
        path.write_text(platform_text.replace(f'value="{TI_US:g}us"', f'value="{TI_US / s:.6g}us"'))
    return str(path)


def sim_time(problem, variant, p, b, s):
    """Simulated seconds of one iteration; p = 1 is the sequential run."""
    out = records / f"sim-{problem}-{variant}-p{p}-b{b}-s{s:.6g}.json"
    if not out.exists():
        cmd = [wulf, "train", "--problem", problem, "--bias", "off", "--precision", "double", "--block", str(b),
               "--epochs", "1", "--engine", "sim", "--np", str(p), "--platform", platform(variant, s),
               "--grow", "32", "--compute", "calibrated", "--profile", f"batcave-{problem}", "--numerics", "off",
               "--allreduce", "rdb", "--bw-scale", f"{s:.6g}", "--quiet", "--out", str(out)]
        if variant == "network":
            cmd += ["--lat-scale", f"{1 / s:.6g}"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())["history"][1]["time_s"]


def model_grid(problem, **override):
    """wulf model's grid for a copy of the profile with some constants replaced."""
    text = (root / "platforms" / "profiles" / f"batcave-{problem}.profile").read_text()
    for key, value in override.items():
        text = re.sub(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.M)
    name = "-".join(f"{k}{v}" for k, v in override.items()) or "as-is"
    profile = tmp / f"{problem}-{name}.profile"
    profile.write_text(text)
    grid = {}
    for p in PROCS:  # the model needs b >= p
        out = records / f"model-{problem}-{name}-p{p}.json"
        subprocess.run([wulf, "model", "--profile", str(profile), "--np", str(p), "--block",
                        ",".join(str(b) for b in BLOCKS[problem] if b >= p), "--out", str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        grid.update({(int(e["p"]), int(e["b"])): e for e in json.loads(out.read_text())["grid"]})
    return grid


def model_crossings(problem):
    """s at speedup 1 by eq. (7): T(s) = T_fixed + T_net / s, with T_net the Tw terms
    (bandwidth) or the Tw and Ti terms (network). None: no s helps."""
    full, no_tw, no_net = model_grid(problem), model_grid(problem, Tw_us=0), model_grid(problem, Tw_us=0, Ti_us=0)
    result = {}
    for key, e in full.items():
        seq = e["sequential_s"]
        for variant, fixed in (("bandwidth", no_tw[key]["time_s"]), ("network", no_net[key]["time_s"])):
            net = e["time_s"] - fixed
            result[(variant,) + key] = net / (seq - fixed) if seq > fixed else None
    return result


def sim_crossing(problem, variant, p, b, seq, guess):
    """The s where the simulated speedup is 1, to 0.5%: bracket in log s from the model's
    guess, then the Illinois variant of regula falsi. None when even S_MAX is too slow."""
    g = lambda s: math.log(seq / sim_time(problem, variant, p, b, s))  # noqa: E731  log speedup
    x = math.log(min(max(guess or S_MAX, S_MIN), S_MAX))
    fx = g(math.exp(x))
    step = math.log(2.0)
    a, fa = x, fx
    while True:  # walk until the sign changes
        nxt = a + step if fa < 0 else a - step
        if not math.log(S_MIN) <= nxt <= math.log(S_MAX):
            return None if fa < 0 else S_MIN
        fn = g(math.exp(nxt))
        if (fn >= 0) != (fa >= 0):
            b_, fb = nxt, fn
            break
        a, fa = nxt, fn
        step *= 2
    side = 0
    for _ in range(30):
        c = (a * fb - b_ * fa) / (fb - fa)
        fc = g(math.exp(c))
        if abs(fc) < 0.005:
            return math.exp(c)
        if (fc >= 0) == (fb >= 0):
            b_, fb = c, fc
            if side == -1:
                fa /= 2
            side = -1
        else:
            a, fa = c, fc
            if side == 1:
                fb /= 2
            side = 1
    return math.exp(c)


start = time.time()
rows = []
jobs = []
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for problem, blocks in BLOCKS.items():
        model = model_crossings(problem)
        for b in blocks:
            seq = sim_time(problem, "bandwidth", 1, b, 1.0)
            for p in (p for p in PROCS if p <= b):
                speedup_here = seq / sim_time(problem, "bandwidth", p, b, 1.0)
                for variant in ("bandwidth", "network"):
                    guess = model[(variant, p, b)]
                    jobs.append(((problem, variant, p, b, guess, speedup_here),
                                 pool.submit(sim_crossing, problem, variant, p, b, seq, guess)))
    for i, ((problem, variant, p, b, guess, speedup_here), job) in enumerate(jobs, 1):
        s_sim = job.result()
        ratio = lambda s: None if s is None else MBIT * s / GHZ  # noqa: E731  Mbit per GHz
        rows.append({"problem": problem, "variant": variant, "p": p, "b": b, "speedup_at_batcave": speedup_here,
                     "model_scale": guess, "sim_scale": s_sim, "model_mbit_per_ghz": ratio(guess),
                     "sim_mbit_per_ghz": ratio(s_sim)})
        show = lambda v: "never" if v is None else f"1:{v:.3g}"  # noqa: E731
        print(f"[{i:3d}/{len(jobs)}] {problem:8s} {variant:9s} p={p} b={b:5d}  speedup at Bat Cave "
              f"{speedup_here:5.2f}  speedup 1 from  model {show(ratio(guess)):>8s}  sim {show(ratio(s_sim)):>8s}",
              flush=True)

with open(here / "results.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    for r in rows:
        w.writerow({k: ("never" if v is None else v) for k, v in r.items()})

fig, axes = plt.subplots(2, 3, figsize=(15, 8.5), sharey=True)
for row, variant in enumerate(("bandwidth", "network")):
    for col, problem in enumerate(BLOCKS):
        ax = axes[row][col]
        for p, colour in zip(PROCS, ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")):
            pts = [r for r in rows if r["problem"] == problem and r["variant"] == variant and r["p"] == p]
            bs = [r["b"] for r in pts if r["model_mbit_per_ghz"] is not None]
            ax.plot(bs, [r["model_mbit_per_ghz"] for r in pts if r["model_mbit_per_ghz"] is not None], "-",
                    color=colour, label=f"p = {p} model")
            sb = [r["b"] for r in pts if r["sim_mbit_per_ghz"] is not None]
            ax.plot(sb, [r["sim_mbit_per_ghz"] for r in pts if r["sim_mbit_per_ghz"] is not None], "o",
                    color=colour, label=f"p = {p} simulation")
        ax.axhline(RULE, color="k", ls="--", lw=1, label="rule 1:500")
        ax.axhline(MBIT / GHZ, color="gray", ls=":", lw=1, label="Bat Cave 1:107")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{problem}: {'bandwidth only' if variant == 'bandwidth' else 'whole network'} faster")
        ax.set_xlabel("block size b")
        if col == 0:
            ax.set_ylabel("Mbit per GHz for speedup 1")
        ax.grid(True, which="both", alpha=0.3)
axes[0][0].legend(fontsize=7)
fig.suptitle("Seed 000's rule of thumb on Bat Cave: network speed per GHz at which p processors match one")
fig.tight_layout()
fig.savefig(here / "rule-of-thumb.png", dpi=110)
print(f"{len(rows)} crossings in {time.time() - start:.0f} s; results.csv, rule-of-thumb.png")
