#!/usr/bin/env python3
"""How often do compare's and series' verdicts cry wolf, and how often do they catch a
real change? Counts of verdicts, not timings.

Two modes.

``--mode timers`` (the default) reads the timer recordings: on an H200, Liger-Kernel's harness
timed by ``kidx record --timer cuda_graph``, ``cupti`` and ``cuda_events``, 8 fresh processes
each, with a real ~10% step (``tests/data/h200-timers``), and the eager A/A recording (Liger's
own do_bench, 11 processes, ``tests/data/h200-aa``); on an H100, ``--timer cuda_graph`` of
layer_norm, softmax and geglu at their rows and at 1.01, 1.02 and 1.05 times the rows, 10
processes (``tests/data/h100-steps``), and of layer_norm and softmax in 16 processes
(``tests/data/h100-aa16``). Per recording, for n = 2, 3, 5 and 8 runs a side, it splits each
configuration's repetitions at random into two disjoint sides of n and compares them with
``kidx.operations.analyse.compare`` (``--by label=side --baseline a``), in a fresh store holding only
those runs and in one that also holds the configuration's other runs as history:

- **A/A**: nothing changed; a ``faster`` or ``slower`` is a false call;
- **injected slowdowns**: every latency of side b (samples too) times 1.01, 1.02, 1.05; the
  share called ``slower``;
- **real steps**: side b the same shape with the rows scaled (H200 1.1x, H100 1.01x, 1.02x,
  1.05x), n runs of each side drawn independently.

Calibrated on one half, tested on the other: the rule's constants (EVIDENCE_FLOOR, HOST_FLOOR,
SAME_LIMIT, MIN_T_KERNEL, POWER in ``kidx.analysis.significance``) were chosen on the H200
recordings (rms_norm, llama4_rope, swiglu); the targets are read on the H100 recordings
(layer_norm, softmax, geglu), which nothing was tuned on. Every rule is reported beside the
old one (a fixed 5 % threshold, variant ``old``); ``--rule NAME=FIELD:VALUE,…`` adds others
(CompareRequest fields, for example ``strict=min_t:5``).

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

from bench_store import code_version  # noqa: E402

from kidx.analysis.significance import ALPHA, DEFAULT_THRESHOLD, MIN_T, rule_text, threshold_text  # noqa: E402
from kidx.cli.app import run as kidx  # noqa: E402
from kidx.kinds.registry import registry  # noqa: E402
from kidx.operations.analyse.compare import CompareRequest, compare  # noqa: E402
from kidx.operations.analyse.series import SeriesRequest, build_series  # noqa: E402
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


APPLY_BYTES = 64 * 2**20  # one apply's file at most (kidx apply refuses a source over 256 MiB)


def build(root: Path, documents: list[dict]) -> Store:
    """A store of the documents, applied in files of at most APPLY_BYTES: what runs refer
    to first, then the runs (a recording sampled for long has large runs, and a history
    store holds every trial's)."""
    unique: dict[tuple, dict] = {}
    for document in documents:
        unique.setdefault((document["kind"], document["metadata"]["name"]), document)
    ordered = sorted(unique.values(), key=lambda document: document["kind"] == "BenchmarkRun")
    files: list[list[str]] = [[]]
    size = 0
    for document in ordered:
        text = json.dumps(document)
        if files[-1] and size + len(text) > APPLY_BYTES:
            files.append([])
            size = 0
        files[-1].append(text)
        size += len(text) + 1
    for number, texts in enumerate(files):
        path = root.parent / f"{root.name}.{number}.json"
        path.write_text('{"apiVersion": "v1", "kind": "List", "items": [' + ",".join(texts) + "]}")
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = kidx(["apply", "-f", str(path), "--store", str(root)])
        if code != 0:
            raise SystemExit(f"apply failed: {err.getvalue()[-2000:]}")
        path.unlink()
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
             f"{threshold_text(DEFAULT_THRESHOLD)}, alpha {ALPHA:g}, |t| >= {MIN_T:g}",
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
STEPS_FIXTURE = REPO / "tests" / "data" / "h100-steps" / "store.kidx.json"
STEPS_SOURCE = "kernel timer H100"
STEPS_FACTORS = (1.01, 1.02, 1.05)  # the H100 recording's rows: each shape also at 1.01, 1.02 and 1.05 times
AA16_FIXTURE = REPO / "tests" / "data" / "h100-aa16" / "store.kidx.json"
AA16_SOURCE = "kernel timer H100 x16"  # 16 processes of layer_norm and softmax: 8 a side, disjoint
MIN_TIME_FIXTURE = REPO / "tests" / "data" / "h100-min-time" / "store.kidx.json"
MIN_TIME_SOURCE = "geglu H100 --min-time 1"  # geglu's steps, 6 processes, each call sampled for a second
STEPS_MIN_TIME_FIXTURE = REPO / "tests" / "data" / "h100-steps-min-time" / "store.kidx.json"
STEPS_MIN_TIME_SOURCE = "steps H100 --min-time 0.3"  # layer_norm, softmax, geglu's steps, 19 processes, 0.3 s a call
GEGLU_MIN_TIME_FIXTURE = REPO / "tests" / "data" / "h100-geglu-min-time" / "store.kidx.json"
GEGLU_MIN_TIME_SOURCE = "geglu H100 --min-time 1 x20"  # geglu's steps, 20 processes, each call sampled for a second
# the calibration kernels (rms_norm, llama4_rope, swiglu at Liger's default shapes) on an H100, 12 processes: 6 a side
CALIBRATION_H100_FIXTURE = REPO / "tests" / "data" / "h100-calibration" / "store.kidx.json"
CALIBRATION_H100_SOURCE = "cuda_graph H100 x12"
SIDES = (2, 3, 5, 8)
SLOWDOWNS = (0.01, 0.02, 0.05)
LONG_NS = 25_000  # "kernels of at least 25 µs": the configuration's median
TRIAL_PARAMETER = "bench_trial"  # a string workload parameter that keeps each trial its own comparable group
# Calibrated on one half, tested on the other: the constants of the rule (EVIDENCE_FLOOR,
# SAME_LIMIT, MIN_T, POWER) were chosen on the H200 recordings of rms_norm, llama4_rope and
# swiglu (tests/data/h200-timers, tests/data/h200-aa); the targets are read on the H100
# recording of layer_norm, softmax and geglu (tests/data/h100-steps), which no constant was
# tuned on.
TEST_SOURCES = {STEPS_SOURCE, AA16_SOURCE, MIN_TIME_SOURCE, STEPS_MIN_TIME_SOURCE, GEGLU_MIN_TIME_SOURCE}
AIM_FALSE, AIM_POWER, AIM_POWER_1 = 0.01, 0.95, 0.90


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
    info: dict[Config, dict]  # kernel, provider, pass, x, half, long


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
        info[config] = {"kernel": labels.get("kernel", "?"), "provider": labels.get("provider", "?"),
                        "pass": labels.get("operation", "?"), "x": _swept(workload) if workload else None,
                        "workload": workload["metadata"]["name"] if workload else config.workload,
                        "half": "test" if name in TEST_SOURCES else "calibration"}
    for config, by_rep in runs.items():
        info[config]["long"] = statistics.median(_latency(run) for run in by_rep.values()) >= LONG_NS
    return Source(name, shared, runs, info)


def bundle_source(path: Path, name: str, suite: str) -> Source:
    """A ``kidx export`` bundle's runs labelled suite=SUITE, by configuration and repetition."""
    bundle = json.loads(path.read_text(encoding="utf-8"))
    documents = [_document(entry, bundle["objects"]) for entry in bundle["names"]]
    documents = [d for d in documents if d["kind"] != "BenchmarkRun" or d["metadata"]["labels"].get("suite") == suite]
    for document in documents:  # a recording made in batches: each batch's repetitions are its own
        labels = document["metadata"]["labels"]
        if document["kind"] == "BenchmarkRun" and "batch" in labels and "repetition" in labels:
            labels["repetition"] = f"{labels['batch']}-{int(labels['repetition']):02d}"
    return source_of(name, documents, "repetition")


def eager_source(data: Path) -> Source:
    """The eager A/A recording (tests/data/h200-aa), each repetition imported as Liger CSVs."""
    documents = [d for folder in repetitions(data) for d in imported(folder)]
    return source_of("eager (h200-aa)", documents, LABEL)


def step_pairs(default: Source, step: Source, factor: float) -> dict[Config, Config]:
    """Each step configuration's default twin: the same protocol, implementation,
    environment and workload parameters but the swept x, which is the default's times
    ``factor`` (rounded)."""
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
            if other_key == key and round(other_x * factor) == x and {k: v for k, v in other_parameters.items()
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
    scenario: str  # "aa", "slow-1", "slow-2", "slow-5", "step-1", "step-2", "step-5", "step-10"
    config: Config
    a: list[dict]  # the baseline side's runs
    b: list[dict]  # the contender side's runs
    history: list[dict]  # the series' other runs (with history only)


class Steps(NamedTuple):
    """A real step: the scenario's name, the recording its contender runs come from, and each
    of its configurations' baseline configuration."""

    scenario: str
    source: Source
    twins: dict[Config, Config]


def trials(source: Source, n: int, count: int, seed: int, steps: list[Steps]) -> list[Trial]:
    """``count`` random splits per configuration and scenario: n runs a side, disjoint,
    the rest of the configuration's runs its history. A/A and the injected slowdowns need
    2n repetitions of a configuration; a real step n of each side's configuration, drawn
    independently (the two sides' configurations ran in the same processes)."""
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
    for step in steps:
        for step_config, config in sorted(step.twins.items()):
            reps, step_reps = sorted(source.runs[config]), sorted(step.source.runs[step_config])
            if len(reps) < n or len(step_reps) < n:
                continue
            for _ in range(count):
                a = rng.sample(reps, n)
                head = [step.source.runs[step_config][r] for r in rng.sample(step_reps, n)]
                rest = [source.runs[config][r] for r in reps if r not in a]
                out.append(Trial(step.scenario, config, [source.runs[config][r] for r in a], head, rest))
    return out


EPOCH = datetime(2027, 1, 1, tzinfo=UTC)


def trial_documents(source: Source, steps: list[Steps], items: list[Trial], history: bool) -> list[dict]:
    """Each trial as its own comparable group: its configuration's workload with the
    trial's number as a parameter; sides labelled side=a and side=b; with history, the
    configuration's other runs unlabelled. Observation times in order: history, a, b
    (the history is the past, the contender the latest)."""
    from kidx.identity import digest_of

    shared = {digest: document for step in steps for digest, document in step.source.shared.items()}
    shared.update(source.shared)
    out: dict[str, dict] = dict(shared)
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
    long: bool
    kernel: str
    verdicts: Counter


def measure_cells(source: Source, steps: list[Steps], n: int, count: int, seed: int, work: Path,
                  variants: dict[str, dict]) -> list[Cell]:
    items = trials(source, n, count, seed, steps)
    if not items:
        return []
    cells = []
    for history in (False, True):
        root = work / f"{re.sub(r'[^a-z0-9]+', '-', source.name.lower())}-n{n}-{'history' if history else 'fresh'}"
        store = build(root, trial_documents(source, steps, items, history))
        for variant, settings in variants.items():
            found = verdicts_of(store, items, settings)
            tally: dict[tuple[str, str, bool, str], Counter] = {}
            for trial, verdict in zip(items, found, strict=True):
                info = source.info[trial.config]
                kernel = f"{info['kernel']}/{info['pass']}"
                tally.setdefault((trial.scenario, info["half"], info["long"], kernel), Counter())[verdict] += 1
            cells += [Cell(source.name, n, history, variant, scenario, half, long, kernel, counter)
                      for (scenario, half, long, kernel), counter in tally.items()]
        shutil.rmtree(root, ignore_errors=True)
    return cells


def rate(cells: list[Cell], hit, **where) -> tuple[int, int]:
    chosen = [c for c in cells if all(getattr(c, k) == v for k, v in where.items())]
    hits = sum(count for c in chosen for verdict, count in c.verdicts.items() if hit(c.scenario, verdict))
    return hits, sum(sum(c.verdicts.values()) for c in chosen)


def right(scenario: str, verdict: str | None) -> bool:
    """A/A: faster or slower called (a false call); a slowdown or a real step: slower found."""
    return verdict in CALLED if scenario == "aa" else verdict == "slower"


def undecided(scenario: str, verdict: str | None) -> bool:
    return verdict in ("inconclusive", "unconfirmed")


def all_but_geglu(cells: list[Cell]) -> list[Cell]:
    """The cells of the kernels other than geglu, whose GEMMs' processes disagree by 1-2%
    (the power cap's clock, bench/bench_spread.py): what the targets read without them."""
    return [c for c in cells if not c.kernel.startswith("geglu/")]


def cell_text(hits: int, total: int) -> str:
    return f"{100 * hits / total:.1f}% ({hits}/{total})" if total else "n/a"


SCENARIOS = ("aa", "slow-1", "slow-2", "slow-5", "step-1", "step-2", "step-5", "step-10")
SCENARIO_TITLE = {"aa": "A/A called faster/slower", "slow-1": "1% slowdown found", "slow-2": "2% slowdown found",
                  "slow-5": "5% slowdown found", "step-1": "real 1% step found", "step-2": "real 2% step found",
                  "step-5": "real 5% step found", "step-10": "real 10% step found"}


def timers_report(cells: list[Cell], sources: list[str], variant: str, half: str) -> tuple[list[str], list[dict]]:
    """Text lines and table rows: per source, store and scenario, the share at each n."""
    lines, rows = [], []
    which = {"test": f"the H100 recordings ({STEPS_SOURCE}: layer_norm, softmax, geglu, 10 processes; {AA16_SOURCE}: "
                     f"layer_norm, softmax, 16 processes; {MIN_TIME_SOURCE}: geglu, 6 processes; "
                     f"{STEPS_MIN_TIME_SOURCE}: layer_norm, softmax, geglu, 19 processes; "
                     f"{GEGLU_MIN_TIME_SOURCE}: geglu, 20 processes), tuned on by nothing",
             "calibration": f"the H200 recordings (rms_norm, llama4_rope, swiglu), the rule's constants chosen on "
                            f"them, and {CALIBRATION_H100_SOURCE} (the same kernels on an H100, 12 processes)"}[half]
    lines += ["", f"rule {variant}, {half} half, {which}:"]
    lines.append(f"  {'timer':18} {'store':8} {'measure':26}" + "".join(f" {f'{n} a side':>20}" for n in SIDES))
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


def targets(cells: list[Cell], eager: str | None) -> list[list[str]]:
    """The issue's targets with the default rule, kernel timers on the test half; eager
    against the old rule (a fixed 5 % threshold) on every configuration."""
    summary = []

    def check(what: str, figure: tuple[int, int], aim: str, ok: bool) -> None:
        summary.append([what, cell_text(*figure), aim, "PASS" if figure[1] and ok else "FAIL"])

    recorded = {c.source for c in cells}
    for history in (False, True):
        store = "with history" if history else "fresh store"
        for source in (STEPS_SOURCE, STEPS_MIN_TIME_SOURCE, GEGLU_MIN_TIME_SOURCE):
            if source not in recorded:
                continue
            where = {"source": source, "history": history, "variant": "default", "half": "test"}
            false = rate(cells, right, n=5, scenario="aa", **where)
            check(f"{source}, 5 a side, {store}: A/A called faster or slower", false, "<= 1%",
                  false[0] <= AIM_FALSE * false[1])
            found = rate(cells, right, n=5, scenario="slow-2", **where)
            check(f"{source}, 5 a side, {store}: 2% slowdown slower", found, ">= 95%",
                  found[0] >= AIM_POWER * found[1])
            for kernel in sorted({c.kernel for c in cells if c.source == source}):
                found = rate(cells, right, n=5, scenario="slow-2", kernel=kernel, **where)
                summary.append([f"  {kernel}: 2% slowdown slower, 5 a side, {store}", cell_text(*found),
                                "(by kernel)", "-"])
            found = rate(all_but_geglu(cells), right, n=5, scenario="slow-2", **where)
            summary.append([f"  all but geglu: 2% slowdown slower, 5 a side, {store}", cell_text(*found),
                            "(by kernel)", "-"])
            stepped = rate(cells, right, n=5, scenario="step-2", **where)
            summary.append([f"  {source}, real 2% step found, 5 a side, {store}", cell_text(*stepped), "(steps)", "-"])
            stepped = rate(cells, right, n=8, scenario="step-1", long=True, **where)
            summary.append([f"  {source}, real 1% step found, 8 a side, >= 25 us, {store}", cell_text(*stepped),
                            "(steps)", "-"])
        where = {"source": STEPS_SOURCE, "history": history, "variant": "default", "half": "test"}
        for n in (2, 3):  # geglu under do_bench's budget and with every call sampled for a second
            for source in (STEPS_SOURCE, MIN_TIME_SOURCE, STEPS_MIN_TIME_SOURCE, GEGLU_MIN_TIME_SOURCE):
                for scenario in ("slow-2", "step-2"):
                    geglu = [c for c in cells if c.kernel.startswith("geglu/")]
                    found = rate(geglu, right, n=n, scenario=scenario, **{**where, "source": source})
                    summary.append([f"  geglu ({source}): {SCENARIO_TITLE[scenario]}, {n} a side, {store}",
                                    cell_text(*found), "(sampling)", "-"])
        for source in (AA16_SOURCE, STEPS_MIN_TIME_SOURCE, GEGLU_MIN_TIME_SOURCE):  # 16 processes or more
            if source not in recorded:
                continue
            where16 = {**where, "source": source}
            one = rate(cells, right, n=8, scenario="slow-1", long=True, **where16)
            check(f"{source}, 8 a side, >= 25 us, {store}: 1% slowdown slower", one, ">= 90%",
                  one[0] >= AIM_POWER_1 * one[1])
            for kernel in sorted({c.kernel for c in cells if c.source == source}):
                found = rate(cells, right, n=8, scenario="slow-1", long=True, kernel=kernel, **where16)
                summary.append([f"  {kernel}: 1% slowdown slower, 8 a side, >= 25 us, {store}", cell_text(*found),
                                "(by kernel)", "-"])
            found = rate(all_but_geglu(cells), right, n=8, scenario="slow-1", long=True, **where16)
            summary.append([f"  all but geglu: 1% slowdown slower, 8 a side, >= 25 us, {store}", cell_text(*found),
                            "(by kernel)", "-"])
            false16 = rate(cells, right, n=8, scenario="aa", **where16)
            check(f"{source}, 8 a side, {store}: A/A called faster or slower", false16, "<= 1%",
                  false16[0] <= AIM_FALSE * false16[1])
        if eager:
            for n in (2, 3, 5):
                now = rate(cells, right, source=eager, n=n, history=history, variant="default", scenario="aa")
                before = rate(cells, right, source=eager, n=n, history=history, variant="old", scenario="aa")
                check(f"{eager}, {n} a side, {store}: A/A false calls, default (old rule {cell_text(*before)})",
                      now, "<= the old rule's", now[0] * max(before[1], 1) <= before[0] * max(now[1], 1))
    return summary


def _rule_variant(text: str) -> tuple[str, dict]:
    name, _, settings = text.partition("=")
    values: dict = {}
    for pair in settings.split(","):
        if pair:
            key, value = pair.split(":")
            values[key] = float(value) if key in ("threshold", "alpha", "min_t", "floor_share") else int(value)
    return name, values


def main_timers(args) -> None:
    started = time.perf_counter()
    data = Path(args.timers)
    variants: dict[str, dict] = {"default": {}, "old": {"threshold": 0.05}}
    variants.update(_rule_variant(text) for text in args.rules)
    chosen = args.timer or [*TIMER_FIXTURES, "steps"]
    sources: dict[str, Source] = {timer: bundle_source(data / folder / "store.kidx.json", timer, "h200-timers")
                                  for timer, folder in TIMER_FIXTURES.items()
                                  if timer in chosen or timer == "cuda_graph"}  # the step's twins are cuda_graph's
    h200_step = bundle_source(data / STEP_FIXTURE / "store.kidx.json", "cuda_graph step", "h200-timers")
    steps_of: dict[str, list[Steps]] = {"cuda_graph": [Steps("step-10", h200_step,
                                                             step_pairs(sources["cuda_graph"], h200_step, STEP))]}
    if "steps" in chosen:
        sources[AA16_SOURCE] = bundle_source(AA16_FIXTURE, AA16_SOURCE, "aa16")
        recordings = [(Path(args.steps), STEPS_SOURCE, "steps"), (MIN_TIME_FIXTURE, MIN_TIME_SOURCE, "geglu"),
                      (STEPS_MIN_TIME_FIXTURE, STEPS_MIN_TIME_SOURCE, "steps-min-time"),
                      (GEGLU_MIN_TIME_FIXTURE, GEGLU_MIN_TIME_SOURCE, "steps-min-time")]
        for path, name, suite in recordings:  # each with its steps, recorded in the same processes
            if name in (STEPS_SOURCE, MIN_TIME_SOURCE) or path.is_file():
                sources[name] = bundle_source(path, name, suite)
                steps_of[name] = [Steps(f"step-{(factor - 1) * 100:g}", sources[name],
                                        step_pairs(sources[name], sources[name], factor)) for factor in STEPS_FACTORS]
        if CALIBRATION_H100_FIXTURE.is_file():
            sources[CALIBRATION_H100_SOURCE] = bundle_source(CALIBRATION_H100_FIXTURE, CALIBRATION_H100_SOURCE,
                                                             "calibration16")
    eager = None
    if not args.no_eager:
        eager = "eager (h200-aa)"
        sources[eager] = eager_source(Path(args.data))
    work = Path(tempfile.mkdtemp(prefix="kidx-bench-verdicts-"))
    cells: list[Cell] = []
    sources = {name: source for name, source in sources.items()
               if name in chosen or name in TEST_SOURCES or name == eager or name == CALIBRATION_H100_SOURCE}
    for name, source in sources.items():
        for n in args.sides:
            cells += measure_cells(source, steps_of.get(name, []), n, args.trials, args.seed, work, variants)
            print(f"  measured {name}, {n} a side ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    code = code_version(("kidx", "crds", "bench"))

    def shown(path) -> str:  # a fixture folder as the repository names it
        return os.path.relpath(path, REPO) if os.path.isabs(path) else str(path)

    lines = [f"Verdicts per timer on {shown(args.timers)}, {shown(args.steps)} and {shown(args.data)}, code at {code}",
             f"default rule: {rule_text(DEFAULT_THRESHOLD)}",
             f"old rule (variant 'old'): {rule_text(0.05)}",
             f"per configuration and scenario, {args.trials} random splits (seed {args.seed}) of the repetitions "
             f"into n runs a side (disjoint), the rest of the configuration's runs its history; each split one "
             f"comparable group, compared by kidx.operations.analyse.compare (--by label=side --baseline a), "
             f"in a fresh store (the 2n runs only) and with history (the series' other runs, observed before them)",
             "A/A: both sides unchanged, a faster or slower is a false call; slow-X: every latency of side b "
             "(samples too) times 1+X/100; real steps: side b the same shape with the rows scaled (H200: 1.1x, "
             "the cuda-graph-step fixture; H100: 1.01x, 1.02x, 1.05x, recorded in the same processes), n runs of "
             "each side drawn independently",
             "configurations: " + "; ".join(
                 f"{name} {len(s.runs)} ({max((len(r) for r in s.runs.values()), default=0)} repetitions)"
                 for name, s in sources.items()),
             "n/a: the recording has fewer than 2n repetitions of a configuration (A/A and slowdowns), or fewer "
             "than n (steps)"]
    for name, found in steps_of.items():
        if name not in sources:
            continue
        for step in found:
            changes = sorted(statistics.median(_latency(r) for r in step.source.runs[s].values())
                             / statistics.median(_latency(r) for r in sources[name].runs[d].values()) - 1
                             for s, d in step.twins.items())
            if changes:
                lines.append(f"{name} {step.scenario}: the real change (median of the step's runs over the shape's "
                             f"- 1) over its {len(changes)} configurations: {changes[0]:+.2%} to {changes[-1]:+.2%}, "
                             f"median {statistics.median(changes):+.2%}")
    tables = []
    for variant in variants:
        for half in ("test", "calibration"):
            text, rows = timers_report(cells, list(sources), variant, half)
            lines += text
            tables += rows
    summary = targets(cells, eager)
    lines += ["", "targets (default rule; kernel timers on the test half):"]
    lines += [f"  {measure}: {measured} (target {aim}) {result}" for measure, measured, aim, result in summary]
    elapsed = time.perf_counter() - started
    lines += ["", f"took {elapsed:.0f} s (shared, loaded 2-core machine)"]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    report = {"meta": {"title": "Verdicts per timer (counts, not timings)", "date": time.strftime("%Y-%m-%d"),
                       "script": "bench/bench_verdicts.py", "cpus": os.cpu_count(),
                       "python": platform.python_version(), "code": code, "total_s": round(elapsed)},
              "summary": summary, "tables": _tables(tables), "rows": tables, "trials": args.trials,
              "seed": args.seed, "variants": variants}
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
    parser.add_argument("--steps", default=str(STEPS_FIXTURE),
                        help="the H100 step recording, the test half (timers mode)")
    parser.add_argument("--out", default=str(HERE / "reports"))
    parser.add_argument("--sides", nargs="*", type=int, default=list(SIDES), help="runs a side (timers mode)")
    parser.add_argument("--trials", type=int, default=12, help="random splits per configuration and scenario")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rule", dest="rules", action="append", default=[],
                        help="a rule beside the default, NAME=FIELD:VALUE,… (CompareRequest fields; timers mode)")
    parser.add_argument("--timer", action="append", choices=[*TIMER_FIXTURES, "steps"],
                        help="only these recordings (timers mode; default: every one; steps: the H100 one)")
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
