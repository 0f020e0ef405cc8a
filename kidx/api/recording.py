"""Recording runs from a benchmark script: ``record_run``, ``Timings``, ``capture_environment``.

``record_run`` builds the manifests of one run and the four objects it refers to, with
digests computed by the digest rule (docs/design.md §2) and names made the way the
importers make them:

- an object given as a spec gets ``{readable base}-{10 hex digits}`` of its digest
  (``kidx.formats.framework.hashed_name``), so one spec always gets one name and two
  specs never share one; an object given as a manifest (``capture_environment()``'s, or
  one read from a store) keeps its name;
- the run's ``spec.sourceNative.externalId`` is
  ``{implementation}/{workload}/{environment}/{protocol}/{observedAt}`` (names), and its
  name is ``slug("record/" + externalId)`` cut to 89 characters plus ``-`` and 10 hex
  digits of the externalId's sha256, as the Liger importer names runs.

``Timings`` holds the figures in nanoseconds, made from raw samples, from
``triton.testing.do_bench``'s quantile list, or from a
``torch.utils.benchmark.Measurement``; the last two also say which protocol measured them.
"""

from __future__ import annotations

import datetime
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kidx.errors import UsageError
from kidx.formats.framework import MAX_NAME, hashed_name, slug
from kidx.identity import digest_of
from kidx.kinds.metadata import API_VERSION
from kidx.units import TIME_UNITS

SOURCE = "kidx.record_run"
#: do_bench's quantiles in Liger-Kernel's harness: median, p20, p80
DO_BENCH_QUANTILES = (0.5, 0.2, 0.8)
_KINDS = {"protocol": "BenchmarkProtocol", "workload": "Workload", "environment": "ExecutionEnvironment",
          "implementation": "Implementation"}


def _scale(unit: str) -> float:
    if unit not in TIME_UNITS:
        *most, last = TIME_UNITS
        raise UsageError(f'unknown time unit "{unit}": use {", ".join(most)} or {last}')
    return TIME_UNITS[unit]


def _ns(value: float) -> float:
    return round(value, 3)


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise UsageError(f"{what}: {value!r} is not a finite, non-negative number")
    return float(value)


def quantile_statistic(quantile: float) -> str:
    """The statistic a quantile is stored as: 0.5 is the median, 0.2 is p20."""
    if quantile == 0.5:
        return "median"
    percent = quantile * 100
    return f"p{percent:g}" if percent != int(percent) else f"p{int(percent)}"


def _quantile(ordered: Sequence[float], fraction: float) -> float:
    """Linear interpolation between order statistics (numpy's and torch.quantile's default)."""
    position = (len(ordered) - 1) * fraction
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class Timings:
    """Latency figures of one run, in nanoseconds: headline ``statistics`` (median,
    mean, min, max, stddev), further ``quantiles`` (p20, p80, …), raw ``samples``, the
    source's own numbers (``native``) and, when an adapter knows it, the ``protocol``
    spec that measured them."""

    __slots__ = ("details", "native", "protocol", "quantiles", "samples", "source", "statistics")

    def __init__(self, statistics: Mapping[str, float], quantiles: Mapping[str, float] | None = None,
                 samples: Sequence[float] | None = None, protocol: Mapping[str, Any] | None = None,
                 native: Mapping[str, Any] | None = None, source: str = SOURCE) -> None:
        self.statistics = {key: _ns(_number(value, f"statistic {key}")) for key, value in statistics.items()}
        if not self.statistics.keys() & {"median", "mean", "min", "max"}:
            raise UsageError("timings need a median, mean, min or max")
        self.quantiles = {key: _ns(_number(v, f"quantile {key}")) for key, v in (quantiles or {}).items()}
        self.samples = None if samples is None else tuple(_ns(_number(v, "sample")) for v in samples)
        self.protocol = dict(protocol) if protocol is not None else None
        self.native = dict(native or {})
        self.source = source
        self.details: dict[str, str] = {}  # what the source says about the timed code (kept in sourceNative)

    @classmethod
    def from_samples(cls, samples: Iterable[float], unit: str = "ms",
                     protocol: Mapping[str, Any] | None = None) -> Timings:
        """Raw samples (one per timed repetition, in ``unit``): median, mean, min, max,
        stddev, p20 and p80 computed from them, the samples kept."""
        scale = _scale(unit)
        values = [_number(value, "sample") * scale for value in samples]
        if not values:
            raise UsageError("timings from samples need at least one sample")
        ordered = sorted(values)
        figures = {"median": statistics.median(ordered), "mean": statistics.fmean(ordered), "min": ordered[0],
                   "max": ordered[-1]}
        if len(values) > 1:
            figures["stddev"] = statistics.stdev(values)
        quantiles = {"p20": _quantile(ordered, 0.2), "p80": _quantile(ordered, 0.8)}
        return cls(figures, quantiles, values, protocol)

    @classmethod
    def from_do_bench(cls, result: float | Sequence[float], quantiles: Sequence[float] = DO_BENCH_QUANTILES,
                      return_mode: str = "mean", unit: str = "ms") -> Timings:
        """What ``triton.testing.do_bench`` returned (milliseconds): the list for
        ``quantiles=[0.5, 0.2, 0.8]`` (the quantiles asked for, in that order), or the
        single number of ``return_mode`` (mean, median, min or max) without quantiles."""
        scale = _scale(unit)
        if isinstance(result, int | float):
            if return_mode not in ("mean", "median", "min", "max"):
                raise UsageError(f'unknown do_bench return_mode "{return_mode}": use mean, median, min or max')
            figures = {return_mode: _number(result, "do_bench result") * scale}
            return cls(figures, protocol=_do_bench_protocol(return_mode, ()),
                       native={f"ms_{return_mode}": float(result)})
        values = list(result)
        if len(values) != len(quantiles):
            raise UsageError(f"do_bench returned {len(values)} values for {len(quantiles)} quantiles "
                             f"({', '.join(f'{q:g}' for q in quantiles)}): pass the quantiles it was called with")
        if 0.5 not in quantiles:
            raise UsageError("do_bench quantiles must include 0.5 (the median is the headline figure)")
        by_statistic = {quantile_statistic(q): _number(v, f"do_bench quantile {q:g}") * scale
                        for q, v in zip(quantiles, values, strict=True)}
        median = by_statistic.pop("median")
        native = {f"ms_{round(q * 100):02d}": float(v) for q, v in zip(quantiles, values, strict=True)}
        return cls({"median": median}, by_statistic, protocol=_do_bench_protocol("median", quantiles), native=native)

    @classmethod
    def from_measurement(cls, measurement: Any) -> Timings:
        """A ``torch.utils.benchmark.Measurement``: its per-run times (each the mean of
        ``number_per_run`` calls) as samples, the statistics computed from them, and a
        protocol naming torch.utils.benchmark (its version) and the CPU threads used; the
        calls each sample averages are kept as ``number_per_run`` in sourceNative.metrics."""
        times = getattr(measurement, "times", None)
        number = getattr(measurement, "number_per_run", None)
        if not isinstance(times, list) or not times or not isinstance(number, int):
            raise UsageError("not a torch.utils.benchmark Measurement: expected .times (a list of seconds) "
                             "and .number_per_run")
        timings = cls.from_samples(times, unit="s")
        task = getattr(measurement, "task_spec", None)
        details = {key: getattr(task, key, None) for key in ("stmt", "label", "sub_label", "description", "env")}
        threads = getattr(task, "num_threads", None)
        timings.protocol = _measurement_protocol(threads)
        timings.native = {"median_s": float(measurement.median), "mean_s": float(measurement.mean),
                          "iqr_s": float(measurement.iqr), "number_per_run": float(number)}
        timings.source = "torch.utils.benchmark"
        timings.details = {key: str(value) for key, value in details.items() if value}
        return timings

    def __repr__(self) -> str:
        headline = self.statistics.get("median", self.statistics.get("mean"))
        samples = f", {len(self.samples)} samples" if self.samples else ""
        return f"Timings({headline} ns{samples})"


def _torch_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("torch")
    except Exception:  # not installed as a distribution
        return None


def _measurement_protocol(threads: Any) -> dict[str, Any]:
    harness: dict[str, Any] = {"name": "torch.utils.benchmark",
                               "repository": "https://github.com/pytorch/pytorch"}
    version = _torch_version()
    if version:
        harness["version"] = version
    # the calls per sample (number_per_run) vary from run to run with the kernel's speed:
    # kept in the run's sourceNative.metrics, not here, so that repeated runs share a protocol
    method = ("torch.utils.benchmark.Timer.blocked_autorange: each sample is the mean time of a block of "
              "calls, timed on the host clock with the device synchronised")
    if isinstance(threads, int):
        method += f"; {threads} CPU thread{'s' if threads != 1 else ''}"
    return {"harness": harness,
            "measurement": {"metric": "latency", "timer": "wall_clock", "primaryStatistic": "median",
                            "method": method}}


def _do_bench_protocol(statistic: str, quantiles: Sequence[float]) -> dict[str, Any]:
    measurement: dict[str, Any] = {"metric": "latency", "timer": "cuda_events", "primaryStatistic": statistic,
                                   "method": "triton.testing.do_bench: CUDA events around each call, the L2 "
                                             "cache flushed between calls"}
    if quantiles:
        measurement["quantiles"] = [float(q) for q in quantiles]
    return {"harness": {"name": "triton.testing.do_bench", "repository": "https://github.com/triton-lang/triton"},
            "measurement": measurement}


class Recording:
    """The manifests of one recorded run: ``run`` and the objects it refers to
    (``protocol``, ``workload``, ``environment``, ``implementation``), each with
    ``metadata.name`` and ``metadata.digest``; ``manifests`` lists them referenced
    objects first, ready for ``Store.apply``."""

    __slots__ = ("environment", "implementation", "protocol", "run", "workload")

    def __init__(self, run: dict[str, Any], protocol: dict[str, Any], workload: dict[str, Any],
                 environment: dict[str, Any], implementation: dict[str, Any]) -> None:
        self.run, self.protocol, self.workload = run, protocol, workload
        self.environment, self.implementation = environment, implementation

    @property
    def manifests(self) -> list[dict[str, Any]]:
        """The five manifests, the referenced objects first and the run last."""
        return [self.protocol, self.workload, self.environment, self.implementation, self.run]

    @property
    def name(self) -> str:
        """The run's name."""
        return str(self.run["metadata"]["name"])

    def __repr__(self) -> str:
        return f"Recording(run={self.name!r})"


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _base_name(role: str, spec: dict[str, Any]) -> str:
    if role == "workload":
        parameters = spec.get("parameters") or {}
        parts = [str(spec.get("operation", "")), *(f"{k}{v}" for k, v in sorted(parameters.items())),
                 str(spec.get("dtype") or "")]
    elif role == "implementation":
        parts = [str(spec.get(key) or "") for key in ("library", "operation", "backend", "variant")]
    elif role == "protocol":
        measurement = spec.get("measurement") or {}
        parts = [str((spec.get("harness") or {}).get("name") or ""), str(measurement.get("metric") or ""),
                 str(measurement.get("timer") or "")]
    else:
        hardware = spec.get("hardware") or {}
        parts = [str(hardware.get("product") or ""), str(hardware.get("formFactor") or "")]
    return slug("-".join(part for part in parts if part)) or role


def _object(role: str, given: Any) -> dict[str, Any]:
    """A referenced object's manifest from a spec, a manifest, or a stored object."""
    kind = _KINDS[role]
    manifest = getattr(given, "manifest", given)  # a StoredObject gives its stored document
    if not isinstance(manifest, Mapping):
        raise UsageError(f"{role}: expected a spec or a manifest (a mapping), got {type(given).__name__}")
    body = _plain(manifest)
    if "spec" in body and ("kind" in body or "apiVersion" in body):
        if body.get("kind", kind) != kind:
            raise UsageError(f"{role}: expected a {kind} manifest, got kind {body.get('kind')!r}")
        metadata = {key: value for key, value in (body.get("metadata") or {}).items()
                    if key in ("name", "title", "labels", "annotations")}
        body = {"apiVersion": body.get("apiVersion", API_VERSION), "kind": kind, "metadata": metadata,
                "spec": body["spec"]}
    else:
        body = {"apiVersion": API_VERSION, "kind": kind, "metadata": {}, "spec": body}
    digest = digest_of(body)
    if not body["metadata"].get("name"):
        body["metadata"] = {"name": hashed_name(_base_name(role, body["spec"]), digest, MAX_NAME), **body["metadata"]}
    body["metadata"]["digest"] = digest
    return body


def _observed(when: datetime.datetime | str | None) -> str:
    if isinstance(when, str):
        return when
    moment = when or datetime.datetime.now(datetime.UTC)
    if moment.tzinfo is None:
        raise UsageError("observed_at: a datetime with a time zone (naive times are ambiguous)")
    moment = moment.astimezone(datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def record_run(
    *,
    implementation: Any,
    workload: Any,
    environment: Any,
    timings: Timings | Any,
    protocol: Any = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    observed_at: datetime.datetime | str | None = None,
    benchmark: str | None = None,
    name: str | None = None,
    title: str | None = None,
) -> Recording:
    """The manifests of one passed run, ready for ``Store.apply``.

    ``implementation``, ``workload``, ``protocol`` and ``environment`` are each a spec
    (a mapping such as ``{"operation": "llama4_rope", "parameters": {"seq": 16384},
    "dtype": "bf16"}``), a manifest, or an object from ``Store.get``;
    ``capture_environment()`` gives this machine's environment. ``timings`` is a
    ``Timings`` or a ``torch.utils.benchmark.Measurement``; ``protocol`` may be left out
    when the timings came from an adapter, which knows it. ``observed_at`` defaults to
    now (UTC); ``benchmark`` is the BENCHMARK column of ``kidx get`` (default: the
    workload's operation). Nothing is validated against the store here: ``Store.apply``
    validates the manifests as ``kidx apply`` does.
    """
    if not isinstance(timings, Timings):
        timings = Timings.from_measurement(timings)
    if protocol is None:
        if timings.protocol is None:
            raise UsageError("record_run needs a protocol: these timings do not say how they were measured")
        protocol = timings.protocol
    objects = {role: _object(role, value) for role, value in
               (("protocol", protocol), ("workload", workload), ("environment", environment),
                ("implementation", implementation))}
    observed = _observed(observed_at)
    protocol_spec = objects["protocol"]["spec"]
    primary = (protocol_spec.get("measurement") or {}).get("primaryStatistic") or "median"
    if primary not in timings.statistics:
        primary = "median" if "median" in timings.statistics else next(iter(timings.statistics))
    external_id = "/".join([*(objects[role]["metadata"]["name"] for role in
                              ("implementation", "workload", "environment", "protocol")), observed])
    spec: dict[str, Any] = {
        "status": "passed",
        "observedAt": observed,
        "timing": {"latencyNs": dict(timings.statistics), "primaryStatistic": primary},
    }
    if timings.quantiles:
        spec["measurements"] = [{"metric": "latency", "statistic": statistic, "unit": "ns", "value": value}
                                for statistic, value in timings.quantiles.items()]
    if timings.samples:
        spec["samples"] = {"metric": "latency", "unit": "ns", "values": list(timings.samples)}
    native: dict[str, Any] = {"source": timings.source,
                              "benchmark": benchmark or str(objects["workload"]["spec"].get("operation", "")),
                              "externalId": external_id}
    if timings.native:
        native["metrics"] = dict(timings.native)
    if timings.details:
        native["task"] = dict(timings.details)
    spec["sourceNative"] = native
    for role in ("protocol", "workload", "environment", "implementation"):
        spec[f"{role}Digest"] = objects[role]["metadata"]["digest"]
    metadata: dict[str, Any] = {"name": name or hashed_name(slug("record/" + external_id), external_id, 100)}
    metadata["title"] = title or f"{native['benchmark']} · {objects['implementation']['metadata']['name']}"
    if labels:
        metadata["labels"] = {str(key): str(value) for key, value in labels.items()}
    if annotations:
        metadata["annotations"] = {str(key): str(value) for key, value in annotations.items()}
    run = {"apiVersion": API_VERSION, "kind": "BenchmarkRun", "metadata": metadata, "spec": spec}
    metadata["digest"] = digest_of(run)
    return Recording(run, objects["protocol"], objects["workload"], objects["environment"],
                     objects["implementation"])


def capture_environment(name: str | None = None) -> dict[str, Any]:
    """This machine as an ExecutionEnvironment manifest: what ``kidx env capture``
    prints (GPUs through NVML, else nvidia-smi, else torch; CPU, driver, CUDA, libraries,
    OS); what could not be read is in the ``kernelindex.dev/capture-notes`` annotation."""
    from kidx.operations.ingest.env_capture import captured_environment

    manifest, _ = captured_environment(name)
    return manifest
