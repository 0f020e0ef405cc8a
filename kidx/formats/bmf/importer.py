"""Convert Bencher Metric Format (BMF) JSON into kidx manifests (writing it is
``exporter.py``'s).

BMF is the JSON that Bencher (bencher.dev) reads from custom harnesses: an object whose
keys are benchmark names, each an object whose keys are measure slugs (``latency`` in
nanoseconds, ``throughput`` in operations per second, or any other measure), each an
object with ``value`` and, optionally, ``lower_value`` and ``upper_value``::

    {"benchmark_name": {"latency": {"value": 88.0, "lower_value": 87.42, "upper_value": 88.88}}}

Output, per benchmark: one BenchmarkRun. Every measure is kept as written in
``spec.sourceNative.measures``; ``latency`` also becomes the headline
(``spec.timing.latencyNs.median``: BMF does not say which statistic its value is, and
kidx reads it as the median), its bounds the ``lower`` and ``upper`` latency
measurements. A Workload per benchmark name, one BenchmarkProtocol and one
ExecutionEnvironment (BMF records neither how nor where it measured: pass
``--environment`` for the machine).

Identity: BMF records no time, so a benchmark's externalId is
``{benchmark}/{12 hex of its measures}``: the same file imported twice gives the same
runs, new measurements new runs. ``kidx export --format bmf`` writes the same shape back.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kidx.formats.framework import FormatDoc, JsonConverter, LineFinder, hashed_name, manifest, protocol, slug

SOURCE_NAME = "bmf"
FAMILY = "bmf"
WHAT = "Bencher Metric Format JSON (benchmark name → measure → {value, lower_value, upper_value})"
VALUE_KEYS = ("value", "lower_value", "upper_value")
LATENCY = "latency"

FORMAT_DOC = FormatDoc(
    reads="Bencher Metric Format JSON ([bmf](#bmf))",
    one_run_per="benchmark",
    fields=(
        ("BMF", "kidx"),
        ("the benchmark name", "`spec.sourceNative.benchmark`; a Workload (`operation`, family `bmf`)"),
        ("every measure, as written", "`spec.sourceNative.measures`"),
        ("`latency` (Bencher's built-in measure, in ns)",
         (
             "`spec.timing.latencyNs.median`, the headline: BMF does not say which statistic its value is, and kidx "
             "reads it as the median; `lower_value` and `upper_value` are the `lower` and `upper` latency measurements"
         )),
        ("`throughput` and any other measure", "`spec.sourceNative.measures` only (their units are the harness's)"),
        ("—",
         (
             "one BenchmarkProtocol (`bmf`) and one ExecutionEnvironment (`bmf-unknown-machine`): BMF records neither "
             "how nor where it measured; import with `--environment` for the machine"
         )),
    ),
)


class _Converter(JsonConverter):
    what, noun, fallback_name = WHAT, "benchmarks", "bmf"

    def add(self, path: str, data: Any, text: str) -> None:
        if not isinstance(data, dict):
            self.problem(path, 1, None, f"not {WHAT}: expected an object of benchmarks")
            return
        lines = LineFinder(text)
        for benchmark, measures in data.items():
            self.read += 1
            line = _line_of_key(lines, benchmark) or 1
            if self.refused(path, line, _problems_of(benchmark, measures)):
                continue
            fingerprint = hashlib.sha256(json.dumps(measures, sort_keys=True).encode("utf-8")).hexdigest()[:12]
            external_id = f"{benchmark}/{fingerprint}"
            if not self.first_sighting(external_id, path, line):
                continue
            self._run(path, line, benchmark, measures, external_id)

    def _run(self, path: str, line: int, benchmark: str, measures: dict, external_id: str) -> None:
        position = (path, 1, line)
        protocol = self.shared.add("BenchmarkProtocol", (), position, _protocol)
        environment = self.shared.add("ExecutionEnvironment", (), position, _environment)
        workload = self.shared.add("Workload", (benchmark,), position, lambda: _workload(benchmark))
        spec: dict[str, Any] = {"status": "passed"}
        latency = measures.get(LATENCY)
        if latency is not None:
            spec["timing"] = {"latencyNs": {"median": latency["value"]}, "primaryStatistic": "median"}
            bounds = [{"metric": "latency", "statistic": statistic, "unit": "ns", "value": latency[key]}
                      for key, statistic in (("lower_value", "lower"), ("upper_value", "upper")) if key in latency]
            if bounds:
                spec["measurements"] = bounds
        spec["sourceNative"] = {
            "source": SOURCE_NAME,
            "benchmark": benchmark,
            "externalId": external_id,
            "measures": measures,
        }
        spec["protocolDigest"] = protocol
        spec["workloadDigest"] = workload
        spec["environmentDigest"] = environment
        self.add_run(spec, (path, line), ("bmf/" + benchmark, external_id), f"{benchmark} · BMF")


convert_files = _Converter.convert_files


def _line_of_key(lines: LineFinder, key: str) -> int | None:
    """The line of a top-level key (``"name": {``), found in order."""
    return lines.find_key(key)


def _problems_of(benchmark: str, measures: Any) -> list[tuple[str, str]]:
    where = json.dumps(benchmark, ensure_ascii=False)
    if not benchmark:
        return [(where, "a benchmark name must not be empty")]
    if not isinstance(measures, dict) or not measures:
        return [(where, "must be an object of measures (measure slug → {value, lower_value, upper_value})")]
    bad: list[tuple[str, str]] = []
    for measure, metric in measures.items():
        at = f"{where}.{measure}"
        if not isinstance(metric, dict):
            bad.append((at, "must be an object with value, lower_value, upper_value"))
            continue
        for key in metric:
            if key not in VALUE_KEYS:
                bad.append((f"{at}.{key}", "is not one of value, lower_value, upper_value"))
        for key in VALUE_KEYS:
            value = metric.get(key)
            if key == "value" and value is None:
                bad.append((f"{at}.value", "is missing"))
            elif value is not None and not _finite(value):
                bad.append((f"{at}.{key}", f"{value!r} is not a finite number"))
        if measure == LATENCY:
            bad.extend((f"{at}.{key}", f"{metric[key]!r}: a latency cannot be negative")
                       for key in VALUE_KEYS if _finite(metric.get(key)) and metric[key] < 0)
        low, high = metric.get("lower_value"), metric.get("upper_value")
        if isinstance(low, (int, float)) and isinstance(high, (int, float)) and _finite(low) and _finite(high) \
                and low > high:
            bad.append((f"{at}.lower_value", f"{low!r} is above upper_value {high!r}: a lower bound cannot exceed "
                                             "its upper bound"))
    return bad


def _finite(value: Any) -> bool:
    import math

    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _protocol() -> tuple[str, dict]:
    name = "bmf"
    harness = {"name": "Bencher Metric Format",
               "repository": "https://bencher.dev/docs/reference/bencher-metric-format"}
    measurement = {"metric": "latency", "timer": "other", "primaryStatistic": "median",
                   "method": "as the harness that wrote the BMF file measured it; BMF does not say"}
    notes = ("Values as a harness reported them in Bencher Metric Format: one value per measure (latency in ns), "
             "with optional lower and upper bounds; which statistic the value is, and how it was measured, BMF does "
             "not record. Comparable within one benchmark name.")
    return protocol(name, "Bencher Metric Format", harness, measurement, FAMILY, notes)


def _environment() -> tuple[str, dict]:
    name = "bmf-unknown-machine"
    spec = {"hardware": {"vendor": "unknown", "product": "unknown machine"}, "software": {}}
    return name, manifest("ExecutionEnvironment", name, "BMF results · machine not recorded", spec)


def _workload(benchmark: str) -> tuple[str, dict]:
    name = hashed_name("bmf-" + slug(benchmark), benchmark, 100) if len(benchmark) > 80 else "bmf-" + slug(benchmark)
    return name, manifest("Workload", name, benchmark, {"family": FAMILY, "operation": benchmark, "parameters": {}})
