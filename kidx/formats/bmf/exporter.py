"""Runs written as Bencher Metric Format (BMF): ``kidx export --format bmf``; reading it
is ``importer.py``'s.

BMF (bencher.dev) maps a benchmark name to measures, each ``{value, lower_value,
upper_value}``. Bencher tracks a benchmark across reports by its name, so the name must
stay the same from one recording to the next: it is the run's workload and
implementation names (``liger-rms-norm-hidden4096-… · liger-rms-norm-liger-triton``),
with the protocol's or the environment's name added only where two selected series
would otherwise share one and that name tells them apart. Bencher keeps the machine apart as a testbed
(``bencher run --testbed``), so the environment is not in the name unless needed.
A run imported from BMF keeps the benchmark name and the measures it came with.

Measures: ``latency`` (ns, the primary statistic; the p20–p80 band, else p25–p75, as
lower and upper values) and ``peak-memory`` (bytes). One report holds one value per
benchmark: of several selected runs of one series the newest is written, and the others
are counted as left out; runs without a figure (failed, skipped) likewise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kidx.formats.run_objects import ROLES, RunObjects
from kidx.units import TIME_UNITS

_BANDS = (("p20", "p80"), ("p25", "p75"), ("lower", "upper"))
_VALUE_KEYS = ("value", "lower_value", "upper_value")  # BMF's order


@dataclass
class BmfReport:
    benchmarks: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    older: int = 0  # runs left out: a newer run of the same series was written
    without_figure: int = 0  # runs left out: no headline figure (failed, skipped)

    def text(self) -> str:
        return json.dumps(self.benchmarks, indent=2, ensure_ascii=False) + "\n"


def bmf_report(runs: list[dict], objects: RunObjects) -> BmfReport:
    """The BMF of ``runs``, named by the objects they refer to."""
    names = {role: {digest: manifest["metadata"].get("name", digest) for digest, manifest in found.items()}
             for role, found in objects.items()}
    report = BmfReport()
    newest: dict[Any, tuple[tuple, dict, dict]] = {}  # series -> (order, run, measures)
    for run in runs:
        measures = _measures(run["spec"])
        if not measures:
            report.without_figure += 1
            continue
        series = _series(run["spec"])
        order = (run["spec"].get("observedAt") or "", run["metadata"]["name"])
        if series in newest:
            report.older += 1
            if newest[series][0] >= order:
                continue
        newest[series] = (order, run, measures)
    labelled = _benchmark_names([(series, run) for series, (_, run, _) in newest.items()], names)
    for series, name in sorted(labelled.items(), key=lambda item: item[1]):
        report.benchmarks[name] = {measure: {key: metric[key] for key in _VALUE_KEYS if key in metric}
                                   for measure, metric in sorted(newest[series][2].items())}
    return report


def _series(spec: dict) -> tuple:
    native = spec.get("sourceNative") or {}
    if native.get("source") == "bmf":
        return ("bmf", native.get("benchmark"))
    return tuple(spec.get(role) for role, _ in ROLES)


def _benchmark_names(chosen: list[tuple[tuple, dict]], names: dict[str, dict[str, str]]) -> dict[tuple, str]:
    """A name per series: workload · implementation; where series share that, the
    protocol's and the environment's names where they tell them apart, then the run's."""

    def name_of(spec: dict, role: str) -> str | None:
        digest = spec.get(role)
        return names[role].get(digest, digest) if digest else None

    result: dict[tuple, str] = {}
    groups: dict[str, list[tuple[tuple, dict]]] = {}
    for series, run in chosen:
        if series[0] == "bmf":
            result[series] = series[1]
            continue
        spec = run["spec"]
        parts = [p for p in (name_of(spec, "workloadDigest"), name_of(spec, "implementationDigest")) if p]
        groups.setdefault(" · ".join(parts) or run["metadata"]["name"], []).append((series, run))
    taken = set(result.values())
    for base, members in groups.items():
        if len(members) == 1 and base not in taken:
            result[members[0][0]] = base
            taken.add(base)
            continue
        telling = [role for role in ("protocolDigest", "environmentDigest")
                   if len({name_of(run["spec"], role) for _, run in members}) > 1]
        proposed = {series: " · ".join([base, *(name_of(run["spec"], role) or "none" for role in telling)])
                    for series, run in members}
        for series, run in members:
            name = proposed[series]
            if list(proposed.values()).count(name) > 1 or name in taken:
                name = f"{name} · {run['metadata']['name']}"
            result[series] = name
            taken.add(name)
    return result


def _measures(spec: dict) -> dict[str, dict[str, Any]]:
    """The BMF measures of one run: its own, when it came from BMF."""
    native = spec.get("sourceNative") or {}
    if native.get("source") == "bmf" and isinstance(native.get("measures"), dict):
        return native["measures"]
    measures: dict[str, dict[str, Any]] = {}
    timing = spec.get("timing") or {}
    latency = timing.get("latencyNs") or {}
    primary = latency.get(timing.get("primaryStatistic") or "median")
    if _number(primary):
        measures["latency"] = {"value": primary, **_band(spec, "latency")}
    memory = spec.get("memory") or {}
    peak = (memory.get("peakAllocatedBytes") or {}).get(memory.get("primaryStatistic") or "median")
    if _number(peak):
        measures["peak-memory"] = {"value": peak, **_band(spec, "peak_memory")}
    return measures


def _band(spec: dict, metric: str) -> dict[str, float]:
    found: dict[str, float] = {}
    for entry in spec.get("measurements") or []:
        if isinstance(entry, dict) and entry.get("metric") == metric and _number(entry.get("value")):
            scale = TIME_UNITS.get(str(entry.get("unit")), 1) if metric == "latency" else 1
            found.setdefault(str(entry.get("statistic")), entry["value"] * scale)
    for low, high in _BANDS:
        if low in found and high in found:
            return {"lower_value": found[low], "upper_value": found[high]}
    return {}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
