"""A run's headline figure: the primary statistic, its unit, its spread and any samples.

Latency runs carry ``spec.timing.latencyNs`` (nanoseconds), memory runs
``spec.memory.peakAllocatedBytes`` (bytes); ``spec.measurements`` may add the p20/p80
quantiles (else the quartiles, p25/p75) around them and, where a harness kept them, the raw samples. Whether less is
better comes from what was measured (the protocol's ``measurement.metric``, else the
run's own metric), never from a guess.
"""

from __future__ import annotations

from kidx.analysis.comparability import DIRECTION_BY_METRIC, LOWER, direction_of
from kidx.records import NamedTuple
from kidx.units import STORED_UNIT_OF, STORED_UNITS, TO_STORED

# measurements may be written in other units of the same quantity (TO_STORED, keyed by
# unit names: any value read from a document may be looked up)
# the spread around the headline, the first pair a run has: do_bench's p20-p80 (Liger),
# else the quartiles (pytest-benchmark's q1 and q3, NVBench's), labelled as what they are
BANDS = (("p20", "p80"), ("p25", "p75"))
_SAMPLE_KEYS = ("samples", "values")


class Measure(NamedTuple):
    metric: str  # latency, peak_memory, memory_bandwidth, throughput, speedup, … (kidx.units.METRICS)
    statistic: str  # the primary statistic: median, mean, min or max
    value: float
    unit: str  # the stored unit: "ns", "B", "B/s", "FLOP/s", "items/s", "tokens/s", "x" (a ratio) or "" (a count)
    low: float | None = None  # the band's low end (p20, else p25), where the run has it
    high: float | None = None  # its high end (p80, else p75)
    samples: tuple[float, ...] | None = None  # raw samples, where the run has them
    band: str | None = None  # which quantiles low and high are: "p20-p80" or "p25-p75"

    @property
    def direction(self) -> str | None:
        """``lower`` or ``higher`` (is better); None when the metric and unit do not say."""
        return direction_of(self.metric, self.unit)

    @property
    def lower_is_better(self) -> bool:
        """Whether less is better; an error for a metric of unknown direction (never a guess:
        callers that can meet one check ``direction`` first)."""
        if self.direction is None:
            raise ValueError(f"metric {self.metric} ({self.unit}) has no known direction")
        return self.direction == LOWER


def measure_of(spec: dict, protocol_spec: dict | None = None, metric: str | None = None) -> Measure | None:
    """The headline figure of a run spec, or None when it has none (a failed run).
    ``metric``: that metric's figure instead (``compare --metric``: a bandwidth or a
    throughput a latency run also measured), None where the run has none."""
    if not isinstance(spec, dict):
        return None
    measurement = (protocol_spec or {}).get("measurement") or {}
    declared = measurement.get("metric")
    if metric is not None:
        own = _headline(spec)
        headline = own if own is not None and own[0] == metric else _measured_headline(spec, metric, None, True)
        declared = None
    else:
        headline = _headline(spec) or _measured_headline(spec, declared, measurement.get("primaryStatistic"))
    if headline is None:
        return None
    metric, statistics, primary, unit = headline
    if declared in DIRECTION_BY_METRIC and metric in STORED_UNITS:
        metric = declared if declared != "throughput" else metric  # a run's own unit wins for throughput
    primary = primary or measurement.get("primaryStatistic") or "median"
    value = statistics.get(primary)
    if not _is_number(value) or value <= 0:  # nothing to divide by: no ratio, no speedup
        return None
    low = high = band = None
    for low_statistic, high_statistic in BANDS:
        low = _measurement(spec, metric, (low_statistic,))
        high = _measurement(spec, metric, (high_statistic,))
        if low is not None and high is not None:
            band = f"{low_statistic}-{high_statistic}"
            break
        low = high = None
    samples = _samples(spec, metric, statistics)
    return Measure(metric, primary, value, unit, low, high, samples, band)


def figure_median(spec: dict) -> tuple[float, str] | None:
    """The median of a run's figure with its stored unit, as ``get`` shows it: the latency,
    else the metric its measurements hold (bandwidth, throughput, …); None for a run with
    neither (a failed run, a memory run: ``get -o wide`` has a column of its own for those)."""
    if not isinstance(spec, dict):
        return None
    timing = spec.get("timing")
    if isinstance(timing, dict) and isinstance(timing.get("latencyNs"), dict):
        value = timing["latencyNs"].get("median")
        return (value, STORED_UNITS["latency"]) if _is_number(value) else None
    if isinstance(spec.get("memory"), dict):
        return None
    headline = _measured_headline(spec, None, None)
    if headline is None or not _is_number(headline[1].get("median")):
        return None
    return headline[1]["median"], headline[3]


def missing_figure(spec: dict | None, protocol_spec: dict | None = None) -> str:
    """Why ``measure_of`` found no headline figure in a run spec, in words."""
    headline = _headline(spec) if isinstance(spec, dict) else None
    if headline is None:
        return "no figure (not passed, or no number)"
    metric, statistics, primary = headline[:3]
    primary = primary or ((protocol_spec or {}).get("measurement") or {}).get("primaryStatistic") or "median"
    value = statistics.get(primary)
    if _is_number(value):
        return f"figure is {'zero' if value == 0 else 'negative'} ({primary} {metric} {value:g}, nothing to divide by)"
    return f"no number for its {primary} {metric}"


def _headline(spec: dict):
    timing = spec.get("timing")
    if isinstance(timing, dict) and isinstance(timing.get("latencyNs"), dict):
        return "latency", timing["latencyNs"], timing.get("primaryStatistic"), STORED_UNITS["latency"]
    memory = spec.get("memory")
    if isinstance(memory, dict) and isinstance(memory.get("peakAllocatedBytes"), dict):
        return "peak_memory", memory["peakAllocatedBytes"], memory.get("primaryStatistic"), STORED_UNITS["peak_memory"]
    return None


# the statistics a measured headline is read from, in order, after the protocol's own
_PRIMARY = ("median", "mean", "min", "max")


def _measured_headline(spec: dict, declared: str | None, primary: str | None, required: bool = False):
    """A run whose figure is neither a latency nor a peak memory (a bandwidth, a throughput,
    a speedup): its ``spec.measurements`` of one metric, the protocol's where the run has
    it, else (unless ``required``) the first one measured; the statistics in its stored unit."""
    entries = [entry for entry in spec.get("measurements") or ()
               if isinstance(entry, dict) and isinstance(entry.get("metric"), str)
               and entry.get("unit") in TO_STORED and _is_number(entry.get("value"))]
    if not entries:
        return None
    metrics = [entry["metric"] for entry in entries]
    if required and declared not in metrics:
        return None
    metric = declared if declared in metrics else metrics[0]
    statistics: dict[str, float] = {}
    unit = None
    for entry in entries:
        if entry["metric"] == metric and entry.get("statistic") not in statistics:
            statistics[str(entry.get("statistic"))] = entry["value"] * TO_STORED[entry["unit"]]
            unit = unit or STORED_UNIT_OF[entry["unit"]]
    chosen = next((name for name in (primary, *_PRIMARY) if name in statistics), None)
    if chosen is None or unit is None:
        return None
    return metric, statistics, chosen, unit


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _metric_matches(entry: dict, metric: str) -> bool:
    return entry.get("metric") in (metric, None)


def _measurement(spec: dict, metric: str, statistics: tuple[str, ...]) -> float | None:
    for entry in spec.get("measurements") or ():
        if (isinstance(entry, dict) and _metric_matches(entry, metric) and entry.get("statistic") in statistics
                and _is_number(entry.get("value")) and entry.get("unit") in TO_STORED):
            return entry["value"] * TO_STORED[entry["unit"]]
    return None


def _samples(spec: dict, metric: str, statistics: dict) -> tuple[float, ...] | None:
    """Raw samples: ``spec.samples`` (``{metric: latency, unit: ns, values: […]}``), a list
    beside the statistics (``latencyNs.samples``), a measurement entry holding a list
    (``{statistic: samples, unit: ns, samples: […]}``), or one measurement entry per sample
    (``statistic: sample``)."""
    recorded = spec.get("samples")
    if isinstance(recorded, dict) and _metric_matches(recorded, metric):
        scale = TO_STORED.get(str(recorded.get("unit")), 1)
        for key in _SAMPLE_KEYS:
            if _numbers(recorded.get(key)):
                return tuple(v * scale for v in recorded[key])
    for key in _SAMPLE_KEYS:
        if _numbers(statistics.get(key)):
            return tuple(statistics[key])
    single = []
    for entry in spec.get("measurements") or ():
        if not isinstance(entry, dict) or not _metric_matches(entry, metric):
            continue
        scale = TO_STORED.get(str(entry.get("unit")), 1)
        for key in _SAMPLE_KEYS:
            if _numbers(entry.get(key)):
                return tuple(v * scale for v in entry[key])
        if entry.get("statistic") == "sample" and _is_number(entry.get("value")):
            single.append(entry["value"] * scale)
    return tuple(single) if len(single) > 1 else None


def _numbers(value) -> bool:
    return isinstance(value, list) and len(value) > 1 and all(_is_number(v) for v in value)


def observed_moment(text: str):
    """``observedAt`` as a datetime (naive times read as UTC), or None when unreadable."""
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (AttributeError, TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
