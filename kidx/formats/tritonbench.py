"""Convert tritonbench results (PyTorch's Triton operator suite) into kidx manifests.

tritonbench (github.com/pytorch-labs/tritonbench) runs one operator (``--op softmax``)
in one mode (``--mode fwd|bwd|fwd_bwd|fwd_no_grad``) over a list of inputs and backends,
and writes its table in two shapes:

- ``--csv``: ``;``-separated, a header of the operator's x-value name (``x_val``,
  ``(M, N)``, …) then one ``<backend>-<metric>`` column per backend and metric; one row
  per input and a last ``average`` row. A backend that failed on an input leaves its
  error text (``CUDA OOM``) in its first cell and the others empty. The CSV names neither
  the operator nor the mode: they are given with ``--op`` and ``--mode``.
- JSON (``--output-json``, and the nightly run's ``result.json``, which adds ``env``,
  ``nvidia_gpu_states``, ``github`` and per-operator ``…-pass`` flags around a ``metrics``
  map): flat keys ``tritonbench_<op>_<mode>[x_<input>-<backend>]_<metric>``, plus the
  per-backend averages ``tritonbench_<op>_<mode>[<backend>]-<metric>-avg``. A value
  that is a list holds one value per repeat (the A/B mode's ``--ab-repeat``).

Output, per (input, backend, metric) value: one BenchmarkRun. ``latency`` and
``walltime`` (milliseconds) are the headline ``spec.timing.latencyNs.median``; tflops,
gbps, speedup, accuracy and peak memory are measurements in kidx's units; every
metric keeps its raw value in ``spec.sourceNative.metrics``. Averages and pass flags
are not runs. An error text in a cell is a failed run with the text as its message,
never a 0. A Workload per (operator, mode, input), an Implementation per (operator,
backend), a BenchmarkProtocol per metric, and an ExecutionEnvironment from ``env``
(device, CUDA version and the pytorch/triton/tritonbench commits are its identity;
branches, commit times and the conda environment are annotations); the GPU states
``nvidia_gpu_states`` (power, temperature, clocks at the time of the run) belong to the
run and stay in its ``sourceNative``.

Identity: a run's externalId is ``<op>_<mode>/<input>/<backend>/<metric>/<when>``, where
``<when>`` is ``env.benchmark_date`` when the file has one, else 12 hex digits of the
value: the same file imported twice gives the same runs.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
import statistics
from typing import Any

from kidx.errors import UsageError
from kidx.formats.framework import (
    Conversion,
    FormatDoc,
    JsonConverter,
    LineFinder,
    gpu_mismatches,
    hashed_name,
    manifest,
    protocol,
    raise_if_problems,
    read_json,
    read_text,
    slug,
)
from kidx.formats.gpus import canonical_gpu_name, gpu_hardware
from kidx.units import TIME_UNITS

SOURCE_NAME = "tritonbench"
FAMILY = "tritonbench"
REPOSITORY = "https://github.com/pytorch-labs/tritonbench"
WHAT = "tritonbench results (a ';'-separated --csv table, or --output-json / result.json)"
MODES = ("fwd_no_grad", "fwd_bwd", "fwd", "bwd")  # longest first: a name ending _fwd_bwd also ends _bwd
# metric -> (kidx metric, unit, scale to the unit) for spec.measurements
_MEASURES = {
    "tflops": ("throughput", "flop/s", 1e12),
    "gbps": ("memory_bandwidth", "bytes/s", 1e9),
    "speedup": ("speedup", "ratio", 1),
    "accuracy": ("accuracy", "ratio", 1),
    "gpu_peak_mem": ("peak_memory", "bytes", 1e9),
    "cpu_peak_mem": ("cpu_peak_memory", "bytes", 1e9),
    "compile_time": ("compile_time", "ns", TIME_UNITS["ms"]),
    "cuda_time": ("cuda_time", "ns", TIME_UNITS["ms"]),
}
_TIMED = {"latency": "cuda_events", "walltime": "wall_clock"}  # metric -> timer; headline latency in ms
_PER_INPUT = re.compile(r"tritonbench_(?P<bench>.+?)\[x_(?P<input>.*)-(?P<backend>[^\[\]-]+)\]_(?P<metric>.+)\Z", re.S)
_AVERAGE = re.compile(r"tritonbench_.+\[[^\[\]]*\]-.+-avg\Z", re.S)
_PASS = re.compile(r"tritonbench_(?P<bench>.+)-pass\Z", re.S)
_ENV_VERSIONS = (("cuda_version", "cuda"), ("pytorch_commit", "pytorch"), ("triton_commit", "triton"),
                 ("tritonbench_commit", "tritonbench"))
_ENV_NOTES = ("pytorch_branch", "triton_branch", "tritonbench_branch", "pytorch_commit_time", "triton_commit_time",
              "tritonbench_commit_time", "conda_env")

FORMAT_DOC = FormatDoc(
    reads="tritonbench's `--csv` tables, `--output-json` files and nightly `result.json` ([tritonbench](#tritonbench))",
    one_run_per="(input, backend, metric) value",
    fields=(
        ("tritonbench", "kidx"),
        ((
            "`latency`, `walltime` (milliseconds; the latency is the median of do_bench's samples left after removing "
            "those beyond 1.5 IQR)"
        ),
         "`spec.timing.latencyNs.median` (ns), the headline"),
        ("`tflops`, `gbps`, `speedup`, `accuracy`, `gpu_peak_mem`, `cpu_peak_mem`, `compile_time`, `cuda_time`",
         (
             "`spec.measurements`: `throughput` (flop/s), `memory_bandwidth` (bytes/s), `speedup` and `accuracy` "
             "(ratio), `peak_memory` and `cpu_peak_memory` (bytes), `compile_time` and `cuda_time` (ns)"
         )),
        ("every value as written",
         (
             "`spec.sourceNative.metrics` (keyed by tritonbench's metric name, in its units), with `input`, `metric` "
             "and the JSON `key`"
         )),
        ("a list of values (one per repeat, the A/B mode's `--ab-repeat`)",
         "`spec.samples` (latency), their median the headline"),
        ("a cell or value holding an error text (`CUDA OOM`)",
         (
             "a run with `spec.status: failed`, `failure.reason: BackendError` and the text as `failure.message`; "
             "never a 0"
         )),
        ("the operator, the mode and the input's x-value",
         "a Workload (`operation`; parameters `mode` and `input`, the x-value's text)"),
        ("the backend", "an Implementation (library `tritonbench`, `operation`, `variant`: the backend)"),
        ("the metric", "a BenchmarkProtocol per metric (`tritonbench-latency`, …)"),
        ("`env`: `device`, `cuda_version`, `pytorch_commit`, `triton_commit`, `tritonbench_commit`",
         (
             "an ExecutionEnvironment: the GPU, and software `cuda`, `pytorch`, `triton`, `tritonbench` (its "
             "identity); branches, commit times and `conda_env` are annotations. Without `env` (a CSV, an "
             "`--output-json` file): `tritonbench-unknown-gpu`; import with `--environment`"
         )),
        ("`env.benchmark_date`", "`spec.observedAt`"),
        ("`nvidia_gpu_states` (power, temperatures, clocks when the run ended)",
         "`spec.sourceNative.gpuStates`: what the GPU was doing belongs to the run, not to the machine"),
        ("op, mode, backend, metric, GPU", "labels `op`, `mode`, `backend`, `metric`, `gpu`"),
    ),
    not_carried=(
        "the samples (tritonbench keeps only the median of its IQR-filtered samples)",
        "whether the timer replayed a CUDA graph (--cudagraph) or called do_bench",
        "warm-up and repetition settings",
        "the operator's and the inputs' shapes beyond the x-value's text",
    ),
)

# runs must have run on the GPU an attached environment describes
check_environment = gpu_mismatches


def convert_files(paths: list[str], op: str | None = None, mode: str | None = None) -> Conversion:
    if mode is not None and mode not in MODES:
        raise UsageError(f"--mode {mode}: one of {', '.join(sorted(MODES))}")
    return _Converter(op, mode).convert(paths)


class _Value:
    """One (input, backend, metric) value of a file, where it was read, and what it says."""

    def __init__(self, line: int, key: str, op: str, mode: str | None, x_val: str, backend: str, metric: str,
                 value: Any):
        self.line, self.key, self.op, self.mode = line, key, op, mode
        self.x_val, self.backend, self.metric, self.value = x_val, backend, metric, value


class _Converter(JsonConverter):
    what, noun, fallback_name = WHAT, "values", "tritonbench"

    def __init__(self, op: str | None, mode: str | None):
        super().__init__()
        self.op, self.mode = op, mode

    def convert(self, paths: list[str]) -> Conversion:
        for path in paths:
            text = read_text(path, self.problems)
            if text is None:
                continue
            if text.lstrip().startswith(("{", "[")):
                loaded = read_json(path, self.problems, self.what)
                if loaded is not None:
                    self.add(path, *loaded)
            else:
                self._csv(path, text)
        raise_if_problems(self.problems)
        return super().convert([])

    # --- CSV ---------------------------------------------------------------------------

    def _csv(self, path: str, text: str) -> None:
        if not self.op:
            self.problem(path, None, None, "a tritonbench CSV does not name its operator: give --op NAME "
                                                     "(and --mode)")
            return
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))
        if not rows or len(rows[0]) < 2:
            self.problem(path, 1, None, f"not {WHAT}: expected a header of the x-value's name, then "
                                                  "<backend>-<metric> columns")
            return
        header = rows[0]
        columns: list[tuple[str, str] | None] = []
        for index, name in enumerate(header[1:], start=2):
            backend, dash, metric = name.partition("-")
            if not dash or not backend or not metric:
                if index == 2 or "-" in name:
                    self.problem(path, 1, f"column {index}",
                                 f"{name!r} is not a <backend>-<metric> column")
                columns.append(None)  # an x-only metric (tritonbench writes them before the backends')
                continue
            columns.append((backend, metric))
        failed = 0
        for line, row in enumerate(rows[1:], start=2):
            if not row or not any(cell.strip() for cell in row):
                continue
            if row[0] in ("average", "hashes"):
                continue
            if len(row) != len(header):
                self.problem(path, line, None, f"has {len(row)} cells; the header has {len(header)}")
                continue
            for column, cell in zip(columns, row[1:], strict=True):
                if column is None or not cell.strip():
                    continue
                self.read += 1
                value = _number(cell)
                if value is None and _looks_numeric(cell):
                    self.problem(path, line, f"{column[0]}-{column[1]}",
                                 f"{cell!r} is not a finite number")
                    continue
                failed += value is None
                self._run(path, _Value(line, "", self.op, self.mode, row[0], column[0], column[1],
                                       cell if value is None else value), {}, None)
        if failed:
            self.notes.append(f"{path}: {failed} cells hold an error text instead of a value; "
                              "they are failed runs, not values")

    # --- JSON --------------------------------------------------------------------------

    def add(self, path: str, data: Any, text: str) -> None:
        if not isinstance(data, dict):
            self.problem(path, 1, None, f"not {WHAT}: expected an object of metrics")
            return
        nightly = isinstance(data.get("metrics"), dict)
        metrics = data["metrics"] if nightly else data
        env: dict = data["env"] if nightly and isinstance(data.get("env"), dict) else {}
        gpu_states = data.get("nvidia_gpu_states") if nightly else None
        prefix = "metrics." if nightly else ""
        failed = 0
        lines = LineFinder(text)  # the keys in the order the file has them: found in one pass over it
        for key, value in metrics.items():
            line = lines.find_key(key) or 1
            match = _PER_INPUT.match(key) if isinstance(key, str) else None
            if match is None:
                passed = _PASS.match(key)
                if passed and value == 0:
                    self.notes.append(f"{path}, line {line}: {passed['bench']} did not run (its pass flag is 0)")
                elif not passed and not _AVERAGE.match(key) and key.startswith("tritonbench_"):
                    self.problem(path, line, f"{prefix}{json.dumps(key)}",
                                 "is neither tritonbench_<op>_<mode>[x_<input>-<backend>]_<metric>, an average nor a "
                                 "pass flag")
                elif not key.startswith("tritonbench_"):
                    self.problem(path, line, f"{prefix}{json.dumps(key)}",
                                 f"not {WHAT}: a key must start with tritonbench_")
                continue
            if value is None:
                continue
            self.read += 1
            where = f"{prefix}{json.dumps(key)}"
            if isinstance(value, list):
                if not value or not all(_finite(v) for v in value):
                    self.problem(path, line, where, "a list of repeats must hold finite numbers only")
                    continue
            elif isinstance(value, bool):
                value = 1.0 if value else 0.0
            elif isinstance(value, (int, float)):
                if not math.isfinite(value):
                    self.problem(path, line, where, f"{value!r} is not a finite number")
                    continue
            elif isinstance(value, str):
                number = _number(value)
                if number is None and _looks_numeric(value):
                    self.problem(path, line, where, f"{value!r} is not a finite number")
                    continue
                failed += number is None
                value = value if number is None else number
            else:
                self.problem(path, line, where, "must be a number, a list of numbers or an error text")
                continue
            op, mode = _op_and_mode(match["bench"], self.mode)
            self._run(path, _Value(line, key, op, mode, match["input"], match["backend"], match["metric"], value),
                      env, gpu_states)
        if failed:
            self.notes.append(f"{path}: {failed} values are an error text instead of a number; "
                              "they are failed runs, not values")

    # --- one run -----------------------------------------------------------------------

    def _run(self, path: str, item: _Value, env: dict, gpu_states: Any) -> None:
        bench = f"{item.op}_{item.mode}" if item.mode else item.op
        when = str(env.get("benchmark_date") or "") or hashlib.sha256(
            json.dumps(item.value).encode("utf-8")).hexdigest()[:12]
        external_id = "/".join([bench, item.x_val, item.backend, item.metric, when])
        if not self.first_sighting(external_id, path, item.line):
            return
        position = (path, 1, item.line)
        protocol = self.shared.add("BenchmarkProtocol", (item.metric,), position, lambda: _protocol(item.metric))
        device = str(env.get("device") or "")
        env_key = json.dumps({k: env.get(k) for k, _ in _ENV_VERSIONS} | {"device": device}, sort_keys=True)
        environment = self.shared.add("ExecutionEnvironment", (env_key,), position, lambda: _environment(env))
        workload = self.shared.add("Workload", (item.op, item.mode, item.x_val), position,
                                   lambda: _workload(item.op, item.mode, item.x_val))
        implementation = self.shared.add("Implementation", (item.op, item.backend), position,
                                         lambda: _implementation(item.op, item.backend))
        spec: dict[str, Any] = {}
        value = item.value
        if isinstance(value, str):
            spec["status"] = "failed"
            spec["failure"] = {"reason": "BackendError", "message": value}
        else:
            spec["status"] = "passed"
            spec.update(_figures(item.metric, value))
        observed = _observed_at(env.get("benchmark_date"))
        if observed:
            spec["observedAt"] = observed
        native: dict[str, Any] = {
            "source": SOURCE_NAME,
            "benchmark": f"{bench}/{item.backend}",
            "externalId": external_id,
            "metric": item.metric,
            "input": item.x_val,
        }
        if not isinstance(value, str):
            native["metrics"] = {item.metric: statistics.median(value) if isinstance(value, list) else value}
        if isinstance(value, list):
            native["repeats"] = value
        if item.key:
            native["key"] = item.key
        if gpu_states:
            native["gpuStates"] = gpu_states
        spec["sourceNative"] = native
        spec["protocolDigest"] = protocol
        spec["workloadDigest"] = workload
        spec["environmentDigest"] = environment
        spec["implementationDigest"] = implementation
        labels = {"op": item.op, "mode": item.mode or "", "backend": item.backend, "metric": item.metric,
                  "gpu": slug(canonical_gpu_name(device) or device) if device else ""}
        self.add_run(spec, (path, item.line), ("tritonbench/" + external_id, external_id),
                     f"{bench} · {item.x_val} · {item.backend} · {item.metric}", labels)


def _figures(metric: str, value: float | list[float]) -> dict[str, Any]:
    values = value if isinstance(value, list) else [value]
    median = statistics.median(values)
    figures: dict[str, Any] = {}
    if metric in _TIMED:
        ns = [round(v * TIME_UNITS["ms"], 3) for v in values]
        figures["timing"] = {"latencyNs": {"median": round(median * TIME_UNITS["ms"], 3)}, "primaryStatistic": "median"}
        if len(ns) > 1:
            figures["timing"]["latencyNs"].update(min=min(ns), max=max(ns))
            figures["samples"] = {"metric": "latency", "unit": "ns", "values": ns}
        return figures
    if metric in _MEASURES:
        name, unit, scale = _MEASURES[metric]
        scaled = median * scale
        figures["measurements"] = [{"metric": name, "statistic": "median", "unit": unit,
                                    "value": int(round(scaled)) if unit == "bytes" else round(scaled, 6)}]
    return figures


def _number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _looks_numeric(text: str) -> bool:
    """A cell meant as a number (``nan``, ``inf``, ``1e400``), not an error text."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _op_and_mode(bench: str, given: str | None) -> tuple[str, str | None]:
    for mode in MODES:
        if bench.endswith("_" + mode):
            return bench[: -len(mode) - 1], mode
    return bench, given


_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T_ ](\d{2})[:-](\d{2})[:-](\d{2})")


def _observed_at(text: Any) -> str | None:
    """``benchmark_date`` (``2025-01-31T12:00:00`` or ``2025-01-31_12-00-00``, UTC) as RFC 3339."""
    match = _DATE.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    year, month, day, hour, minute, second = match.groups()
    return f"{year}-{month}-{day}T{hour}:{minute}:{second}Z"


def _protocol(metric: str) -> tuple[str, dict]:
    measurement: dict[str, Any] = {"primaryStatistic": "median"}
    if metric in _TIMED:
        measurement.update(metric="latency", timer="other" if metric == "latency" else "wall_clock")
        measurement["method"] = (
            "triton.testing.do_bench's samples (CUDA events), or CUDA-graph replays with --cudagraph (the file "
            "does not say which), with outliers beyond 1.5 IQR removed; the median of the rest"
            if metric == "latency" else "host wall-clock time around synchronised calls; the median")
    elif metric in ("tflops", "gbps"):
        measurement["metric"] = "throughput"
    elif metric in ("gpu_peak_mem",):
        measurement["metric"] = "peak_memory"
    notes = (f"tritonbench's {metric} of one backend on one input of one operator and mode; comparable within one "
             "operator, mode, input and GPU.")
    harness = {"name": "tritonbench", "repository": REPOSITORY}
    return protocol("tritonbench-" + slug(metric), f"tritonbench · {metric}", harness, measurement, FAMILY, notes)


def _environment(env: dict) -> tuple[str, dict]:
    device = str(env.get("device") or "")
    known = device and device != "unknown"
    hardware = gpu_hardware(device) if known else {"vendor": "unknown", "product": "unknown GPU"}
    software = {name: str(env[key]) for key, name in _ENV_VERSIONS
                if isinstance(env.get(key), (str, int, float)) and str(env[key]) not in ("", "unknown")}
    spec = {"hardware": hardware, "software": software}
    canonical = canonical_gpu_name(device) if known else None
    base = "tritonbench-" + (slug(canonical or device) if known else "unknown-gpu")
    body = manifest("ExecutionEnvironment", base, f"tritonbench host · {device if known else 'GPU not recorded'}",
                    spec)
    if software:
        from kidx.identity import digest_of

        base = hashed_name(base, digest_of(body), 100)
        body["metadata"]["name"] = base
    annotations = {f"kernelindex.dev/{key.replace('_', '-')}": str(env[key]) for key in _ENV_NOTES
                   if isinstance(env.get(key), (str, int, float)) and str(env[key]) not in ("", "unknown")}
    if annotations:
        body["metadata"]["annotations"] = annotations
    return base, body


def _workload(op: str, mode: str | None, x_val: str) -> tuple[str, dict]:
    parameters: dict[str, Any] = {"input": x_val}
    if mode:
        parameters["mode"] = mode
    key = f"{mode}/{x_val}" if mode else x_val
    spec: dict[str, Any] = {"family": FAMILY, "operation": op, "parameters": parameters, "key": key}
    base = slug(f"tritonbench-{op}-{mode or ''}-{x_val}")
    name = hashed_name(base, f"{op}/{key}", 100) if len(base) > 90 or slug(x_val) != x_val.lower() else base
    return name, manifest("Workload", name, f"{op} · {mode or 'mode not recorded'} · {x_val}", spec)


def _implementation(op: str, backend: str) -> tuple[str, dict]:
    spec = {"library": "tritonbench", "operation": op, "variant": backend}
    name = "tritonbench-" + slug(f"{op}-{backend}")
    return name, manifest("Implementation", name, f"{op} · {backend} (tritonbench)", spec)
