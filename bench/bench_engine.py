#!/usr/bin/env python3
"""Past one PostgreSQL: "median by series" by DuckDB over a Parquet export of ten million runs.

    .venv/bin/python bench/bench_engine.py                   # 10,000,000 rows; about 3 minutes here
    .venv/bin/python bench/bench_engine.py --runs 2000000    # a quicker look

What it measures, in one run:

1. **kidx's own export.** A store of ``--check-runs`` generated runs (``bench_store.generate``,
   the shape every store benchmark uses: 7 protocols, 8 environments, 300 workloads, 100
   implementations), applied, then ``kidx export runs --format parquet`` as a cold process:
   its wall time and the file's bytes per run.
2. **The synthetic writer against it.** The synthetic generator below writes the same
   number of rows from that export's referenced objects (its template), and the script
   checks that its Arrow schema (every column's name, type and order) equals the export's,
   and compares the bytes per run. So a ten-million-row file needs no ten-million-run store
   (applying and exporting one would take hours here).
3. **DuckDB's answer against kidx's.** A second store of ``--check-runs`` runs of the same
   generator with fewer workloads and implementations (34 of each, so that a series has
   about ten points), exported by kidx; DuckDB's median by series over that file against
   ``kidx series``' series (``kidx.open_store(...).series()``, kidx's own series key:
   protocol, workload, the environment's hardware, implementation, and the metric) and
   ``statistics.median`` of each series' values: the same series, the same count of series
   of one point, the same medians.
4. **Scale.** The synthetic file at ``--step-runs`` and at ``--runs`` rows: time to write,
   bytes per run, the bytes the query's columns take, and DuckDB's median by series as a
   separate process per query, once with the file evicted from the page cache
   (``posix_fadvise(DONTNEED)`` on that file alone) and ``--repeats`` times warm: the
   query's own time inside the process, and the process' peak resident memory.
   A field-sized index (``--estimate-runs``, 100,000,000) is then *estimated* from the
   largest size by scaling linearly: bytes and times multiplied by the ratio of runs,
   memory along the line through the two sizes (it has a fixed part); the measured ratio
   between the two sizes says how linear the time was here.

The report is ``bench_engine-STAMP.txt`` and ``.json`` in ``--out`` (for
bench/render_performance.py). Needs duckdb and pyarrow (``pip install '.[bench]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import bench_analysis  # noqa: E402
import bench_store  # noqa: E402

ROW_GROUP = 1_048_576  # pyarrow's default row group length: what kidx's write_table gives a large export
BASE_SECONDS = 1_700_000_000  # the generator's first observedAt (2023-11-14); run i at +37 s each
CHECK_SHAPE = {"n_workloads": 34, "n_impls": 34}  # ~1,900 possible series: about ten points each


def require_engines():
    """duckdb and pyarrow, or a message naming the extra and exit status 2."""
    try:
        import duckdb
        import pyarrow
    except ImportError as error:
        print(f"bench_engine.py needs duckdb and pyarrow ({error.name} is not installed): "
              "pip install '.[bench]' from a checkout of kidx", file=sys.stderr)
        raise SystemExit(2) from None
    return duckdb, pyarrow


# --- the query -----------------------------------------------------------------------------

def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def hardware_columns(names: list[str]) -> list[str]:
    return [name for name in names if name.startswith("environment.spec.hardware.")]


def median_by_series_sql(path: Path, names: list[str]) -> str:
    """kidx's series (kidx.analysis.comparability.series_key) and metric, each with its run
    count and the median of its runs' headline value. The environment counts by its hardware
    (every flattened ``environment.spec.hardware.*`` column), else by its digest."""
    hardware = hardware_columns(names)
    keys = ['"protocol.digest"', '"workload.digest"', *(_quoted(h) for h in hardware)]
    no_hardware = " AND ".join(f"{_quoted(h)} IS NULL" for h in hardware) or "TRUE"
    keys += [f'CASE WHEN {no_hardware} THEN "environment.digest" END AS environment',
             '"implementation.digest"', "metric"]
    literal = "'" + str(path).replace("'", "''") + "'"
    return (f"SELECT {', '.join(keys)}, count(*) AS runs, median(value) AS median "
            f"FROM read_parquet({literal}) WHERE value IS NOT NULL GROUP BY ALL")


QUERY_CHILD = r"""
import json, sys, time
started = time.perf_counter()
import duckdb
imported = time.perf_counter()
connection = duckdb.connect()
connection.execute("SET enable_progress_bar = false")  # a query past 2 s would draw one on stdout
threads = connection.execute("SELECT current_setting('threads')").fetchone()[0]
began, cpu = time.perf_counter(), time.process_time()
rows = connection.execute(sys.argv[1]).fetchall()
done, cpu = time.perf_counter(), time.process_time() - cpu
with open("/proc/self/status") as status:  # this process' own peak (VmHWM starts afresh at exec)
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"import_s": imported - started, "query_s": done - began, "cpu_s": cpu, "groups": len(rows),
                  "runs": sum(row[-2] for row in rows), "threads": threads, "rss_mb": peak / 1024}))
"""


def evict(path: Path) -> None:
    """Drop this one file's pages from the page cache (read-only open; nothing else touched),
    once written back: the kernel keeps a page not yet written."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)


def timed_query(sql: str) -> dict:
    """The query in a fresh process: its time and CPU time, the process' peak resident
    memory (its VmHWM: ``ru_maxrss`` would count this process' pages from before the exec),
    and the process' wall time."""
    began = time.perf_counter()
    child = subprocess.run([sys.executable, "-c", QUERY_CHILD, sql], stdout=subprocess.PIPE, text=True, check=True)
    found = json.loads(child.stdout.strip().splitlines()[-1])
    found["wall_s"] = time.perf_counter() - began
    return found


# --- the synthetic writer ------------------------------------------------------------------

class Template:
    """What the synthetic writer takes from a kidx export: the schema, each referenced
    object's columns (one row per digest), each protocol's measure columns, and the
    labels that follow a referenced object (``gpu`` from the environment, ``kernel``
    from the implementation)."""

    def __init__(self, table):
        self.schema = table.schema
        names = table.column_names
        self.roles: dict[str, object] = {}
        for role in kidx_roles():
            columns = [name for name in names if name.startswith(role + ".")]
            digests = table.column(f"{role}.digest")
            _, first = _first_rows(digests.to_pylist())
            self.roles[role] = table.select(columns).take(first)
        protocols = self.roles["protocol"]
        taken = table.select(["protocol.digest", "metric", "statistic", "unit"]).take(
            _first_rows(table.column("protocol.digest").to_pylist())[1])
        measure = {row["protocol.digest"]: row for row in taken.to_pylist()}
        self.measures = [measure[d] for d in protocols.column("protocol.digest").to_pylist()]
        self.memory = [row["metric"] != "latency" for row in self.measures]
        self.label_of = {}
        for role, label in (("environment", "labels.gpu"), ("implementation", "labels.kernel")):
            pairs = dict(zip(table.column(f"{role}.digest").to_pylist(), table.column(label).to_pylist(),
                             strict=True))
            self.label_of[label] = [pairs[d] for d in self.roles[role].column(f"{role}.digest").to_pylist()]
        kernels = self.roles["implementation"].column("implementation.spec.operation").to_pylist()
        operations = self.roles["workload"].column("workload.spec.operation").to_pylist()
        self.workloads_of = [[j for j, op in enumerate(operations) if op == kernel] for kernel in kernels]
        if not all(self.workloads_of):
            raise ValueError("the template has an implementation whose operation no workload has")
        self.name_parts = {
            "implementation": [_tail(name, kernel) for name, kernel in zip(
                self.roles["implementation"].column("implementation.name").to_pylist(), kernels, strict=True)],
            "protocol": [name.removeprefix("liger-bench-").removeprefix("do-bench-") for name in
                         protocols.column("protocol.name").to_pylist()],
            "workload": self.roles["workload"].column("workload.spec.key").to_pylist(),
            "kernel": kernels,
        }


def kidx_roles() -> tuple[str, ...]:
    from kidx.operations.select.run_rows import ROLES

    return ROLES


def _first_rows(values: list) -> tuple[list, list[int]]:
    seen: dict = {}
    for index, value in enumerate(values):
        seen.setdefault(value, index)
    return list(seen), list(seen.values())


def _tail(name: str, kernel: str) -> str:
    return name.removeprefix("liger-" + bench_store.slug(kernel) + "-")


def _hex_strings(pa, np, rng, count: int, width: int, prefix: bytes = b""):
    """``count`` random lowercase hex strings of ``width`` digits after ``prefix``, built as
    one Arrow buffer (no Python string per row)."""
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    raw = rng.integers(0, 256, size=(count, (width + 1) // 2), dtype=np.uint8)
    text = np.empty((count, len(prefix) + width), dtype=np.uint8)
    if prefix:
        text[:, :len(prefix)] = np.frombuffer(prefix, dtype=np.uint8)
    hexed = np.empty((count, raw.shape[1] * 2), dtype=np.uint8)
    hexed[:, 0::2], hexed[:, 1::2] = digits[raw >> 4], digits[raw & 15]
    text[:, len(prefix):] = hexed[:, :width]
    offsets = np.arange(0, (count + 1) * text.shape[1], text.shape[1], dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(text.tobytes())])


def synthetic_draws(template: Template, runs: int, seed: int):
    """Each run's referenced objects, drawn as ``bench_store.generate`` draws them: an
    implementation, a workload of its kernel and an environment uniformly, a timed
    protocol four times in five (else a peak-memory one); and the order kidx's export
    writes the runs in: by name, which starts with this combination (then the time)."""
    import numpy as np

    rng = np.random.default_rng([seed, runs])
    n_env, n_protocols = template.roles["environment"].num_rows, len(template.memory)
    impl = rng.integers(0, template.roles["implementation"].num_rows, runs)
    sizes = np.array([len(w) for w in template.workloads_of])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    flat = np.array([j for w in template.workloads_of for j in w])
    workload = flat[starts[impl] + (rng.random(runs) * sizes[impl]).astype(np.int64)]
    env = rng.integers(0, n_env, runs)
    timed = np.array([i for i, memory in enumerate(template.memory) if not memory])
    memory = np.array([i for i, memory in enumerate(template.memory) if memory])
    protocol = np.where(rng.random(runs) < 0.8, timed[rng.integers(0, len(timed), runs)],
                        memory[rng.integers(0, len(memory), runs)])
    combination = ((impl * len(template.name_parts["workload"]) + workload) * n_env + env) * n_protocols + protocol
    unique, inverse = np.unique(combination, return_inverse=True)
    prefixes = [name_prefix(template, int(code)) for code in unique]
    rank = np.empty(len(unique), dtype=np.int64)
    rank[sorted(range(len(unique)), key=prefixes.__getitem__)] = np.arange(len(unique))
    order = np.lexsort((np.arange(runs), rank[inverse.ravel()]))
    return {"impl": impl, "workload": workload, "env": env, "protocol": protocol, "combination": combination,
            "order": order}


def name_prefix(template: Template, code: int) -> str:
    """slug("liger/" + externalId) up to its time stamp, where externalId is
    kernel/mode[/memory]/provider/gpu/key/stamp: one prefix per combination."""
    parts = template.name_parts
    code, p = divmod(code, len(template.memory))
    code, e = divmod(code, template.roles["environment"].num_rows)
    i, w = divmod(code, len(parts["workload"]))
    mode = parts["protocol"][p].replace("peak-memory-", "") + ("/memory" if template.memory[p] else "")
    return bench_store.slug(f"liger/{parts['kernel'][i]}/{mode}/{parts['implementation'][i]}/"
                            f"{template.label_of['labels.gpu'][e]}/{parts['workload'][w]}")


def synthetic_chunk(template: Template, draws: dict, index, seed: int):
    """The runs numbered ``index`` (the generator's run numbers, in the file's order) as an
    Arrow table of the template's schema: their referenced objects from ``draws``, a Liger
    release by its weight, a latency of 0.01 to 50 ms with p20/p80 a few percent around it
    (a peak memory of 64 to 80,000 MiB), ``suite`` and ``page`` labels by number, a unique
    name of the generator's form and a random digest, as ``bench_store.generate`` makes them."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    count = len(index)
    rng = np.random.default_rng([seed, int(index[0]), count])
    impl, workload, env, protocol = (draws[key][index] for key in ("impl", "workload", "env", "protocol"))
    is_timed = ~np.array(template.memory)[protocol]
    columns: dict[str, object] = {}
    for role, chosen in (("protocol", protocol), ("workload", workload), ("environment", env),
                         ("implementation", impl)):
        table = template.roles[role].take(pa.array(chosen))
        for name in table.column_names:
            columns[name] = table.column(name).combine_chunks()

    # the headline figure: a latency in ns, or a peak memory in bytes (p20, p50, p80 drawn apart)
    ms50 = rng.uniform(0.01, 50.0, count)
    latency = (np.rint(ms50 * 1e6), np.rint(ms50 * rng.uniform(0.97, 1.0, count) * 1e6),
               np.rint(ms50 * rng.uniform(1.0, 1.04, count) * 1e6))
    mib = [rng.integers(64, 80_000, count) + rng.integers(0, 4, count) / 4 for _ in range(3)]
    peak = tuple(np.floor(m * 1048576) for m in (mib[1], mib[0], mib[2]))
    for name, timed_values, memory_values in zip(("value", "low", "high"), latency, peak, strict=True):
        columns[name] = pa.array(np.where(is_timed, timed_values, memory_values), type=pa.float64())
    for name in ("metric", "statistic", "unit"):
        per_protocol = pa.array([m[name] for m in template.measures], type=pa.string())
        columns[name] = per_protocol.take(pa.array(protocol))

    seconds = BASE_SECONDS + index * 37
    columns["observedAt"] = pa.array(seconds * 1_000_000, type=pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    columns["status"] = pa.array(["passed"], type=pa.string()).take(pa.array(np.zeros(count, dtype=np.int64)))
    columns["digest"] = _hex_strings(pa, np, rng, count, 64, b"sha256:")

    versions = [v for v, _ in bench_store.LIGER_VERSIONS]
    weights = np.array([w for _, w in bench_store.LIGER_VERSIONS], dtype=float)
    columns["labels.liger_version"] = pa.array(versions).take(
        pa.array(rng.choice(len(versions), count, p=weights / weights.sum())))
    columns["labels.gpu"] = pa.array(template.label_of["labels.gpu"]).take(pa.array(env))
    columns["labels.kernel"] = pa.array(template.label_of["labels.kernel"]).take(pa.array(impl))
    suites = pa.array([f"s{i:03d}" for i in range(bench_store.SELECTOR_BUCKETS)])
    columns["labels.suite"] = suites.take(pa.array(index % bench_store.SELECTOR_BUCKETS))
    numbers, which = np.unique(index // bench_store.PAGE_SIZE, return_inverse=True)
    columns["labels.page"] = pa.array([f"p{p:04d}" for p in numbers.tolist()]).take(pa.array(which.ravel()))

    # the name: slug("liger/" + externalId) cut to 89 characters, "-" and 10 hex digits
    unique, inverse = np.unique(draws["combination"][index], return_inverse=True)
    prefixes = pa.array([name_prefix(template, int(code)) for code in unique])
    stamps = np.datetime_as_string(seconds.astype("datetime64[s]"), unit="s")
    stamp = pc.replace_substring_regex(pa.array(stamps, type=pa.string()), "[T:]", "-")
    base = pc.binary_join_element_wise(prefixes.take(pa.array(inverse.ravel())), stamp, "-")
    base = pc.utf8_rtrim(pc.utf8_slice_codeunits(base, 0, 89), characters="-._")
    columns["name"] = pc.binary_join_element_wise(base, _hex_strings(pa, np, rng, count, 10), "-")

    nothing = {field.name: pa.nulls(count, type=field.type) for field in template.schema
               if field.name == "samples" or field.name == "samples.unit" or field.name.startswith("sol.")}
    columns.update(nothing)
    return pa.Table.from_arrays([columns[field.name] for field in template.schema], schema=template.schema)


def write_synthetic(template: Template, path: Path, runs: int, seed: int) -> float:
    """The synthetic file of ``runs`` rows in name order, written in row groups of
    ``ROW_GROUP`` rows with the writer's defaults (snappy), as ``pq.write_table`` writes
    kidx's export; its seconds."""
    import pyarrow.parquet as pq

    began = time.perf_counter()
    draws = synthetic_draws(template, runs, seed)
    with pq.ParquetWriter(path, template.schema) as writer:
        for first in range(0, runs, ROW_GROUP):
            writer.write_table(synthetic_chunk(template, draws, draws["order"][first:first + ROW_GROUP], seed))
    return time.perf_counter() - began


def query_column_bytes(path: Path, columns: list[str]) -> int:
    """The compressed bytes of the columns the query reads, over every row group."""
    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(path).metadata
    wanted = set(columns)
    total = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for column in range(row_group.num_columns):
            chunk = row_group.column(column)
            if chunk.path_in_schema in wanted:
                total += chunk.total_compressed_size
    return total


# --- kidx's side of the check ----------------------------------------------------------------

def kidx_medians(store_path: Path) -> tuple[dict[tuple, tuple[int, float]], int]:
    """Per series of ``kidx series`` (two points or more): its point count and the median of
    its points' values; and the count of series of one point, as kidx reports it."""
    import kidx
    from kidx.analysis.comparability import series_key

    with kidx.open_store(store_path) as store:
        result = store.series().result
    found = {}
    for series in result.series:
        run = series.points[0].run
        key = (*series_key(run), run.known_measure.metric)
        found[key] = (len(series.points), statistics.median(point.run.measure.value for point in series.points))
    return found, result.single


def duckdb_medians(duckdb, path: Path, names: list[str]) -> dict[tuple, tuple[int, float]]:
    """DuckDB's rows keyed as kidx keys a series (the hardware as kidx writes it: JSON, sorted keys)."""
    hardware = hardware_columns(names)
    rows = duckdb.connect().execute(median_by_series_sql(path, names)).fetchall()
    found = {}
    for row in rows:
        protocol, workload, *rest = row
        values, (environment, implementation, metric, runs, median) = rest[:len(hardware)], rest[len(hardware):]
        machine: dict = {}
        for column, value in zip(hardware, values, strict=True):
            if value is not None:
                *parents, leaf = column.removeprefix("environment.spec.hardware.").split(".")
                place = machine
                for parent in parents:
                    place = place.setdefault(parent, {})
                place[leaf] = value
        key = (protocol, workload, json.dumps(machine, sort_keys=True) if machine else environment,
               implementation, metric)
        found[key] = (runs, median)
    return found


# --- the run -------------------------------------------------------------------------------

def export(kidx: list[str], store: Path, path: Path) -> float:
    began = time.perf_counter()
    subprocess.run([*kidx, "export", "runs", "--format", "parquet", "-o", str(path), "--store", str(store)],
                   check=True, stdout=subprocess.DEVNULL, env=bench_store.SUBPROCESS_ENV)
    return time.perf_counter() - began


def build(root: Path, runs: int, seed: int, kidx: list[str], shape: dict | None = None) -> float:
    began = time.perf_counter()
    if shape is None:
        bench_analysis.build_store(root, runs, seed, kidx)
    else:
        data = bench_store.generate(runs, seed, **shape)
        path = root.parent / f"{root.name}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": data.documents}))
        subprocess.run([*kidx, "apply", "-f", str(path), "-o", "name", "--store", str(root)],
                       check=True, stdout=subprocess.DEVNULL)
        path.unlink()
    return time.perf_counter() - began


def mb(count: float) -> str:
    return f"{count / 1e6:,.1f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000_000, help="rows of the large synthetic file")
    parser.add_argument("--step-runs", type=int, default=1_000_000, help="rows of the smaller synthetic file")
    parser.add_argument("--check-runs", type=int, default=20_000, help="runs of the two stores kidx exports")
    parser.add_argument("--estimate-runs", type=int, default=100_000_000, help="the size estimated by scaling")
    parser.add_argument("--repeats", type=int, default=3, help="warm query rounds per size (default 3)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=HERE / "out", help="report folder (default bench/out)")
    parser.add_argument("--keep", action="store_true", help="keep the stores and Parquet files (in --out)")
    args = parser.parse_args()
    duckdb, pyarrow = require_engines()
    import pyarrow.parquet as pq

    args.out.mkdir(parents=True, exist_ok=True)
    report = bench_store.Report(args.out / f"bench_engine-{time.strftime('%Y%m%d-%H%M%S')}.txt")
    say = report.say
    started = time.perf_counter()
    bench_store.SUBPROCESS_ENV = bench_store.bytecode_cached_environment(args.out)
    kidx = bench_store.kidx_command()
    signal.signal(signal.SIGTERM, bench_store._terminate)  # the files go on SIGTERM too
    work = Path(tempfile.mkdtemp(prefix="kidx-bench-engine-", dir=args.out))
    say(f"bench_engine: code {bench_store.code_version()}, {os.cpu_count()} CPUs, duckdb {duckdb.__version__}, "
        f"pyarrow {pyarrow.__version__}, load {os.getloadavg()[0]:.1f}")
    try:
        # 1. kidx's own export of a generated store
        report.section = f"kidx's own Parquet export ({args.check_runs:,} generated runs)"
        say(f"\n=== {report.section}")
        build(work / "template", args.check_runs, args.seed, kidx)
        exported = work / "template.parquet"
        export_s = export(kidx, work / "template", exported)
        export_bytes = exported.stat().st_size
        template_table = pq.read_table(exported)
        template = Template(template_table)

        # 2. the synthetic writer against it
        same_size = work / "synthetic-check.parquet"
        write_synthetic(template, same_size, args.check_runs, args.seed)
        synthetic_schema = pq.read_schema(same_size)
        same_schema = synthetic_schema.remove_metadata().equals(template_table.schema.remove_metadata())
        synthetic_bytes = same_size.stat().st_size
        name_length = (statistics.mean(len(n) for n in template_table.column("name").to_pylist()),
                       statistics.mean(len(n) for n in pq.read_table(same_size, columns=["name"])
                                       .column("name").to_pylist()))
        report.table(["file", "rows", "columns", "bytes", "bytes per run", "mean name length", "time"], [
            ["kidx export runs --format parquet", f"{args.check_runs:,}", str(len(template_table.schema)),
             f"{export_bytes:,}", f"{export_bytes / args.check_runs:,.1f}", f"{name_length[0]:.1f}",
             f"{export_s:.1f} s ({args.check_runs / export_s:,.0f} runs/s, cold process)"],
            ["synthetic writer, same rows", f"{args.check_runs:,}", str(len(synthetic_schema)),
             f"{synthetic_bytes:,}", f"{synthetic_bytes / args.check_runs:,.1f}", f"{name_length[1]:.1f}", ""],
        ])
        report.check("synthetic file's schema equals kidx export's (names, types, order)",
                     f"{len(synthetic_schema)} columns, " + ("identical" if same_schema else "DIFFERENT"),
                     "identical", same_schema)
        report.check("synthetic bytes per run / kidx export's", f"{synthetic_bytes / export_bytes:.2f}x", "info", None)
        report.check("kidx export runs --format parquet", f"{args.check_runs / export_s:,.0f} runs/s",
                     "info", None)

        # 3. DuckDB's median by series against kidx's series
        report.section = f"DuckDB's median by series against kidx series ({args.check_runs:,} runs)"
        say(f"\n=== {report.section}")
        build(work / "check", args.check_runs, args.seed, kidx, CHECK_SHAPE)
        checked = work / "check.parquet"
        export(kidx, work / "check", checked)
        names = pq.read_schema(checked).names
        began = time.perf_counter()
        ours, single = kidx_medians(work / "check")
        kidx_s = time.perf_counter() - began
        theirs = duckdb_medians(duckdb, checked, names)
        several = {key: value for key, value in theirs.items() if value[0] >= 2}
        ones = sum(1 for value in theirs.values() if value[0] == 1)
        same_keys = set(ours) == set(several)
        worst = max((abs(ours[k][1] - several[k][1]) / abs(ours[k][1]) for k in ours if k in several
                     and ours[k][1]), default=0.0)
        same_counts = all(ours[k][0] == several[k][0] for k in ours if k in several)
        agree = same_keys and same_counts and single == ones and worst <= 1e-12
        points = [value[0] for value in ours.values()]
        report.table(["", "kidx series", "DuckDB over kidx's export"], [
            ["series of two points or more", f"{len(ours):,}", f"{len(several):,}"],
            ["series of one point", f"{single:,}", f"{ones:,}"],
            ["points in them", f"{sum(points):,}", f"{sum(v[0] for v in several.values()):,}"],
            ["points per series (median, max)", f"{statistics.median(points):g}, {max(points)}", ""],
            ["same series, same point counts", "yes" if same_keys and same_counts else "NO", ""],
            ["largest relative difference of a median", f"{worst:.1e}", ""],
        ])
        say(f"(kidx series over the store took {kidx_s:.1f} s in this process, verdicts and change points included)")
        report.check("DuckDB's median by series equals kidx series' (every series)",
                     f"{len(ours):,} series, largest difference {worst:.1e}", "equal", agree)

        # 4. the synthetic files: write, size, query
        measured = {}
        for runs in sorted({args.step_runs, args.runs}):
            report.section = f"{runs:,} runs: the synthetic Parquet file and DuckDB's median by series"
            say(f"\n=== {report.section}")
            path = work / f"synthetic-{runs}.parquet"
            write_s = write_synthetic(template, path, runs, args.seed)
            size = path.stat().st_size
            sql = median_by_series_sql(path, template.schema.names)
            read = ["protocol.digest", "workload.digest", *hardware_columns(template.schema.names),
                    "environment.digest", "implementation.digest", "metric", "value"]
            column_bytes = query_column_bytes(path, read)
            evict(path)
            cold = timed_query(sql)
            warm = [timed_query(sql) for _ in range(args.repeats)]
            query_s = statistics.median(w["query_s"] for w in warm)
            rss = max(w["rss_mb"] for w in [cold, *warm])
            measured[runs] = {"write_s": write_s, "bytes": size, "column_bytes": column_bytes,
                              "cold": cold, "warm": warm, "query_s": query_s, "rss_mb": rss}
            report.table(["measure", "value"], [
                ["write (synthetic writer)", f"{write_s:.1f} s ({runs / write_s:,.0f} rows/s)"],
                ["file", f"{mb(size)} ({size / runs:,.1f} bytes a run; row groups of up to {ROW_GROUP:,} rows: "
                         f"{-(-runs // ROW_GROUP)})"],
                ["columns the query reads", f"{mb(column_bytes)} ({column_bytes / runs:,.1f} bytes a run)"],
                ["series found (groups)", f"{cold['groups']:,} over {cold['runs']:,} runs"],
                ["query, file evicted from the page cache",
                 f"{cold['query_s']:.2f} s (process {cold['wall_s']:.2f} s)"],
                [f"query, warm (median of {args.repeats})",
                 f"{query_s:.2f} s (" + ", ".join(f"{w['query_s']:.2f}" for w in warm) + ")"],
                ["query's CPU time (warm median)",
                 f"{statistics.median(w['cpu_s'] for w in warm):.2f} s on {cold['threads']} threads"],
                ["peak resident memory of the query process", f"{rss:,.0f} MB"],
                ["import duckdb", f"{statistics.median(w['import_s'] for w in warm) * 1000:.0f} ms"],
            ])
            if not args.keep:
                path.unlink()

        # 5. scaled to the field-sized index: an estimate
        small, large = measured[min(measured)], measured[max(measured)]
        top = max(measured)
        factor = args.estimate_runs / top
        growth = large["query_s"] / small["query_s"] if small["query_s"] else float("nan")
        # memory has a fixed part (the interpreter, DuckDB): the line through the two sizes
        per_run = (large["rss_mb"] - small["rss_mb"]) / (top - min(measured)) if top > min(measured) else 0.0
        memory_estimate = large["rss_mb"] + per_run * (args.estimate_runs - top)
        report.section = f"Estimated for {args.estimate_runs:,} runs (scaled linearly from {top:,}; not measured)"
        say(f"\n=== {report.section}")
        report.table(["figure", f"measured at {min(measured):,}", f"measured at {top:,}",
                      f"estimate at {args.estimate_runs:,} (x{factor:g})"], [
            ["Parquet file", mb(small["bytes"]), mb(large["bytes"]), mb(large["bytes"] * factor)],
            ["columns the query reads", mb(small["column_bytes"]), mb(large["column_bytes"]),
             mb(large["column_bytes"] * factor)],
            ["median by series, warm", f"{small['query_s']:.2f} s", f"{large['query_s']:.2f} s",
             f"{large['query_s'] * factor:.0f} s"],
            ["median by series, evicted file", f"{small['cold']['query_s']:.2f} s",
             f"{large['cold']['query_s']:.2f} s", f"{large['cold']['query_s'] * factor:.0f} s"],
            ["peak resident memory (line through both sizes)", f"{small['rss_mb']:,.0f} MB",
             f"{large['rss_mb']:,.0f} MB", f"{memory_estimate:,.0f} MB"],
        ])
        say(f"From {min(measured):,} to {top:,} runs ({top / min(measured):g}x) the warm query took "
            f"{growth:.1f}x as long.")
        report.check(f"median by series over {top:,} runs (warm, {large['cold']['threads']} threads)",
                     f"{large['query_s']:.2f} s", "info", None)
        report.check(f"Parquet bytes a run at {top:,} runs", f"{large['bytes'] / top:,.1f}", "info", None)
        report.check(f"median by series at {args.estimate_runs:,} runs (estimate, linear)",
                     f"about {large['query_s'] * factor:.0f} s", "info", None)
        report.data["engine"] = {"check_runs": args.check_runs, "export_s": export_s, "export_bytes": export_bytes,
                                 "synthetic_bytes": synthetic_bytes, "same_schema": same_schema,
                                 "kidx_series": len(ours), "single": single, "worst_difference": worst,
                                 "agree": agree, "sizes": {str(k): v for k, v in measured.items()},
                                 "estimate_runs": args.estimate_runs, "sql": median_by_series_sql(
                                     Path("FILE.parquet"), template.schema.names)}
        report.finish(started, title="Past one PostgreSQL: median by series over Parquet, by DuckDB",
                      script="bench/bench_engine.py", sizes=sorted(measured), load=list(os.getloadavg()))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
