"""Convert NVIDIA NVBench JSON (``--json FILE`` or ``--jsonbin FILE``) into kidx manifests.

NVBench (the C++ library, and its Python package ``cuda-bench``) writes one JSON file per
program run: ``meta`` (argv, versions), ``devices`` (what CUDA reports for each GPU) and
``benchmarks``, each with its ``axes`` and one ``state`` per combination of axis values
and device. A state's ``summaries`` hold the cold (isolated) measurement: GPU time from
CUDA events (``nv/cold/time/gpu/{mean,min,max,median,q1,q3,stdev/absolute}``), CPU time,
the sample count and, with ``--jsonbin``, the name of a side file of raw sample times
(little-endian float32 seconds, relative to the JSON file's folder).

Output, per state: one BenchmarkRun (GPU-time summaries in ns, mean as the headline,
as NVBench reports it; the samples when the side file is there), a Workload (the
benchmark and its axis values, and as ``spec.cost.bytes`` the global memory reads and
writes the benchmark declared, when it declared any), an ExecutionEnvironment per device (the GPU only, as for
Liger: pass ``--environment`` to point runs at a captured one) and one
BenchmarkProtocol per NVBench version. NVBench knows no implementation, so runs have
none; an axis that names one (a "Provider" axis, say) stays a workload parameter.

Identity: NVBench records no time, so a state's externalId is
``{benchmark}/{state name}/{gpu}/{12 hex of its summaries}``: the same file imported
twice gives the same runs, a new measurement new ones. Skipped states become runs with
status skipped and NVBench's reason.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import struct
from typing import Any

from kidx.formats.framework import (
    FormatDoc,
    JsonConverter,
    LineFinder,
    gpu_mismatches,
    hashed_name,
    manifest,
    protocol,
    slug,
)
from kidx.formats.gpus import canonical_gpu_name, gpu_hardware
from kidx.manifests.reader import InputTooLarge, read_bounded
from kidx.manifests.values import INT64_MAX, INT64_MIN
from kidx.units import TIME_UNITS

SOURCE_NAME = "nvbench"
FAMILY = "nvbench"
REPOSITORY = "https://github.com/NVIDIA/nvbench"
WHAT = "NVBench JSON (written with --json FILE)"
SUPPORTED_JSON_MAJOR = 1
# summary tag -> latencyNs statistic
_GPU_TIME = {
    "nv/cold/time/gpu/mean": "mean", "nv/cold/time/gpu/min": "min", "nv/cold/time/gpu/max": "max",
    "nv/cold/time/gpu/median": "median", "nv/cold/time/gpu/stdev/absolute": "stddev",
}
# summary tag -> (metric, statistic, unit, scale) for spec.measurements
_MEASUREMENTS = {
    "nv/cold/time/gpu/q1": ("latency", "p25", "ns", TIME_UNITS["s"]),
    "nv/cold/time/gpu/q3": ("latency", "p75", "ns", TIME_UNITS["s"]),
    "nv/cold/time/gpu/iqr/absolute": ("latency", "iqr", "ns", TIME_UNITS["s"]),
    "nv/cold/time/cpu/mean": ("cpu_latency", "mean", "ns", TIME_UNITS["s"]),
    "nv/cold/time/cpu/median": ("cpu_latency", "median", "ns", TIME_UNITS["s"]),
    "nv/cold/sample_size": ("samples", "count", "count", 1),
    "nv/cold/bw/global/bytes_per_second": ("global_memory_bandwidth", "mean", "bytes/s", 1),
    "nv/cold/bw/item_rate": ("throughput", "mean", "items/s", 1),
}
_SAMPLE_TIMES = "file/sample_times"

FORMAT_DOC = FormatDoc(
    reads="NVIDIA NVBench's `--json FILE` / `--jsonbin FILE` output ([nvbench](#nvbench))",
    one_run_per="benchmark state",
    fields=(
        ("NVBench", "kidx"),
        ("`nv/cold/time/gpu/{mean,min,max,median,stdev/absolute}` (seconds)",
         "`spec.timing.latencyNs` in ns; the mean is the headline, as in NVBench's tables"),
        ((
            "`nv/cold/time/gpu/{q1,q3,iqr/absolute}`, `nv/cold/time/cpu/{mean,median}`, `nv/cold/sample_size`, "
            "`nv/cold/bw/global/bytes_per_second`, `nv/cold/bw/item_rate`"
        ),
         (
             "`spec.measurements` (`latency` `p25`/`p75`/`iqr`, `cpu_latency`, `samples` count, "
             "`global_memory_bandwidth` in bytes/s, `throughput` in items/s: `kidx compare --metric` judges runs "
             "by either, more being better)"
         )),
        ("the `--jsonbin` side file of sample times", "`spec.samples` (ns)"),
        ("every numeric summary, the state's name and settings",
         "`spec.sourceNative` (`metrics` keyed by tag, `state`, `settings`)"),
        ("`devices[]`",
         (
             "an ExecutionEnvironment per GPU (vendor, product, form factor, `sm_version` → architecture), named "
             "`nvbench-<gpu slug>`; or the one given with `--environment`"
         )),
        ("NVBench version",
         "a BenchmarkProtocol (`nvbench-cold-<version>`: cold, isolated launches timed with CUDA events)"),
        ("benchmark name and axis values", "a Workload (`parameters` typed as the axes are: int64, float64, string)"),
        ((
            "`nv/gmem/reads/…` and `nv/gmem/writes/…` (the global memory a state declared with "
            "`add_global_memory_reads`/`_writes`)"
        ),
         (
             "their sum as the Workload's `spec.cost.bytes`, the declared cost of one launch ([speed of "
             "light](../speed-of-light.md#what-an-invocation-costs)); absent when the benchmark declared none"
         )),
        ("`is_skipped`, `skip_reason`", "`spec.status: skipped` with `spec.failure.message`"),
    ),
)


# runs must have run on the GPU an attached environment describes
check_environment = gpu_mismatches


class _Converter(JsonConverter):
    what, noun, fallback_name = WHAT, "states", "nvbench"

    def add(self, path: str, data: Any, text: str) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
            self.problem(path, 1, None, f"not {WHAT}: expected an object with a benchmarks list")
            return
        version = _get(data, "meta", "version", "json", "major")
        if isinstance(version, int) and version != SUPPORTED_JSON_MAJOR:
            self.problem(path, 1, "meta.version.json",
                         f"NVBench JSON format {version}.x is not supported (kidx reads {SUPPORTED_JSON_MAJOR}.x)")
            return
        devices = {d.get("id"): d for d in data.get("devices") or [] if isinstance(d, dict)}
        nvbench_version = _get(data, "meta", "version", "nvbench", "string") or "unknown"
        lines = LineFinder(text)
        for b_index, benchmark in enumerate(data["benchmarks"]):
            where = f"benchmarks[{b_index}]"
            if not isinstance(benchmark, dict) or not isinstance(benchmark.get("name"), str):
                self.problem(path, None, where, "a benchmark needs a name")
                continue
            lines.line_of("name", benchmark["name"])
            for s_index, state in enumerate(benchmark.get("states") or []):
                self.read += 1
                state_where = f"{where}.states[{s_index}]"
                line = lines.line_of("name", state.get("name")) if isinstance(state, dict) else None
                try:
                    self._state(path, line or 1, state_where, benchmark, state, devices, nvbench_version)
                except _StateProblem as exc:
                    field_path = state_where + (f".{exc.field}" if exc.field else "")
                    self.problem(path, line, field_path, exc.message)

    def _state(self, path, line, where, benchmark, state, devices, nvbench_version) -> None:
        if not isinstance(state, dict) or not isinstance(state.get("name"), str):
            raise _StateProblem(None, "a state needs a name")
        device = devices.get(state.get("device"))
        if device is None or not isinstance(device.get("name"), str):
            raise _StateProblem("device", f"device {state.get('device')!r} is not in the file's devices list")
        summaries = _summaries(state.get("summaries") or [])
        parameters = _parameters(state.get("axis_values") or [])
        bench_name = benchmark["name"]
        gpu = device["name"]
        fingerprint = hashlib.sha256(
            json.dumps(state.get("summaries"), sort_keys=True).encode("utf-8")).hexdigest()[:12]
        state_key = " ".join(f"{name}={_shown(value)}" for name, value in parameters.items())
        external_id = "/".join([bench_name, state_key or "default", slug(gpu), fingerprint])
        if not self.first_sighting(external_id, path, line):
            return
        position = (path, 1, line)
        protocol = self.shared.add("BenchmarkProtocol", (nvbench_version,), position,
                                   lambda: _protocol(nvbench_version))
        environment = self.shared.add("ExecutionEnvironment", (gpu, device.get("sm_version")), position,
                                      lambda: _environment(device))
        moved = _declared_bytes(summaries)
        workload = self.shared.add("Workload", (bench_name, json.dumps(parameters, sort_keys=True), moved), position,
                                   lambda: _workload(bench_name, parameters, state_key, moved))
        spec: dict[str, Any] = {}
        if state.get("is_skipped"):
            spec["status"] = "skipped"
            spec["failure"] = {"reason": "Skipped", "message": str(state.get("skip_reason") or "")}
        else:
            latency = {stat: _ns(summaries[tag], TIME_UNITS["s"]) for tag, stat in _GPU_TIME.items()
                       if _finite(summaries.get(tag))}
            if "mean" not in latency:
                spec["status"] = "failed"
                spec["failure"] = {"reason": "MissingMeasurement",
                                   "message": "the state has no nv/cold/time/gpu/mean summary"}
            else:
                spec["status"] = "passed"
                spec["timing"] = {"latencyNs": latency, "primaryStatistic": "mean"}
            measurements = [
                {"metric": metric, "statistic": statistic, "unit": unit, "value": _ns(summaries[tag], scale)}
                for tag, (metric, statistic, unit, scale) in _MEASUREMENTS.items() if _finite(summaries.get(tag))
            ]
            if measurements:
                spec["measurements"] = measurements
            samples = self._samples(path, line, state.get("summaries") or [])
            if samples is not None:
                spec["samples"] = {"metric": "latency", "unit": "ns", "values": samples}
        spec["sourceNative"] = {
            "source": SOURCE_NAME,
            "benchmark": bench_name,
            "externalId": external_id,
            "metrics": {tag: value for tag, value in summaries.items() if _finite(value)},
            "state": state["name"],
            "settings": {key: state[key] for key in (
                "min_samples", "cold_warmup_runs", "cold_max_warmup_walltime", "batch_target_time",
                "skip_time", "timeout") if key in state},
        }
        spec["protocolDigest"] = protocol
        spec["workloadDigest"] = workload
        spec["environmentDigest"] = environment
        labels = {"benchmark": bench_name, "gpu": slug(canonical_gpu_name(gpu) or gpu),
                  "nvbench_version": nvbench_version}
        self.add_run(spec, (path, line), ("nvbench/" + external_id, external_id),
                     f"{bench_name} · {state_key or 'default'} · {gpu}", labels)

    def _samples(self, path: str, line: int, raw_summaries: list) -> list[float] | None:
        for s_index, summary in enumerate(raw_summaries):
            if not isinstance(summary, dict) or summary.get("hint") != _SAMPLE_TIMES:
                continue
            data_items = summary.get("data") or []
            values = {item.get("name"): (position, item.get("value"))
                      for position, item in enumerate(data_items) if isinstance(item, dict)}
            position, filename = values.get("filename", (None, None))
            if not isinstance(filename, str):
                return None
            field = f"summaries[{s_index}].data[{position}].value"
            side = _side_file(path, filename, field)
            try:
                data = read_bounded(side, regular_only=True)
            except FileNotFoundError as exc:
                self.notes.append(f"{path}, line {line}: samples not imported: cannot read {side} "
                                  f"({exc.strerror or exc})")
                return None
            except OSError as exc:
                raise _StateProblem(field, f"cannot read the side file {side}: {exc.strerror or exc}") from None
            except InputTooLarge as exc:
                raise _StateProblem(field, f"the side file {side}: {exc.message}") from None
            if len(data) % 4:
                raise _StateProblem(field, f"{side} is not a whole number of float32 samples ({len(data)} bytes)")
            seconds = struct.unpack(f"<{len(data) // 4}f", data)
            if any(not math.isfinite(s) or s < 0 for s in seconds):
                raise _StateProblem(field, f"{side} holds a negative or non-finite sample time")
            return [round(s * TIME_UNITS["s"], 3) for s in seconds]
        return None


convert_files = _Converter.convert_files


def _side_file(path: str, filename: str, field: str) -> str:
    """The side file ``filename`` names, which must lie inside the JSON file's folder:
    an absolute name, a ``..`` or a symbolic link leading out of it is refused (a
    crafted file must not import ``/proc/self/environ`` as samples)."""
    folder = os.path.dirname(path)
    side = os.path.join(folder, filename)
    inside = os.path.realpath(folder or ".")
    if os.path.isabs(filename) or os.path.commonpath([inside, os.path.realpath(side)]) != inside:
        raise _StateProblem(field, f"the side file {filename!r} is outside the folder of {path}; "
                                   "kidx reads side files only from beside the JSON file")
    return side


class _StateProblem(Exception):
    def __init__(self, field: str | None, message: str):
        self.field, self.message = field, message


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _summaries(raw: list) -> dict[str, float]:
    """tag -> the summary's number (NVBench writes numbers as strings, to keep int64s exact)."""
    result: dict[str, float] = {}
    for summary in raw:
        if not isinstance(summary, dict) or not isinstance(summary.get("tag"), str):
            raise _StateProblem("summaries", "a summary needs a tag")
        for item in summary.get("data") or []:
            if isinstance(item, dict) and item.get("name") == "value" and item.get("type") in ("int64", "float64"):
                try:
                    number = int(item["value"]) if item["type"] == "int64" else float(item["value"])
                except (TypeError, ValueError):
                    message = f"{summary['tag']}: {item.get('value')!r} is not a number"
                    raise _StateProblem("summaries", message) from None
                if isinstance(number, int) and not _storable(number):
                    raise _StateProblem("summaries", f"{summary['tag']}: {item['value']!r} {_unstorable(number)}")
                result[summary["tag"]] = number
    return result


def _parameters(axis_values: list) -> dict[str, Any]:
    parameters: dict[str, Any] = {}
    for item in axis_values:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise _StateProblem("axis_values", "an axis value needs a name")
        kind = item.get("type")
        value: Any = item.get("value")
        try:
            if kind == "int64":
                value = int(value)
            elif kind == "float64":
                value = float(value)
            else:
                value = str(value)
        except (TypeError, ValueError):
            raise _StateProblem("axis_values", f"axis {item['name']}: {value!r} is not a {kind}") from None
        if not _storable(value):
            raise _StateProblem("axis_values", f"axis {item['name']}: {item.get('value')!r} {_unstorable(value)}")
        parameters[item["name"]] = value
    return parameters


def _storable(value: Any) -> bool:
    """A value apply can store: an integer of 64 bits, a finite float, a string."""
    if isinstance(value, int):
        return INT64_MIN <= value <= INT64_MAX
    return not isinstance(value, float) or math.isfinite(value)


def _unstorable(value: int | float) -> str:
    if isinstance(value, int):
        return "is out of range (an int64 must fit in 64 bits)"
    return "is not a finite number (NaN and infinities cannot be stored)"


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value >= 0


def _ns(value: float, scale: float) -> float | int:
    scaled = value * scale
    return int(scaled) if isinstance(value, int) and scale == 1 else round(scaled, 3)


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _protocol(version: str) -> tuple[str, dict]:
    name = "nvbench-cold-" + slug(version)
    measurement = {
        "metric": "latency", "timer": "cuda_events", "primaryStatistic": "mean",
        "method": "cold: each sample one isolated launch, L2 flushed before it, timed with CUDA events",
    }
    notes = ("GPU time of isolated (cold) executions as NVBench measures them: samples are taken until the relative "
             "noise or the timeout criterion stops; the mean is the headline, as in NVBench's own tables. Comparable "
             "within one benchmark, axis values and GPU.")
    harness = {"name": "NVBench", "repository": REPOSITORY, "version": version}
    return protocol(name, f"NVBench {version} · cold GPU time", harness, measurement, FAMILY, notes)


def _environment(device: dict) -> tuple[str, dict]:
    gpu = device["name"]
    sm = device.get("sm_version")
    hardware = gpu_hardware(gpu, f"sm_{sm // 10}" if isinstance(sm, int) and sm > 0 else None)
    canonical = canonical_gpu_name(gpu)
    name = "nvbench-" + slug(canonical) if canonical else hashed_name("nvbench-" + slug(gpu), gpu, 100)
    return name, manifest("ExecutionEnvironment", name, f"NVBench host · {gpu}", {"hardware": hardware, "software": {}})


def _declared_bytes(summaries: dict[str, float]) -> int | None:
    """The global memory reads and writes the benchmark declared (``nv/gmem/reads/…``,
    ``nv/gmem/writes/…``, bytes per launch), summed; None when it declared none."""
    declared = [value for tag, value in summaries.items()
                if tag.startswith(("nv/gmem/reads/", "nv/gmem/writes/")) and type(value) is int and value >= 0]
    return sum(declared) if declared else None


def _workload(benchmark: str, parameters: dict, key: str, moved: int | None) -> tuple[str, dict]:
    spec: dict[str, Any] = {"family": FAMILY, "operation": benchmark, "parameters": parameters}
    if key:
        spec["key"] = key
    if moved is not None:  # docs/speed-of-light.md: a declared cost wins over any formula
        spec["cost"] = {"bytes": moved}
    name = "nvbench-" + slug(benchmark + "-" + key)
    title = " · ".join([benchmark, *(f"{k} {_shown(v)}" for k, v in parameters.items())])
    return name, manifest("Workload", name, title, spec)
