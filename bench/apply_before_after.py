#!/usr/bin/env python3
"""`kidx apply` of one generated chunk by two versions of the code, taken in turns.

    python bench/apply_before_after.py BASE_COMMIT [--runs 100000] [--rounds 3]
                                       [--backend sqlite postgresql]

The code at BASE_COMMIT (``git archive``, in a temporary folder) and the working tree's
each apply the same chunk (bench_scale.py's generator) into a fresh store, one after the
other, ``--rounds`` times per backend, so that both see the same machine; each apply runs
through bench/timed_apply.py, which says where its time went. PostgreSQL is the tests'
throwaway cluster (tests/pg_server.py, durable), one database per apply, stopped at the
end. The report (text) goes to bench/reports/apply_before_after-STAMP.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
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
STAGES = ("read", "validate", "digest", "objects", "flush", "catalog", "commit")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base")
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args()
    from bench_scale import write_chunk

    work = Path(tempfile.mkdtemp(prefix="kidx-before-after-"))
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "kidx", "crds"], capture_output=True,
                           text=True, check=True).stdout.strip()
    base = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.base], capture_output=True, text=True,
                          check=True).stdout.strip()
    say(f"kidx apply_before_after  {time.strftime('%Y-%m-%d %H:%M:%S')}  {os.cpu_count()} CPUs  "
        f"python {platform.python_version()}  load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    say(f"before: code {base}; after: code {head} ({'changed' if dirty else 'clean'} kidx/ crds/); "
        f"{args.runs:,} runs in one chunk, {args.rounds} rounds, before and after in turns")
    cluster = None
    try:
        (work / "before").mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.base], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(work / "before")], input=archive, check=True)
        chunk = work / "chunk.json"
        write_chunk(chunk, 0, args.runs, args.seed, True)
        roots = {"before": work / "before", "after": REPO}
        for backend in args.backend:
            if backend == "postgresql":
                sys.path.insert(0, str(REPO / "tests"))
                from pg_server import PostgresServer, server_binaries

                cluster = PostgresServer(server_binaries(), durable=True)
                cluster.start()
            results: dict[str, list[dict]] = {"before": [], "after": []}
            for round_number in range(args.rounds):
                for version, root in roots.items():
                    if cluster is not None:
                        store = cluster.create_database(f"{version}_{round_number}")
                    else:
                        store = str(work / f"store-{version}")
                        shutil.rmtree(store, ignore_errors=True)
                    stages = work / "stages.json"
                    subprocess.run([sys.executable, str(root / "bench" / "timed_apply.py"), str(stages), "--", "apply",
                                    "-f", str(chunk), "-o", "name", "--store", store],
                                   env=dict(os.environ, PYTHONPATH=str(root)), stdout=subprocess.DEVNULL, check=True)
                    measured = json.loads(stages.read_text())
                    results[version].append(measured)
                    if cluster is not None:
                        cluster.drop_database(f"{version}_{round_number}")
                    stage_text = "  ".join(f"{s} {measured['stages_s'].get(s, 0):.2f}" for s in STAGES)
                    say(f"  {backend:10}  round {round_number + 1}  {version:6}  wall {measured['wall_s']:6.2f} s  "
                        f"CPU {measured['cpu_user_s'] + measured['cpu_system_s']:6.2f} s  "
                        f"{args.runs / measured['wall_s']:,.0f} runs/s   {stage_text}")
            for version in roots:
                walls = [m["wall_s"] for m in results[version]]
                catalog = [m["stages_s"].get("catalog", 0) for m in results[version]]
                cpu = [m["cpu_user_s"] + m["cpu_system_s"] for m in results[version]]
                say(f"{backend:10}  {version:6}  median wall {statistics.median(walls):.2f} s "
                    f"({args.runs / statistics.median(walls):,.0f} runs/s), median CPU {statistics.median(cpu):.2f} s, "
                    f"median catalog stage {statistics.median(catalog):.2f} s")
            if cluster is not None:
                cluster.stop()
                cluster = None
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    say(f"load at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    out = HERE / "reports" / f"apply_before_after-{time.strftime('%Y%m%d-%H%M%S')}.txt"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
