#!/usr/bin/env python3
"""Fails on an include that runs upward through wulf's layers (ARCHITECTURE.md, "Layers").

core/'s folders are layered, lowest first:

    util < nn < data < comm = engine < train < predict < job < cli

A file may include its own folder's headers and those of lower folders, never a higher one's.
comm/ and engine/ stand side by side: engine/ may include comm/'s tables (the allreduce
algorithms'), comm/ never includes engine/. The rank programs
(core/comm/mpi/, core/job/rank.*, sim/ and real/ but for wulf-platform) include nothing from
engine/, predict/ or cli/: what runs inside every rank carries no launcher, benchmark or
command. Prints every offence as FILE:LINE: what; exits 1 if there is one.

    check_layers.py SOURCE_DIR
"""
import pathlib
import re
import sys

LAYERS = {'util': 0, 'nn': 1, 'data': 2, 'comm': 3, 'engine': 3, 'train': 4, 'predict': 5, 'job': 6, 'cli': 7}
APART = {('comm', 'engine')}
RANK_FORBIDDEN = {'engine', 'predict', 'cli'}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"')


def folder_of(path, root):
    parts = path.relative_to(root).parts
    return parts[1] if parts[0] == 'core' and len(parts) > 2 else None


def is_rank_program(path, root):
    rel = path.relative_to(root).as_posix()
    if rel.startswith('core/comm/mpi/') or rel.startswith('core/job/rank.'):
        return True
    return rel.startswith(('sim/', 'real/')) and 'platform' not in path.name


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    files = [p for d in ('core', 'sim', 'real') for p in sorted((root / d).rglob('*'))
             if p.suffix in ('.cpp', '.hpp', '.in')]
    offences = []
    for path in files:
        mine = folder_of(path, root)
        rank = is_rank_program(path, root)
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) not in LAYERS:
                continue
            theirs = m.group(1)
            where = f'{path.relative_to(root)}:{number}'
            if mine and mine != theirs and (LAYERS[theirs] > LAYERS[mine] or (mine, theirs) in APART):
                offences.append(f'{where}: {mine}/ includes {theirs}/, a layer above or beside it')
            if rank and theirs in RANK_FORBIDDEN:
                offences.append(f'{where}: a rank program includes {theirs}/')
    for o in offences:
        print(o)
    print(f'{len(files)} files read, {len(offences)} upward includes')
    return 1 if offences else 0


sys.exit(main())
