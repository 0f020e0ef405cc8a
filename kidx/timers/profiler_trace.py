"""The device time of each timed call, read from a PyTorch profiler trace.

``torch.profiler`` writes its trace in the Chrome trace-event format: a JSON object whose
``traceEvents`` list holds complete events (``"ph": "X"``) with a category (``cat``), a
start ``ts`` and a duration ``dur`` in microseconds, host and device events on one
clock. The cupti timer wraps each timed call in a ``record_function`` range named
``kidx-sample-N`` (category ``user_annotation``) that ends after the device has
synchronised, so every kernel, copy and fill the call launched starts inside its range;
the L2 flush runs before the range opens. A sample is the sum of those device events'
durations.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from typing import Any

from kidx.errors import MeasurementFailed

SAMPLE_PREFIX = "kidx-sample-"
#: trace categories of device-side work: kernels, memory copies, memory fills
DEVICE_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def sample_windows(events: Iterable[Mapping[str, Any]]) -> list[tuple[float, float, int]]:
    """(start, end, sample number) of each ``kidx-sample-N`` host range, by start."""
    windows = []
    for event in events:
        name = event.get("name")
        if event.get("cat") != "user_annotation" or not isinstance(name, str) or not name.startswith(SAMPLE_PREFIX):
            continue
        start, duration = _number(event.get("ts")), _number(event.get("dur"))
        number = name[len(SAMPLE_PREFIX):]
        if start is None or duration is None or not number.isdigit():
            continue
        windows.append((start, start + duration, int(number)))
    return sorted(windows)


def device_time_per_sample(trace: Mapping[str, Any]) -> list[float]:
    """Each sample's device time in milliseconds, in sample order. A sample in which the
    call launched no device work is a MeasurementFailed: there is nothing to time."""
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        raise MeasurementFailed("cupti: the profiler trace has no traceEvents list")
    windows = sample_windows(events)
    if not windows:
        raise MeasurementFailed("cupti: the profiler trace holds none of the timed calls' ranges")
    starts = [start for start, _, _ in windows]
    totals_us = [0.0] * len(windows)
    launched = [False] * len(windows)
    for event in events:
        if event.get("cat") not in DEVICE_CATEGORIES:
            continue
        start, duration = _number(event.get("ts")), _number(event.get("dur"))
        if start is None or duration is None:
            continue
        index = bisect.bisect_right(starts, start) - 1
        if index >= 0 and start < windows[index][1]:
            totals_us[index] += duration
            launched[index] = True
    if not all(launched):
        missing = sum(1 for seen in launched if not seen)
        raise MeasurementFailed(f"cupti: {missing} of {len(windows)} timed calls launched no GPU work "
                                "(kernel, copy or fill); there is no device time to report")
    ordered = sorted(range(len(windows)), key=lambda index: windows[index][2])
    return [totals_us[index] / 1000.0 for index in ordered]
