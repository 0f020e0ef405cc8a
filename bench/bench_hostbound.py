#!/usr/bin/env python3
"""The figures behind kidx.analysis.hostbound's constants, from the H200 recordings.

Reads every repetition of tests/data/h200-aa (Liger's harness, do_bench: CUDA events,
eager) and tests/data/h200-sol (NVBench's blocking-kernel timings of the same kernels at
the large shapes, and the host's own time per call from launch-probe.json), and prints:

- kernel-bound anchors: at the large shapes, the events time (median over repetitions)
  over NVBench's kernel time, with each run's share of the roofline and working set;
- host anchors: the host's time per forward call beside the default-shape events times;
- the share of the roofline by kernel and shape, and the sweeps' scaling exponents
  (log latency ratio / log parameter ratio) across repetitions;
- what the likely-host-bound rule flags with its constants, by kernel and shape.

    .venv/bin/python bench/bench_hostbound.py
"""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from bench_verdicts import build, imported, repetitions, shape_of  # noqa: E402

from kidx.analysis import hostbound  # noqa: E402
from kidx.cli.app import run as kidx  # noqa: E402
from kidx.kinds.registry import registry  # noqa: E402
from kidx.operations.select.analysed_runs import select_runs  # noqa: E402
from kidx.operations.select.host_bound import timed  # noqa: E402


class EveryRun(NamedTuple):
    """A request for every run of the store (select_runs reads these fields)."""

    names: list = []
    selector: object = None
    field_selector: object = None
    references: tuple = ()


def kind(run) -> tuple[str, str, str]:
    return run.labels.get("kernel", "?"), run.labels.get("provider", "?"), run.labels.get("operation", "?")


def nvbench_kernel_times(path: Path) -> dict[tuple[str, str], float]:
    """(kernel, provider) -> NVBench's mean kernel time in ns."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        kidx(["import", "nvbench", str(path), "-o", "json", "--store", str(path.parent / "no-store")])
    text = out.getvalue()
    document = json.JSONDecoder().raw_decode(text)[0]
    found = {}
    for item in document["items"]:
        if item["kind"] == "BenchmarkRun":
            benchmark = item["spec"]["sourceNative"]["benchmark"].removesuffix("_forward")
            provider = "liger" if "provider-liger" in item["metadata"]["name"] else "huggingface"
            found[benchmark, provider] = item["spec"]["timing"]["latencyNs"]["mean"]
    return found


def main() -> None:
    aa, sol = REPO / "tests" / "data" / "h200-aa", REPO / "tests" / "data" / "h200-sol"
    folders = repetitions(aa)
    store = build(Path(tempfile.mkdtemp(prefix="kidx-bench-hostbound-")) / "aa",
                  [d for folder in folders for d in imported(folder)])
    runs = [run for run in select_runs(store, registry(), EveryRun()).runs
            if run.measure is not None and run.measure.metric == "latency"]
    records = {run.name: timed(run, with_cost=True) for run in runs}
    lines = [f"h200-aa: {len(folders)} repetitions, {len(runs)} latency runs; constants: HOST_BOUND_OVERHEAD "
             f"{hostbound.HOST_BOUND_OVERHEAD:g}, FLAT_EXPONENT {hostbound.FLAT_EXPONENT:g}, MIN_SWEEP_RATIO "
             f"{hostbound.MIN_SWEEP_RATIO:g}, LOW_SOL {hostbound.LOW_SOL:g}, SMALL_WORKING_SET "
             f"{hostbound.SMALL_WORKING_SET / 2**20:g} MiB"]

    kernel_ns = nvbench_kernel_times(sol / "nvbench-blocking.json")
    lines += ["", "kernel-bound anchors (large shape, forward): events median / NVBench blocking-kernel mean"]
    for (kernel, provider), ns in sorted(kernel_ns.items()):
        mine = [r for r in runs if kind(r) == (kernel, provider, "forward") and shape_of(r) == "large"]
        events = statistics.median(r.known_measure.value for r in mine)
        rec = records[mine[0].name]
        lines.append(f"  {kernel:12} {provider:12} events {events / 1e3:9.1f} us  kernel {ns / 1e3:9.1f} us  "
                     f"overhead {events / ns:.3f}x  SOL {100 * (rec.sol or 0):5.1f}%  working set "
                     f"{(rec.cost_bytes or 0) / 2**20:6.0f} MiB")

    probe = json.loads((sol / "launch-probe.json").read_text())
    lines += ["", "host anchors: the host's time per forward call (launch-probe.json) beside the default-shape "
                  "events medians (over repetitions)"]
    for key, figures in sorted(probe.items()):
        kernel, provider = key.split("/")
        medians = {}
        for r in runs:
            if kind(r) == (kernel, provider, "forward") and shape_of(r) == "default":
                seq = (r.workload.spec or {}).get("parameters", {}).get("seq")
                medians.setdefault(seq, []).append(r.known_measure.value)
        shown = ", ".join(f"seq {seq}: {statistics.median(v) / 1e3:.1f} us" for seq, v in sorted(medians.items()))
        lines.append(f"  {key:24} host {figures['host'] * 1e6:6.1f} us per call; events {shown}")

    lines += ["", "share of the roofline (SOL) and working set, by kernel and shape: min / median / max"]
    by_class = defaultdict(list)
    for r in runs:
        rec = records[r.name]
        if rec.sol is not None:
            by_class[r.labels["kernel"], shape_of(r)].append((rec.sol, rec.cost_bytes))
    for (kernel, shape), values in sorted(by_class.items()):
        sols = sorted(v[0] for v in values)
        sizes = sorted(v[1] for v in values)
        lines.append(f"  {kernel:12} {shape:8} SOL {100 * sols[0]:5.1f}% / {100 * statistics.median(sols):5.1f}% / "
                     f"{100 * sols[-1]:5.1f}%   working set {sizes[0] / 2**20:6.0f}-{sizes[-1] / 2**20:6.0f} MiB "
                     f"({len(values)} runs)")

    lines += ["", "default-shape sweeps' scaling exponents across repetitions: min / median / max"]
    sweeps = defaultdict(lambda: defaultdict(list))
    for r in runs:
        if shape_of(r) == "default":
            p = (r.workload.spec or {}).get("parameters", {})
            x = p.get("seq", p.get("tokens"))
            sweeps[kind(r)][r.labels["repetition"]].append((x, r.known_measure.value))
    for key, by_rep in sorted(sweeps.items()):
        exponents = sorted(hostbound.flat_exponent(points)[0] for points in by_rep.values())
        below = sum(1 for e in exponents if e < hostbound.FLAT_EXPONENT)
        lines.append(f"  {' '.join(key):36} {exponents[0]:6.2f} / {statistics.median(exponents):6.2f} / "
                     f"{exponents[-1]:6.2f}   below {hostbound.FLAT_EXPONENT:g}: {below}/{len(exponents)}")

    lines += ["", "flagged likely host-bound by the rule (per repetition's own runs), by kernel and shape"]
    flagged = defaultdict(lambda: [0, 0, 0, 0])  # flat, small-and-slow, either, runs
    for folder in folders:
        mine = [records[r.name] for r in runs if r.labels["repetition"] == folder.name]
        found = hostbound.assess(mine)
        for r in runs:
            if r.labels["repetition"] != folder.name:
                continue
            reasons = found.get(r.name, hostbound.HostEvidence()).reasons
            counts = flagged[r.labels["kernel"], shape_of(r)]
            counts[0] += any(reason.startswith("flat sweep") for reason in reasons)
            counts[1] += any("roofline" in reason for reason in reasons)
            counts[2] += bool(reasons)
            counts[3] += 1
    for (kernel, shape), (flat, slow, either, total) in sorted(flagged.items()):
        lines.append(f"  {kernel:12} {shape:8} flat sweep {flat:3}/{total}  small and slow {slow:3}/{total}  "
                     f"either {either:3}/{total}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
