#!/usr/bin/env python3
"""How often do compare's and series' default verdicts cry wolf on A/A data, and how
often do they catch a real 10% slowdown?

Imports every repetition of an A/A recording (one folder per repetition, each with
Liger-format CSVs and the ``environment.yaml`` captured with it), labelling each run
``repetition=NN``, into a fresh store, then measures with the default settings:

- **false positives**: the share of A/A comparisons that get ``faster`` or ``slower``:
  every pair of repetitions (``compare --by label=repetition``, each pair once) and every
  step of each series over the repetitions (``series --label repetition``); and the A/A
  series with a change point;
- **power**: with every latency of one repetition multiplied by 1.10 (in a second store),
  the share of the comparisons involving that repetition that get the right verdict
  (``slower`` when it is the contender, ``faster`` when it is the baseline), for pairs and
  for the two series steps into and out of it. Each repetition is injected in turn
  (``--injected`` picks some).

Figures are broken down by kernel and by the size of the run (median latency below or
above ``--small-below`` µs). Prints a report and writes it as text and JSON into --out.

    .venv/bin/python bench/bench_verdicts.py --data tests/data/h200-aa --out bench/reports
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from kidx.analysis.significance import ALPHA, DEFAULT_THRESHOLD  # noqa: E402
from kidx.cli.app import run as kidx  # noqa: E402
from kidx.kinds.registry import registry  # noqa: E402
from kidx.operations.compare import CompareRequest, compare  # noqa: E402
from kidx.operations.series import SeriesRequest, build_series  # noqa: E402
from kidx.store.store import Store  # noqa: E402

LABEL = "repetition"
SLOWDOWN = 1.10
CALLED = ("faster", "slower")


def repetitions(data: Path) -> list[Path]:
    return sorted(folder for folder in data.iterdir() if folder.is_dir() and list(folder.glob("*.csv")))


def imported(folder: Path) -> list[dict]:
    """The repetition's objects, each run labelled with the repetition."""
    out, err = io.StringIO(), io.StringIO()
    arguments = ["import", "liger", *map(str, sorted(folder.glob("*.csv"))), "-o", "json"]
    if (folder / "environment.yaml").is_file():
        arguments += ["--environment", str(folder / "environment.yaml")]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = kidx([*arguments, "--store", str(folder / "no-store")])
    if code != 0:
        raise SystemExit(f"import of {folder} failed: {err.getvalue()}")
    items = json.loads(out.getvalue())["items"]
    for item in items:
        if item["kind"] == "BenchmarkRun":
            item["metadata"].setdefault("labels", {})[LABEL] = folder.name
    return items


def slowed(item: dict, factor: float) -> dict:
    """A run with every latency figure multiplied by ``factor`` (memory left as it is)."""
    if item["kind"] != "BenchmarkRun" or "timing" not in item["spec"]:
        return item
    item = json.loads(json.dumps(item))
    spec = item["spec"]
    latency = spec["timing"].get("latencyNs") or {}
    for key, value in list(latency.items()):
        if isinstance(value, (int, float)):
            latency[key] = value * factor
    for entry in spec.get("measurements") or ():
        if entry.get("metric") in ("latency", None) and isinstance(entry.get("value"), (int, float)):
            entry["value"] *= factor
    item["metadata"]["name"] = item["metadata"]["name"]
    return item


def build(root: Path, documents: list[dict]) -> Store:
    unique: dict[tuple, dict] = {}
    for document in documents:
        unique.setdefault((document["kind"], document["metadata"]["name"]), document)
    path = root.with_suffix(".json")
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(unique.values())}))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = kidx(["apply", "-f", str(path), "--store", str(root)])
    if code != 0:
        raise SystemExit(f"apply failed: {err.getvalue()[-2000:]}")
    return Store(root)


def size_class(value_ns: float, small_below_us: float) -> str:
    return "small" if value_ns < small_below_us * 1000 else "large"


def kind_of(run, small_below_us: float) -> tuple[str, str, str]:
    return (run.labels.get("kernel", "?"), run.known_measure.metric,
            size_class(run.known_measure.value, small_below_us))


def pair_verdicts(store: Store, reps: list[str], small_below_us: float):
    """(baseline rep, contender rep, kind, verdict) for every pair, each once."""
    found = []
    for i, baseline in enumerate(reps):
        comparison = compare(store, registry(), CompareRequest(names=[], label_key=LABEL, baseline=baseline))
        later = set(reps[i + 1:])
        for group in comparison.groups:
            if not group.compared:
                continue
            base_row = group.rows[0]
            for row in group.rows[1:]:
                if row.label in later:
                    found.append((baseline, row.label, kind_of(base_row.run, small_below_us), row.verdict))
    return found


def step_verdicts(store: Store, small_below_us: float):
    """(previous rep, rep, kind, verdict) for every series step, and the series' change points."""
    result = build_series(store, registry(), SeriesRequest(names=[], label_key=LABEL))
    steps, changes = [], []
    for series in result.series:
        kind = kind_of(series.points[0].run, small_below_us)
        for previous, point in zip(series.points, series.points[1:], strict=False):
            steps.append((previous.label, point.label, kind, point.verdict))
        changes.append((kind, len(series.changes)))
    return steps, changes


def share(items, test) -> tuple[int, int]:
    items = list(items)
    return sum(1 for item in items if test(item)), len(items)


def percent(hit: int, total: int) -> str:
    return f"{100 * hit / total:.2f}% ({hit}/{total})" if total else "n/a (0)"


def breakdown(rows, test) -> dict[str, tuple[int, int]]:
    keys = sorted({row[2] for row in rows})
    return {" ".join(key): share((row for row in rows if row[2] == key), test) for key in keys}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(REPO / "tests" / "data" / "h200-aa"))
    parser.add_argument("--out", default=str(HERE / "reports"))
    parser.add_argument("--injected", nargs="*", help="repetitions to slow down in turn (default: every one)")
    parser.add_argument("--small-below", type=float, default=100.0, help="µs: runs below are 'small'")
    args = parser.parse_args()
    started = time.perf_counter()
    folders = repetitions(Path(args.data))
    if len(folders) < 3:
        raise SystemExit(f"{args.data}: fewer than 3 repetition folders with CSVs")
    reps = [folder.name for folder in folders]
    documents = {folder.name: imported(folder) for folder in folders}
    work = Path(tempfile.mkdtemp(prefix="kidx-bench-verdicts-"))
    lines = [f"A/A verdicts on {args.data}: {len(reps)} repetitions ({', '.join(reps)}); default rule: threshold "
             f"{DEFAULT_THRESHOLD * 100:g}%, alpha {ALPHA:g}",
             f"machine: {platform.machine()}, Python {platform.python_version()}; kinds: kernel, metric, size "
             f"(median below {args.small_below:g} µs is small)", ""]
    report: dict = {"data": args.data, "repetitions": reps, "threshold": DEFAULT_THRESHOLD, "alpha": ALPHA,
                    "smallBelowUs": args.small_below}
    store = build(work / "aa", [d for rep in reps for d in documents[rep]])
    runs = sum(1 for rep in reps for d in documents[rep] if d["kind"] == "BenchmarkRun")
    pairs = pair_verdicts(store, reps, args.small_below)
    steps, changes = step_verdicts(store, args.small_below)

    def called(item) -> bool:
        return item[3] in CALLED

    verdicts = Counter(item[3] for item in pairs)
    step_counts = Counter(item[3] for item in steps)
    lines += [f"{runs} runs imported; {len(pairs)} pair comparisons, {len(steps)} series steps, "
              f"{len(changes)} series",
              f"A/A pairs called faster or slower: {percent(*share(pairs, called))}  (target <= 1%)",
              f"A/A series steps called faster or slower: {percent(*share(steps, called))}  (target <= 1%)",
              f"A/A series with a change point: {percent(*share(changes, lambda c: c[1] > 0))}",
              "pair verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())),
              "step verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(step_counts.items())), "",
              "A/A false positives by kind (pairs | steps):"]
    pair_kinds, step_kinds = breakdown(pairs, called), breakdown(steps, called)
    for key in sorted(set(pair_kinds) | set(step_kinds)):
        lines.append(f"  {key:40} {percent(*pair_kinds.get(key, (0, 0))):>22} | "
                     f"{percent(*step_kinds.get(key, (0, 0))):>22}")
    report["aa"] = {"runs": runs, "pairs": share(pairs, called), "steps": share(steps, called),
                    "seriesWithChangePoint": share(changes, lambda c: c[1] > 0),
                    "pairVerdicts": dict(verdicts), "stepVerdicts": dict(step_counts),
                    "pairsByKind": pair_kinds, "stepsByKind": step_kinds}

    injected = args.injected if args.injected else reps
    detected_pairs, detected_steps = [], []
    for rep in injected:
        docs = [d for r in reps for d in (documents[r] if r != rep else [slowed(x, SLOWDOWN) for x in documents[r]])]
        slow = build(work / f"slow-{rep}", docs)
        for baseline, contender, kind, verdict in pair_verdicts(slow, reps, args.small_below):
            if kind[1] != "latency" or rep not in (baseline, contender):
                continue
            detected_pairs.append((baseline, contender, kind, verdict == ("slower" if contender == rep else "faster")))
        slow_steps, _ = step_verdicts(slow, args.small_below)
        for previous, current, kind, verdict in slow_steps:
            if kind[1] != "latency" or rep not in (previous, current):
                continue
            detected_steps.append((previous, current, kind, verdict == ("slower" if current == rep else "faster")))

    def hit(item) -> bool:
        return bool(item[3])

    lines += ["", f"power: every latency of one repetition x{SLOWDOWN:.2f} (each of {', '.join(injected)} in turn)",
              f"pairs with the slowed repetition detected: {percent(*share(detected_pairs, hit))}",
              f"series steps into or out of it detected: {percent(*share(detected_steps, hit))}",
              "power by kind (pairs | steps):"]
    power_pairs, power_steps = breakdown(detected_pairs, hit), breakdown(detected_steps, hit)
    for key in sorted(set(power_pairs) | set(power_steps)):
        lines.append(f"  {key:40} {percent(*power_pairs.get(key, (0, 0))):>22} | "
                     f"{percent(*power_steps.get(key, (0, 0))):>22}")
    report["power"] = {"factor": SLOWDOWN, "injected": injected, "pairs": share(detected_pairs, hit),
                       "steps": share(detected_steps, hit), "pairsByKind": power_pairs, "stepsByKind": power_steps}
    elapsed = time.perf_counter() - started
    lines += ["", f"took {elapsed:.0f} s (shared, loaded 2-core machine)"]
    report["seconds"] = round(elapsed, 1)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    (out / f"bench_verdicts-{stamp}.txt").write_text(text)
    (out / f"bench_verdicts-{stamp}.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
