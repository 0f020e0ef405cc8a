"""The units of a run's figures, defined once: the units a figure may be written in (the
CRDs' ``unit`` enum, ``crds/benchmarkruns.yaml``), the unit each headline is stored in and
the scale of every other unit of its quantity to it, the metric vocabulary (the protocol
CRD's ``measurement.metric`` enum) and which way is better for each metric and unit, and
the steps in which output shows a figure. Everything that converts or shows a unit, or
asks whether more is better, reads it here.

It imports nothing, so any layer may read it (docs/design.md §7)."""

from __future__ import annotations

NANOSECONDS = "ns"  # the stored unit of a time: a latency (spec.timing.latencyNs)
BYTES = "B"  # the stored unit of a memory figure, as a headline's unit (spec.memory.peakAllocatedBytes)
BYTES_PER_SECOND = "B/s"  # the stored unit of a bandwidth
FLOP_PER_SECOND = "FLOP/s"  # the stored unit of a FLOP rate
TIMES = "x"  # the stored unit of a ratio (a speedup, an accuracy): a plain number, shown as 1.85x
COUNT = ""  # a plain number of things

LOWER = "lower"  # less is better
HIGHER = "higher"  # more is better

#: a time written in each unit, in nanoseconds
TIME_UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
#: each unit a measurement or the samples may be written in (the CRDs' enum): the stored
#: unit of its quantity, the scale to it, and which way is better where the unit says
UNITS: dict[str, tuple[str, float, str | None]] = {
    **{unit: (NANOSECONDS, scale, LOWER) for unit, scale in TIME_UNITS.items()},
    "bytes": (BYTES, 1, LOWER),
    "flop/s": (FLOP_PER_SECOND, 1, HIGHER),
    "bytes/s": (BYTES_PER_SECOND, 1, HIGHER),
    "items/s": ("items/s", 1, HIGHER),
    "tokens/s": ("tokens/s", 1, HIGHER),
    "ratio": (TIMES, 1, None),
    "count": (COUNT, 1, None),
}
#: every unit a measurement or the samples may be written in (the CRDs' enum)
MEASUREMENT_UNITS = tuple(UNITS)
#: the metric vocabulary (the protocol CRD's measurement.metric enum): which way is better,
#: and the unit a run's figure of it is written in when the metric alone says (throughput
#: does not: FLOP/s, bytes/s, items/s or tokens/s, as the run writes it)
METRICS: dict[str, tuple[str | None, str]] = {
    "latency": ("ns", LOWER),  # time per call of the timed operation
    "peak_memory": ("bytes", LOWER),  # peak device memory allocated while it runs
    "memory_bandwidth": ("bytes/s", HIGHER),  # bytes moved per second
    "throughput": (None, HIGHER),  # work per second: FLOP/s, items/s, tokens/s
    "speedup": ("ratio", HIGHER),  # times faster than the harness's own baseline
    "accuracy": ("ratio", HIGHER),  # the share of results that were correct
}
#: the unit each headline metric is stored in
STORED_UNITS = {"latency": NANOSECONDS, "peak_memory": BYTES}
#: a figure written in each unit, in the stored unit of its quantity (ns for a time, bytes for memory)
TO_STORED: dict[str, float] = {unit: scale for unit, (_, scale, _) in UNITS.items()}
#: the stored unit of a figure written in each unit
STORED_UNIT_OF: dict[str, str] = {unit: stored for unit, (stored, _, _) in UNITS.items()}
#: which way is better by the unit alone (written or stored), where it says
DIRECTION_BY_UNIT: dict[str, str] = {
    **{stored: direction for stored, _, direction in UNITS.values() if direction},
    **{unit: direction for unit, (_, _, direction) in UNITS.items() if direction},
}


def direction_of(metric: str | None, unit: str | None = None) -> str | None:
    """``lower``, ``higher`` (is better), or None when neither the metric nor the unit says."""
    if metric in METRICS:
        return METRICS[metric][1]
    return DIRECTION_BY_UNIT.get(unit) if unit is not None else None


#: a latency in ns is shown in the largest of these it reaches, else in ns: 417.5µs
TIME_STEPS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3))
#: a size in bytes is shown in binary units, else in B: 700.1MiB
BINARY_STEPS = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
#: a rate (B/s, FLOP/s) is shown with decimal prefixes, as datasheets print it: 1.326TB/s
DECIMAL_STEPS = (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))
#: a plot's axis: each stored unit divided by a scale, shown as another unit
AXIS_SCALES = {"ns": (1e6, "ms"), "B": (2**20, "MiB"), "B/s": (1e9, "GB/s"), "FLOP/s": (1e12, "TFLOP/s"),
               "%": (1, "% of peak")}
