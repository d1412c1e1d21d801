#!/usr/bin/env python3
"""Fails on an include that runs upward through wulf's layers (ARCHITECTURE.md, "Layers"),
and on a file built into the other library than its folder's.

core/'s folders are layered, lowest first:

    util < nn < data < comm < train < job  |  engine < predict < cli
    (wulf_rank: what a rank runs)          |  (wulf_front: the front end)

A file may include its own folder's headers and those of lower folders, never a higher one's,
so nothing of wulf_rank includes the front end's. core/CMakeLists.txt builds each folder's
files into its library: wulf_rank's list names only wulf_rank's folders, wulf_front's only the
front end's. The rank programs (core/comm/mpi/, core/job/rank.*, sim/ and real/ but for
wulf-platform) include nothing from engine/, predict/ or cli/: what runs inside every rank
carries no launcher, benchmark or command. Prints every offence as FILE:LINE: what; exits 1
if there is one.

    check_layers.py SOURCE_DIR
"""
import pathlib
import re
import sys

LAYERS = {'util': 0, 'nn': 1, 'data': 2, 'comm': 3, 'train': 4, 'job': 5, 'engine': 6, 'predict': 7, 'cli': 8}
RANK_FORBIDDEN = {'engine', 'predict', 'cli'}
LIBRARIES = {'wulf_rank': set(LAYERS) - RANK_FORBIDDEN, 'wulf_front': RANK_FORBIDDEN}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"')


def folder_of(path, root):
    parts = path.relative_to(root).parts
    return parts[1] if parts[0] == 'core' and len(parts) > 2 else None


def is_rank_program(path, root):
    rel = path.relative_to(root).as_posix()
    if rel.startswith('core/comm/mpi/') or rel.startswith('core/job/rank.'):
        return True
    return rel.startswith(('sim/', 'real/')) and 'platform' not in path.name


def library_offences(root):
    """Each library's sources in core/CMakeLists.txt against the folders it may hold."""
    text = (root / 'core' / 'CMakeLists.txt').read_text()
    offences = []
    for library, folders in LIBRARIES.items():
        m = re.search(r'add_library\(' + library + r' STATIC(.*?)\)', text, re.S)
        if not m:
            offences.append(f'core/CMakeLists.txt: no add_library({library} STATIC ...)')
            continue
        for source in re.findall(r'^\s*([a-z_]+)/[a-z_0-9]+\.cpp\s*$', m.group(1), re.M):
            if source not in folders:
                offences.append(f'core/CMakeLists.txt: {library} builds a file of {source}/, '
                                f'which belongs to the other library')
    return offences


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
            if mine and mine != theirs and LAYERS[theirs] > LAYERS[mine]:
                offences.append(f'{where}: {mine}/ includes {theirs}/, a layer above it')
            if rank and theirs in RANK_FORBIDDEN:
                offences.append(f'{where}: a rank program includes {theirs}/')
    offences += library_offences(root)
    for o in offences:
        print(o)
    print(f'{len(files)} files read, {len(offences)} upward includes')
    return 1 if offences else 0


sys.exit(main())
