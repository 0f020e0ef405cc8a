#!/usr/bin/env python3
"""What each timer measured on the H200: the recordings in tests/data/h200-timers.

Liger-Kernel 0.8.2's harness, unmodified, run through ``kidx record --timer T
--processes N`` (tests/data/h200-timers/README.md): the same 32 configurations timed with
``cuda_events`` (what the harness's own do_bench does), ``cuda_graph`` and ``cupti``, each
in 8 fresh processes. For each configuration the script prints the median over processes
of each timer's run medians and the launch overhead (events ÷ kernel timer); for each
timer, the spread between processes (the standard deviation of the log run medians, per
configuration: its median and maximum over configurations). Every figure is read from the
stored runs through kidx's Python API; the report goes to bench/reports/.

    .venv/bin/python bench/bench_timers.py
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import kidx  # noqa: E402
from kidx.analysis.hostbound import HOST_BOUND_OVERHEAD  # noqa: E402

FIXTURES = REPO / "tests" / "data" / "h200-timers"
PHASES = {"cuda_events": "cuda-events", "cuda_graph": "cuda-graph", "cupti": "cupti"}


def medians_by_configuration(bundle: Path, scratch: Path) -> dict[tuple, list[float]]:
    """(kernel, pass, provider, workload) -> each process's run median (µs)."""
    store = scratch / bundle.parent.name
    subprocess.run([sys.executable, "-m", "kidx", "import", "bundle", str(bundle), "--store", str(store)],
                   check=True, capture_output=True)
    found: dict[tuple, list[float]] = defaultdict(list)
    with kidx.open_store(str(store)) as opened:
        for row in opened.records(selector="suite=h200-timers"):
            key = (row["labels.kernel"], row["labels.operation"], row["labels.provider"], row["workload.name"])
            found[key].append(row["value"] / 1000)
    return found


def log_spread(values: list[float]) -> float:
    return statistics.stdev(math.log(value) for value in values)


def main() -> int:
    started = datetime.datetime.now(datetime.UTC)
    with tempfile.TemporaryDirectory(prefix="bench-timers-") as folder:
        by_timer = {timer: medians_by_configuration(FIXTURES / phase / "store.kidx.json", Path(folder))
                    for timer, phase in PHASES.items()}
    keys = sorted(set().union(*by_timer.values()))
    rows, overheads = [], []
    for key in keys:
        medians = {timer: statistics.median(found[key]) for timer, found in by_timer.items() if key in found}
        kernel = min(medians.get("cuda_graph", math.inf), medians.get("cupti", math.inf))
        overhead = medians["cuda_events"] / kernel if "cuda_events" in medians and kernel < math.inf else None
        if overhead is not None:
            overheads.append(overhead)
        rows.append([key[0], key[1], key[2], key[3].removeprefix(f"liger-{key[0].replace('_', '-')}-"),
                     *(f"{medians[timer]:.2f}" if timer in medians else "-" for timer in PHASES),
                     f"{overhead:.2f}x" if overhead is not None else "-"])
    spread_rows = []
    for timer, found in by_timer.items():
        spreads = [log_spread(values) for values in found.values() if len(values) > 1]
        processes = sorted({len(values) for values in found.values()})
        spread_rows.append([timer, str(len(found)), "/".join(map(str, processes)),
                            f"{statistics.median(spreads) * 100:.2f} %", f"{max(spreads) * 100:.2f} %"])
    host_bound = sum(1 for overhead in overheads if overhead >= HOST_BOUND_OVERHEAD)
    summary = [
        ["configurations timed by all three timers", str(len(overheads))],
        [f"events time at least {HOST_BOUND_OVERHEAD:g}x the kernel timer's (host-bound)", str(host_bound)],
        ["launch overhead, median over configurations", f"{statistics.median(overheads):.2f}x"],
        ["launch overhead, largest", f"{max(overheads):.2f}x"],
    ]
    tables = [
        {"section": "Spread between processes, per timer", "header": [
            "timer", "configurations", "processes", "log-sd median", "log-sd max"], "rows": spread_rows},
        {"section": "Host share", "header": ["measure", "value"], "rows": summary},
        {"section": "Median over processes of each run's median (µs)", "header": [
            "kernel", "pass", "provider", "workload", *PHASES, "events / kernel"], "rows": rows},
    ]
    write_report("bench_timers", "GPU timers on the H200 recordings", "bench/bench_timers.py", started, tables)
    return 0


def write_report(stem: str, title: str, script: str, started, tables: list[dict]) -> str:
    """The tables as text (printed) and as JSON, in bench/reports/STEM-<UTC stamp>.txt and
    .json, with the date, the machine's CPUs, Python and the code's commit; the text back."""
    meta = {"title": title, "script": script, "date": started.strftime("%Y-%m-%d %H:%M UTC"),
            "cpus": os.cpu_count(), "python": platform.python_version(),
            "code": subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                   text=True).stdout.strip() or "?"}
    lines = [f"{meta['title']} ({meta['date']}, code {meta['code']})", ""]
    for table in tables:
        lines += [table["section"], ""]
        widths = [max(len(str(cell)) for cell in column) for column in zip(table["header"], *table["rows"],
                                                                          strict=True)]
        for row in [table["header"], *table["rows"]]:
            lines.append("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        lines.append("")
    text = "\n".join(lines)
    print(text)
    reports = HERE / "reports"
    stamp = started.strftime("%Y%m%d-%H%M%S")
    (reports / f"{stem}-{stamp}.txt").write_text(text + "\n", encoding="utf-8")
    (reports / f"{stem}-{stamp}.json").write_text(json.dumps({"meta": meta, "tables": tables}, indent=1) + "\n",
                                                  encoding="utf-8")
    return text


if __name__ == "__main__":
    raise SystemExit(main())
