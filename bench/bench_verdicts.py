#!/usr/bin/env python3
"""How often do compare's and series' verdicts cry wolf, and how often do they catch a
real change? Counts of verdicts, not timings.

Two modes.

``--mode timers`` (the default) reads the H200 timer recordings (``tests/data/h200-timers``:
Liger-Kernel's harness timed by ``kidx record --timer cuda_graph``, ``cupti`` and
``cuda_events``, 8 fresh processes each, and a real ~10% step, the default shapes at 1.1x
the rows) and the eager A/A recording (``tests/data/h200-aa``, Liger's own do_bench, 11
processes). Per timer, for n = 1, 2, 3 and 5 runs a side, it splits each configuration's
repetitions at random into two disjoint sides of n and compares them with
``kidx.operations.compare`` (``--by label=side --baseline a``), in a fresh store holding
only those runs and in one that also holds the configuration's other runs as history:

- **A/A**: nothing changed; a ``faster`` or ``slower`` is a false call;
- **injected slowdowns**: every latency of side b (samples too) times 1.05, 1.10, 1.20;
  the share called ``slower``;
- **the real step** (cuda_graph only): side b from the step recording, each configuration
  matched to its default by kernel, provider, pass and the x value times 1.1.

The configurations are split in two halves by (kernel, provider) (``CALIBRATION_HALF``):
rules are compared on the calibration half and the figures reported on the test half.
``--rule NAME=FIELD:VALUE,…`` adds a rule beside the default (CompareRequest fields, for
example ``old=confirm_runs:1``).

``--mode pairs`` is the earlier A/A study of the eager recording: every pair of
repetitions (``compare --by label=repetition``) and every series step, and a 10%
slowdown of one repetition at a time.

    .venv/bin/python bench/bench_verdicts.py --out bench/reports
    .venv/bin/python bench/bench_verdicts.py --mode pairs --injected rep-06 --variants
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from kidx.analysis.significance import ALPHA, DEFAULT_THRESHOLD, MIN_T, rule_text  # noqa: E402
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
    return scaled(item, factor)


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


def main_pairs(args) -> None:
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



# --- timers: n runs a side ------------------------------------------------------------------

TIMER_FIXTURES = {"cuda_graph": "cuda-graph", "cupti": "cupti", "cuda_events": "cuda-events"}
STEP_FIXTURE = "cuda-graph-step"
STEP = 1.1  # the step fixture's rows: the default shapes' x values times 1.1, rounded
SIDES = (1, 2, 3, 5)
SLOWDOWNS = (0.05, 0.10, 0.20)
TRIAL_PARAMETER = "bench_trial"  # a string workload parameter that keeps each trial its own comparable group
# The kernels are split in two halves by (kernel, provider): any constant is chosen on the
# calibration half and the figures reported on the test half; every kernel is in both.
CALIBRATION_HALF = {("rms_norm", "liger"), ("llama4_rope", "huggingface"), ("swiglu", "liger")}
AIM_FALSE, AIM_POWER = 0.01, 0.95  # with a kernel timer: A/A calls at most 1%, 10% found at least 95% (3 a side)


class Config(NamedTuple):
    """One configuration: a series (protocol, workload, environment, implementation)."""

    protocol: str
    workload: str
    environment: str
    implementation: str


class Source(NamedTuple):
    """The runs of one recording, by configuration and repetition, and the objects they refer to."""

    name: str
    shared: dict[str, dict]  # digest -> referenced object (protocol, workload, environment, implementation)
    runs: dict[Config, dict[str, dict]]  # configuration -> repetition -> run document
    info: dict[Config, dict]  # kernel, provider, pass, x, half


def _document(entry: dict, objects: dict) -> dict:
    body = objects[entry["digest"]]
    metadata = {"name": entry["name"], "labels": dict(entry.get("labels") or {})}
    if entry.get("annotations"):
        metadata["annotations"] = dict(entry["annotations"])
    if entry.get("title"):
        metadata["title"] = entry["title"]
    return {"apiVersion": body["apiVersion"], "kind": body["kind"], "metadata": metadata, "spec": body["spec"]}


def _config(run: dict) -> Config:
    spec = run["spec"]
    return Config(spec["protocolDigest"], spec["workloadDigest"], spec["environmentDigest"],
                  spec["implementationDigest"])


def _swept(workload: dict) -> tuple[str, float] | None:
    """The swept x parameter of a Liger workload (seq or tokens) and its value."""
    parameters = workload["spec"].get("parameters") or {}
    for key in ("seq", "tokens"):
        if isinstance(parameters.get(key), (int, float)):
            return key, parameters[key]
    return None


def source_of(name: str, documents: list[dict], label: str) -> Source:
    """Group a recording's runs (those with the ``label`` label) by configuration."""
    from kidx.identity import digest_of

    shared = {digest_of(d): d for d in documents if d["kind"] != "BenchmarkRun"}
    runs: dict[Config, dict[str, dict]] = {}
    info: dict[Config, dict] = {}
    for document in documents:
        labels = document["metadata"].get("labels") or {}
        if document["kind"] != "BenchmarkRun" or label not in labels or "timing" not in document["spec"]:
            continue
        config = _config(document)
        runs.setdefault(config, {})[labels[label]] = document
        workload = shared.get(config.workload)
        kernel, provider = labels.get("kernel", "?"), labels.get("provider", "?")
        info[config] = {"kernel": kernel, "provider": provider, "pass": labels.get("operation", "?"),
                        "x": _swept(workload) if workload else None,
                        "workload": workload["metadata"]["name"] if workload else config.workload,
                        "half": "calibration" if (kernel, provider) in CALIBRATION_HALF else "test"}
    return Source(name, shared, runs, info)


def bundle_source(path: Path, name: str) -> Source:
    """A ``kidx export`` bundle's runs labelled suite=h200-timers, by configuration and repetition."""
    bundle = json.loads(path.read_text(encoding="utf-8"))
    documents = [_document(entry, bundle["objects"]) for entry in bundle["names"]]
    documents = [d for d in documents if d["kind"] != "BenchmarkRun"
                 or (d["metadata"]["labels"].get("suite") == "h200-timers")]
    return source_of(name, documents, "repetition")


def eager_source(data: Path) -> Source:
    """The eager A/A recording (tests/data/h200-aa), each repetition imported as Liger CSVs."""
    documents = [d for folder in repetitions(data) for d in imported(folder)]
    return source_of("eager (h200-aa)", documents, LABEL)


def step_pairs(default: Source, step: Source) -> dict[Config, Config]:
    """Each step configuration's default twin: the same protocol, implementation,
    environment and workload parameters but the swept x, which is the default's times 1.1."""
    found: dict[Config, Config] = {}
    for config, info in step.info.items():
        if info["x"] is None:
            continue
        key, x = info["x"]
        parameters = dict(step.shared[config.workload]["spec"].get("parameters") or {})
        for other, other_info in default.info.items():
            if (other.protocol, other.environment, other.implementation) != (
                    config.protocol, config.environment, config.implementation) or other_info["x"] is None:
                continue
            other_key, other_x = other_info["x"]
            other_parameters = dict(default.shared[other.workload]["spec"].get("parameters") or {})
            if other_key == key and round(other_x * STEP) == x and {k: v for k, v in other_parameters.items()
                                                                      if k != key} == {
                    k: v for k, v in parameters.items() if k != key}:
                found[config] = other
    return found


def scaled(run: dict, factor: float) -> dict:
    """A run with every latency figure, samples included, multiplied by ``factor``."""
    run = json.loads(json.dumps(run))
    spec = run["spec"]
    latency = spec["timing"].get("latencyNs") or {}
    for key, value in list(latency.items()):
        if isinstance(value, (int, float)):
            latency[key] = value * factor
    for entry in spec.get("measurements") or ():
        if entry.get("metric") in ("latency", None) and isinstance(entry.get("value"), (int, float)):
            entry["value"] *= factor
    samples = spec.get("samples")
    if isinstance(samples, dict) and samples.get("metric") in ("latency", None):
        samples["values"] = [v * factor for v in samples.get("values") or ()]
    return run


class Trial(NamedTuple):
    scenario: str  # "aa", "slow-5", "slow-10", "slow-20", "step"
    config: Config
    a: list[dict]  # the baseline side's runs
    b: list[dict]  # the contender side's runs
    history: list[dict]  # the series' other runs (with history only)


def trials(source: Source, n: int, count: int, seed: int, step: Source | None = None,
           twins: dict[Config, Config] | None = None) -> list[Trial]:
    """``count`` random splits per configuration and scenario: n runs a side, disjoint,
    the rest of the configuration's runs its history. A/A and the injected slowdowns need
    2n repetitions of a configuration; the real step n of each recording."""
    rng = random.Random(seed * 1000 + n)
    out: list[Trial] = []
    for config in sorted(source.runs):
        reps = sorted(source.runs[config])
        for _ in range(count if len(reps) >= 2 * n else 0):
            chosen = rng.sample(reps, 2 * n)
            a, b = chosen[:n], chosen[n:]
            rest = [source.runs[config][r] for r in reps if r not in chosen]
            base, head = [source.runs[config][r] for r in a], [source.runs[config][r] for r in b]
            out.append(Trial("aa", config, base, head, rest))
            for slowdown in SLOWDOWNS:
                out.append(Trial(f"slow-{slowdown * 100:g}", config, base, [scaled(r, 1 + slowdown) for r in head],
                                 rest))
    if step is not None and twins:
        for step_config, config in sorted(twins.items()):
            reps, step_reps = sorted(source.runs[config]), sorted(step.runs[step_config])
            if len(reps) < n or len(step_reps) < n:
                continue
            for _ in range(count):
                a = rng.sample(reps, n)
                head = [step.runs[step_config][r] for r in rng.sample(step_reps, n)]
                rest = [source.runs[config][r] for r in reps if r not in a]
                out.append(Trial("step", config, [source.runs[config][r] for r in a], head, rest))
    return out


EPOCH = datetime(2027, 1, 1, tzinfo=UTC)


def trial_documents(source: Source, step: Source | None, items: list[Trial], history: bool) -> list[dict]:
    """Each trial as its own comparable group: its configuration's workload with the
    trial's number as a parameter; sides labelled side=a and side=b; with history, the
    configuration's other runs unlabelled. Observation times in order: history, a, b
    (the history is the past, the contender the latest)."""
    from kidx.identity import digest_of

    shared = {**(step.shared if step else {}), **source.shared}
    out: dict[str, dict] = {digest: document for digest, document in shared.items()}
    for number, trial in enumerate(items):
        workload = json.loads(json.dumps(shared[trial.config.workload]))
        workload["spec"].setdefault("parameters", {})[TRIAL_PARAMETER] = f"t{number}"
        workload["metadata"] = {"name": f"{workload['metadata']['name']}-t{number}"[:240]}
        digest = digest_of(workload)
        out[digest] = workload
        sides: list[tuple[str | None, dict]] = [(None, run) for run in (trial.history if history else [])]
        sides += [("a", run) for run in trial.a] + [("b", run) for run in trial.b]
        for index, (side, run) in enumerate(sides):
            run = json.loads(json.dumps(run))
            run["spec"]["workloadDigest"] = digest
            run["spec"]["observedAt"] = (EPOCH + timedelta(minutes=index)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            labels = run["metadata"].setdefault("labels", {})
            labels.pop("side", None)
            if side is not None:
                labels["side"] = side
            run["metadata"]["name"] = f"t{number}-{index}-{run['metadata']['name']}"[:253]
            out[f"run {run['metadata']['name']}"] = run
    return list(out.values())


def verdicts_of(store: Store, items: list[Trial], variant: dict) -> list[str | None]:
    """compare --by label=side --baseline a over the store: each trial's contender verdict."""
    comparison = compare(store, registry(), CompareRequest(names=[], label_key="side", baseline="a", **variant))
    by_workload: dict[str, str | None] = {}
    for group in comparison.groups:
        parameters = (group.workload.spec or {}).get("parameters") or {}
        trial = parameters.get(TRIAL_PARAMETER)
        verdict = next((row.verdict for row in group.rows if row.label == "b"), None)
        if isinstance(trial, str):
            by_workload[trial] = verdict
    return [by_workload.get(f"t{number}") for number in range(len(items))]


class Cell(NamedTuple):
    source: str
    n: int
    history: bool
    variant: str
    scenario: str
    half: str
    verdicts: Counter


def measure_cells(source: Source, step: Source | None, twins, n: int, count: int, seed: int, work: Path,
                  variants: dict[str, dict]) -> list[Cell]:
    items = trials(source, n, count, seed, step, twins)
    if not items:
        return []
    cells = []
    for history in (False, True):
        root = work / f"{re.sub(r'[^a-z0-9]+', '-', source.name.lower())}-n{n}-{'history' if history else 'fresh'}"
        store = build(root, trial_documents(source, step, items, history))
        for variant, settings in variants.items():
            found = verdicts_of(store, items, settings)
            tally: dict[tuple[str, str], Counter] = {}
            for trial, verdict in zip(items, found, strict=True):
                tally.setdefault((trial.scenario, source.info[trial.config]["half"]), Counter())[verdict] += 1
            cells += [Cell(source.name, n, history, variant, scenario, half, counter)
                      for (scenario, half), counter in tally.items()]
    return cells


def rate(cells: list[Cell], hit, **where) -> tuple[int, int]:
    chosen = [c for c in cells if all(getattr(c, k) == v for k, v in where.items())]
    hits = sum(count for c in chosen for verdict, count in c.verdicts.items() if hit(c.scenario, verdict))
    return hits, sum(sum(c.verdicts.values()) for c in chosen)


def right(scenario: str, verdict: str | None) -> bool:
    """A/A: faster or slower called (a false call); a slowdown or the step: slower found."""
    return verdict in CALLED if scenario == "aa" else verdict == "slower"


def cell_text(hits: int, total: int) -> str:
    return f"{100 * hits / total:.1f}% ({hits}/{total})" if total else "n/a"


SCENARIOS = ("aa", "step", "slow-5", "slow-10", "slow-20")
SCENARIO_TITLE = {"aa": "A/A called faster/slower", "step": "real step found (slower)",
                  "slow-5": "5% slowdown found", "slow-10": "10% slowdown found", "slow-20": "20% slowdown found"}


def timers_report(cells: list[Cell], sources: list[str], variants: list[str], default: str, half: str) -> tuple[
        list[str], list[dict]]:
    """Text lines and table rows: per source, store and scenario, the share at each n."""
    lines, rows = [], []
    for variant in variants:
        members = ", ".join(sorted(f"{k}/{p}" for k, p in CALIBRATION_HALF))
        which = f"(kernel, provider) {members}" if half == "calibration" else "the other (kernel, provider) pairs"
        lines += ["", f"rule {variant}{' (the default)' if variant == default else ''}, {half} half ({which}):"]
        header = f"  {'timer':18} {'store':8} {'measure':26}" + "".join(f" {f'{n} a side':>20}" for n in SIDES)
        lines.append(header)
        for source in sources:
            for history in (False, True):
                for scenario in SCENARIOS:
                    figures = [rate(cells, right, source=source, n=n, history=history, variant=variant,
                                    scenario=scenario, half=half) for n in SIDES]
                    if not any(total for _, total in figures):
                        continue
                    store = "history" if history else "fresh"
                    lines.append(f"  {source:18} {store:8} {SCENARIO_TITLE[scenario]:26}"
                                 + "".join(f" {cell_text(*f):>20}" for f in figures))
                    rows.append({"variant": variant, "half": half, "source": source, "store": store,
                                 "scenario": scenario, "figures": {str(n): list(f) for n, f in zip(SIDES, figures,
                                                                                                   strict=True)}})
    return lines, rows


def targets(cells: list[Cell], default: str) -> list[list[str]]:
    """The issue's targets on the test half, with the default rule: per kernel timer and store."""
    summary = []
    for source in TIMER_FIXTURES:
        if source == "cuda_events" or not rate(cells, right, source=source)[1]:
            continue
        for history in (False, True):
            store = "with history" if history else "fresh store"
            false = rate(cells, right, source=source, n=3, history=history, variant=default, scenario="aa",
                         half="test")
            found = rate(cells, right, source=source, n=3, history=history, variant=default, scenario="slow-10",
                         half="test")
            for what, figure, aim, ok in (
                    ("A/A false calls", false, "<= 1%", false[1] and false[0] <= AIM_FALSE * false[1]),
                    ("10% slowdown found", found, ">= 95%", found[1] and found[0] >= AIM_POWER * found[1])):
                summary.append([f"{source}, 3 runs a side, {store}: {what}", cell_text(*figure), aim,
                                "PASS" if ok else "FAIL"])
    return summary


def main_timers(args) -> None:
    started = time.perf_counter()
    data = Path(args.timers)
    variants: dict[str, dict] = {"default": {}}
    for text in args.rules:
        name, _, settings = text.partition("=")
        variants[name] = {key: type(CompareRequest._field_defaults[key])(value)
                          for key, value in (pair.split(":") for pair in settings.split(",") if pair)}
    chosen = args.timer or list(TIMER_FIXTURES)
    sources: dict[str, Source] = {timer: bundle_source(data / folder / "store.kidx.json", timer)
                                  for timer, folder in TIMER_FIXTURES.items()
                                  if timer in chosen or timer == "cuda_graph"}  # the step's twins are cuda_graph's
    step = bundle_source(data / STEP_FIXTURE / "store.kidx.json", "cuda_graph step")
    twins = step_pairs(sources["cuda_graph"], step)
    default_runs = sources["cuda_graph"]
    if not args.no_eager:
        sources["eager (h200-aa)"] = eager_source(Path(args.data))
    work = Path(tempfile.mkdtemp(prefix="kidx-bench-verdicts-"))
    cells: list[Cell] = []
    sources = {name: source for name, source in sources.items() if name in chosen or name.startswith("eager")}
    for name, source in sources.items():
        for n in args.sides:
            with_step = name == "cuda_graph"
            cells += measure_cells(source, step if with_step else None, twins if with_step else None, n,
                                   args.trials, args.seed, work, variants)
            print(f"  measured {name}, {n} a side ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "kidx", "crds"],
                           capture_output=True, text=True).stdout.strip().splitlines()
    code = f"{head} ({'clean kidx/ crds/' if not dirty else f'+ {len(dirty)} modified files under kidx/ crds/'})"
    def shown(path) -> str:  # a fixture folder as the repository names it
        return os.path.relpath(path, REPO) if os.path.isabs(path) else str(path)

    lines = [f"Verdicts per timer on {shown(args.timers)} (and {shown(args.data)}), code at {code}",
             f"default rule: {rule_text(DEFAULT_THRESHOLD)}",
             f"per configuration and scenario, {args.trials} random splits (seed {args.seed}) of the repetitions "
             f"into n runs a side (disjoint), the rest of the configuration's runs its history; each split one "
             f"comparable group, compared by kidx.operations.compare (--by label=side --baseline a), in a fresh "
             f"store (the 2n runs only) and with history (the series' other runs, observed before them)",
             "A/A: both sides unchanged, a faster or slower is a false call; slow-X: every latency of side b "
             "(samples too) times 1+X; step: side b from the cuda-graph-step fixture (the default shapes at "
             f"1.1x the rows), {len(twins)} configurations matched by kernel, provider, pass and x times 1.1",
             "configurations: " + "; ".join(f"{name} {len(s.runs)} ({max((len(r) for r in s.runs.values()), default=0)}"
                                            f" repetitions)" for name, s in sources.items())
             + f"; step {len(step.runs)} ({max(len(r) for r in step.runs.values())} repetitions)",
             "n/a: the recording has fewer than 2n repetitions of a configuration (A/A and slowdowns), or fewer "
             "than n of either recording (step)"]
    changes = sorted((statistics.median(_latency(r) for r in step.runs[s].values())
                      / statistics.median(_latency(r) for r in default_runs.runs[d].values()) - 1,
                      default_runs.info[d]["workload"], default_runs.info[d]["pass"],
                      default_runs.info[d]["provider"]) for s, d in twins.items())
    small = [c for c in changes if c[0] <= DEFAULT_THRESHOLD]
    lines.append(f"the real step's change (median of the step runs / median of the default runs - 1): "
                 f"{changes[0][0]:+.1%} to {changes[-1][0]:+.1%} over the {len(changes)} configurations; "
                 f"{len(small)} within the {DEFAULT_THRESHOLD:.0%} threshold, where slower cannot be called: "
                 + ("; ".join(f"{w} {p} {v} {c:+.1%}" for c, w, p, v in small) or "none"))
    tables = []
    for half in ("test", "calibration"):
        text, rows = timers_report(cells, list(sources), list(variants), "default", half)
        lines += text
        tables += rows
    summary = targets(cells, "default")
    lines += ["", "targets (test half, default rule):"]
    lines += [f"  {measure}: {measured} (target {aim}) {result}" for measure, measured, aim, result in summary]
    elapsed = time.perf_counter() - started
    lines += ["", f"took {elapsed:.0f} s (shared, loaded 2-core machine)"]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    report = {"meta": {"title": "Verdicts per timer (counts, not timings)", "date": time.strftime("%Y-%m-%d"),
                       "script": "bench/bench_verdicts.py", "cpus": os.cpu_count(),
                       "python": platform.python_version(), "code": code, "total_s": round(elapsed)},
              "summary": summary, "tables": _tables(tables), "rows": tables, "trials": args.trials,
              "seed": args.seed, "variants": variants, "stepConfigurations": len(twins)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"bench_verdicts-{stamp}.txt").write_text(text)
    (out / f"bench_verdicts-{stamp}.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(work, ignore_errors=True)


def _latency(run: dict) -> float:
    return run["spec"]["timing"]["latencyNs"]["median"]


def _tables(rows: list[dict]) -> list[dict]:
    """The test half's rows with the default rule, as render_performance.py tables."""
    tables = []
    for store in ("fresh", "history"):
        body = [[row["source"], SCENARIO_TITLE[row["scenario"]],
                 *(cell_text(*row["figures"][str(n)]) for n in SIDES)]
                for row in rows if row["variant"] == "default" and row["half"] == "test" and row["store"] == store]
        tables.append({"section": f"Test half, default rule, {'with history' if store == 'history' else 'fresh store'}",
                       "header": ["timer", "measure", *(f"{n} a side" for n in SIDES)], "rows": body})
    return tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("timers", "pairs"), default="timers")
    parser.add_argument("--data", default=str(REPO / "tests" / "data" / "h200-aa"), help="the eager A/A recording")
    parser.add_argument("--timers", default=str(REPO / "tests" / "data" / "h200-timers"),
                        help="the timer recordings (timers mode)")
    parser.add_argument("--out", default=str(HERE / "reports"))
    parser.add_argument("--sides", nargs="*", type=int, default=list(SIDES), help="runs a side (timers mode)")
    parser.add_argument("--trials", type=int, default=12, help="random splits per configuration and scenario")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rule", dest="rules", action="append", default=[],
                        help="a rule beside the default, NAME=FIELD:VALUE,… (CompareRequest fields; timers mode)")
    parser.add_argument("--timer", action="append", choices=list(TIMER_FIXTURES),
                        help="only these timers (timers mode; default: every one)")
    parser.add_argument("--no-eager", action="store_true", help="leave the eager recording out (timers mode)")
    parser.add_argument("--injected", nargs="*", help="repetitions to slow down in turn (pairs mode; default: all)")
    parser.add_argument("--variants", nargs="*", default=["0.05:0", "0.01:0", "0.001:0"],
                        help="other rules to report beside the default, as ALPHA:MIN_T (pairs mode)")
    parser.add_argument("--power-reps", nargs="*", default=["rep-02", "rep-06", "rep-10"],
                        help="repetitions slowed down for the other rules' power (pairs mode)")
    args = parser.parse_args()
    if args.mode == "pairs":
        main_pairs(args)
    else:
        main_timers(args)


if __name__ == "__main__":
    main()
