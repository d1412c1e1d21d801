#!/usr/bin/python3
"""Runs the shell examples of README.md and docs/*.md and checks the lines they show, as
SimGrid's tesh files do, so that a page cannot go stale.

    doc_examples.py BUILD_DIR [--slow] [--list] [FILE.md ...]

An example is a ```console block. A line "$ COMMAND" is run with bash from the repository's
root; the lines after it, up to the next "$ " line or the block's end, are what it must print
(its standard output and error together), in order: each is the start of a line it printed
(trailing blanks aside), and two of them follow each other in its output unless a line "..."
between them stands for any lines. Without a leading "...", the first expected line is the
first line printed. A command must exit 0.

The line before a block may mark it: `<!-- example: slow -->` (run only with --slow: it takes
long, needs root or the testbed, or reads MNIST), `<!-- example: skip -->` (never run here: a
real cluster, a destructive or interactive command). In a command, `build/` names BUILD_DIR,
`sudo ` is dropped (the tests run as root or not at all), and `/tmp/` is a folder of the
example's own, removed after it.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def examples(path):
    """[(line, mark, [(command, [expected lines])])] of the file's console blocks."""
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        start = i + 1
        mark = ""
        if i > 0:
            m = re.fullmatch(r"\s*<!-- example: (slow|skip) -->\s*", lines[i - 1])
            mark = m.group(1) if m else ""
        i += 1
        steps = []
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line.rstrip())
            elif line.strip():
                raise SystemExit("%s:%d: a console block's first line must be a command ($ ...)" % (path, i + 1))
            i += 1
        if i == len(lines):
            raise SystemExit("%s:%d: the console block is not closed" % (path, start))
        out.append((start, mark, steps))
        i += 1
    return out


def matches(expected, printed):
    """'' when the printed lines show the expected ones, else what is missing."""
    want = [e for e in expected if e != ""]
    if not want:
        return ""
    at = 0
    gap = False  # may lines come before the next expected one?
    for k, e in enumerate(want):
        if e == "...":
            gap = True
            continue
        found = None
        for j in range(at, len(printed)):
            if printed[j].rstrip().startswith(e):
                found = j
                break
            if not gap:
                break
        if found is None:
            return "expected line %d %r%s" % (k + 1, e, " at once" if not gap else "")
        at, gap = found + 1, False
    return ""


def run(command, build, scratch):
    command = re.sub(r"(^|[\s;&|(])build/", lambda m: m.group(1) + build + "/", command)
    command = re.sub(r"(^|[\s;&|(])sudo ", lambda m: m.group(1), command)
    command = command.replace("/tmp/", scratch + "/")
    p = subprocess.run(["bash", "-c", command], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace", timeout=1800)
    return p.returncode, p.stdout.split("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("build")
    ap.add_argument("--slow", action="store_true", help="run the examples marked slow, and only them")
    ap.add_argument("--list", action="store_true", help="list the examples, run none")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    files = a.files or [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
    failed = ran = 0
    for path in files:
        name = os.path.relpath(path, ROOT)
        for line, mark, steps in examples(path):
            wanted = mark == "slow" if a.slow else mark == ""
            if a.list:
                print("%s:%d %s %s" % (name, line, mark or "fast", " && ".join(c for c, _ in steps)))
                continue
            if not wanted:
                continue
            scratch = tempfile.mkdtemp(prefix="wulf-doc-example-")
            try:
                for command, expected in steps:
                    expected = [e.replace("/tmp/", scratch + "/") for e in expected]
                    ran += 1
                    code, printed = run(command, build, scratch)
                    fault = "exit %d" % code if code != 0 else matches(expected, printed)
                    if fault:
                        failed += 1
                        print("%s:%d: $ %s: %s; it printed:\n%s" % (name, line, command, fault,
                                                                   "\n".join(printed[-40:])))
                        break
                    print("%s:%d: ok: $ %s" % (name, line, command))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    if not a.list:
        print("%d commands run, %d failed" % (ran, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
