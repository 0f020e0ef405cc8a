#!/usr/bin/env python3
"""Scale benchmark for kidx: a store grown to 1,000,000 and 10,000,000 runs, per backend.

Run from the repository root:

    .venv/bin/python bench/bench_scale.py [--sizes 1000000 10000000] [--backend sqlite postgresql]
        [--until HH:MM] [--chunk-cache FOLDER] [--work FOLDER]

For each backend the store is grown in chunks of --chunk runs (each chunk one
`kidx apply -f chunk.json`, as a team's store grows batch by batch), and at each size in
--sizes it measures, in this one run:

* the apply rate of the chunks that took it there (runs/s, wall time of `kidx apply`) and
  the peak resident memory (RSS) of the largest apply;
* SQLite: what the file system allows: plain Python creating --baseline-files files of
  the objects' size in the same fan-out folders (temporary file, rename, one syncfs), the
  way the store writes each object, as files/s: the ceiling of a one-file-per-object store;
* cold-process wall time (median of --repeats interleaved rounds) and peak RSS of
  `kidx get runs -l page=p0042` (exactly 1,000 rows), `kidx describe run NAME`, a
  reference-following field selector (`--field-selector workload.metadata.name=W`),
  `kidx compare -l page=p0042` (1,000 runs) and `kidx series` of one series (one
  implementation, workload, protocol and GPU) (these two read the selection's history,
  which grows with the store: one run each, killed past --heavy-timeout, repeated only
  when under 5 s), and that series' newest SERIES_TAIL points (`series --tail`: reads
  the series' catalog rows and SERIES_TAIL + 1 of its runs), and `python -c pass`, each
  also as a multiple of the bare interpreter;
  PostgreSQL also `python -c "import psycopg"` and
  `python -c "import psycopg; psycopg.connect(URL).close()"`, the driver's own cost;
* the catalog's size per run (SQLite: catalog.sqlite and its WAL; PostgreSQL: the catalog
  tables, and the object table separately);
* where the applies' time went (each chunk is applied through bench/timed_apply.py, the
  console script with its stages timed; PostgreSQL: also the server's CPU time), and where
  a cold `get -l` and `describe` spend theirs (interpreter, imports, the command's own work).

Targets (issue 29): apply at least 8,000 runs/s; at 1,000,000 runs and more `get -l`
returning 1,000 rows within 0.5 s and 3x the bare interpreter, describe within 2.5x, the
catalog at most 1,000 bytes per run; PostgreSQL `get -l` within 1.3x the driver's import.
The report (text and JSON) goes to --out; bench/render_performance.py turns the JSON into
docs/performance.md. The script exits 0: it is a report, and a missed target shows FAIL.

A 10,000,000-run build takes hours on a small machine (bench/README.md): --until HH:MM
(local time) stops growing a store at that time, and --min-free-gb when the disk runs
low, and measures the size reached, which the report marks as partial (unless it is
within 25% of the size measured before it).
--chunk-cache keeps the generated chunks of the first --cache-runs runs (about 1.8 GB per
1,000,000 runs), so a second backend, or a second run, does not generate them again.
The other chunks are generated in a worker process while the chunk before is applied
(each apply still timed alone: nothing is generated while the queries are measured).

--keep leaves the SQLite store in place; --resume STORE takes such a store up again
(same --seed and --chunk): it grows it to the next of --sizes, or, already there, only
measures it (a report of a resumed store gives no apply rate for what it did not apply).

PostgreSQL: --pg-url URL uses an existing server (the database must be empty); without
it, a throwaway cluster is started in a temporary folder with the same helper the tests
use (tests/pg_server.py), with PostgreSQL's default durability (fsync and synchronous
commit on, unlike the tests' cluster), and stopped at the end.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import bench_store  # noqa: E402
from bench_store import (  # noqa: E402
    GENERATOR_VERSION,
    PAGE_KEY,
    Report,
    bytecode_cached_environment,
    code_version,
    generate,
    kidx_command,
    median,
    settle,
)

from kidx.store.objects import syncfs  # noqa: E402

TARGET_GET_S = 0.5
TARGET_GET_X = 3.0  # x python -c pass, at 1,000,000 runs and more
TARGET_DESCRIBE_X = 2.5
TARGET_BYTES_PER_RUN = 1_000  # catalog, at 1,000,000 runs and more
TARGET_APPLY_RATE = 8_000  # runs/s
TARGET_PG_X = 1.3  # PostgreSQL get -l, x python -c "import psycopg"
TARGETS_FROM = 1_000_000
DBSTAT_MAX_BYTES = 2 * 10**9  # SQLite catalogs larger than this get no per-table breakdown
PAGE = f"{PAGE_KEY}=p0042"
PSYCOPG_IMPORT = "import psycopg"
SERIES_TAIL = 10  # series --tail: the newest points of the one series measured


def write_chunk(path: Path, first: int, count: int, seed: int, with_shared: bool) -> dict[str, str]:
    """One chunk as a JSON List; returns names to query: a run to describe, its workload (to
    select by), and the references of its series (implementation, workload, protocol)."""
    from kidx.identity import digest_of

    data = generate(count, seed, first=first)
    items = (data.shared if with_shared else []) + data.runs
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, ensure_ascii=False),
                    encoding="utf-8")
    by_digest = {digest_of(d): d for d in data.shared}
    spec = data.sample_run["spec"]
    names = {"run": data.sample_run["metadata"]["name"],
             "workload": next(d for d in data.shared if d["kind"] == "Workload")["metadata"]["name"]}
    for field in ("implementation", "workload", "protocol"):
        names[f"series_{field}"] = by_digest[spec[f"{field}Digest"]]["metadata"]["name"]
    del data, items
    gc.collect()
    return names


def cached(args, first: int) -> bool:
    """Whether the chunk starting at run ``first`` is kept in --chunk-cache (those below
    --cache-runs are; the rest are generated, applied and removed)."""
    return args.chunk_cache is not None and first < args.cache_runs


class ChunkMaker:
    """Generated chunks (those not in --chunk-cache), each made in a worker process while
    the one before is applied, so a 10M build is not generation plus apply end to end:
    ``take`` returns a finished chunk and starts the next one's generation."""

    def __init__(self, args):
        self.args = args
        self.pool = None
        self.pending: dict[int, tuple[Path, object]] = {}  # first run -> (path, future)

    def _start(self, first: int, count: int) -> None:
        if count <= 0 or cached(self.args, first):
            return
        if self.pool is None:
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(max_workers=1)
        path = self.args.out / f"scale-chunk-{first}-{count}.json"
        self.pending[first] = (path, self.pool.submit(write_chunk, path, first, count, self.args.seed, first == 0))

    def take(self, first: int, count: int, until: int) -> tuple[Path, dict[str, str]]:
        """The chunk of runs ``first`` to ``first + count - 1``; the next one, up to run
        ``until`` (the size about to be measured, so that no generation runs during the
        measurements), is started in the background."""
        if first in self.pending and not self.pending[first][0].name.endswith(f"-{count}.json"):
            self.discard(first)
        if first not in self.pending:
            self._start(first, count)
        path, future = self.pending.pop(first)
        names = future.result()
        self._start(first + count, min(self.args.chunk, until - first - count))
        return path, names

    def discard(self, first: int) -> None:
        path, future = self.pending.pop(first, (None, None))
        if future is not None:
            future.result()
            path.unlink(missing_ok=True)

    def discard_all(self) -> None:
        """No chunk left generating (a build stopped early): nothing runs beside a measurement."""
        for first in list(self.pending):
            self.discard(first)

    def close(self) -> None:
        self.discard_all()
        if self.pool is not None:
            self.pool.shutdown()


def chunk_file(args, first: int, count: int, until: int) -> tuple[Path, dict[str, str]]:
    """The chunk's file, generated (in the background: ChunkMaker) or, with --chunk-cache,
    taken from the cache."""
    if not cached(args, first):
        return args.chunk_maker.take(first, count, until)
    args.chunk_cache.mkdir(parents=True, exist_ok=True)
    path = args.chunk_cache / f"chunk-g{GENERATOR_VERSION}-s{args.seed}-{first}-{count}.json"
    names_path = path.with_suffix(".names")
    if path.exists() and names_path.exists():
        return path, json.loads(names_path.read_text())
    names = write_chunk(path, first, count, args.seed, with_shared=first == 0)
    names_path.write_text(json.dumps(names))
    return path, names


def measured(argv: list[str], rss: bool = False, timeout: float | None = None) -> tuple[float, int, str, int]:
    """(wall seconds, exit status, stderr, peak RSS in bytes or 0) of one child process.
    With ``rss`` it runs under /usr/bin/time, which forks it from a small process: a child
    forked from this one would count this process's memory (the generated chunks) as its
    own peak, since the peak survives exec."""
    timer = shutil.which("time") if rss else None
    report = None
    if timer is not None:
        descriptor, report = tempfile.mkstemp(prefix="rss-")
        os.close(descriptor)
        argv = [timer, "-f", "%M", "-o", report, *argv]
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=bench_store.SUBPROCESS_ENV,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        if report is not None:
            os.unlink(report)
        return time.perf_counter() - start, -9, f"killed after {timeout:.0f} s", 0
    elapsed = time.perf_counter() - start
    peak = 0
    if report is not None:
        text = Path(report).read_text().split()
        os.unlink(report)
        peak = int(text[-1]) * 1024 if text and text[-1].isdigit() else 0
    return elapsed, proc.returncode, proc.stderr.decode("utf-8", "replace"), peak


class ApplyStages:
    """Where the chunk applies' time went, summed over the chunks applied to reach one size:
    the stages bench/timed_apply.py reports from inside each apply, what the process spent
    outside them, its CPU time, and a database server's CPU time over the apply."""

    INSIDE = tuple(stage for stage in bench_store.STAGES if stage != "parse")  # ApplyReport.timings' keys

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def add(self, measured_stages: dict, wall_s: float, server_cpu_s: float | None) -> None:
        inside = measured_stages["stages_s"]
        read, apply = inside.get("read", 0.0), inside.get("apply", 0.0)
        parts = {"read, parse and check the file": read}
        parts.update({stage: inside.get(stage, 0.0) for stage in self.INSIDE})
        parts["plan (pin references, look up names)"] = apply - sum(inside.get(s, 0.0) for s in self.INSIDE)
        parts["start, print the names, exit"] = wall_s - read - apply
        cpu = measured_stages["cpu_user_s"] + measured_stages["cpu_system_s"]
        parts["apply process CPU"] = cpu
        parts["apply process waiting (wall less CPU)"] = wall_s - cpu
        if server_cpu_s is not None:
            parts["database server CPU"] = server_cpu_s
        parts["wall"] = wall_s
        for part, value in parts.items():
            self.seconds[part] = self.seconds.get(part, 0.0) + value

    def rows(self, size: str, runs: int) -> list[list[str]]:
        wall = self.seconds.get("wall", 0.0)
        return [[size, part, f"{value:,.1f}", f"{value / wall:.0%}" if wall else "-",
                 f"{runs / value:,.0f}" if value >= 0.05 else "-"]  # a part of no measurable time: no rate
                for part, value in self.seconds.items() if part != "wall"]


def cold_rounds(commands: dict[str, list[str]], repeats: int) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Interleaved rounds: a first one, not timed, that measures each command's peak RSS,
    then ``repeats`` timed ones (without /usr/bin/time in the way)."""
    times: dict[str, list[float]] = {k: [] for k in commands}
    rss: dict[str, int] = dict.fromkeys(commands, 0)
    for round_ in range(repeats + 1):
        for label, argv in commands.items():
            elapsed, rc, err, peak = measured(argv, rss=round_ == 0)
            if rc != 0:
                raise RuntimeError(f"{label}: exit {rc}: {err.strip()[:500]}")
            if round_:
                times[label].append(elapsed)
            else:
                rss[label] = peak
    return times, rss


def import_ms(argv: list[str]) -> float:
    """Milliseconds one run of ``argv`` spent importing modules, by Python's own count
    (PYTHONPROFILEIMPORTTIME: the cumulative time of each top-level import, added up)."""
    env = dict(bench_store.SUBPROCESS_ENV or os.environ, PYTHONPROFILEIMPORTTIME="1")
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    return imports_total_ms(proc.stderr)


def imports_total_ms(profile: str) -> float:
    """The milliseconds of Python's import profile (lines "import time: self | cumulative |
    name", a nested import's name indented): the top-level imports' cumulative times, added up."""
    total_us = 0
    for line in profile.splitlines():
        fields = line.split("|")
        if line.startswith("import time:") and len(fields) == 3 and not fields[2].startswith("  "):
            cumulative = fields[1].strip()
            total_us += int(cumulative) if cumulative.isdigit() else 0
    return total_us / 1000


def command_shares(argv: list[str], bare: list[str], wall_s: float, bare_s: float, repeats: int) -> dict[str, float]:
    """Where a cold command's median wall time goes: the bare interpreter (``python -c
    pass``), the imports beyond the bare interpreter's own (the median of ``repeats`` runs
    of each under PYTHONPROFILEIMPORTTIME, which slows imports a little), and the rest,
    the command's own work (reading the store, printing)."""
    rounds = max(1, min(repeats, 5))
    imports = median([import_ms(argv) for _ in range(rounds)]) - median([import_ms(bare) for _ in range(rounds)])
    wall_ms, interpreter_ms = wall_s * 1000, bare_s * 1000
    return {"wall_ms": wall_ms, "interpreter_ms": interpreter_ms, "imports_ms": imports,
            "own_ms": wall_ms - interpreter_ms - imports}


def heavy_runs(commands: dict[str, list[str]], repeats: int, timeout: float
               ) -> tuple[dict[str, list[float]], dict[str, int], dict[str, str]]:
    """Commands whose cost grows with the store (compare, series read the selection's whole
    history): one cold run with its peak RSS, killed past ``timeout``; a few more timed runs
    only when it took under 5 s. Returns times, RSS and, for a failed one, why."""
    times: dict[str, list[float]] = {}
    rss: dict[str, int] = {}
    failed: dict[str, str] = {}
    for label, argv in commands.items():
        elapsed, rc, err, peak = measured(argv, rss=True, timeout=timeout)
        if rc != 0:
            failed[label] = err.strip()[:300] or f"exit {rc}"
            continue
        rss[label] = peak
        times[label] = [elapsed]
        if elapsed < 5:
            times[label] = [measured(argv)[0] for _ in range(repeats)]
    return times, rss, failed


def file_baseline(folder: Path, count: int, size: int) -> float:
    """Files/s of plain Python writing ``count`` files of ``size`` bytes the way the store
    writes objects (fan-out folder, temporary file, rename, one syncfs at the end)."""
    shutil.rmtree(folder, ignore_errors=True)
    for fan in range(256):  # the store's fan-out folders exist already
        (folder / f"{fan:02x}").mkdir(parents=True)
    data = b"x" * size
    names = [hashlib.sha256(number.to_bytes(8, "big")).hexdigest() for number in range(count)]
    settle()
    start = time.perf_counter()
    for number, name in enumerate(names):
        fan = f"{folder}/{name[:2]}"
        temporary = f"{fan}/.tmp-{number}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(descriptor, data)
        os.close(descriptor)
        os.replace(temporary, f"{fan}/{name[2:]}")
    syncfs(folder)
    elapsed = time.perf_counter() - start
    shutil.rmtree(folder, ignore_errors=True)
    return count / elapsed


def deadline_of(text: str | None) -> float | None:
    """--until HH:MM (local time, today or, once past, tomorrow) as a time.time() value."""
    if text is None:
        return None
    hours, _, minutes = text.partition(":")
    now = time.localtime()
    target = time.mktime((now.tm_year, now.tm_mon, now.tm_mday, int(hours), int(minutes), 0, 0, 0, -1))
    return target if target > time.time() else target + 86_400


class Backend:
    name = ""

    def __init__(self, work: Path):
        self.work = work

    @property
    def store(self) -> str:
        raise NotImplementedError

    def catalog_bytes(self) -> dict[str, int]:
        raise NotImplementedError

    def server_cpu_s(self) -> float | None:
        """CPU seconds a database server has used so far (None: no server of ours)."""
        return None

    def table_bytes(self) -> dict[str, int] | None:
        """Bytes of each table and index of the catalog, where the database can tell."""
        return None

    def close(self) -> None:
        pass


class SQLiteBackend(Backend):
    name = "sqlite"

    def __init__(self, work: Path, resume: Path | None = None):
        super().__init__(work)
        self.resumed = resume is not None
        self.root = resume if resume is not None else work / "sqlite-store"
        if not self.resumed:
            shutil.rmtree(self.root, ignore_errors=True)

    def runs(self) -> int:
        """The runs already in the store (0 unless --resume)."""
        if not self.resumed:
            return 0
        import sqlite3

        connection = sqlite3.connect(f"file:{self.root / 'catalog.sqlite'}?mode=ro", uri=True)
        try:
            return connection.execute("SELECT count(*) FROM objects WHERE kind = 'BenchmarkRun'").fetchone()[0]
        finally:
            connection.close()

    @property
    def store(self) -> str:
        return str(self.root)

    def catalog_bytes(self) -> dict[str, int]:
        files = [self.root / n for n in ("catalog.sqlite", "catalog.sqlite-wal")]
        catalog = sum(f.stat().st_size for f in files if f.exists())
        objects = sum(f.stat().st_blocks * 512 for f in (self.root / "objects").rglob("*") if f.is_file())
        return {"catalog": catalog, "objects": objects}

    def table_bytes(self) -> dict[str, int] | None:
        """SQLite's dbstat (when this SQLite was built with it): the pages of each table and
        index. It reads every page of the catalog in tree order, which had not finished after
        eight minutes on the 9 GB catalog of ten million runs here: skipped past DBSTAT_MAX_BYTES."""
        import sqlite3

        if (self.root / "catalog.sqlite").stat().st_size > DBSTAT_MAX_BYTES:
            return None

        connection = sqlite3.connect(f"file:{self.root / 'catalog.sqlite'}?mode=ro", uri=True)
        try:
            return dict(connection.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"))
        except sqlite3.OperationalError:  # no such table: dbstat
            return None
        finally:
            connection.close()

    def close(self) -> None:
        if not self.resumed:
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

    def server_cpu_s(self) -> float | None:
        """The throwaway cluster's CPU seconds so far (user and system): the postmaster's
        own, its live children's (checkpointer, WAL writer, the connections' backends), and
        those of its children that have ended (the postmaster's cutime and cstime), from
        /proc; None with --pg-url (a server elsewhere) or without /proc."""
        if self.cluster is None or not Path("/proc/self/stat").exists():
            return None
        postmaster = int((self.cluster.data / "postmaster.pid").read_text().split()[0])
        ticks = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:  # after the ")" that ends the command name: state, ppid, ... (proc(5))
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # a process that ended meanwhile
                continue
            if int(entry) == postmaster:
                ticks += sum(int(field) for field in fields[11:15])  # utime, stime, cutime, cstime
            elif int(fields[1]) == postmaster:
                ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    def catalog_bytes(self) -> dict[str, int]:
        query = (
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
        )
        import psycopg

        with psycopg.connect(self.url) as connection:
            sizes = dict(connection.execute(query).fetchall())
        objects = sizes.get("objects", 0)  # kidx.objects: the objects' bytes; the rest is the catalog
        return {"catalog": sum(sizes.values()) - objects, "objects": objects, "tables": sizes}

    def table_bytes(self) -> dict[str, int] | None:
        """Each table and index of the store (heap, TOAST and free-space map), largest first."""
        query = (
            "SELECT c.relname, pg_relation_size(c.oid) "
            "+ COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind IN ('r', 'i') AND n.nspname = 'kidx' ORDER BY 2 DESC"
        )
        import psycopg

        with psycopg.connect(self.url) as connection:
            return dict(connection.execute(query).fetchall())

    def column_bytes(self, runs: int) -> dict[str, float]:
        """Mean bytes of each column of a run's names row and of its stored object, as stored
        (pg_column_size: after any compression), and of the whole rows (with their headers),
        over a sample of about 20,000 runs."""
        import psycopg

        share = min(100.0, 100.0 * 20_000 / max(runs, 1))
        with psycopg.connect(self.url) as connection:
            columns = [row[0] for row in connection.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'kidx' "
                "AND table_name = 'entries' ORDER BY ordinal_position")]
            means = ", ".join(f"avg(pg_column_size(e.{column}))" for column in columns)
            row = connection.execute(
                f"SELECT {means}, avg(pg_column_size(e.*)), avg(pg_column_size(o.content)), avg(pg_column_size(o.*)) "
                f"FROM kidx.entries e TABLESAMPLE BERNOULLI ({share}) REPEATABLE (1) "
                "JOIN kidx.objects o ON o.digest = e.digest WHERE e.kind = 'BenchmarkRun'").fetchone()
        labels = [f"entries.{column}" for column in columns] + ["entries row", "objects.content", "objects row"]
        return {label: float(value or 0) for label, value in zip(labels, row, strict=True)}

    def plans(self, workload: str) -> dict[str, list[str]]:
        """EXPLAIN (ANALYZE, BUFFERS) of the statements kidx compiles for a label selection
        (`get runs -l page=p0042`), a reference selection (the runs of one workload) and a
        series' history window (the newest HISTORY_WINDOW runs of the series of the newest
        run, one look-up of `compare` and `series`)."""
        from kidx.analysis.window import HISTORY_WINDOW
        from kidx.store.catalog import RECENT, CatalogQuery, ReferenceCondition
        from kidx.store.postgres import PostgresBackend

        class Requirement(NamedTuple):
            key: str
            operator: str
            values: tuple[str, ...]

        backend = PostgresBackend(self.url)
        catalog = backend.open_catalog(False)
        try:
            connection = catalog.connection
            (digest,) = connection.execute(
                "SELECT digest FROM kidx.entries WHERE kind = 'Workload' AND name = %s", (workload,)).fetchone()
            key, _, value = PAGE.partition("=")
            queries = {
                f"get runs -l {PAGE}": CatalogQuery(kind="BenchmarkRun", labels=(Requirement(key, "=", (value,)),)),
                "runs referring to one workload": CatalogQuery(kind="BenchmarkRun", references=(
                    ReferenceCondition(digests=("sha256:" + bytes(digest).hex(),), field="workloadDigest"),)),
            }
            newest = connection.execute(  # the newest run's references, the narrowest (workload) first
                "SELECT r.field, r.target FROM kidx.refs r WHERE r.object_id = (SELECT max(id) FROM kidx.entries "
                "WHERE kind = 'BenchmarkRun') ORDER BY r.field <> 'workloadDigest', r.field").fetchall()
            if newest:
                queries[f"a series' newest {HISTORY_WINDOW} runs"] = CatalogQuery(
                    kind="BenchmarkRun", order=RECENT, limit=HISTORY_WINDOW, references=tuple(
                        ReferenceCondition(digests=("sha256:" + bytes(target).hex(),), field=field)
                        for field, target in newest))
            plans = {}
            for label, query in queries.items():
                statement, parameters, _ = catalog.compile(query)
                rows = connection.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + statement, parameters)
                plans[label] = [statement] + [line for (line,) in rows]
            return plans
        finally:
            backend.close()

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()


def bench_backend(backend: Backend, args, report: Report, kidx: list[str]) -> None:
    say = report.say
    say(f"\n=== backend {backend.name} " + "=" * 50)
    report.section = f"{backend.name} backend"
    sizes = sorted(args.sizes)
    grown = backend.runs() if isinstance(backend, SQLiteBackend) else 0
    names: dict[str, str] = {}
    if grown:  # --resume: the names to query come from the first chunk, as in the build
        path, names = chunk_file(args, 0, min(args.chunk, max(sizes)), min(args.chunk, max(sizes)))
        if not cached(args, 0):
            path.unlink()
        say(f"  {backend.name}: resumed a store of {grown:,} runs (built by an earlier run of this script)")
    rows, query_rows, size_rows, table_rows, baseline_rows, stage_rows, share_rows = [], [], [], [], [], [], []
    column_rows: list[list[str]] = []
    per_run_catalog = {}
    stopped = False
    measured_sizes: list[int] = []
    try:
        for size in sizes:
            if stopped:
                break
            applied_s = 0.0
            chunks = 0
            stages = ApplyStages()
            stages_path = backend.work / "apply-stages.json"
            apply_rss = 0
            start_size = grown
            while grown < size:
                if args.deadline is not None and time.time() >= args.deadline:
                    say(f"  {backend.name}: --until reached at {grown:,} runs; measuring the size reached")
                    stopped = True
                    break
                free = shutil.disk_usage(backend.work).free
                if free < args.min_free_gb * 2**30:
                    say(f"  {backend.name}: {free / 2**30:.1f} GiB left on the disk (--min-free-gb "
                        f"{args.min_free_gb:g}) at {grown:,} runs; measuring the size reached")
                    stopped = True
                    break
                count = min(args.chunk, size - grown)
                path, chunk_names = chunk_file(args, grown, count, size)
                if not names:
                    names = chunk_names
                settle()
                apply = [sys.executable, str(HERE / "timed_apply.py"), str(stages_path), "--",
                         "apply", "-f", str(path), "-o", "name", "--store", backend.store]
                server_before = backend.server_cpu_s()
                elapsed, rc, err, peak = measured(apply, rss=True)
                server_cpu = backend.server_cpu_s()
                if rc == 0:
                    stages.add(json.loads(stages_path.read_text()), elapsed,
                               None if server_cpu is None else server_cpu - server_before)
                if not cached(args, grown):
                    path.unlink()
                if rc != 0:
                    say(f"!! apply of runs {grown:,}..{grown + count - 1:,} failed (exit {rc}): {err.strip()[:500]}")
                    report.check(f"{backend.name}: apply to {size:,}", "failed", "", False)
                    stopped = True
                    break
                applied_s += elapsed
                apply_rss = max(apply_rss, peak)
                chunks += 1
                grown += count
                say(f"  {backend.name}: applied runs up to {grown:,} ({count / elapsed:,.0f} runs/s, "
                    f"{peak / 2**20:,.0f} MiB peak RSS)  {time.strftime('%H:%M:%S')}")
            args.chunk_maker.discard_all()
            measure_resumed = grown > start_size or (grown >= size and start_size and not measured_sizes)
            if not chunks and grown > size:
                continue  # a resumed store already past this size
            if not measure_resumed or grown < 43_000:  # nothing new to measure, or no full page yet
                break
            if stopped and measured_sizes and grown < 1.25 * measured_sizes[-1]:
                say(f"  {backend.name}: {grown:,} runs, too close to the {measured_sizes[-1]:,} measured: not measured")
                break
            measured_sizes.append(grown)
            size = grown
            partial = size < sizes[-1]
            data = report.data.setdefault(backend.name, {}).setdefault(size, {})
            rate = (size - start_size) / applied_s if chunks else None  # None: a resumed store, only measured
            data.update({"apply_runs_per_s": rate, "apply_rss_bytes": apply_rss, "partial": partial and stopped})
            if rate is not None:
                rows.append([f"{size:,}" + (" (partial)" if partial and stopped else ""), f"{chunks}",
                             f"{applied_s:.0f} s", f"{rate:,.0f} runs/s", f"{apply_rss / 2**20:,.0f} MiB"])
                report.check(f"{backend.name}, {size:,} runs: apply rate", f"{rate:,.0f} runs/s",
                             f">= {TARGET_APPLY_RATE:,}", rate >= TARGET_APPLY_RATE)
                data["apply_stages_s"] = dict(stages.seconds)
                stage_rows.extend(stages.rows(f"{size:,}", size - start_size))
            if backend.name == "sqlite" and args.baseline_files and rate is not None:
                files_per_s = file_baseline(backend.work / "file-baseline", args.baseline_files, 3_000)
                baseline_rows.append([f"{size:,}", f"{args.baseline_files:,}", f"{files_per_s:,.0f} files/s",
                                      f"{rate:,.0f} runs/s"])
                data["file_baseline_per_s"] = files_per_s

            store = ["--store", backend.store]
            select = ["get", "runs", "--field-selector", f"workload.metadata.name={names['workload']}", *store]
            series = ["series", "--references", f"implementation/{names['series_implementation']}",
                      "--references", f"workload/{names['series_workload']}",
                      "--references", f"protocol/{names['series_protocol']}", *store]
            counted = {}
            for label, argv in (("page", ["get", "runs", "-l", PAGE, "--no-headers", *store]),
                                ("reference", [*select, "--no-headers"]),
                                ("compare", ["compare", "-l", PAGE, "-o", "csv", *store]),
                                ("series", [*series, "-o", "csv"])):
                try:
                    proc = subprocess.run([*kidx, *argv], capture_output=True, text=True, timeout=args.heavy_timeout)
                except subprocess.TimeoutExpired:
                    counted[label] = None
                    say(f"!! {' '.join(argv[:3])} killed after {args.heavy_timeout:.0f} s")
                    continue
                counted[label] = proc.stdout.count("\n") if proc.returncode == 0 else None
                if proc.returncode != 0:
                    say(f"!! {' '.join(argv[:3])} failed (exit {proc.returncode}): {proc.stderr.strip()[:300]}")
            say(f"  lines printed: get -l {PAGE}: {counted['page']}; --field-selector workload.metadata.name=…: "
                f"{counted['reference']}; compare -l {PAGE} -o csv: {counted['compare']}; "
                f"series of one series -o csv: {counted['series']}")
            commands = {"python -c pass": [sys.executable, "-c", "pass"]}
            if backend.name == "postgresql":
                commands[f'python -c "{PSYCOPG_IMPORT}"'] = [sys.executable, "-c", PSYCOPG_IMPORT]
                commands["python -c psycopg.connect(URL).close()"] = [
                    sys.executable, "-c", f"import psycopg; psycopg.connect({backend.store!r}).close()"]
            commands[f"get runs -l {PAGE}"] = [*kidx, "get", "runs", "-l", PAGE, *store]
            commands["describe run NAME"] = [*kidx, "describe", "run", names["run"], *store]
            if counted["reference"] is not None:
                commands["get runs --field-selector workload.metadata.name=W"] = [*kidx, *select]
            heavy = {}
            if counted["compare"] is not None:
                heavy[f"compare -l {PAGE}"] = [*kidx, "compare", "-l", PAGE, *store]
            if counted["series"] is not None:
                heavy["series (one series)"] = [*kidx, *series]
                heavy[f"series --tail {SERIES_TAIL} (one series)"] = [*kidx, *series, "--tail", str(SERIES_TAIL)]
            settle()
            try:
                times, rss = cold_rounds(commands, args.repeats)
            except RuntimeError as exc:
                say(f"!! {exc}")
                continue
            heavy_times, heavy_rss, failed = heavy_runs(heavy, args.repeats, args.heavy_timeout)
            times.update(heavy_times)
            rss.update(heavy_rss)
            for label, why in failed.items():
                say(f"!! {label}: {why}")
                query_rows.append([f"{size:,}", label, why[:40], "-", "-"])
            base = median(times["python -c pass"])
            for label, values in times.items():
                m = median(values)
                query_rows.append([f"{size:,}", label, f"{m * 1000:.0f} ms", f"{m / base:.2f}x",
                                   f"{rss[label] / 2**20:,.0f} MiB"])
            get_s = median(times[f"get runs -l {PAGE}"])
            describe_s = median(times["describe run NAME"])
            shares = {label: command_shares(commands[label], commands["python -c pass"], median(times[label]),
                                            base, args.repeats)
                      for label in (f"get runs -l {PAGE}", "describe run NAME")}
            share_rows.extend([f"{size:,}", label, f"{part['wall_ms']:.0f} ms", f"{part['interpreter_ms']:.0f} ms",
                               f"{part['imports_ms']:.0f} ms", f"{part['own_ms']:.0f} ms"]
                              for label, part in shares.items())
            target = size >= TARGETS_FROM
            report.check(f"{backend.name}, {size:,} runs: get -l (1,000 rows)", f"{get_s * 1000:.0f} ms",
                         f"<= {TARGET_GET_S * 1000:.0f} ms" if target else "info",
                         (get_s <= TARGET_GET_S) if target else None)
            report.check(f"{backend.name}, {size:,} runs: get -l x python", f"{get_s / base:.2f}x",
                         f"<= {TARGET_GET_X}x" if target else "info",
                         (get_s / base <= TARGET_GET_X) if target else None)
            report.check(f"{backend.name}, {size:,} runs: describe x python", f"{describe_s / base:.2f}x",
                         f"<= {TARGET_DESCRIBE_X}x" if target else "info",
                         (describe_s / base <= TARGET_DESCRIBE_X) if target else None)
            if backend.name == "postgresql":
                driver = median(times[f'python -c "{PSYCOPG_IMPORT}"'])
                report.check(f"postgresql, {size:,} runs: get -l x python -c \"{PSYCOPG_IMPORT}\"",
                             f"{get_s / driver:.2f}x", f"<= {TARGET_PG_X}x", get_s / driver <= TARGET_PG_X)
            sizes_now = backend.catalog_bytes()
            per_run = sizes_now["catalog"] / size
            per_run_catalog[size] = per_run
            store_per_run = (sizes_now["catalog"] + sizes_now["objects"]) / size
            size_rows.append([f"{size:,}", f"{sizes_now['catalog'] / 1e6:,.0f} MB", f"{per_run:,.0f} B",
                              f"{sizes_now['objects'] / 1e6:,.0f} MB", f"{store_per_run:,.0f} B"])
            report.check(f"{backend.name}, {size:,} runs: catalog bytes per run", f"{per_run:,.0f} B",
                         f"<= {TARGET_BYTES_PER_RUN:,}" if target else "info",
                         per_run <= TARGET_BYTES_PER_RUN if target else None)
            if backend.name == "postgresql":  # issue 42: the whole store, its objects with it
                report.check(f"postgresql, {size:,} runs: store bytes per run (catalog and objects)",
                             f"{store_per_run:,.0f} B", f"<= {TARGET_BYTES_PER_RUN:,}",
                             store_per_run <= TARGET_BYTES_PER_RUN)
            data.update({
                "get_page_s": get_s, "cold_ms": {k: median(v) * 1000 for k, v in times.items()},
                "cold_shares_ms": shares,
                "rss_bytes": rss, "lines": counted, "failed": failed,
                "catalog_bytes": sizes_now["catalog"], "objects_bytes": sizes_now["objects"],
            })
            tables = backend.table_bytes()
            if tables is None and backend.name == "sqlite":
                say("  (no per-table breakdown: this SQLite has no dbstat, or the catalog is larger than "
                    f"{DBSTAT_MAX_BYTES / 1e9:g} GB, too long to walk)")
            elif tables is not None:
                data["table_bytes"] = tables
                table_rows.extend([f"{size:,}", name, f"{total / 1e6:,.1f} MB", f"{total / size:,.0f} B"]
                                  for name, total in tables.items())
            if isinstance(backend, PostgreSQLBackend):
                data["column_bytes"] = backend.column_bytes(size)
                column_rows.extend([f"{size:,}", label, f"{mean:,.0f} B"]
                                   for label, mean in data["column_bytes"].items())
                try:
                    data["plans"] = backend.plans(names["workload"])
                except Exception as exc:  # a report: say it and go on
                    say(f"!! EXPLAIN: {type(exc).__name__}: {exc}")
                for label, lines in data.get("plans", {}).items():
                    say(f"  EXPLAIN at {size:,} runs, {label}:")
                    for line in lines:
                        say(f"    {line}")
            report.save()  # what is measured so far survives an interrupted run
    finally:  # an interrupted run (Ctrl-C, SIGTERM) still reports what it measured
        _tables(backend, report, rows, stage_rows, baseline_rows, query_rows, share_rows, size_rows, table_rows,
                column_rows, per_run_catalog)


def _tables(backend, report, rows, stage_rows, baseline_rows, query_rows, share_rows, size_rows, table_rows,
            column_rows, per_run_catalog) -> None:
    report.table(["runs", "chunks", "apply wall", "apply rate", "apply peak RSS"], rows)
    if stage_rows:
        report.table(["runs", "where the applies' time went", "seconds", "share of wall", "runs/s were it all"],
                     stage_rows)
    if baseline_rows:
        report.table(["runs", "files", "plain Python: temporary file, rename, syncfs", "kidx apply"], baseline_rows)
    report.table(["runs", "command (cold process)", "median", "x python", "peak RSS"], query_rows)
    if share_rows:
        report.table(["runs", "command (cold process)", "median", "interpreter (python -c pass)",
                      "imports beyond the interpreter's", "the command's own work"], share_rows)
    report.table(["runs", "catalog", "catalog per run", "objects", "store per run"], size_rows)
    if table_rows:
        report.table(["runs", "table or index", "size", "per run"], table_rows)
    if column_rows:
        report.table(["runs", "a run's column or row", "mean bytes as stored"], column_rows)
    if len(per_run_catalog) > 1:
        small, large = per_run_catalog[min(per_run_catalog)], per_run_catalog[max(per_run_catalog)]
        report.check(f"{backend.name} catalog per run at {max(per_run_catalog):,} vs {min(per_run_catalog):,}",
                     f"{large:,.0f} B vs {small:,.0f} B", "no larger", large <= small * 1.02)


def _terminate(signum, frame):
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--backend", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    parser.add_argument("--chunk", type=int, default=100_000, help="runs per apply (default 100,000)")
    parser.add_argument("--repeats", type=int, default=7, help="cold-process rounds (default 7)")
    parser.add_argument("--pg-url", default=None, help="an empty PostgreSQL database (default: a throwaway cluster)")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--until", default=None, metavar="HH:MM",
                        help="stop growing at this local time and measure the size reached")
    parser.add_argument("--chunk-cache", type=Path, default=None, help="keep generated chunks here, and reuse them")
    parser.add_argument("--cache-runs", type=int, default=1_000_000,
                        help="keep chunks in --chunk-cache up to this many runs (default 1,000,000: about 1.8 GB)")
    parser.add_argument("--work", type=Path, default=None,
                        help="where the stores are built (default: under --out); needs room: about 4.5 KB per "
                             "run for SQLite")
    parser.add_argument("--heavy-timeout", type=float, default=300,
                        help="seconds a compare or series run may take before it is killed (default 300)")
    parser.add_argument("--baseline-files", type=int, default=20_000,
                        help="files the SQLite file-system baseline writes (0: none)")
    parser.add_argument("--min-free-gb", type=float, default=8,
                        help="stop growing when the store's disk has less than this left (default 8 GiB), and "
                             "measure the size reached")
    parser.add_argument("--resume", type=Path, default=None, metavar="STORE",
                        help="SQLite: grow (or only measure) a store kept by an earlier --keep run, "
                             "built with the same --seed and --chunk")
    parser.add_argument("--keep", action="store_true",
                        help="keep the SQLite store for a look afterwards (PostgreSQL's cluster is stopped)")
    args = parser.parse_args()
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    args.deadline = deadline_of(args.until)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    report = Report(args.out / f"bench_scale-{stamp}.txt")
    kidx = kidx_command()
    bench_store.SUBPROCESS_ENV = bytecode_cached_environment(args.out)
    work = (args.work or args.out).resolve() / f"scale-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    args.chunk_maker = ChunkMaker(args)
    started = time.perf_counter()
    report.say(f"kidx bench_scale  {time.strftime('%Y-%m-%d %H:%M:%S')}  {os.cpu_count()} CPUs  "
               f"python {platform.python_version()}  code {code_version()}")
    report.say("subprocesses: bytecode cached in OUT/pycache "
               "(PYTHONPYCACHEPREFIX; PYTHONDONTWRITEBYTECODE unset), as an installed kidx has its .pyc")
    signal.signal(signal.SIGTERM, _terminate)
    try:
        for name in args.backend:
            backend = None
            try:
                backend = SQLiteBackend(work, args.resume) if name == "sqlite" else PostgreSQLBackend(work, args.pg_url)
                bench_backend(backend, args, report, kidx)
            except Exception as exc:  # a report, not a test: say what failed and go on
                report.say(f"!! backend {name}: {type(exc).__name__}: {exc}")
                report.check(f"{name} backend", "failed", "", False)
            finally:
                if backend is not None and not (args.keep and name == "sqlite"):
                    backend.close()
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the report keeps what was measured
        report.say("!! interrupted: the report holds what was measured before")
    finally:
        args.chunk_maker.close()
        if args.keep:
            report.say(f"stores kept in WORK/{work.name}")  # the report names no folder of this machine
        else:
            shutil.rmtree(work, ignore_errors=True)
    report.say("\n=== summary " + "=" * 60)
    report.finish(started, title="Scale benchmark", script="bench/bench_scale.py", sizes=sorted(args.sizes),
                  backend=", ".join(args.backend), until=args.until, load=os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
