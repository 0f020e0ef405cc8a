"""Runs written as PyTorch OSS benchmark records ("v3"): ``kidx export --format
pytorch-benchmark``; reading them is ``importer.py``'s.

One record per run, in the column set of ClickHouse's ``benchmark.oss_ci_benchmark_v3``
(pytorch/test-infra ``clickhouse_db_schema/oss_ci_benchmark_v3/schema.sql``), written as
JSON lines (ClickHouse's JSONEachRow, what PyTorch's upload script reads):

- ``benchmark``: the protocol's harness name; ``mode`` and ``dtype`` from the workload's
  parameters where it has them; ``model``: the workload's operation, ``type`` the
  implementation's library, ``backend`` its backend (else its variant, else its name);
- ``metric``: the run's figure: ``latency_ns`` with the samples as ``benchmark_values``
  (the primary statistic alone where the run kept no samples); any other metric by its
  kidx name (``peak_memory``, ``memory_bandwidth``, ``throughput``, ``speedup``) with its
  unit as ``extra_info.unit`` (``bytes``, ``bytes/s``, ``tokens/s``, ``ratio``), which
  ``kidx import pytorch-benchmark`` reads back as the same metric; a run without a
  figure has ``latency_ns`` and ``benchmark_values`` empty;
- ``runners``: the environment's GPU (or CPU) and count; ``dependencies``: its software
  versions; ``timestamp``: the run's ``observedAt`` (0 where unknown); ``repo``,
  ``head_branch``, ``head_sha`` from the run's labels ``repo``, ``branch``, ``commit``.

Every ``extra_info`` is a map of strings (ClickHouse's ``Map(String, String)``); kidx keeps
the run and each object it refers to there as canonical JSON (``kidx.run`` in the metric's,
``kidx.protocol`` in the benchmark's, ``kidx.workload`` and ``kidx.implementation`` in the
model's, ``kidx.environment`` in the runner's), so that ``kidx import pytorch-benchmark``
gives back the same runs and digests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kidx.formats.run_objects import ROLES, RunObjects
from kidx.identity import canonical_json

_KEYS = {"BenchmarkProtocol": "kidx.protocol", "Workload": "kidx.workload",
         "Implementation": "kidx.implementation", "ExecutionEnvironment": "kidx.environment"}


@dataclass
class PytorchBenchmarkReport:
    records: list[dict[str, Any]] = field(default_factory=list)

    def text(self) -> str:
        return "".join(json_line(record) for record in self.records)


# characters a reader may take for the end of a line (str.splitlines does): escaped where
# they stand in a string, so that each record stays on its one line
_LINE_SEPARATORS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


def json_line(record: dict) -> str:
    """One record as a line of JSON lines: UTF-8 as written, but every line separator
    (U+2028, U+2029, U+0085) escaped."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True).translate(_LINE_SEPARATORS) + "\n"


def pytorch_benchmark_report(runs: list[dict], objects: RunObjects) -> PytorchBenchmarkReport:
    """One record per run, by name, with the objects it refers to."""
    report = PytorchBenchmarkReport()
    for run in sorted(runs, key=lambda r: r["metadata"]["name"]):
        referenced = {kind: objects[role].get(run["spec"].get(role) or "") for role, kind in ROLES}
        report.records.append(_record(run, referenced))
    return report


def _portable(manifest: dict) -> str:
    """The manifest as canonical JSON: apiVersion, kind, spec and the metadata a user
    gives (name, title, labels, annotations), not what the store sets."""
    metadata = {key: value for key, value in manifest.get("metadata", {}).items()
                if key in ("name", "title", "labels", "annotations") and value}
    return canonical_json({"apiVersion": manifest["apiVersion"], "kind": manifest["kind"], "metadata": metadata,
                           "spec": manifest["spec"]}).decode("utf-8")


def _record(run: dict, referenced: dict[str, dict | None]) -> dict[str, Any]:
    spec = run["spec"]
    labels = run["metadata"].get("labels") or {}
    protocol = (referenced["BenchmarkProtocol"] or {}).get("spec") or {}
    workload = (referenced["Workload"] or {}).get("spec") or {}
    implementation = (referenced["Implementation"] or {}).get("spec") or {}
    environment = (referenced["ExecutionEnvironment"] or {}).get("spec") or {}
    parameters = workload.get("parameters") or {}
    hardware = environment.get("hardware") or {}
    gpu = hardware.get("vendor") not in (None, "unknown") and "count" in hardware or hardware.get("architecture")

    def extra(kind: str) -> dict[str, str]:
        body = referenced[kind]
        return {_KEYS[kind]: _portable(body)} if body else {}

    name, unit, values = _figure(spec)
    return {
        "timestamp": _epoch(spec.get("observedAt")),
        "schema_version": "v3",
        "name": "kidx",
        "repo": labels.get("repo", ""),
        "head_branch": labels.get("branch", ""),
        "head_sha": labels.get("commit", ""),
        "workflow_id": 0,
        "run_attempt": 1,
        "job_id": 0,
        "runners": [{
            "name": (referenced["ExecutionEnvironment"] or {}).get("metadata", {}).get("name", ""),
            "type": hardware.get("product", ""),
            "cpu_info": ((environment.get("host") or {}).get("cpu") or {}).get("model", "")
            if isinstance((environment.get("host") or {}).get("cpu"), dict) else "",
            "cpu_count": 0, "mem_info": "", "avail_mem_in_gb": 0,
            "gpu_info": hardware.get("product", "") if gpu else "",
            "gpu_count": hardware.get("count", 1 if gpu else 0) if gpu else 0,
            "gpu_mem_info": "", "avail_gpu_mem_in_gb": int(hardware.get("memoryBytes", 0) // 2**30),
            "extra_info": extra("ExecutionEnvironment"),
        }],
        "benchmark": {
            "name": (protocol.get("harness") or {}).get("name", ""),
            "mode": str(parameters.get("mode", "")),
            "dtype": str(parameters.get("dtype", "")),
            "extra_info": extra("BenchmarkProtocol"),
        },
        "model": {
            "name": workload.get("operation", ""),
            "type": implementation.get("library", ""),
            "backend": implementation.get("backend") or implementation.get("variant")
            or (referenced["Implementation"] or {}).get("metadata", {}).get("name", ""),
            "origins": [],
            "extra_info": {**extra("Workload"), **extra("Implementation")},
        },
        "inputs": {},
        "dependencies": {name: {"repo": "", "branch": "", "sha": "", "version": version, "extra_info": {}}
                         for name, version in sorted((environment.get("software") or {}).items())},
        "metric": {
            "name": name,
            "benchmark_values": values,
            "target_value": 0,
            "extra_info": {"kidx.run": _portable(run), "status": str(spec.get("status", "")),
                           **({"unit": unit} if unit else {})},
        },
    }


def _figure(spec: dict) -> tuple[str, str | None, list]:
    """The metric's name, its unit (``metric.extra_info.unit``; None for a latency, whose
    name says it) and its values: the samples, else the primary statistic alone."""
    samples = spec.get("samples") or {}
    timing = spec.get("timing") or {}
    latency = timing.get("latencyNs") or {}
    if latency or not (spec.get("memory") or spec.get("measurements")):
        primary = latency.get(timing.get("primaryStatistic") or "median")
        if samples.get("metric") == "latency" and samples.get("unit") == "ns" and samples.get("values"):
            return "latency_ns", None, list(samples["values"])
        return "latency_ns", None, [] if primary is None else [primary]
    memory = spec.get("memory") or {}
    if isinstance(memory.get("peakAllocatedBytes"), dict):
        primary = memory["peakAllocatedBytes"].get(memory.get("primaryStatistic") or "median")
        return "peak_memory", "bytes", [] if primary is None else [primary]
    entries = [e for e in spec.get("measurements") or () if isinstance(e, dict) and e.get("value") is not None]
    if not entries:
        return "latency_ns", None, []
    metric = entries[0].get("metric")
    entry = next((e for e in entries if e.get("metric") == metric and e.get("statistic") == "median"), entries[0])
    if (samples.get("metric") == metric and samples.get("unit") == entry.get("unit") and samples.get("values")):
        return str(metric), str(entry.get("unit")), list(samples["values"])
    return str(metric), str(entry.get("unit")), [entry["value"]]


def _epoch(observed: Any) -> int:
    if not isinstance(observed, str):
        return 0
    try:
        return int(datetime.fromisoformat(observed.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0
