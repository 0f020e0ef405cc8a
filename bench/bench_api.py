#!/usr/bin/env python3
"""What the Python API costs against the command line: ``Store.frame()`` of 1,000 runs
selected by label from a 100,000-run store, beside ``kidx get runs -l … -o json`` of the
same selection as a process, in one run.

Builds the store with bench_analysis.build_store (the store benchmark's generated data,
applied in chunks), then times interleaved rounds (one warm-up round, not counted):

- ``kidx get runs -l suite=s042 -o json`` as a cold process (stdout to /dev/null), and
  ``python -c pass`` for scale;
- ``kidx.open_store(STORE).frame(selector="suite=s042")`` in this process, as a notebook
  calls it: kidx and pandas already imported, the store opened afresh each round;
- ``Store.records()`` of the same selection (the rows without pandas), for information;
- a cold process that imports kidx and pandas and builds the same frame, for information.

Target: the in-process frame takes no longer than the ``get -o json`` process. The
report (text and JSON) goes to --out, for bench/render_performance.py.

    .venv/bin/python bench/bench_api.py --runs 100000
"""

from __future__ import annotations

import json
import os
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


def frame_in_process(root: Path) -> tuple[float, int]:
    import kidx

    started = time.perf_counter()
    with kidx.open_store(root) as store:
        frame = store.frame(selector=bench_store.SELECTOR)
    return time.perf_counter() - started, len(frame)


def records_in_process(root: Path) -> tuple[float, int]:
    import kidx

    started = time.perf_counter()
    with kidx.open_store(root) as store:
        rows = store.records(selector=bench_store.SELECTOR)
    return time.perf_counter() - started, len(rows)


def main() -> int:
    args, report = bench_store.generated_store_benchmark(__doc__, "bench_api")
    report.section = f"{args.runs:,} runs: Store.frame() against kidx get -o json"
    started = time.perf_counter()
    kidx_cli = bench_store.kidx_command()
    work = Path(tempfile.mkdtemp(prefix="kidx-bench-api-"))
    try:
        root = Path(args.store) if args.store else work / "store"
        if not args.store:
            built = time.perf_counter()
            bench_analysis.build_store(root, args.runs, args.seed, kidx_cli)
            report.say(f"store of {args.runs:,} runs built in {time.perf_counter() - built:.0f} s")
        env = {**os.environ, "PYTHONPYCACHEPREFIX": str(work / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        bench_store.SUBPROCESS_ENV = env
        get_json = [*kidx_cli, "get", "runs", "-l", bench_store.SELECTOR, "-o", "json", "--store", str(root)]
        cold_frame = [sys.executable, "-c",
                      f"import kidx, pandas; kidx.open_store({str(root)!r}).frame(selector={bench_store.SELECTOR!r})"]
        processes = {"python -c pass": [sys.executable, "-c", "pass"], "kidx get runs -l -o json": get_json,
                     "cold process: import kidx, pandas; frame()": cold_frame}
        listed = json.loads(subprocess.run(get_json, capture_output=True, text=True, check=True, env=env).stdout)
        import pandas  # noqa: F401 (imported before timing, as in a notebook)

        import kidx  # noqa: F401

        times: dict[str, list[float]] = {label: [] for label in [*processes, "Store.frame()", "Store.records()"]}
        rows = {}
        for round_ in range(args.repeats + 1):
            for label, argv in processes.items():
                elapsed, rc, err = bench_store.timed_run(argv)
                if rc != 0:
                    raise RuntimeError(f"{label}: exit {rc}: {err.strip()[:500]}")
                if round_:
                    times[label].append(elapsed)
            for label, call in (("Store.frame()", frame_in_process), ("Store.records()", records_in_process)):
                elapsed, count = call(root)
                rows[label] = count
                if round_:
                    times[label].append(elapsed)
        base = bench_store.median(times["python -c pass"])
        get_median = bench_store.median(times["kidx get runs -l -o json"])
        report.say(f"{args.runs:,} runs in the store; selection -l {bench_store.SELECTOR}: {len(listed['items']):,} "
                   f"runs from get -o json, {rows['Store.frame()']:,} frame rows, {rows['Store.records()']:,} records; "
                   f"medians of {args.repeats} interleaved rounds; the machine is shared (load average "
                   f"{os.getloadavg()[0]:.2f} at the end)")
        table = []
        for label, values in times.items():
            value = bench_store.median(values)
            table.append([label, f"{value * 1000:.0f} ms", f"{min(values) * 1000:.0f} ms",
                          f"{max(values) * 1000:.0f} ms", f"{value / base:.2f}x", f"{value / get_median:.2f}x"])
        report.table(["what", "median", "min", "max", "x python -c pass", "x get -o json"], table)
        frame_median = bench_store.median(times["Store.frame()"])
        same_rows = rows["Store.frame()"] == rows["Store.records()"] == len(listed["items"]) == args.runs // 100
        report.check("Store.frame() rows = get -o json items = 1% of the runs", f"{rows['Store.frame()']:,}",
                     f"{args.runs // 100:,}", same_rows)
        report.check(f"Store.frame() of 1% of {args.runs // 1000}k runs / get -o json process",
                     f"{frame_median / get_median:.2f}x ({frame_median * 1000:.0f} ms vs {get_median * 1000:.0f} ms)",
                     "<= 1x", frame_median <= get_median)
        cold = bench_store.median(times["cold process: import kidx, pandas; frame()"])
        report.check("cold process with pandas import / get -o json process", f"{cold / get_median:.2f}x", "info",
                     None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report.finish(started, title="Python API: Store.frame() against kidx get -o json", script="bench/bench_api.py",
                  sizes=[args.runs])
    return 0


if __name__ == "__main__":
    sys.exit(main())
