#!/usr/bin/env python3
"""Sets two folders of run.sh's records side by side, field for field.

Records of simulated runs must agree exactly; in records of wall-clock runs (seq, real) the
times are allowed to differ (keys named below), every other field must agree. Also compares
the printed output of `platform info`, whose JSON is the whole answer.

    compare.py BEFORE AFTER
"""
import json, math, pathlib, re, sys

WALL = re.compile(r'(^|\.)(time_s|seconds|forward|backward|update|test|comm|poll|flops_per_s|mflops_per_rank|'
                  r'cents_per_mflops|load_seconds|wall_s|per_iteration_s)(\[|$|\.)')
VOLATILE = re.compile(r'(^|\.)(versions|date|started|build_flags)(\.|$)')


def walk(a, b, path, wall, out):
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            out.append(f'{path}: keys {list(a)} != {list(b)}')
        for k in a:
            if k in b:
                walk(a[k], b[k], f'{path}.{k}' if path else k, wall, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f'{path}: {len(a)} items != {len(b)}')
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f'{path}[{i}]', wall, out)
    elif type(a) != type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        out.append(f'{path}: {a!r} != {b!r}')
    elif a != b:
        if VOLATILE.search(path) or (wall and WALL.search(path)):
            return
        out.append(f'{path}: {a!r} != {b!r}')


def main():
    before, after = map(pathlib.Path, sys.argv[1:3])
    bad = 0
    names = sorted(p.name for p in before.glob('*.json'))
    for name in names:
        a = json.loads((before / name).read_text())
        if not (after / name).exists():
            print(f'{name}: missing after'); bad += 1; continue
        b = json.loads((after / name).read_text())
        wall = name.startswith(('seq-', 'real-'))
        diffs = []
        walk(a, b, '', wall, diffs)
        print(f'{name}: ' + ('same' + (' (wall-clock times aside)' if wall else '') if not diffs else f'{len(diffs)} differences'))
        for d in diffs[:10]:
            print('   ', d)
        bad += bool(diffs)
    for name in ('info.txt', 'info-toy.txt'):
        a, b = (before / name).read_text(), (after / name).read_text()
        ok = json.loads(a) == json.loads(b) if a.lstrip().startswith('{') else a == b
        print(f'{name}: ' + ('same' if ok else 'differs')); bad += not ok
    for name in ('exits.txt',):
        a = (before / name).read_text() if (before / name).exists() else ''
        b = (after / name).read_text() if (after / name).exists() else ''
        print(f'exit codes: ' + ('same' if a == b else f'differ: {a!r} vs {b!r}')); bad += a != b
    print(f'{len(names)} records compared, {bad} differ')
    return 1 if bad else 0


sys.exit(main())
