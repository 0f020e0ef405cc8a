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

Figures are broken down by kernel and shape (the recording's large shapes have a workload
parameter of at least 16,384). The default significance level is reported with the
breakdown; other rules (``--variants ALPHA:MIN_T``) beside it, their power from a few injected
repetitions. Prints a report and writes it as text and JSON into --out.

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

from kidx.analysis.significance import ALPHA, DEFAULT_THRESHOLD, MIN_T  # noqa: E402
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


LARGE_AT = 16384  # a workload parameter this large marks the recording's large shapes (its README)


def shape_of(run) -> str:
    parameters = (run.workload.spec or {}).get("parameters") or {}
    numbers = [v for v in parameters.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return "large" if any(v >= LARGE_AT for v in numbers) else "default"


def kind_of(run) -> tuple[str, str, str]:
    return (run.labels.get("kernel", "?"), run.known_measure.metric, shape_of(run))


Rule = tuple[float, float]  # (alpha, min_t)


def pair_verdicts(store: Store, reps: list[str], rule: Rule):
    """(baseline rep, contender rep, kind, verdict) for every pair, each once."""
    found = []
    for i, baseline in enumerate(reps):
        request = CompareRequest(names=[], label_key=LABEL, baseline=baseline, alpha=rule[0], min_t=rule[1])
        comparison = compare(store, registry(), request)
        later = set(reps[i + 1:])
        for group in comparison.groups:
            if not group.compared:
                continue
            base_row = group.rows[0]
            for row in group.rows[1:]:
                if row.label in later:
                    found.append((baseline, row.label, kind_of(base_row.run), row.verdict))
    return found


def step_verdicts(store: Store, rule: Rule):
    """(previous rep, rep, kind, verdict) for every series step, and each series' change points."""
    result = build_series(store, registry(), SeriesRequest(names=[], label_key=LABEL, alpha=rule[0], min_t=rule[1]))
    steps, changes = [], []
    for series in result.series:
        kind = kind_of(series.points[0].run)
        for previous, point in zip(series.points, series.points[1:], strict=False):
            steps.append((previous.label, point.label, kind, point.verdict))
        changes.append((kind, [(change.run.labels.get(LABEL), round(change.point.change, 4), change.cause)
                               for change in series.changes]))
    return steps, changes


def share(items, test) -> tuple[int, int]:
    items = list(items)
    return sum(1 for item in items if test(item)), len(items)


def percent(hit: int, total: int) -> str:
    return f"{100 * hit / total:.2f}% ({hit}/{total})" if total else "n/a (0)"


def breakdown(rows, test) -> dict[str, tuple[int, int]]:
    keys = sorted({row[2] for row in rows})
    return {" ".join(key): share((row for row in rows if row[2] == key), test) for key in keys}


def called(item) -> bool:
    return item[3] in CALLED


def hit(item) -> bool:
    return bool(item[3])


def false_positives(store: Store, reps: list[str], rule: Rule) -> dict:
    pairs = pair_verdicts(store, reps, rule)
    steps, changes = step_verdicts(store, rule)
    return {"pairs": share(pairs, called), "steps": share(steps, called),
            "seriesWithChangePoint": share(changes, lambda c: bool(c[1])),
            "changePoints": [{"kind": " ".join(kind), "at": found} for kind, found in changes if found],
            "pairVerdicts": dict(Counter(item[3] for item in pairs)),
            "stepVerdicts": dict(Counter(item[3] for item in steps)),
            "pairsByKind": breakdown(pairs, called), "stepsByKind": breakdown(steps, called)}


def power(stores: dict[str, Store], reps: list[str], rule: Rule) -> dict:
    detected_pairs, detected_steps = [], []
    for rep, slow in stores.items():
        for baseline, contender, kind, verdict in pair_verdicts(slow, reps, rule):
            if kind[1] == "latency" and rep in (baseline, contender):
                right = "slower" if contender == rep else "faster"
                detected_pairs.append((baseline, contender, kind, verdict == right))
        for previous, current, kind, verdict in step_verdicts(slow, rule)[0]:
            if kind[1] == "latency" and rep in (previous, current):
                right = "slower" if current == rep else "faster"
                detected_steps.append((previous, current, kind, verdict == right))
    return {"injected": list(stores), "pairs": share(detected_pairs, hit), "steps": share(detected_steps, hit),
            "pairsByKind": breakdown(detected_pairs, hit), "stepsByKind": breakdown(detected_steps, hit)}


def by_kind_lines(title: str, first: dict, second: dict) -> list[str]:
    lines = [title]
    for key in sorted(set(first) | set(second)):
        lines.append(f"  {key:32} {percent(*first.get(key, (0, 0))):>22} | {percent(*second.get(key, (0, 0))):>22}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(REPO / "tests" / "data" / "h200-aa"))
    parser.add_argument("--out", default=str(HERE / "reports"))
    parser.add_argument("--injected", nargs="*", help="repetitions to slow down in turn (default: every one)")
    parser.add_argument("--variants", nargs="*", default=["0.05:0", "0.01:0", "0.001:0"],
                        help="other rules to report beside the default, as ALPHA:MIN_T")
    parser.add_argument("--power-reps", nargs="*", default=["rep-02", "rep-06", "rep-10"],
                        help="repetitions slowed down for the other rules' power")
    args = parser.parse_args()
    started = time.perf_counter()
    folders = repetitions(Path(args.data))
    if len(folders) < 3:
        raise SystemExit(f"{args.data}: fewer than 3 repetition folders with CSVs")
    reps = [folder.name for folder in folders]
    documents = {folder.name: imported(folder) for folder in folders}
    work = Path(tempfile.mkdtemp(prefix="kidx-bench-verdicts-"))
    lines = [f"A/A verdicts on {args.data}: {len(reps)} repetitions ({', '.join(reps)}); default rule: threshold "
             f"{DEFAULT_THRESHOLD * 100:g}%, alpha {ALPHA:g}, |t| >= {MIN_T:g}",
             f"machine: {platform.machine()}, Python {platform.python_version()}; kinds: kernel, metric, shape "
             f"(large: a workload parameter of at least {LARGE_AT})"]
    report: dict = {"data": args.data, "repetitions": reps, "threshold": DEFAULT_THRESHOLD, "alpha": ALPHA,
                    "minT": MIN_T, "slowdown": SLOWDOWN}
    store = build(work / "aa", [d for rep in reps for d in documents[rep]])
    runs = sum(1 for rep in reps for d in documents[rep] if d["kind"] == "BenchmarkRun")
    injected = args.injected if args.injected else reps
    slow_stores = {}
    for rep in injected:
        docs = [d for r in reps for d in (documents[r] if r != rep else [slowed(x, SLOWDOWN) for x in documents[r]])]
        slow_stores[rep] = build(work / f"slow-{rep}", docs)
    lines[2:2] = [f"{runs} runs imported; power: every latency of one repetition x{SLOWDOWN:.2f}, each of "
                  f"{', '.join(injected)} in turn (other rules: {', '.join(args.power_reps)})"]
    report["runs"] = runs
    report["results"] = []
    default: Rule = (ALPHA, MIN_T)
    variants = [default, *((float(a), float(t)) for a, _, t in (v.partition(":") for v in args.variants))]
    for rule in variants:
        aa = false_positives(store, reps, rule)
        chosen = slow_stores if rule == default else {rep: slow_stores[rep] for rep in args.power_reps
                                                      if rep in slow_stores}
        caught = power(chosen, reps, rule)
        report["results"].append({"alpha": rule[0], "minT": rule[1], "default": rule == default, "aa": aa,
                                  "power": caught})
        lines += ["", f"alpha {rule[0]:g}, |t| >= {rule[1]:g}{' (the default)' if rule == default else ''}:",
                  f"  A/A pairs called faster or slower: {percent(*aa['pairs'])}  (target <= 1%)",
                  f"  A/A series steps called faster or slower: {percent(*aa['steps'])}  (target <= 1%)",
                  f"  A/A series with a change point: {percent(*aa['seriesWithChangePoint'])}",
                  "  pair verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(aa["pairVerdicts"].items())),
                  "  step verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(aa["stepVerdicts"].items())),
                  f"  power, pairs with the slowed repetition detected: {percent(*caught['pairs'])}",
                  f"  power, series steps into or out of it detected: {percent(*caught['steps'])}"]
        if rule == default:
            lines += by_kind_lines("  A/A false positives by kind (pairs | steps):", aa["pairsByKind"],
                                   aa["stepsByKind"])
            lines += by_kind_lines("  power by kind (pairs | steps):", caught["pairsByKind"], caught["stepsByKind"])
            lines += [f"  change point in {item['kind']}: " + "; ".join(
                f"at {rep} {change:+.1%} ({', '.join(cause)})" for rep, change, cause in item["at"])
                for item in aa["changePoints"]]
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
