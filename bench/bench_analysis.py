#!/usr/bin/env python3
"""What selection through references costs: ``get`` with columns and sort keys that reach
into a run's workload and implementation, and ``compare``, on a generated store.

Generates a store with ``bench_store.generate`` (the same data as the store benchmark),
applies it in chunks, then times cold processes in interleaved rounds against
``python -c pass``. Prints a table (median ms and the ratio per command) and saves the
report as text and JSON in --out, for bench/render_performance.py. Target: a 1,000-row
``get`` whose selection, columns or sort reach through references stays within 10x
``python -c pass``, as a plain ``get -l`` must (docs/performance.md); larger selections
and ``compare`` are information.

    .venv/bin/python bench/bench_analysis.py --runs 100000
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

import bench_store  # noqa: E402

CHUNK = 20_000


def build_store(root: Path, runs: int, seed: int, kidx: list[str], location: str | None = None) -> None:
    """The generated runs applied in chunks to the store at ``root`` (or at ``location``,
    such as a PostgreSQL URL, with the chunk files written beside ``root``)."""
    root.parent.mkdir(parents=True, exist_ok=True)
    for first in range(0, runs, CHUNK):
        data = bench_store.generate(min(CHUNK, runs - first), seed, first=first)
        documents = (data.shared if first == 0 else []) + data.runs
        path = root.parent / f"chunk-{first}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}))
        subprocess.run([*kidx, "apply", "-f", str(path), "-o", "name", "--store", location or str(root)],
                       check=True, stdout=subprocess.DEVNULL)
        path.unlink()


def main() -> int:
    args, report = bench_store.generated_store_benchmark(__doc__, "bench_analysis")
    report.section = f"{args.runs:,} runs: selection through references and compare"
    started = time.perf_counter()
    kidx = bench_store.kidx_command()
    work = Path(tempfile.mkdtemp(prefix="kidx-bench-analysis-"))
    try:
        root = Path(args.store) if args.store else work / "store"
        if not args.store:
            build_store(root, args.runs, args.seed, kidx)
        store = ["--store", str(root)]
        selector = ["-l", bench_store.SELECTOR]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "get runs -l (table)": [*kidx, "get", "runs", *selector, *store],
            "get runs -l -o csv": [*kidx, "get", "runs", *selector, "-o", "csv", *store],
            "get runs -l, referenced columns and sort": [
                *kidx, "get", "runs", *selector, "--sort-by", "workload.spec.parameters.seq,metadata.name",
                "-o", "custom-columns=NAME:.metadata.name,SEQ:workload.spec.parameters.seq,"
                      "LIBRARY:implementation.spec.library,GPU:environment.spec.hardware.product", *store],
            "get runs --field-selector through references": [
                *kidx, "get", "runs", "--field-selector",
                "workload.spec.parameters.seq=16384,environment.spec.hardware.product=NVIDIA H100",
                "-o", "name", *store],
            "get runs -l, --field-selector through references": [
                *kidx, "get", "runs", *selector, "--field-selector",
                "workload.spec.parameters.seq=16384,environment.spec.hardware.product=NVIDIA H100", *store],
            "compare -l -o json": [*kidx, "compare", *selector, "-o", "json", *store],
        }
        env = {**os.environ, "PYTHONPYCACHEPREFIX": str(work / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        bench_store.SUBPROCESS_ENV = env
        times = bench_store.cold_times(commands, args.repeats)
        base = bench_store.median(times["python -c pass"])
        report.say(f"{args.runs:,} runs in the store; cold processes, medians of {args.repeats} interleaved rounds")
        rows = []
        for label, values in times.items():
            value = bench_store.median(values)
            rows.append([label, f"{value * 1000:.0f} ms", f"{value / base:.2f}x"])
        report.table(["command", "median", "x python"], rows)
        for label in ("get runs -l, referenced columns and sort", "get runs -l, --field-selector through references"):
            ratio = bench_store.median(times[label]) / base
            report.check(f"{label}, {args.runs // 1000}k runs", f"{ratio:.2f}x python", "<= 10x",
                         ratio <= 10)
        for label in ("get runs --field-selector through references", "compare -l -o json"):
            report.check(label, f"{bench_store.median(times[label]) / base:.2f}x python", "info", None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report.finish(started, title="Selection through references", script="bench/bench_analysis.py", sizes=[args.runs])
    return 0


if __name__ == "__main__":
    sys.exit(main())
