"""The units of a run's figures, defined once: the units a figure may be written in (the
CRDs' ``unit`` enum, ``crds/benchmarkruns.yaml``), the unit each headline is stored in and
the scale of every other unit of its quantity to it, which way is better, and the steps
in which output shows a figure. Everything that converts or shows a unit reads it here.

It imports nothing, so any layer may read it (docs/design.md §7)."""

from __future__ import annotations

NANOSECONDS = "ns"  # the stored unit of a time: a latency (spec.timing.latencyNs)
BYTES = "B"  # the stored unit of a memory figure, as a headline's unit (spec.memory.peakAllocatedBytes)

#: a time written in each unit, in nanoseconds
TIME_UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
#: every unit a measurement or the samples may be written in (the CRDs' enum)
MEASUREMENT_UNITS = (*TIME_UNITS, "bytes", "flop/s", "bytes/s", "ratio", "count")
#: the unit each headline metric is stored in
STORED_UNITS = {"latency": NANOSECONDS, "peak_memory": BYTES}
#: a figure written in each unit, in the stored unit of its quantity (ns for a time, bytes for memory)
TO_STORED: dict[str, float] = {**TIME_UNITS, "bytes": 1}
#: the units of quantities less of which is better
LOWER_IS_BETTER = (*TIME_UNITS, BYTES, "bytes")

#: a latency in ns is shown in the largest of these it reaches, else in ns: 417.5µs
TIME_STEPS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3))
#: a size in bytes is shown in binary units, else in B: 700.1MiB
BINARY_STEPS = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
#: a rate (B/s, FLOP/s) is shown with decimal prefixes, as datasheets print it: 1.326TB/s
DECIMAL_STEPS = (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))
#: a plot's axis: each stored unit divided by a scale, shown as another unit
AXIS_SCALES = {"ns": (1e6, "ms"), "B": (2**20, "MiB"), "B/s": (1e9, "GB/s"), "FLOP/s": (1e12, "TFLOP/s"),
               "%": (1, "% of peak")}
