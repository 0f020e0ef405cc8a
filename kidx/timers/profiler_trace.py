"""The device time of each timed call, read from a PyTorch profiler trace.

``torch.profiler`` writes its trace in the Chrome trace-event format: a JSON object whose
``traceEvents`` list holds complete events (``"ph": "X"``) with a category (``cat``), a
start ``ts`` and a duration ``dur`` in microseconds, host and device events on one
clock. The cupti timer wraps each timed call in a ``record_function`` range named
``kidx-sample-N`` (category ``user_annotation``) that ends after the device has
synchronised, so every kernel, copy and fill the call launched starts inside its range;
the L2 flush runs before the range opens. A sample is the sum of those device events'
durations.

Before the samples, one untimed call runs in a range named ``kidx-reference``:
``kernel_count_warning`` compares the number of kernels, copies and fills each timed call
launched with that call's, so work that a capture missed is reported, never silently
left out of a sample.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from typing import Any

from kidx.errors import MeasurementFailed

SAMPLE_PREFIX = "kidx-sample-"
REFERENCE_RANGE = "kidx-reference"
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


def _device_counts(events: list, windows: list[tuple[float, float, int]]) -> list[int]:
    """The device events (kernels, copies, fills) starting inside each window."""
    starts = [start for start, _, _ in windows]
    counts = [0] * len(windows)
    for event in events:
        if event.get("cat") not in DEVICE_CATEGORIES:
            continue
        start = _number(event.get("ts"))
        if start is None:
            continue
        index = bisect.bisect_right(starts, start) - 1
        if index >= 0 and start < windows[index][1]:
            counts[index] += 1
    return counts


def kernel_count_warning(trace: Mapping[str, Any]) -> str | None:
    """What differs between the device work each timed call launched and the untimed
    call's (the ``kidx-reference`` range): None where every call launched as many
    kernels, copies and fills as it, or where the trace has no such range."""
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        return None
    reference = [(start, start + duration, -1) for event in events
                 if event.get("cat") == "user_annotation" and event.get("name") == REFERENCE_RANGE
                 for start, duration in [(_number(event.get("ts")), _number(event.get("dur")))]
                 if start is not None and duration is not None]
    windows = sample_windows(events)
    if len(reference) != 1 or not windows:
        return None
    ordered = sorted(windows + reference)
    counts = dict(zip((number for _, _, number in ordered), _device_counts(events, ordered)))
    expected = counts.pop(-1)
    differing = sorted(count for count in counts.values() if count != expected)
    if not differing:
        return None
    fewer = sum(1 for count in differing if count < expected)
    return (f"cupti: {len(differing)} of {len(counts)} timed calls launched another number of kernels, copies "
            f"and fills ({differing[0]}" + (f" to {differing[-1]}" if differing[-1] != differing[0] else "")
            + f") than the untimed call ({expected})"
            + (f"; in {fewer} of them work missing from the capture was not timed" if fewer else ""))
