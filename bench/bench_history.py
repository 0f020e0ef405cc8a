#!/usr/bin/env python3
"""Where `kidx compare` spends its time and its disk reads on a large store: the history.

Runs one `kidx compare` in this process (its own argv, for example
``compare -l page=p0042 -o csv --store STORE``), with kidx's history reads wrapped, and
prints for each phase the wall time and the bytes this process read from disk
(``/proc/self/io`` read_bytes: what the page cache did not hold), and the counts that
explain them: series looked up, history runs found, objects read from the pack.

``--cold`` first evicts the store's own files from the page cache
(``posix_fadvise(DONTNEED)`` on each file, opened read-only: nothing else's cache is
touched and nothing is written), and says how much of them was cached before and after.
``--walks`` then counts, per series, the reference links the catalog's newest-first
walk steps over (read-only SQL on the catalog, after the timed run, warm).

    .venv/bin/python bench/bench_history.py [--cold] [--walks] -- compare -l page=p0042 -o csv --store STORE
"""

from __future__ import annotations

import argparse
import contextlib
import io
import mmap
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

STORE_FILES = ("catalog.sqlite", "objects/packed.sqlite")


def read_bytes() -> int:
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    return 0


def cached_bytes(path: Path) -> int:
    """Bytes of the file in the page cache (mincore over a read-only mapping)."""
    size = path.stat().st_size
    return _mincore(path, size, mmap.PAGESIZE) if size else 0


def _mincore(path: Path, size: int, page: int) -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    pages = (size + page - 1) // page
    vector = (ctypes.c_ubyte * pages)()
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            return -1
        try:
            if libc.mincore(ctypes.c_void_p(address), size, vector) != 0:
                return -1
        finally:
            libc.munmap(ctypes.c_void_p(address), size)
    finally:
        os.close(fd)
    return sum(1 for v in vector if v & 1) * page


def evict(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


class Phases:
    def __init__(self):
        self.rows: list[list] = []
        self.depth = 0

    @contextlib.contextmanager
    def phase(self, label: str):
        started, before = time.perf_counter(), read_bytes()
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            row = [self.depth, label, time.perf_counter() - started, read_bytes() - before]
            self.rows.append(row)
            print(f"  [{label}: {row[2]:.2f} s, {row[3] / 1e6:,.1f} MB read]", file=sys.__stderr__, flush=True)


def instrument(phases: Phases, counts: dict, per_series: list):
    """Wrap the history's reads (and the selection before it) with timers and counters."""
    from kidx.operations.analyse import compare
    from kidx.operations.select import analysed_runs
    from kidx.store import store as store_module

    Store = store_module.Store
    original_select, original_identities = Store.select, Store.identities
    original_referenced = Store.referenced_manifests
    where = {"phase": "selection"}

    def select(self, query, catalog=None):
        started, before = time.perf_counter(), read_bytes()
        found = original_select(self, query, catalog)
        if where["phase"] == "history":
            per_series.append((query, [e for e in found], time.perf_counter() - started, read_bytes() - before))
            if len(per_series) % 25 == 0:
                done = per_series[-25:]
                print(f"  [{len(per_series)} series looked up; the last 25: {sum(t for *_, t, _ in done):.2f} s, "
                      f"{sum(r for *_, r in done) / 1e6:,.1f} MB read, {sum(len(f) for _, f, _, _ in done)} rows]",
                      file=sys.__stderr__, flush=True)
        return found

    def identities(self, digests):
        digests = list(digests)
        counts[f"objects read ({where['phase']})"] = counts.get(f"objects read ({where['phase']})", 0) + len(digests)
        with phases.phase(f"{where['phase']}: objects from the store (identities)"):
            return original_identities(self, digests)

    def referenced(self, digests, kind, catalog=None):
        with phases.phase(f"{where['phase']}: referenced {kind}"):
            return original_referenced(self, digests, kind, catalog)

    for attribute, wrapper in (("select", select), ("identities", identities), ("referenced_manifests", referenced)):
        setattr(Store, attribute, wrapper)

    def counted(original, phase, label, groups, runs):
        """``original`` (a recent_runs) timed as ``phase``, counting its look-ups and runs."""
        def wrapper(store, registry, condition_sets, window, known=()):
            condition_sets = list(condition_sets)
            counts[groups] = counts.get(groups, 0) + len(condition_sets)
            where["phase"] = phase
            try:
                with phases.phase(label):
                    found = original(store, registry, condition_sets, window, known)
            finally:
                where["phase"] = "after"
            counts[runs] = counts.get(runs, 0) + len(found)
            return found
        return wrapper

    from kidx.operations.select import host_bound

    compare.recent_runs = counted(analysed_runs.recent_runs, "history", "history (recent_runs)",
                                  "series looked up", "history runs read")
    host_bound.recent_runs = counted(host_bound.recent_runs, "host evidence", "host evidence (related_runs)",
                                     "host evidence groups looked up", "host evidence runs read")
    original_select_runs = compare.select_runs

    def select_runs(store, registry, request, conditions=()):
        with phases.phase("selection (select_runs)"):
            selection = original_select_runs(store, registry, request, conditions)
        counts["runs selected"] = len(selection.runs)
        return selection

    compare.select_runs = select_runs


def walks(store_root: Path, per_series: list) -> list[int]:
    """Per series: the links of its first reference the newest-first walk steps over
    (every link from the newest down to the oldest run it kept, or all of them when it
    found fewer than the limit)."""
    import sqlite3

    from kidx.store.sql_catalog import raw_digest

    connection = sqlite3.connect(f"file:{store_root / 'catalog.sqlite'}?mode=ro", uri=True)
    stepped = []
    for query, found, _, _ in per_series:
        first = query.references[0]
        (target_id,) = connection.execute("SELECT id FROM ref_targets WHERE target=? AND field=?",
                                          (raw_digest(first.digests[0]), first.field)).fetchone()
        if len(found) < (query.limit or 0) or not found:
            low = 0
        else:
            names = [e.name for e in found]
            marks = ",".join("?" * len(names))
            (low,) = connection.execute(f"SELECT min(id) FROM objects WHERE kind=? AND name IN ({marks})",
                                        [query.kind, *names]).fetchone()
        (count,) = connection.execute("SELECT count(*) FROM ref_links WHERE target_id=? AND object_id>=?",
                                      (target_id, low)).fetchone()
        stepped.append(count)
    connection.close()
    return stepped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cold", action="store_true", help="evict the store's files from the page cache first")
    parser.add_argument("--walks", action="store_true", help="count the links each series' walk steps over")
    parser.add_argument("argv", nargs=argparse.REMAINDER, help="-- and kidx's own arguments (with --store)")
    args = parser.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    store_root = Path(argv[argv.index("--store") + 1])
    files = [store_root / name for name in STORE_FILES if (store_root / name).exists()]
    for path in files:
        print(f"{path.name}: {path.stat().st_size / 1e9:.2f} GB, {cached_bytes(path) / 1e6:,.0f} MB cached before")
    if args.cold:
        for path in files:
            evict(path)
            print(f"{path.name}: evicted, {cached_bytes(path) / 1e6:,.0f} MB cached after")

    phases, counts, per_series = Phases(), dict[str, int](), list[tuple]()
    started, before = time.perf_counter(), read_bytes()
    from kidx.cli.app import run

    instrument(phases, counts, per_series)
    with phases.phase("kidx run (everything after the imports)"):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = run(argv)
    total, total_read = time.perf_counter() - started, read_bytes() - before
    print(f"exit {code}, {len(out.getvalue().splitlines())} lines of output")
    print(f"total: {total:.2f} s, {total_read / 1e6:,.1f} MB read from disk")
    for depth, label, seconds, read in sorted(phases.rows, key=lambda r: r[0]):
        print(f"  {'  ' * depth}{label}: {seconds:.2f} s, {read / 1e6:,.1f} MB read")
    for key, value in counts.items():
        print(f"  {key}: {value:,}")
    if per_series:
        times = [t for _, _, t, _ in per_series]
        reads = [r for _, _, _, r in per_series]
        rows = [len(f) for _, f, _, _ in per_series]
        print(f"  catalog look-ups (one per series): {len(per_series):,}, {sum(times):.2f} s in all, "
              f"median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms; "
              f"{sum(reads) / 1e6:,.1f} MB read; rows fetched {sum(rows):,} "
              f"(median {statistics.median(rows):.0f} a series)")
    if args.walks and per_series:
        stepped = walks(store_root, per_series)
        print(f"  links of the first reference walked: {sum(stepped):,} in all, "
              f"median {statistics.median(stepped):,.0f} a series, max {max(stepped):,} "
              f"(each probed in up to {len(per_series[0][0].references) - 1} other references' links and in objects)")
    for path in files:
        print(f"{path.name}: {cached_bytes(path) / 1e6:,.0f} MB cached after the run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
