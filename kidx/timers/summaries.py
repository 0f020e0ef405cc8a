"""What ``triton.testing.do_bench`` returns, computed from samples (milliseconds) as
triton 3 computes it, so a harness that reads do_bench's result reads kidx's timer the
same way: the asked-for quantiles by linear interpolation between order statistics (one
quantile: a number, not a list), else the ``return_mode`` statistic (mean, median, min,
max, or ``all``: every sample)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from kidx.errors import UsageError

RETURN_MODES = ("min", "max", "mean", "median", "all")


def checked_request(quantiles: object, return_mode: object) -> tuple[tuple[float, ...] | None, str]:
    """do_bench's ``quantiles`` and ``return_mode``, checked before anything is timed."""
    if return_mode not in RETURN_MODES:
        raise UsageError(f"do_bench return_mode {return_mode!r}: use {', '.join(RETURN_MODES)}")
    if quantiles is None:
        return None, str(return_mode)
    try:
        values = tuple(float(q) for q in quantiles)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise UsageError(f"do_bench quantiles {quantiles!r}: expected a list of fractions") from None
    for value in values:
        if not 0 <= value <= 1:
            raise UsageError(f"do_bench quantile {value:g}: quantiles must be in the range [0, 1]")
    return values, str(return_mode)


def quantile(ordered: Sequence[float], fraction: float) -> float:
    """Linear interpolation between the order statistics of ``ordered`` (sorted)."""
    point = fraction * (len(ordered) - 1)
    lower, upper = math.floor(point), math.ceil(point)
    weight = point - lower
    return (1 - weight) * ordered[lower] + weight * ordered[upper]


def do_bench_result(samples_ms: Sequence[float], quantiles: Sequence[float] | None, return_mode: str):
    """do_bench's return value for these samples."""
    if quantiles is not None:
        ordered = sorted(samples_ms)
        values = [quantile(ordered, q) for q in quantiles]
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return list(samples_ms)
    if return_mode == "min":
        return min(samples_ms)
    if return_mode == "max":
        return max(samples_ms)
    if return_mode == "median":
        return statistics.median(samples_ms)
    return statistics.mean(samples_ms)


def relative_standard_error(samples: Sequence[float]) -> float:
    """The relative standard error of the samples' median, from their spread about it: the
    median absolute deviation scaled to a standard deviation (x 1.4826), times the median's
    efficiency factor sqrt(pi / 2) over sqrt(n), over the median; robust to the few far
    samples a GPU's timer gives. Infinite for fewer than two samples or a median of 0."""
    if len(samples) < 2:
        return math.inf
    middle = statistics.median(samples)
    if middle <= 0:
        return math.inf
    deviation = statistics.median(abs(value - middle) for value in samples)
    return 1.4826 * deviation * math.sqrt(math.pi / 2) / math.sqrt(len(samples)) / middle
