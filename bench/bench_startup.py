#!/usr/bin/env python3
"""How fast the everyday commands start, as cold processes against ``python -c pass``:

* ``get -l`` (1,000 rows) and ``describe run NAME`` on a generated store (SQLite), each
  both ways it can be read: by kidx's fast path (``kidx/cli/fast.py``, no typer) and by
  the argument parser (the same command with the fast path turned off in that process);
* ``get runs`` of every run of the Liger store (``kidx import liger`` of tests/data/liger's
  three CSVs: 3,897 runs);
* ``get -l`` (1,000 rows) on PostgreSQL, the same generated runs in a throwaway cluster
  (tests/pg_server.py; skipped when the server binaries are not found or with
  --no-postgres), beside ``python -c "import psycopg"``: the driver's own import, which
  every PostgreSQL command pays before it can connect.

Times interleaved rounds after one warm-up round; for each command the median wall time
and the median CPU time (user + system of the child, which a loaded machine disturbs
less than wall time), each as a multiple of ``python -c pass`` of the same run. Saves the
report as text and JSON in --out, for bench/render_performance.py. Targets at 100,000
runs (wall time, as bench_store.py measures): describe <= 4x, get -l <= 5x, get -l on
PostgreSQL <= 8x; the Liger store's get runs <= 8x.

    .venv/bin/python bench/bench_startup.py --runs 100000
    .venv/bin/python bench/bench_startup.py --store PATH      # a store bench_store or bench_analysis made
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_analysis  # noqa: E402
import bench_store  # noqa: E402

# the same command, read by the argument parser: the fast path turned off in this process only
PARSER_PATH = "import sys; from kidx.cli import fast; fast.parse = lambda argv: None; from kidx.cli.app import main; " \
              "sys.argv[0] = 'kidx'; main()"


def _shown(path: Path) -> str:
    """A path inside the repository relative to it (a kept report names no machine's folders)."""
    try:
        return str(path.relative_to(HERE.parent))
    except ValueError:
        return str(path)


def cold_times(commands: dict[str, list[str]], repeats: int, env: dict[str, str]) -> dict[str, tuple[list, list]]:
    """(wall seconds, CPU seconds) per round, interleaved so that drift hits every command alike."""
    times: dict[str, tuple[list, list]] = {label: ([], []) for label in commands}
    for round_ in range(repeats + 1):
        for label, argv in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                raise RuntimeError(f"{label}: exit {done.returncode}: {done.stderr.strip()[:500]}")
            if round_:
                times[label][0].append(wall)
                times[label][1].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times


def _options(parser) -> None:
    parser.add_argument("--liger-dir", type=Path, default=bench_store.DEFAULT_LIGER_DIR,
                        help="folder of the Liger CSVs (default tests/data/liger)")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL measurement")


def _postgres(work: Path, runs: int, seed: int, kidx: list[str]):
    """A throwaway cluster holding the generated runs, or (None, why not)."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    from pg_server import PostgresServer, server_binaries  # the tests' throwaway cluster

    binaries = server_binaries()
    if binaries is None:
        return None, "no PostgreSQL server binaries found (initdb, pg_ctl)"
    cluster = PostgresServer(binaries)
    cluster.start()
    url = cluster.create_database("kidx_bench_startup")
    bench_analysis.build_store(work / "pg" / "store", runs, seed, kidx, location=url)
    return (cluster, url), None


def main() -> int:
    args, report = bench_store.generated_store_benchmark(__doc__, "bench_startup", repeats=21, options=_options)
    started = time.perf_counter()
    kidx = bench_store.kidx_command()
    work = Path(tempfile.mkdtemp(prefix="kidx-bench-startup-"))
    cluster = None
    try:
        root = Path(args.store) if args.store else work / "store"
        if not args.store:
            bench_analysis.build_store(root, args.runs, args.seed, kidx)
        store = ["--store", str(root)]
        env = {**os.environ, "PYTHONPYCACHEPREFIX": str(work / "pycache"), "NO_COLOR": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        listed = subprocess.run([*kidx, "get", "runs", "-l", bench_store.SELECTOR, "-o", "name", *store],
                                capture_output=True, text=True, env=env, check=True).stdout.split()
        runs = len(subprocess.run([*kidx, "get", "runs", "-o", "name", *store], capture_output=True, text=True,
                                  env=env, check=True).stdout.split())
        name = listed[0].split("/", 1)[1]
        liger = ["--store", str(work / "liger")]
        subprocess.run([*kidx, "import", "liger", *sorted(map(str, args.liger_dir.glob("*.csv"))), *liger],
                       capture_output=True, text=True, env=env, check=True)
        liger_runs = len(subprocess.run([*kidx, "get", "runs", "-o", "name", *liger], capture_output=True,
                                        text=True, env=env, check=True).stdout.split())
        postgres, skipped = (None, "--no-postgres") if args.no_postgres else _postgres(work, runs, args.seed, kidx)
        if postgres is not None:
            cluster, url = postgres
        load = os.getloadavg()[0]
        report.section = (f"{runs:,} runs: cold start, fast path and argument parser "
                          f"(load average {load:.1f} on {os.cpu_count()} CPUs at the start)")
        report.say(f"kidx bench_startup  {time.strftime('%Y-%m-%d %H:%M:%S')}  {os.cpu_count()} CPUs  "
                   f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        get = ["get", "runs", "-l", bench_store.SELECTOR, *store]
        describe = ["describe", "run", name, *store]
        get_label = f"get runs -l {bench_store.SELECTOR} ({len(listed):,} rows)"
        liger_label = f"get runs, Liger store ({liger_runs:,} rows)"
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            get_label: [*kidx, *get],
            f"get runs -l {bench_store.SELECTOR}, argument parser": [sys.executable, "-c", PARSER_PATH, *get],
            "describe run NAME": [*kidx, *describe],
            "describe run NAME, argument parser": [sys.executable, "-c", PARSER_PATH, *describe],
            liger_label: [*kidx, "get", "runs", *liger],
        }
        pg_label = f"get runs -l {bench_store.PAGE_KEY}=p0042, PostgreSQL (1,000 rows)"
        if postgres is not None:
            commands[pg_label] = [*kidx, "get", "runs", "-l", f"{bench_store.PAGE_KEY}=p0042", "--store", url]
            commands['python -c "import psycopg"'] = [sys.executable, "-c", "import psycopg"]
        times = cold_times(commands, args.repeats, env)
        median = bench_store.median
        wall_base, cpu_base = median(times["python -c pass"][0]), median(times["python -c pass"][1])
        rows = []
        for label, (wall, cpu) in times.items():
            rows.append([label, f"{median(wall) * 1000:.0f} ms", f"{min(wall) * 1000:.0f}",
                         f"{median(wall) / wall_base:.2f}x", f"{median(cpu) * 1000:.0f} ms",
                         f"{median(cpu) / cpu_base:.2f}x"])
        report.say(f"cold processes, medians of {args.repeats} interleaved rounds (stdout to /dev/null); "
                   f"baseline: {_shown(Path(sys.executable))} -c pass")
        report.table(["command", "wall", "min", "x python", "cpu", "x python (cpu)"], rows)
        labels = list(commands)
        for fast_label, parser_label, target in ((labels[3], labels[4], 4), (labels[1], labels[2], 5)):
            ratio = median(times[fast_label][0]) / wall_base
            report.check(f"{fast_label}, {runs // 1000:,}k runs", f"{ratio:.2f}x python", f"<= {target}x",
                         ratio <= target if runs >= 100_000 else None)
            cpu_ratio = median(times[fast_label][1]) / cpu_base
            report.check(f"{fast_label}, CPU time", f"{cpu_ratio:.2f}x python", "info", None)
            saved = 1 - median(times[fast_label][1]) / median(times[parser_label][1])
            report.check(f"{fast_label}: CPU time saved by the fast path", f"{saved:.0%}", "info", None)
        ratio = median(times[liger_label][0]) / wall_base
        report.check(liger_label, f"{ratio:.2f}x python", "<= 8x", ratio <= 8)
        if postgres is not None:
            ratio = median(times[pg_label][0]) / wall_base
            report.check(f"{pg_label}, {runs // 1000:,}k runs", f"{ratio:.2f}x python", "<= 8x",
                         ratio <= 8 if runs >= 100_000 else None)
            floor = median(times['python -c "import psycopg"'][0]) / wall_base
            report.check("python -c \"import psycopg\": the driver's import alone", f"{floor:.2f}x python",
                         "info", None)
        else:
            report.check("get runs -l on PostgreSQL", f"skipped: {skipped}", "<= 8x", None)
        report.say(f"load at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    report.finish(started, title="Everyday commands' start", script="bench/bench_startup.py", sizes=[runs])
    return 0


if __name__ == "__main__":
    sys.exit(main())
