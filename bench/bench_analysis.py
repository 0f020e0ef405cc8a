#!/usr/bin/env python3
"""What selection through references costs: ``get`` with columns and sort keys that reach
into a run's workload and implementation, and ``compare``, on a generated store.

Generates a store with ``bench_store.generate`` (the same data as the store benchmark),
applies it in chunks, then times cold processes in interleaved rounds against
``python -c pass``. Prints one line per command: median ms and the ratio.

    .venv/bin/python bench/bench_analysis.py --runs 100000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_store  # noqa: E402

CHUNK = 20_000


def build_store(root: Path, runs: int, seed: int, kidx: list[str]) -> None:
    for first in range(0, runs, CHUNK):
        data = bench_store.generate(min(CHUNK, runs - first), seed, first=first)
        documents = (data.shared if first == 0 else []) + data.runs
        path = root.parent / f"chunk-{first}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}))
        subprocess.run([*kidx, "apply", "-f", str(path), "-o", "name", "--store", str(root)],
                       check=True, stdout=subprocess.DEVNULL)
        path.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--store", help="an existing store to reuse (else a temporary one)")
    args = parser.parse_args()
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
                "workload.spec.parameters.seq=16384,environment.spec.hardware.product=NVIDIA H100", "-o", "name", *store],
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
        print(f"{args.runs} runs in the store; {args.repeats} rounds; medians")
        for label, values in times.items():
            value = bench_store.median(values)
            print(f"{label:45s} {value * 1000:8.1f} ms  {value / base:5.2f} x")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
