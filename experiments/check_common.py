"""What the experiments' CTest checks share (experiments/*/check.py, label `experiments`).

A check runs its experiment's own script into a work folder (OUT=..., experiments/common.sh),
reads the figures the experiment's README states (its tables, and a few sentences), and
compares each with the run's. The figures compared are simulated, so deterministic: the
tolerance is the README's own precision, i.e. a figure is the same when the run's value,
rounded to the digits the README prints, is the README's number. Anything else is a change
in the code or a README gone stale; the check names it and exits 1. Wall-clock figures are
never compared.

    experiments/NAME/check.py [--option ...] [build dir] [work dir]

The build folder defaults to build/; the work folder to a temporary one, removed when the
check passes. A work folder given is emptied first, if it is one a check made (it holds
.experiment-check) or is empty: CTest passes build/experiments/NAME.
"""
import csv
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

EXPERIMENTS = pathlib.Path(__file__).resolve().parent
ROOT = EXPERIMENTS.parent
MARKER = ".experiment-check"
PLOT_PYTHON = "/usr/bin/python3"  # Debian's, with python3-matplotlib (experiments/common.sh)
# A README number: digits grouped by spaces ("1 729 440") are one number.
NUMBER = re.compile(r"[+-]?\d{1,3}(?: \d{3})+(?:\.\d+)?(?!\d)|[+-]?\d+(?:\.\d+)?")


def numbers(text):
    """The numbers in a README cell or sentence, as written ("**8.51 s**" -> ["8.51"])."""
    return [m.group(0) for m in NUMBER.finditer(text)]


def value_of(stated):
    return float(stated.replace(" ", ""))


def decimals(stated):
    return len(stated.split(".")[1]) if "." in stated else 0


def work_folder(given, name):
    if given is None:
        return pathlib.Path(tempfile.mkdtemp(prefix=f"wulf-check-{name}-")), True
    work = pathlib.Path(given).resolve()
    if work.exists():
        if any(work.iterdir()) and not (work / MARKER).exists():
            sys.exit(f"{work} is not empty and no check made it ({MARKER} missing): not emptying it")
        shutil.rmtree(work)
    work.mkdir(parents=True)
    (work / MARKER).write_text("made by experiments/check_common.py; emptied by the next check\n")
    return work, False


class Check:
    """One experiment's check: check = Check(__file__); check.run(...); check.same(...); check.finish()."""

    def __init__(self, script):
        self.folder = pathlib.Path(script).resolve().parent
        self.name = self.folder.name
        self.options = [a for a in sys.argv[1:] if a.startswith("--")]  # the experiment's own, if any
        args = [a for a in sys.argv[1:] if not a.startswith("--")]
        self.build = pathlib.Path(args[0]).resolve() if args else ROOT / "build"
        self.work, self.temporary = work_folder(args[1] if len(args) > 1 else None, self.name)
        self.readme_path = self.folder / "README.md"
        self.readme = self.readme_path.read_text()
        self.compared = 0
        self.differing = []
        self.start = time.time()
        print(f"experiments/{self.name}: the figures of {self.readme_path.relative_to(ROOT)} against a run into "
              f"{self.work}")

    # Running the experiment.

    def run(self, script, *args, env=None):
        """Runs the experiment's script (a file of its folder; a .py one with the python that
        has matplotlib, as common.sh's) with OUT set to the work folder."""
        command = [str(self.folder / script), *map(str, args)]
        if script.endswith(".py"):
            command.insert(0, PLOT_PYTHON)
        environment = dict(os.environ, OUT=str(self.work), **(env or {}))
        shown = " ".join(f"{k}={v}" for k, v in (env or {}).items())
        print(f"$ {shown + ' ' if shown else ''}OUT={self.work} {' '.join(command)}", flush=True)
        t0 = time.time()
        done = subprocess.run(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        if done.returncode != 0:
            print(done.stdout)
            sys.exit(f"experiments/{self.name}: {script} failed (exit {done.returncode})")
        print(f"  ({time.time() - t0:.1f} s)", flush=True)
        return done.stdout

    def path(self, name):
        return self.work / name

    def csv(self, name):
        with open(self.work / name, newline="") as f:
            return list(csv.DictReader(f))

    def record(self, name):
        return json.loads((self.work / "records" / name).read_text())

    # Reading the README.

    def tables(self):
        """Every table of the README: a list of rows (the header first), each a list of cells."""
        tables, rows = [], []
        for line in self.readme.split("\n") + [""]:
            if line.startswith("|"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                    rows.append(cells)
            elif rows:
                tables.append(rows)
                rows = []
        return tables

    def table(self, *header):
        """The README table whose header starts with these cells: (header, rows)."""
        found = [t for t in self.tables() if t[0][:len(header)] == list(header)]
        if len(found) != 1:
            sys.exit(f"experiments/{self.name}: {len(found)} tables of README.md have a header starting "
                     f"{' | '.join(header)} (expected 1)")
        return found[0][0], found[0][1:]

    def sentence(self, pattern):
        """The groups of a regular expression's match in the README's prose (lines joined,
        **bold** and `code` marks dropped); a missing sentence is a difference."""
        text = re.sub(r"\s+", " ", self.readme.replace("**", "").replace("`", ""))
        m = re.search(pattern, text)
        if not m:
            self.differing.append(f"README sentence /{pattern}/ not found")
            print(f"  DIFFERS  README has no sentence matching /{pattern}/")
        return m.groups() if m else None

    # Comparing.

    def same(self, what, stated, value):
        """Compares a README figure (a number as written, or any text) with the run's value,
        rounded to the README's digits (numbers) or as it is (text)."""
        self.compared += 1
        if isinstance(value, str):
            ok, shown = stated == value, value
        else:
            d = decimals(stated)
            shown = f"{value:+.{d}f}" if stated[0] in "+-" else f"{value:.{d}f}"
            ok = value_of(shown) == value_of(stated)
            if not float(value).is_integer():
                shown = f"{shown} ({value:.{d + 3}f})"
        print(f"  {'ok     ' if ok else 'DIFFERS'}  {what}: README {stated}, run {shown}")
        if not ok:
            self.differing.append(f"{what}: README {stated}, run {shown}")
        return ok

    def same_numbers(self, what, cell, values, names=None):
        """Compares the numbers of a README cell, in order, with the run's values (named by
        names, one each, if given)."""
        stated = numbers(cell)
        if len(stated) != len(values):
            self.differing.append(f"{what}: README cell '{cell}' holds {len(stated)} numbers, expected {len(values)}")
            print(f"  DIFFERS  {self.differing[-1]}")
            return
        for k, (s, v) in enumerate(zip(stated, values)):
            self.same(f"{what}, {names[k]}" if names else what if len(values) == 1 else f"{what} [{k + 1}]", s, v)

    def finish(self):
        took = time.time() - self.start
        if self.differing:
            print(f"\nexperiments/{self.name}: {len(self.differing)} of {self.compared} figures differ from "
                  f"README.md (run kept in {self.work}):")
            for d in self.differing:
                print(f"  {d}")
            sys.exit(1)
        if self.temporary:
            shutil.rmtree(self.work)
        print(f"\nexperiments/{self.name}: all {self.compared} figures as README.md states them ({took:.0f} s)")
