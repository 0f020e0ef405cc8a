"""How close a run came to the speed of light: achieved bytes/s and FLOP/s, and their
fractions of the GPU's published and measured peaks.

Everything here is derived, never stored: a run's median latency, its workload's cost
(declared or formula, kidx.speed_of_light.costs) and its environment's peaks
(kidx.speed_of_light.peaks). Whatever is unknown stays None, and so does everything that
depends on it: a missing cost or peak is never replaced by a guess.

``sol`` is the roofline bound's share of the time taken: max(bytes / bandwidth,
FLOPs / FLOP peak) / latency, each term present only when both of its sides are known.
"""

from __future__ import annotations

from collections.abc import Mapping

from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any
from kidx.speed_of_light.costs import Cost, cost_of, timed_pass
from kidx.speed_of_light.peaks import PRECISION_OF_DTYPE, measured_peak, published_peak


class Fractions(NamedTuple):
    """Fractions (0.61, not 61) of one set of peaks; None where a side is unknown."""

    bandwidth: float | None
    flops: float | None

    @property
    def sol(self) -> float | None:
        known = [value for value in (self.bandwidth, self.flops) if value is not None]
        return max(known) if known else None


class Achieved(NamedTuple):
    cost: Cost
    latency_ns: float
    bytes_per_second: float | None
    flops_per_second: float | None
    precision: str | None  # the math precision the FLOPs are compared in
    peak: Fractions | None  # of the published peak
    measured: Fractions | None  # of the measured peak, where the environment records one
    gpu: str | None  # the published peak's GPU

    def as_dict(self) -> dict[str, Any]:
        """The figures for -o json: rates in bytes/s and FLOP/s, fractions as fractions."""
        shown: dict[str, Any] = {"costSource": self.cost.source}
        if self.cost.formula:
            shown["formula"] = self.cost.formula
        if self.cost.bytes is not None:
            shown["bytes"] = self.cost.bytes
        if self.cost.flops is not None:
            shown["flops"] = self.cost.flops
        if self.bytes_per_second is not None:
            shown["bytesPerSecond"] = self.bytes_per_second
        if self.flops_per_second is not None:
            shown["flopsPerSecond"] = self.flops_per_second
        for key, fractions in (("ofPeak", self.peak), ("ofMeasuredPeak", self.measured)):
            if fractions is not None:
                part = {name: value for name, value in (
                    ("bandwidth", fractions.bandwidth), ("flops", fractions.flops), ("sol", fractions.sol),
                ) if value is not None}
                if part:
                    shown[key] = part
        if self.gpu and self.peak is not None:
            shown["peakOf"] = self.gpu
        return shown


def latency_of(run_spec: Mapping[str, Any]) -> float | None:
    """The run's median latency in ns (the MEDIAN column of ``get runs``), or None."""
    timing = run_spec.get("timing")
    if not isinstance(timing, Mapping) or run_spec.get("status", "passed") != "passed":
        return None
    values = timing.get("latencyNs")
    if not isinstance(values, Mapping):
        return None
    value = values.get("median")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return float(value)


def achieved(
    run_spec: Mapping[str, Any],
    workload_spec: Mapping[str, Any] | None,
    environment: Mapping[str, Any] | None,
    latency_ns: float | None = None,
) -> Achieved | None:
    """The figures of one run, or None when its latency or its cost is unknown.
    ``environment`` is the environment's manifest (spec and metadata), or None;
    ``latency_ns`` takes the place of the run's median (compare's pooled figure of an arm)."""
    latency = latency_of(run_spec) if latency_ns is None else (latency_ns if latency_ns > 0 else None)
    if latency is None or not isinstance(workload_spec, Mapping):
        return None
    cost = cost_of(workload_spec, timed_pass(run_spec, workload_spec))
    if cost is None:
        return None
    seconds = latency * 1e-9
    bandwidth = cost.bytes / seconds if cost.bytes is not None else None
    flops = cost.flops / seconds if cost.flops is not None else None
    dtype = workload_spec.get("dtype")
    precision = PRECISION_OF_DTYPE.get(dtype) if isinstance(dtype, str) else None
    spec = (environment or {}).get("spec") or {}
    peak = published_peak(spec.get("hardware"))
    measured = measured_peak(((environment or {}).get("metadata") or {}).get("annotations"))
    return Achieved(
        cost=cost,
        latency_ns=latency,
        bytes_per_second=bandwidth,
        flops_per_second=flops,
        precision=precision if flops is not None else None,
        peak=_fractions(bandwidth, flops, precision, peak.bandwidth, peak.flops) if peak else None,
        measured=_fractions(bandwidth, flops, precision, measured.bandwidth, measured.flops) if measured else None,
        gpu=peak.gpu if peak else None,
    )


def _fractions(bandwidth, flops, precision, peak_bandwidth, peak_flops) -> Fractions | None:
    of_bandwidth = bandwidth / peak_bandwidth if bandwidth is not None and peak_bandwidth else None
    flop_peak = peak_flops.get(precision) if precision else None
    of_flops = flops / flop_peak if flops is not None and flop_peak else None
    if of_bandwidth is None and of_flops is None:
        return None
    return Fractions(of_bandwidth, of_flops)


def achieved_of_view(view: Mapping[str, Any]) -> Achieved | None:
    """The figures of a run manifest that carries its workload and environment manifests
    under ``workload`` and ``environment`` (as ``get`` attaches referenced objects)."""
    workload = view.get("workload")
    environment = view.get("environment")
    return achieved(
        view.get("spec") or {},
        workload.get("spec") if isinstance(workload, Mapping) else None,
        environment if isinstance(environment, Mapping) else None,
    )
