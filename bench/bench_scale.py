#!/usr/bin/env python3
"""Scale benchmark for kidx: a store grown to 100,000 and 1,000,000 runs, per backend.

Run from the repository root:

    .venv/bin/python bench/bench_scale.py [--sizes 100000 1000000] [--backend sqlite postgresql]

For each backend the store is grown in chunks of --chunk runs (each chunk one
`kidx apply -f chunk.json`, as a team's store grows batch by batch), and at each size in
--sizes it measures, in this one run:

* the apply rate of the chunks that took it there (runs/s, wall time of `kidx apply`);
* cold-process wall time (median of --repeats interleaved rounds) of
  `kidx get runs -l page=p0042` (exactly 1,000 rows), `kidx describe run NAME`, a
  reference-following field selector (`--field-selector workload.metadata.name=W`) and
  `python -c pass`, each also as a multiple of the bare interpreter;
* the catalog's size per run (SQLite: catalog.sqlite and its WAL; PostgreSQL: the catalog
  tables, and the object table separately).

Targets (from the project's goals): at 1,000,000 runs `get -l` returning 1,000 rows within
0.5 s on either backend; the SQLite catalog at most 2,000 bytes per run at 100,000 runs
(with a per-table breakdown from SQLite's dbstat, where this SQLite has it) and no larger
per run at 1,000,000 than at 100,000. The
report (text and JSON) goes to --out; bench/render_performance.py turns the JSON into
docs/performance.md. The script exits 0: it is a report, and a missed target shows FAIL.

PostgreSQL: --pg-url URL uses an existing server (the database must be empty); without
it, a throwaway cluster is started in a temporary folder with the same helper the tests
use (tests/pg_server.py), with PostgreSQL's default durability (fsync and synchronous
commit on, unlike the tests' cluster), and stopped at the end.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from bench_store import (  # noqa: E402
    PAGE_KEY,
    Report,
    code_version,
    cold_times,
    generate,
    kidx_command,
    median,
    settle,
    timed_run,
)

TARGET_GET_S = 0.5
TARGET_SQLITE_BYTES_PER_RUN = 2_000  # at 100,000 runs
TARGET_BYTES_AT = 100_000
PAGE = f"{PAGE_KEY}=p0042"


def write_chunk(path: Path, first: int, count: int, seed: int, with_shared: bool) -> tuple[str, str]:
    """One chunk as a JSON List; returns (a run name to describe, a workload name to select by)."""
    data = generate(count, seed, first=first)
    items = (data.shared if with_shared else []) + data.runs
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, ensure_ascii=False),
                    encoding="utf-8")
    run = data.sample_run["metadata"]["name"]
    workload = next(d for d in data.shared if d["kind"] == "Workload")["metadata"]["name"]
    del data, items
    gc.collect()
    return run, workload


class Backend:
    name = ""

    def __init__(self, work: Path):
        self.work = work

    @property
    def store(self) -> str:
        raise NotImplementedError

    def catalog_bytes(self) -> dict[str, int]:
        raise NotImplementedError

    def table_bytes(self) -> dict[str, int] | None:
        """Bytes of each table and index of the catalog, where the database can tell."""
        return None

    def close(self) -> None:
        pass


class SQLiteBackend(Backend):
    name = "sqlite"

    def __init__(self, work: Path):
        super().__init__(work)
        self.root = work / "sqlite-store"
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def store(self) -> str:
        return str(self.root)

    def catalog_bytes(self) -> dict[str, int]:
        files = [self.root / n for n in ("catalog.sqlite", "catalog.sqlite-wal")]
        catalog = sum(f.stat().st_size for f in files if f.exists())
        objects = sum(f.stat().st_blocks * 512 for f in (self.root / "objects").rglob("*") if f.is_file())
        return {"catalog": catalog, "objects": objects}

    def table_bytes(self) -> dict[str, int] | None:
        """SQLite's dbstat (when this SQLite was built with it): the pages of each table and index."""
        import sqlite3

        connection = sqlite3.connect(f"file:{self.root / 'catalog.sqlite'}?mode=ro", uri=True)
        try:
            return dict(connection.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"))
        except sqlite3.OperationalError:  # no such table: dbstat
            return None
        finally:
            connection.close()

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class PostgreSQLBackend(Backend):
    name = "postgresql"

    def __init__(self, work: Path, url: str | None):
        super().__init__(work)
        self.cluster = None
        if url is None:
            sys.path.insert(0, str(REPO / "tests"))
            from pg_server import PostgresServer, server_binaries  # the tests' throwaway cluster

            binaries = server_binaries()
            if binaries is None:
                raise RuntimeError("no PostgreSQL server binaries found (initdb, pg_ctl); use --pg-url")
            # durable: PostgreSQL's default fsync and synchronous commit, as a team's server runs
            self.cluster = PostgresServer(binaries, durable=True)
            self.cluster.start()
            url = self.cluster.create_database("kidx_bench")
        self.url = url

    @property
    def store(self) -> str:
        return self.url

    def catalog_bytes(self) -> dict[str, int]:
        query = (
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
        )
        import psycopg

        with psycopg.connect(self.url) as connection:
            sizes = dict(connection.execute(query).fetchall())
        objects = sum(v for k, v in sizes.items() if "object" in k and "objects_by" not in k)
        return {"catalog": sum(sizes.values()) - objects, "objects": objects, "tables": sizes}

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()


def bench_backend(backend: Backend, args, report: Report, kidx: list[str]) -> None:
    say = report.say
    say(f"\n=== backend {backend.name} " + "=" * 50)
    report.section = f"{backend.name} backend"
    sizes = sorted(args.sizes)
    grown = 0
    sample_run = workload = None
    rows, query_rows, size_rows, table_rows = [], [], [], []
    per_run_catalog = {}
    for size in sizes:
        applied_s = 0.0
        chunks = 0
        while grown < size:
            count = min(args.chunk, size - grown)
            path = args.out / "scale-chunk.json"
            run, wl = write_chunk(path, grown, count, args.seed, with_shared=grown == 0)
            if sample_run is None:
                sample_run, workload = run, wl
            settle()
            elapsed, rc, err = timed_run([*kidx, "apply", "-f", str(path), "-o", "name", "--store", backend.store])
            if rc != 0:
                say(f"!! apply of runs {grown:,}..{grown + count - 1:,} failed (exit {rc}): {err.strip()[:500]}")
                report.check(f"{backend.name}: apply to {size:,}", "failed", "", False)
                return
            applied_s += elapsed
            chunks += 1
            grown += count
            say(f"  {backend.name}: applied runs up to {grown:,} ({count / elapsed:,.0f} runs/s)")
        previous = sizes[sizes.index(size) - 1] if sizes.index(size) else 0
        rows.append([f"{size:,}", f"{chunks}", f"{applied_s:.0f} s", f"{(size - previous) / applied_s:,.0f} runs/s"])

        select = ["get", "runs", "--field-selector", f"workload.metadata.name={workload}", "--store", backend.store]
        proc = subprocess.run([*kidx, *select], capture_output=True, text=True)
        ref_rows = max(0, proc.stdout.count("\n") - 1) if proc.returncode == 0 else None
        if proc.returncode != 0:
            say(f"!! reference-following selector failed: {proc.stderr.strip()[:300]}")
        page = subprocess.run([*kidx, "get", "runs", "-l", PAGE, "--no-headers", "--store", backend.store],
                              capture_output=True, text=True)
        say(f"  get runs -l {PAGE}: {page.stdout.count(chr(10)):,} rows; "
            f"--field-selector workload.metadata.name=…: {ref_rows} rows")
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            f"get runs -l {PAGE}": [*kidx, "get", "runs", "-l", PAGE, "--store", backend.store],
            "describe run NAME": [*kidx, "describe", "run", sample_run, "--store", backend.store],
        }
        if ref_rows is not None:
            commands["get runs --field-selector workload.metadata.name=W"] = [*kidx, *select]
        settle()
        try:
            times = cold_times(commands, args.repeats)
        except RuntimeError as exc:
            say(f"!! {exc}")
            continue
        base = median(times["python -c pass"])
        for label, values in times.items():
            m = median(values)
            query_rows.append([f"{size:,}", label, f"{m * 1000:.0f} ms", f"{m / base:.2f}x"])
        get_s = median(times[f"get runs -l {PAGE}"])
        target = size >= 1_000_000
        report.check(f"{backend.name}, {size:,} runs: get -l (1,000 rows)", f"{get_s * 1000:.0f} ms",
                     f"<= {TARGET_GET_S * 1000:.0f} ms" if target else "info",
                     (get_s <= TARGET_GET_S) if target else None)
        sizes_now = backend.catalog_bytes()
        per_run = sizes_now["catalog"] / size
        per_run_catalog[size] = per_run
        size_rows.append([f"{size:,}", f"{sizes_now['catalog'] / 1e6:,.0f} MB", f"{per_run:,.0f} B",
                          f"{sizes_now['objects'] / 1e6:,.0f} MB"])
        report.data.setdefault(backend.name, {})[size] = {
            "get_page_s": get_s, "cold_ms": {k: median(v) * 1000 for k, v in times.items()},
            "catalog_bytes": sizes_now["catalog"], "objects_bytes": sizes_now["objects"],
        }
        if backend.name == "sqlite":
            at_target = size == TARGET_BYTES_AT
            report.check(f"sqlite catalog bytes per run at {size:,} runs", f"{per_run:,.0f} B",
                         f"<= {TARGET_SQLITE_BYTES_PER_RUN:,}" if at_target else "info",
                         per_run <= TARGET_SQLITE_BYTES_PER_RUN if at_target else None)
            tables = backend.table_bytes()
            if tables is None:
                say("  (this SQLite has no dbstat: no per-table breakdown)")
            else:
                report.data[backend.name][size]["table_bytes"] = tables
                table_rows.extend([f"{size:,}", name, f"{total / 1e6:,.1f} MB", f"{total / size:,.0f} B"]
                                  for name, total in tables.items())
    report.table(["runs", "chunks", "apply wall", "apply rate"], rows)
    report.table(["runs", "command (cold process)", "median", "x python"], query_rows)
    report.table(["runs", "catalog", "catalog per run", "objects"], size_rows)
    if table_rows:
        report.table(["runs", "sqlite table or index (dbstat)", "size", "per run"], table_rows)
    if backend.name == "sqlite" and len(per_run_catalog) > 1:
        small, large = per_run_catalog[min(per_run_catalog)], per_run_catalog[max(per_run_catalog)]
        report.check(f"sqlite catalog per run at {max(per_run_catalog):,} vs {min(per_run_catalog):,}",
                     f"{large:,.0f} B vs {small:,.0f} B", "no larger", large <= small * 1.02)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--backend", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    parser.add_argument("--chunk", type=int, default=100_000, help="runs per apply (default 100,000)")
    parser.add_argument("--repeats", type=int, default=7, help="cold-process rounds (default 7)")
    parser.add_argument("--pg-url", default=None, help="an empty PostgreSQL database (default: a throwaway cluster)")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args()
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    report = Report(args.out / f"bench_scale-{stamp}.txt")
    kidx = kidx_command()
    work = args.out / f"scale-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    report.say(f"kidx bench_scale  {time.strftime('%Y-%m-%d %H:%M:%S')}  {os.cpu_count()} CPUs  "
               f"python {platform.python_version()}  code {code_version()}")
    try:
        for name in args.backend:
            backend = None
            try:
                backend = SQLiteBackend(work) if name == "sqlite" else PostgreSQLBackend(work, args.pg_url)
                bench_backend(backend, args, report, kidx)
            except Exception as exc:  # a report, not a test: say what failed and go on
                report.say(f"!! backend {name}: {type(exc).__name__}: {exc}")
                report.check(f"{name} backend", "failed", "", False)
            finally:
                if backend is not None:
                    backend.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report.say("\n=== summary " + "=" * 60)
    report.finish(started, title="Scale benchmark", script="bench/bench_scale.py", sizes=sorted(args.sizes),
                  backend=", ".join(args.backend))
    return 0


if __name__ == "__main__":
    sys.exit(main())
