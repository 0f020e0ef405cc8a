"""Is a stored timing mostly the host's? One place for the rules and their constants.

A timer that records CUDA events around each call (``cuda_events``, what
``triton.testing.do_bench`` does) times the host too: Python, autograd and the launches.
When the kernels take less than the host needs to issue them, the figure measures the
host. Two rules say so (docs/analysis.md, "Is a timing the kernel's or the host's?"):

- **Launch overhead, between twins.** Where the store holds, for one workload,
  implementation and environment (their digests), a run timed with CUDA events and a run
  timed with a kernel timer (``cuda_graph``, ``cupti``) whose protocols differ only in
  their ``measurement`` (timer, cache, warm-up, repetitions: ``twin_key``; the rest, the
  harness and what is timed, such as Liger's pass, equal), the events run's launch overhead
  is its time divided by the kernel time (the median of the kernel-timer twins), and the
  events run is **host-bound** when that is at least ``HOST_BOUND_OVERHEAD``. The twins'
  protocols differ in their timer, so they are never compared with each other: only this
  ratio crosses protocols.
- **Likely host-bound, from the data alone** (no kernel-timer twin: every eager
  importer's runs): either the latency curve of a sweep stays flat while the work grows
  beyond the run (the scaling exponent from the run to the sweep's largest value, log of
  the latency ratio over log of the swept parameter's ratio, below ``FLAT_EXPONENT``,
  over a range of at least ``MIN_SWEEP_RATIO``), or the run reaches less than
  ``LOW_SOL`` of the GPU's published roofline while its compulsory traffic is at most
  ``SMALL_WORKING_SET`` bytes. The constants come from bench/bench_hostbound.py on the
  H200 recordings in tests/data/h200-aa and tests/data/h200-sol (docs/analysis.md).

A run timed with a kernel timer is never flagged: it excludes the host by construction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kidx.records import TYPE_CHECKING, NamedTuple
from kidx.units import TIME_STEPS

if TYPE_CHECKING:
    from typing import Any

EVENTS_TIMER = "cuda_events"
KERNEL_TIMERS = ("cuda_graph", "cupti")  # the kernels' time, without the host's
HOST_BOUND_OVERHEAD = 1.5  # events time / kernel time at or above which the events run is host-bound

# likely host-bound without a twin (calibrated by bench/bench_hostbound.py, docs/analysis.md)
FLAT_EXPONENT = 0.5  # latency grows at most as the square root of the swept parameter
MIN_SWEEP_RATIO = 2.0  # the sweep's largest value over its smallest, at least
LOW_SOL = 0.25  # the share of the published roofline (bandwidth or FLOP/s) below which …
SMALL_WORKING_SET = 256 * 2**20  # … a run with at most this compulsory traffic (bytes) is suspect


def timer_of(protocol_spec) -> str | None:
    """The protocol's ``spec.measurement.timer``, or None."""
    measurement = protocol_spec.get("measurement") if isinstance(protocol_spec, dict) else None
    timer = measurement.get("timer") if isinstance(measurement, dict) else None
    return timer if isinstance(timer, str) else None


def latency_ns(run_spec) -> float | None:
    """A passed run's latency statistic (``spec.timing``'s primary statistic, else its
    median), in ns; None for a failed or a memory run."""
    timing = run_spec.get("timing") if isinstance(run_spec, dict) else None
    if not isinstance(timing, dict) or run_spec.get("status", "passed") != "passed":
        return None
    values = timing.get("latencyNs")
    if not isinstance(values, dict):
        return None
    value = values.get(timing.get("primaryStatistic") or "median")
    return float(value) if isinstance(value, (int, float)) and _number(value) else None


def host_bound(overhead: float) -> bool:
    """Whether an events run with this launch overhead (events / kernel time) is host-bound."""
    return overhead >= HOST_BOUND_OVERHEAD


class Timed(NamedTuple):
    """A passed latency run, as the rules read it."""

    name: str
    workload: str | None  # digests
    implementation: str | None
    environment: str | None
    protocol: str | None
    timer: str | None  # the protocol's spec.measurement.timer
    value: float  # the run's statistic, ns
    workload_spec: dict | None = None
    cost_bytes: float | None = None  # the workload's compulsory traffic, where known
    sol: float | None = None  # the share of the published roofline the run reached, where known
    twin_key: str | None = None  # its protocol's twin_key: a twin's is the same


_TIMER = "<timer>"  # what a protocol's own timer is read as outside its measurement (twin_key)
_TWIN_KEYS: dict[str, str] = {}  # by protocol digest: a digest names one spec


def twin_key(protocol_spec, digest: str | None = None) -> str | None:
    """What a run's twins' protocols share with its own: the protocol's spec without its
    ``measurement`` (timer, cache, warm-up, repetitions, method), its own timer's name read
    as "<timer>" wherever else the spec says it (kidx record's notes name the timer that
    replaced the harness's); None without a spec. The pass a harness times (Liger's
    forward, backward, full) is in the rest (its notes), so a twin is the same pass.
    ``digest``: the protocol's, by which the key is made once."""
    if digest is not None and digest in _TWIN_KEYS:
        return _TWIN_KEYS[digest]
    if not isinstance(protocol_spec, dict):
        return None
    import json

    text = json.dumps({k: v for k, v in protocol_spec.items() if k != "measurement"}, sort_keys=True,
                      ensure_ascii=False, default=str)
    timer = timer_of(protocol_spec)
    if timer:  # the timer's name as a word ("other" but not "another")
        import re

        text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(timer)}(?![A-Za-z0-9_])", _TIMER, text)
    if digest is not None:
        _TWIN_KEYS[digest] = text
    return text


class HostEvidence(NamedTuple):
    """What the store shows of a run's host share: a twin's launch overhead, or a reason."""

    overhead: float | None = None  # events time / kernel time, with a kernel-timer twin
    kernel_ns: float | None = None  # the twins' median kernel time
    kernel_timer: str | None = None  # their timer(s), comma-separated
    twins: tuple[str, ...] = ()  # the kernel-timer twins' names
    reasons: tuple[str, ...] = ()  # without a twin: why the data suggests it is host-bound

    @property
    def host_bound(self) -> bool | None:
        """True or False with a twin; None without one."""
        return None if self.overhead is None else host_bound(self.overhead)

    @property
    def likely(self) -> bool:
        return self.overhead is None and bool(self.reasons)

    @property
    def flagged(self) -> bool:
        """Whether the figure is the host's: host-bound by a twin, or likely host-bound
        without one (what the pages mark); a kernel-bound twin's is not."""
        return bool(self.host_bound) or self.likely

    def with_value(self, value: float) -> HostEvidence:
        """The same evidence for another figure of the run (compare's pooled arm)."""
        if self.kernel_ns is None:
            return self
        return self._replace(overhead=value / self.kernel_ns)

    def text(self) -> str:
        """``host-bound: launch overhead 13.0x (…)``, ``likely host-bound: …``, or ""."""
        if self.overhead is not None:
            word = "host-bound" if self.host_bound else "kernel-bound"
            return (f"{word}: launch overhead {self.overhead:.2f}x (events time / {self.kernel_timer} time "
                    f"{_ns(self.kernel_ns)}, threshold {HOST_BOUND_OVERHEAD:g}x)")
        if self.reasons:
            return "likely host-bound: " + "; ".join(self.reasons)
        return ""


def _ns(value: float | None) -> str:
    """Kept here rather than output/units.py's ``nanoseconds``: analysis sits below output
    in the layers, and this sentence is printed as it is (describe, the published run
    pages); output's would also write 12340s where this writes 1.234e+04s."""
    if value is None:
        return "?"
    for unit, scale in TIME_STEPS:
        if value >= scale:
            return f"{value / scale:.4g}{unit}"
    return f"{value:.4g}ns"


def is_kernel_timer(timer: str | None) -> bool:
    return timer in KERNEL_TIMERS


def assess(runs: Sequence[Timed], only: str | None = None) -> dict[str, HostEvidence]:
    """The evidence for each run that is not timed by a kernel timer and has some: a
    twin's launch overhead, else the reasons its sweep or its speed of light give.
    ``only``: the evidence of the run of that name alone (describe's), the others read
    only as its twins and its sweeps' points."""
    twins: dict[tuple, list[Timed]] = {}
    for run in runs:
        if is_kernel_timer(run.timer):
            twins.setdefault((run.workload, run.implementation, run.environment, run.twin_key), []).append(run)
    sweeps = _sweeps(runs, only)
    found: dict[str, HostEvidence] = {}
    for run in runs:
        if is_kernel_timer(run.timer) or only is not None and run.name != only:
            continue
        kernel = [t for t in twins.get((run.workload, run.implementation, run.environment, run.twin_key), ())
                  if t.timer != run.timer]
        if kernel and run.workload is not None and run.twin_key is not None:
            kernel_ns = _median([t.value for t in kernel])
            found[run.name] = HostEvidence(
                run.value / kernel_ns, kernel_ns, ", ".join(sorted({t.timer or "" for t in kernel})),
                tuple(sorted(t.name for t in kernel)))
            continue
        reasons = [reason for reason in (sweeps.get(run.name), small_and_slow(run.cost_bytes, run.sol)) if reason]
        if reasons:
            found[run.name] = HostEvidence(reasons=tuple(reasons))
    return found


def _median(values: Sequence[float]) -> float:
    """The median of a non-empty sequence, as statistics.median gives it; describe reads
    host evidence, and importing the statistics module (it brings fractions, decimal and
    random) would add milliseconds to its start-up."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def small_and_slow(cost_bytes: float | None, sol: float | None) -> str | None:
    """The speed-of-light reason, or None: below LOW_SOL of the roofline at a small working set."""
    if cost_bytes is None or sol is None or cost_bytes > SMALL_WORKING_SET or sol >= LOW_SOL:
        return None
    return (f"{sol * 100:.1f}% of the GPU's roofline (below {LOW_SOL * 100:g}%) at a working set of "
            f"{cost_bytes / 2**20:.0f} MiB (at most {SMALL_WORKING_SET / 2**20:.0f} MiB)")


def flat_exponent(points: Sequence[tuple[float, float]], at: float | None = None) -> tuple[float, float, float] | None:
    """(exponent, parameter ratio, latency ratio) from the sweep's point at ``at`` (its
    smallest value when None) to its largest (the median latency at each), or None when
    the range is below MIN_SWEEP_RATIO."""
    by_x: dict[float, list[float]] = {}
    for x, latency in points:
        if x > 0 and latency > 0:
            by_x.setdefault(x, []).append(latency)
    if len(by_x) < 2:
        return None
    low, high = (min(by_x) if at is None else at), max(by_x)
    if low not in by_x or high / low < MIN_SWEEP_RATIO:
        return None
    x_ratio = high / low
    latency_ratio = _median(by_x[high]) / _median(by_x[low])
    return math.log(latency_ratio) / math.log(x_ratio), x_ratio, latency_ratio


def flat_reason(parameter: str, points: Sequence[tuple[float, float]], at: float) -> str | None:
    """The flat-sweep reason for the point at ``at``: from it to the sweep's largest value
    the latency grows slower than FLAT_EXPONENT says (the sweep's largest point is never
    flagged by this rule: nothing beyond it shows the curve flat)."""
    found = flat_exponent(points, at)
    if found is None or found[0] >= FLAT_EXPONENT:
        return None
    exponent, x_ratio, latency_ratio = found
    return (f"flat sweep: latency x{latency_ratio:.2f} while {parameter} grows x{x_ratio:g} from here "
            f"(exponent {exponent:.2f}, below {FLAT_EXPONENT:g})")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


_DERIVED = ("key", "cost")  # workload fields that follow from its parameters (a name's key, the declared cost)


def _sweeps(runs: Sequence[Timed], only: str | None = None) -> dict[str, str]:
    """The flat-sweep reason of each run whose sweep is flat: runs of one protocol,
    implementation and environment whose workloads differ in one numeric parameter; a run
    in several sweeps (two swept parameters) takes the first flat one by parameter name.
    ``only``: the reason of the run of that name alone (the rest are its sweeps' points)."""
    groups: dict[tuple, list[Timed]] = {}
    for run in runs:
        if run.workload_spec is not None and not is_kernel_timer(run.timer):
            groups.setdefault((run.protocol, run.implementation, run.environment), []).append(run)
    if only is not None:
        own = [key for key, members in groups.items() if any(run.name == only for run in members)]
        groups = {key: groups[key] for key in own}
    reasons: dict[str, str] = {}
    keys: dict[str, list[tuple]] = {}  # a workload's sweep keys, by its digest: made once per workload
    for members in groups.values():
        specs = {run.workload: run.workload_spec for run in members}
        if len(specs) < 2:
            continue
        # sweeps: (parameter, the workload's spec without that parameter) -> runs
        sweeps: dict[tuple, list[Timed]] = {}
        for run in members:
            for key in _sweep_keys(run, keys):
                sweeps.setdefault(key, []).append(run)
        for (parameter, _), swept in sorted(sweeps.items(), key=lambda item: item[0][0]):
            points = [((run.workload_spec or {})["parameters"][parameter], run.value) for run in swept]
            for run, (x, _) in zip(swept, points, strict=True):
                if only is not None and run.name != only:
                    continue
                reason = flat_reason(parameter, points, x)
                if reason is not None:
                    reasons.setdefault(run.name, reason)
    return reasons


def _sweep_keys(run: Timed, known: dict[str, list[tuple]]) -> list[tuple]:
    """The sweeps a run's workload is a point of: (parameter, the workload's spec without
    it) for each numeric parameter, by name; ``known``: those of the workloads seen before,
    by digest (one digest, one spec)."""
    found = known.get(run.workload) if run.workload is not None else None
    if found is not None:
        return found
    found = sweep_keys(run.workload_spec)
    if run.workload is not None:
        known[run.workload] = found
    return found


def sweep_keys(workload_spec: dict | None) -> list[tuple]:
    """The sweeps a workload is a point of: (parameter, its spec without that parameter)
    for each numeric parameter, by name. Two runs of one protocol, implementation and
    environment are points of one sweep when their workloads share a key."""
    spec = workload_spec or {}
    found = []
    for parameter, value in sorted((spec.get("parameters") or {}).items()):
        if not _number(value):
            continue
        rest = {k: v for k, v in spec.items() if k not in _DERIVED}
        rest["parameters"] = {k: v for k, v in spec["parameters"].items() if k != parameter}
        found.append((parameter, _key(rest)))
    return found


def _key(value) -> str:
    import json

    return json.dumps(value, sort_keys=True, default=str)
