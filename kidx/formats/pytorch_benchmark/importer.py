"""Convert PyTorch's OSS benchmark records ("v3") into kidx manifests (writing them is
``exporter.py``'s).

PyTorch, vLLM, tritonbench, TorchAO and ExecuTorch upload their results as v3 records
(the column set of ClickHouse's ``benchmark.oss_ci_benchmark_v3``, documented in
pytorch/test-infra's ``clickhouse_db_schema/oss_ci_benchmark_v3/schema.sql``): a JSON list
of records, or JSON lines (ClickHouse's JSONEachRow), either of them gzipped. A record
has ``benchmark {name, mode, dtype, extra_info}``, ``model {name, type, backend,
origins, extra_info}``, ``inputs``, ``metric {name, benchmark_values, target_value,
extra_info}``, ``runners`` and ``dependencies`` (repo, branch, sha, version), and the
provenance ``repo``, ``head_branch``, ``head_sha``, ``workflow_id``, ``job_id`` and
``timestamp`` (seconds since the epoch).

Output, per record: one BenchmarkRun. ``metric.benchmark_values`` are its samples; a
metric whose name says it is a time with its unit (``latency_ms``, ``latency(ms)``,
``median_us``, ``time_ns``) is the headline ``spec.timing.latencyNs.median`` (and the
values its samples, in ns); a metric whose name or ``metric.extra_info.unit`` names
another unit (``_UNIT_WORDS``: ``gbps``, ``GB/s``, ``tflops``, ``tokens/s``, ``speedup``,
``peak_memory_gb``) is a measurement in kidx's units, its median the run's figure; any
other metric keeps its values in ``spec.sourceNative`` only. A key repeated in one
object is an error at its line. A Workload per (benchmark, mode, dtype, model), an
Implementation per (model type, model name, backend), a BenchmarkProtocol per
(benchmark, metric, ``benchmark.extra_info``) and an ExecutionEnvironment per runner and
dependencies (the GPU, else the CPU; the dependencies' versions or commits as software).

Records written by ``kidx export --format pytorch-benchmark`` carry the kidx objects they
came from in their ``extra_info`` maps (``kidx.run``, ``kidx.protocol``, …, canonical JSON
strings); those are read back as they are, so export then import gives the same runs,
digests included.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import re
import statistics
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kidx.errors import Location, Problem
from kidx.formats.framework import (
    Conversion,
    FormatDoc,
    JsonConverter,
    hashed_name,
    manifest,
    protocol,
    raise_if_problems,
    read_bytes,
    refused_lone_surrogate,
    repeated_key,
    slug,
)
from kidx.formats.gpus import canonical_gpu_name, gpu_hardware
from kidx.manifests.document import Document
from kidx.manifests.reader import InputTooLarge, max_input_size
from kidx.units import METRICS
from kidx.units import TIME_UNITS as _SCALE

SOURCE_NAME = "pytorch-benchmark"
FAMILY = "pytorch_benchmark"
WHAT = "PyTorch OSS benchmark records (v3: a JSON list or JSON lines, optionally gzipped)"
# extra_info keys under which kidx export keeps its own objects
KIDX_KEYS = {"run": "kidx.run", "BenchmarkProtocol": "kidx.protocol", "Workload": "kidx.workload",
             "Implementation": "kidx.implementation", "ExecutionEnvironment": "kidx.environment"}
# a unit as a v3 metric writes it (its ``extra_info.unit``, or its name's last word or
# parenthesis, lower case) -> (kidx metric, unit, scale to the unit): docs/commands/import.md
_UNIT_WORDS: dict[str, tuple[str, str, float]] = {
    **{unit: ("latency", "ns", scale) for unit, scale in _SCALE.items()},
    "bytes/s": ("memory_bandwidth", "bytes/s", 1),
    **{f"{prefix}b/s": ("memory_bandwidth", "bytes/s", scale)
       for prefix, scale in (("", 1), ("k", 1e3), ("m", 1e6), ("g", 1e9), ("t", 1e12))},
    "gbps": ("memory_bandwidth", "bytes/s", 1e9),
    **{f"{prefix}flop{s}": ("throughput", "flop/s", scale)
       for prefix, scale in (("", 1), ("g", 1e9), ("t", 1e12)) for s in ("s", "/s")},
    **dict.fromkeys(("tokens/s", "tok/s", "tokens_per_second", "tokens_per_sec"), ("throughput", "tokens/s", 1)),
    **dict.fromkeys(("items/s", "samples/s", "requests/s", "items_per_second", "samples_per_second",
                     "requests_per_second", "qps"), ("throughput", "items/s", 1)),
    **{unit: ("peak_memory", "bytes", scale) for unit, scale in (
        ("b", 1), ("bytes", 1), ("kb", 1e3), ("mb", 1e6), ("gb", 1e9), ("kib", 2**10), ("mib", 2**20),
        ("gib", 2**30))},
    **dict.fromkeys(("x", "ratio"), ("ratio", "ratio", 1)),
}
# a name's last parenthesis (``bandwidth(GB/s)``) or last word (``peak_memory_gb``)
_NAMED_UNIT = re.compile(r"\(([^()]+)\)\s*$|[_\s]([a-z/]+)\s*$")
# names that say what they measure without a unit of their own
_NAMED_METRICS = {"tokens_per_second": _UNIT_WORDS["tokens/s"], "items_per_second": _UNIT_WORDS["items/s"],
                  "bytes_per_second": _UNIT_WORDS["b/s"], "speedup": _UNIT_WORDS["ratio"],
                  "accuracy": _UNIT_WORDS["ratio"]}
_TIME = re.compile(r"(?:^|[_\W])(ms|us|ns|s)\W*$|\((ms|us|ns|s)\)")

FORMAT_DOC = FormatDoc(
    reads=(
        "PyTorch's OSS benchmark records (\"v3\"): a JSON list or JSON lines, optionally gzipped "
        "([pytorch-benchmark](#pytorch-benchmark))"
    ),
    one_run_per="record",
    fields=(
        ("v3", "kidx"),
        ("`metric.benchmark_values`",
         (
             "the samples (`spec.samples`) and their median the run's figure, where the metric's name or "
             "`metric.extra_info.unit` says what it measures (the table below): a time is the headline latency "
             "(`spec.timing.latencyNs`, in ns), any other metric a measurement in kidx's units (a bandwidth in "
             "bytes/s, a FLOP rate in flop/s, tokens/s, items/s, a speedup or accuracy as a ratio, a peak memory in "
             "bytes); a metric neither says (a bare `latency`) keeps its median in `spec.sourceNative.metrics` only"
         )),
        ("the whole record", "`spec.sourceNative.record`, as written"),
        ("`benchmark.name`, the metric's name, `benchmark.extra_info`",
         "a BenchmarkProtocol (the harness; the extra info as its method's settings)"),
        ("`model.name`, `benchmark.mode`, `benchmark.dtype`",
         "a Workload (`operation`; parameters `benchmark`, `mode`, `dtype`)"),
        ("`model.type`, `model.name`, `model.backend`", "an Implementation (`library`, `operation`, `backend`)"),
        ((
            "`runners[0]` (`gpu_info`, `gpu_count`; `cpu_info` without a GPU; `extra_info.cuda_version`), "
            "`dependencies` (`version`, else `sha`)"
        ),
         "an ExecutionEnvironment: the hardware, and the dependencies as software"),
        ("`timestamp` (seconds since the epoch)", "`spec.observedAt`"),
        ("`head_sha`, `head_branch`, and the benchmark, model, backend and metric",
         "labels `commit`, `branch`, `benchmark`, `model`, `backend`, `metric`"),
    ),
    not_carried=(
        "which statistic a value is, and the timer (a v3 record has values, not how they were taken)",
        "the unit, where neither the metric's name nor `metric.extra_info.unit` says it",
    ),
)


class _Converter(JsonConverter):
    what, noun, fallback_name = WHAT, "records", "pytorch-benchmark"

    def convert(self, paths: list[str]) -> Conversion:
        for path in paths:
            records = _read_records(path, self.problems)
            for line, index, record in records or ():
                self.read += 1
                self._record(path, line, index, record)
        raise_if_problems(self.problems)
        return super().convert([])

    def _record(self, path: str, line: int, index: int, record: Any) -> None:
        where = f"[{index}]"
        if not isinstance(record, dict):
            self.problem(path, line, where, "a record must be an object")
            return
        if self.refused(path, line, _problems_of(record), where):
            return
        fingerprint = hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()[:12]
        metric = record["metric"]
        own = _kidx_objects(record)
        if own is not None:
            self._kidx_record(path, line, where, own)
            return
        benchmark, model = record.get("benchmark") or {}, record.get("model") or {}
        external_id = "/".join(str(part) for part in (
            record.get("repo") or "", record.get("head_sha") or "", record.get("workflow_id") or "",
            record.get("job_id") or "", benchmark.get("name") or "", model.get("name") or "",
            model.get("backend") or "", metric["name"], fingerprint))
        if not self.first_sighting(external_id, path, line):
            return
        position = (path, 1, line)
        protocol = self.shared.add("BenchmarkProtocol", (json.dumps([benchmark, metric["name"]], sort_keys=True),),
                                   position, lambda: _protocol(benchmark, metric["name"], _measured(metric)))
        runners = record.get("runners") or []
        runner = runners[0] if runners and isinstance(runners[0], dict) else {}
        dependencies: dict = record["dependencies"] if isinstance(record.get("dependencies"), dict) else {}
        environment = self.shared.add("ExecutionEnvironment", (json.dumps([runner, dependencies], sort_keys=True),),
                                      position, lambda: _environment(runner, dependencies))
        workload = self.shared.add("Workload", (json.dumps([benchmark.get("name"), benchmark.get("mode"),
                                                            benchmark.get("dtype"), model.get("name")]),),
                                   position, lambda: _workload(benchmark, model))
        implementation = self.shared.add("Implementation", (model.get("type"), model.get("name"), model.get("backend")),
                                         position, lambda: _implementation(model))
        values = [float(v) for v in metric.get("benchmark_values") or []]
        spec: dict[str, Any] = {"status": "passed"}
        timestamp = record.get("timestamp")
        if isinstance(timestamp, int) and not isinstance(timestamp, bool) and 0 < timestamp < 2**37:
            spec["observedAt"] = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        measured = _measured(metric)
        if measured is not None and values:
            name, unit, scale = measured
            scaled = [round(v * scale, 3) for v in values]
            if name == "latency":
                spec["timing"] = {"latencyNs": {"median": round(statistics.median(scaled), 3)},
                                  "primaryStatistic": "median"}
                if len(scaled) > 1:
                    spec["timing"]["latencyNs"].update(min=min(scaled), max=max(scaled),
                                                       mean=round(statistics.fmean(scaled), 3))
            else:
                spec["measurements"] = [{"metric": name, "statistic": "median", "unit": unit,
                                         "value": round(statistics.median(scaled), 3)}]
            if len(scaled) > 1:
                spec["samples"] = {"metric": name, "unit": unit, "values": scaled}
        spec["sourceNative"] = {
            "source": SOURCE_NAME,
            "benchmark": f"{benchmark.get('name') or ''}/{model.get('name') or ''}",
            "externalId": external_id,
            "metrics": {metric["name"]: statistics.median(values) if values else None},
            "record": record,
        }
        spec["protocolDigest"] = protocol
        spec["workloadDigest"] = workload
        spec["environmentDigest"] = environment
        spec["implementationDigest"] = implementation
        labels = {
            "benchmark": slug(str(benchmark.get("name") or "")), "model": slug(str(model.get("name") or "")),
            "backend": slug(str(model.get("backend") or "")), "metric": slug(metric["name"]),
            "commit": str(record.get("head_sha") or ""), "branch": slug(str(record.get("head_branch") or ""))}
        title = " · ".join(str(p) for p in (benchmark.get("name"), model.get("name"), model.get("backend"),
                                            metric["name"]) if p)
        self.add_run(spec, (path, line), ("pytorch-benchmark/" + external_id, external_id), title, labels)

    def _kidx_record(self, path: str, line: int, where: str, own: dict[str, dict]) -> None:
        """A record kidx wrote: its run and the objects the run refers to, as they were."""
        bad = False
        for kind, body in own.items():
            at = f"{where}.{_KIDX_PLACES[kind]}.extra_info.{json.dumps(KIDX_KEYS[kind])}"
            name = body["metadata"].get("name")
            if not isinstance(name, str) or not name:
                self.problem(path, line, f"{at}.metadata.name",
                             "is missing or not a string: an object kidx exported always has its name")
                bad = True
            native = body["spec"].get("sourceNative")
            if native is not None and not isinstance(native, dict):
                self.problem(path, line, f"{at}.spec.sourceNative",
                             f"{json.dumps(native, ensure_ascii=False)[:80]} is not an object")
                bad = True
        if bad:
            return
        run = own["run"]
        external_id = str((run["spec"].get("sourceNative") or {}).get("externalId") or run["metadata"]["name"])
        if not self.first_sighting(json.dumps([run["metadata"]["name"], external_id]), path, line):
            return
        position = (path, 1, line)
        for kind, body in own.items():
            if kind != "run":
                self.shared.add(kind, (json.dumps(body, sort_keys=True),), position, _as_built(body))
        self.runs.append(Document(run, path, 1, line))


convert_files = _Converter.convert_files


def _as_built(body: dict) -> Callable[[], tuple[str, dict]]:
    return lambda: (body["metadata"]["name"], body)


def _read_records(path: str, problems: list[Problem]) -> list[tuple[int, int, Any]] | None:
    """(line, index, record) of a file's records, or None with a Problem."""
    data = read_bytes(path, problems)
    if data is None:
        return None
    if data[:2] == b"\x1f\x8b":
        limit = max_input_size()
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unpacked:
                data = unpacked.read(limit + 1)
        except (OSError, EOFError) as exc:
            problems.append(Problem(Location(path), f"not a readable gzip file: {exc}"))
            return None
        if len(data) > limit:
            problems.append(Problem(Location(path), InputTooLarge(limit).message + " (uncompressed)"))
            return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(Problem(Location(path, line=line),
                                f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}"))
        return None
    text = text.lstrip("\ufeff")
    if not text.strip():
        problems.append(Problem(Location(path, line=1), f"the file is empty; expected {WHAT}"))
        return None
    if refused_lone_surrogate(text, path, problems):
        return None
    try:
        whole = json.loads(text, parse_constant=float, object_pairs_hook=_once_each)
    except RecursionError:
        problems.append(Problem(Location(path, line=1), f"nested too deeply to read; expected {WHAT}"))
        return None
    except _RepeatedKey as repeated:
        line, _ = repeated_key(text)
        problems.append(Problem(Location(path, line=line), repeated.message))
        return None
    except ValueError:
        whole = None
        records: list[tuple[int, int, Any]] = []
        for number, row in enumerate(text.split("\n"), start=1):  # only \n ends a JSON line
            if not row.strip():
                continue
            try:
                records.append((number, len(records), json.loads(row, parse_constant=float,
                                                                 object_pairs_hook=_once_each)))
            except RecursionError:
                problems.append(Problem(Location(path, line=number), f"nested too deeply to read; expected {WHAT}"))
            except _RepeatedKey as repeated:
                problems.append(Problem(Location(path, line=number), repeated.message))
                return None
            except ValueError as exc:
                problems.append(Problem(Location(path, line=number),
                                        f"not valid JSON ({getattr(exc, 'msg', exc)}); expected {WHAT}"))
                return None
        return records
    if isinstance(whole, dict):
        return [(1, 0, whole)]
    if not isinstance(whole, list):
        problems.append(Problem(Location(path, line=1), f"not {WHAT}: expected a list of records"))
        return None
    lines = _record_lines(text, len(whole))
    return [(lines[i], i, record) for i, record in enumerate(whole)]


class _RepeatedKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.message = (f"the key {json.dumps(key, ensure_ascii=True)} appears twice in one object; "
                        "expected one of each")


def _once_each(pairs: list[tuple[str, Any]]) -> dict:
    """An object of the record, refused where a key repeats (a JSON parser keeps the last
    without a word)."""
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return mapping


def _record_lines(text: str, count: int) -> list[int]:
    """The line each record of a JSON list starts on (its n-th ``{`` at depth 1)."""
    lines, depth, line, in_string, escaped = [], 0, 1, False, False
    for char in text:
        if char == "\n":
            line += 1
        if in_string:
            escaped = not escaped and char == "\\"
            if char == '"' and not escaped:
                in_string = False
            continue
        if char == '"':
            in_string, escaped = True, False
        elif char in "[{":
            if depth == 1 and char == "{":
                lines.append(line)
            depth += 1
        elif char in "]}":
            depth -= 1
    return (lines + [1] * count)[:count]


def _problems_of(record: dict) -> list[tuple[str, str]]:
    bad: list[tuple[str, str]] = []
    metric = record.get("metric")
    if not isinstance(metric, dict) or not isinstance(metric.get("name"), str) or not metric["name"]:
        return [("metric.name", "is missing or not a string")]
    values = metric.get("benchmark_values")
    if not isinstance(values, list):
        bad.append(("metric.benchmark_values", "must be a list of numbers"))
    else:
        for i, value in enumerate(values):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                bad.append((f"metric.benchmark_values[{i}]", f"{value!r} is not a finite number"))
    for key in ("benchmark", "model"):
        if not isinstance(record.get(key, {}), dict):
            bad.append((key, "must be an object"))
    if not isinstance(record.get("runners", []), list):
        bad.append(("runners", "must be a list"))
    return bad


# where a record kidx exported keeps each object: the extra_info map of these fields
_KIDX_PLACES = {"run": "metric", "BenchmarkProtocol": "benchmark", "Workload": "model", "Implementation": "model",
                "ExecutionEnvironment": "runners[0]"}


def _kidx_objects(record: dict) -> dict[str, dict] | None:
    """The objects a record kidx exported carries, or None for any other record."""
    found: dict[str, dict] = {}
    places = {"run": record["metric"], "BenchmarkProtocol": record.get("benchmark") or {},
              "Workload": record.get("model") or {}, "Implementation": record.get("model") or {},
              "ExecutionEnvironment": ((record.get("runners") or [{}])[0]) or {}}
    for kind, holder in places.items():
        extra = holder.get("extra_info") if isinstance(holder, dict) else None
        text = extra.get(KIDX_KEYS[kind]) if isinstance(extra, dict) else None
        if isinstance(text, str):
            try:
                body = json.loads(text)
            except ValueError:
                return None
            if isinstance(body, dict) and isinstance(body.get("metadata"), dict) and isinstance(body.get("spec"), dict):
                found[kind] = body
    return found if "run" in found else None


def _measured(metric: dict) -> tuple[str, str, float] | None:
    """What a v3 metric measures, in kidx's terms: (metric, unit, scale of its values to the
    unit); None where neither its name nor ``metric.extra_info.unit`` says."""
    name = metric["name"]
    time = _time_unit(name)
    if time is not None:
        return "latency", "ns", _SCALE[time]
    extra = metric.get("extra_info")
    written = extra.get("unit") if isinstance(extra, dict) else None
    if isinstance(written, str) and written.strip():
        unit = _UNIT_WORDS.get(written.strip().lower().replace("µ", "u"))
    else:
        lowered = name.lower()
        match = _NAMED_UNIT.search(lowered)
        unit = _UNIT_WORDS.get(lowered) or (_UNIT_WORDS.get(match.group(1) or match.group(2)) if match else None)
        if unit is not None and unit[0] == "peak_memory" and "mem" not in lowered:
            unit = None  # a size in a name that does not say it is memory (model_size_gb)
        if unit is None:
            unit = next((found for word, found in _NAMED_METRICS.items() if word in lowered), None)
    if unit is None:
        return None
    kind, crd_unit, scale = unit
    if kind == "ratio":  # a ratio is a speedup or an accuracy, as its name says, else unknown
        named = [word for word in ("speedup", "accuracy") if word in name.lower()]
        if not named:
            return None
        kind = named[0]
    return kind, crd_unit, scale


def _time_unit(name: str) -> str | None:
    lowered = name.lower()
    if not any(word in lowered for word in ("latency", "time", "duration", "median", "mean", "p50")):
        return None
    match = _TIME.search(lowered)
    return (match.group(1) or match.group(2)) if match else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _protocol(benchmark: dict, metric: str, measured: tuple[str, str, float] | None) -> tuple[str, dict]:
    name_of = str(benchmark.get("name") or "unnamed benchmark")
    extra: dict = benchmark["extra_info"] if isinstance(benchmark.get("extra_info"), dict) else {}
    settings = "; ".join(f"{key}={_text(value)}" for key, value in sorted(extra.items()))
    method = f"{metric} as {name_of} reports it" + (f" ({settings})" if settings else "")
    measurement: dict[str, Any] = {"primaryStatistic": "median", "method": method}
    if measured is not None and measured[0] == "latency":
        measurement.update(metric="latency", timer="other")
    elif measured is not None and measured[0] in METRICS:
        measurement["metric"] = measured[0]
    notes = ("Values of one metric of a PyTorch OSS benchmark record; comparable within one benchmark, model, "
             "backend and runner.")
    name = slug(f"pytorch-benchmark-{name_of}-{metric}")
    if settings or len(name) > 80:
        name = hashed_name(name, json.dumps([benchmark, metric], sort_keys=True), 100)
    return protocol(name, f"{name_of} · {metric}", {"name": name_of}, measurement, FAMILY, notes)


def _environment(runner: dict, dependencies: dict) -> tuple[str, dict]:
    gpu = str(runner.get("gpu_info") or "")
    if gpu:
        hardware = gpu_hardware(gpu)
        if isinstance(runner.get("gpu_count"), int) and runner["gpu_count"] > 0:
            hardware["count"] = runner["gpu_count"]
    else:
        hardware = {"vendor": "unknown", "product": str(runner.get("cpu_info") or runner.get("type") or "unknown")}
    software = {}
    for name, dependency in sorted(dependencies.items()):
        if isinstance(dependency, dict):
            version = dependency.get("version") or dependency.get("sha")
            if isinstance(version, str) and version:
                software[str(name)] = version
    cuda = (runner.get("extra_info") or {}).get("cuda_version") if isinstance(runner.get("extra_info"), dict) else None
    if isinstance(cuda, str) and cuda:
        software["cuda"] = cuda
    spec = {"hardware": hardware, "software": software}
    base = "pytorch-benchmark-" + slug(canonical_gpu_name(gpu) or gpu or hardware["product"])
    name = hashed_name(base, json.dumps(spec, sort_keys=True), 100)
    body = manifest("ExecutionEnvironment", name, f"{runner.get('name') or 'runner'} · {hardware['product']}", spec)
    annotations = {key: str(runner[field]) for key, field in (("kernelindex.dev/runner", "name"),
                                                             ("kernelindex.dev/runner-type", "type"))
                   if isinstance(runner.get(field), (str, int)) and str(runner[field])}
    if annotations:
        body["metadata"]["annotations"] = annotations
    return name, body


def _workload(benchmark: dict, model: dict) -> tuple[str, dict]:
    parameters = {key: str(benchmark[key]) for key in ("mode", "dtype") if benchmark.get(key)}
    if benchmark.get("name"):
        parameters["benchmark"] = str(benchmark["name"])
    operation = str(model.get("name") or benchmark.get("name") or "unnamed")
    spec = {"family": FAMILY, "operation": operation, "parameters": parameters}
    name = hashed_name(slug(f"pytorch-benchmark-{operation}"), json.dumps(spec, sort_keys=True), 100)
    return name, manifest("Workload", name, " · ".join([operation, *parameters.values()]), spec)


def _implementation(model: dict) -> tuple[str, dict]:
    spec: dict[str, Any] = {"library": str(model.get("type") or "unknown"),
                            "operation": str(model.get("name") or "unnamed")}
    if model.get("backend"):
        spec["backend"] = str(model["backend"])
    name = hashed_name(slug("pytorch-benchmark-" + "-".join(spec.values())), json.dumps(spec, sort_keys=True), 100)
    return name, manifest("Implementation", name, " · ".join(spec.values()), spec)
