#!/usr/bin/env python3
"""Adds a dummy of each kind of thing to a copy of wulf's sources, at exactly the touch points
ARCHITECTURE.md "How to add ..." names, builds the copy, and checks that each dummy is taken
everywhere the table it is a row of reaches:

  a strategy    its file (tests/dummy_kinds/dummy.cpp) and X(dummy) in WULF_STRATEGIES;
  an allreduce  its schedule (a value of NbAlgorithm, a branch of nb_schedule) and one row of
                allreduce_table;
  a problem     one row of problem_table, its maker in the row.

Then the copy's generic tests, which iterate the registries, run with the dummies in them
(engines on seq, real and sim, descriptors, the job read back, the allreduce rows' reach, the
schedules' sums, the problems' listing), and the copy's wulf trains the dummy problem with the
dummy strategy and the dummy allreduce on every engine and re-runs the record.

  dummy_kinds.py SOURCE WORKDIR      (about 5 minutes on 2 cores: the copy is built whole)
"""
import json
import os
import shutil
import subprocess
import sys

source, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
copy, build = os.path.join(work, "src"), os.path.join(work, "build")


def fail(text):
    print("dummy_kinds: " + text, file=sys.stderr)
    sys.exit(1)


def insert(path, anchor, text, after=True):
    """Puts text after (or before) the one place anchor is found in the copy's file."""
    full = os.path.join(copy, path)
    with open(full) as f:
        s = f.read()
    if s.count(anchor) != 1:
        fail(f"{path}: the touch point '{anchor}' is there {s.count(anchor)} times, not once")
    at = s.index(anchor) + (len(anchor) if after else 0)
    with open(full, "w") as f:
        f.write(s[:at] + text + s[at:])


def run(cmd, **kw):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if r.returncode != 0:
        fail(f"exit {r.returncode}: {' '.join(cmd)}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    return r.stdout


shutil.rmtree(work, ignore_errors=True)
os.makedirs(copy)
for item in ["CMakeLists.txt", "cmake", "core", "sim", "real", "platforms", "experiments", "tests"]:
    (shutil.copytree if os.path.isdir(os.path.join(source, item)) else shutil.copy)(
        os.path.join(source, item), os.path.join(copy, item))

# The strategy: its file, one registry line.
shutil.copy(os.path.join(source, "tests/dummy_kinds/dummy.cpp"), os.path.join(copy, "core/train/strategies/dummy.cpp"))
insert("core/train/strategy.cpp", "X(overlap)", " X(dummy)")
# The allreduce: its schedule (ring's steps under a name of its own), one row.
insert("core/comm/allreduce_algorithms.hpp", "hierarchical_rabenseifner, rings", ", dummy")
insert("core/comm/nb_allreduce.cpp", "  if (ranks <= 1 || n == 0) return {};\n",
       "  if (algorithm == NbAlgorithm::dummy && n >= static_cast<std::size_t>(ranks)) return ring_schedule(ranks, rank, n);\n")
table = os.path.join(copy, "core/comm/allreduce_algorithms.hpp")
with open(table) as f:
    s = f.read()
end = s.rfind("};", s.index("allreduce_table[] = {"), s.index("inline constexpr std::size_t allreduce_count"))
if end < 0:
    fail("core/comm/allreduce_algorithms.hpp: no end of allreduce_table")
with open(table, "w") as f:
    f.write(s[:end] + '    {.name = "dummy", .scheduled = true, .schedule = NbAlgorithm::dummy, .help = "a dummy ring"},\n'
            + s[end:])
# The problem: one row, its maker in it (XOR's four patterns, 2-2-1).
insert("core/data/problems.cpp", "constexpr ProblemKind problem_table[] = {\n", """    {.name = "xor",
     .usage = "xor",
     .help = "a dummy: XOR's 4 patterns, 2-2-1 (tests/dummy_kinds)",
     .make = [](std::string_view, bool, const ProblemOptions&) {
       Problem p;
       p.name = "xor";
       p.description = "XOR";
       p.train.inputs.resize(2, 4);
       p.train.inputs << 0, 0, 1, 1, 0, 1, 0, 1;
       p.train.targets.resize(1, 4);
       p.train.targets << 0, 1, 1, 0;
       p.train.labels = {0, 1, 1, 0};
       p.defaults = {{2}, Activation::sigmoid, Activation::sigmoid, Loss::mse, 2.0, 0.9,
                     Learning::block, MomentumRule::classic, 4, 100, "tests/dummy_kinds"};
       return p;
     }},
""")

os.makedirs(build)
run(["cmake", "-S", copy, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DWULF_NATIVE=OFF"])
tests = ["test_engines", "test_trainer", "test_rerun", "test_problems", "test_collective_choice", "test_overlap"]
run(["cmake", "--build", build, "--parallel", str(os.cpu_count() or 2), "--target",
     "wulf", "wulf-rank-sim", "wulf-rank-real", "wulf-platform", *tests])

# The copy's generic tests, with the dummies in the registries.
generic = {
    "test_engines": "engines.every_registered_strategy_runs_on_seq_real_and_sim",
    "test_trainer": "trainer.every_registered_strategy_has_a_whole_descriptor",
    "test_rerun": "rerun.every_registered_strategy_reads_back_and_owns_its_options:"
                  "rerun.the_job_reads_back_as_it_was_written_for_every_engine_and_strategy",
    "test_problems": "problems.every_row_is_taken_and_listed",
    "test_collective_choice": "collective_choice.every_allreduce_row_reaches_the_options_the_library_the_schedules_and_the_help",
    "test_overlap": "overlap.every_schedule_gives_every_rank_the_sum_at_any_count_of_ranks_and_values",
}
for program, names in generic.items():
    out = run([os.path.join(build, "tests", program), "--gtest_filter=" + names], cwd=os.path.join(build, "tests"))
    ran = sum(1 for line in out.splitlines() if line.startswith("[       OK ]"))
    if ran != len(names.split(":")):
        fail(f"{program}: {ran} of {len(names.split(':'))} tests ran\n{out}")

# The copy's wulf takes each dummy by its name, lists it, and runs them together everywhere.
wulf = os.path.join(build, "wulf")
help_text = " ".join(run([wulf, "train", "--help"]).split())
for shown in ["dummy (full-batch gradient descent", "dummy (a dummy ring)", "xor a dummy: XOR's 4 patterns"]:
    if shown not in help_text:
        fail(f"wulf train --help does not show '{shown}'")
toy4 = os.path.join(copy, "tests/platforms/toy4.xml")
common = ["train", "--problem", "xor", "--strategy", "dummy", "--epochs", "5", "-q"]
engines = {"seq": [], "real": ["--engine", "real", "--np", "2", "--oversubscribe", "on"],
           "sim": ["--engine", "sim", "--np", "2", "--platform", toy4]}
errors = {}
for name, engine in engines.items():
    allreduce = [] if name == "seq" else ["--allreduce", "dummy"]
    out = os.path.join(work, name + ".json")
    run([wulf, *common, *engine, *allreduce, "--out", out])
    with open(out) as f:
        r = json.load(f)
    c = r["config"]
    if (c["strategy"], c["problem"]) != ("dummy", "xor") or (name != "seq" and c["collectives"]["allreduce"] != "dummy"):
        fail(f"{out}: strategy {c['strategy']}, problem {c['problem']}, allreduce {c.get('collectives')}")
    errors[name] = [h["train_rmse"] for h in r["history"]]
# p = 2 on 4 patterns: each rank sums 2, and the two sums are added once; seq adds the four in
# order. Round-off apart, the same trajectory.
for name in ["real", "sim"]:
    if any(abs(a - b) > 1e-6 for a, b in zip(errors["seq"], errors[name])) or len(errors[name]) != 6:
        fail(f"{name}'s errors {errors[name]} are not seq's {errors['seq']}")
if errors["real"] != errors["sim"]:
    fail(f"real's errors {errors['real']} are not sim's {errors['sim']}")
run([wulf, "train", "--rerun", os.path.join(work, "sim.json"), "--out", os.path.join(work, "rerun.json"), "-q"])
with open(os.path.join(work, "rerun.json")) as f:
    if [h["train_rmse"] for h in json.load(f)["history"]] != errors["sim"]:
        fail("the re-run of the sim record does not give its errors")
# overlap's buckets take the dummy allreduce too
run([wulf, "train", "--problem", "xor", "--strategy", "overlap", "--bucket-allreduce", "dummy", "--epochs", "2",
     "--engine", "sim", "--np", "2", "--platform", toy4, "-q", "--out", os.path.join(work, "overlap.json")])
print("dummy_kinds: a strategy, an allreduce and a problem added at their touch points alone; all taken, listed and run")
