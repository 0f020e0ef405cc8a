"""Change points over a series: where its level moved, found over the whole series.

E-Divisive means as Hunter (and Apache Otava) use it: on the logs of the points (so
changes are relative), each segment's candidate is the split that maximises the
energy-distance statistic Q between its two sides (Matteson & James, with exponent 1);
instead of a permutation test, the candidate is kept when a two-sided t-test of the two
sides gives p < CHANGE_ALPHA and the level moved by more than the threshold, as Hunter
does, so the result is deterministic. Kept candidates split the segment and each part is
searched again. Each change point is then re-measured between its neighbours.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from kidx.analysis.significance import (
    DEFAULT_THRESHOLD,
    EVIDENCE_FLOOR,
    NO_NOISE,
    Noise,
    bounded_exp,
    spread_of,
    t_two_sided_p,
)

CHANGE_ALPHA = 0.001
MIN_SEGMENT = 2  # points on each side of a change point
MIN_POINTS = 2 * MIN_SEGMENT  # the shortest series that can hold a change point


class ChangePoint(NamedTuple):
    position: int  # index of the first point after the change
    change: float  # relative change of the level: +0.10 is 10% higher
    p_value: float
    score: float  # E-Divisive Q of the split, on logs


def change_points(values: Sequence[float], threshold: float | None = DEFAULT_THRESHOLD,
                  alpha: float = CHANGE_ALPHA) -> list[ChangePoint]:
    """The change points of a series of positive values, in order; ``threshold`` None: a
    level that moved by more than EVIDENCE_FLOOR, the threshold following the evidence."""
    threshold = EVIDENCE_FLOOR if threshold is None else threshold
    logs = [math.log(v) for v in values]
    found: list[tuple[int, float]] = []
    pending = [(0, len(logs))]
    while pending:
        start, end = pending.pop()
        best = _best_split(logs[start:end])
        if best is None:
            continue
        split, score = best
        p, change = _split_test(logs[start:start + split], logs[start + split:end])
        if p < alpha and abs(change) > threshold:
            found.append((start + split, score))
            pending += [(start, start + split), (start + split, end)]
    found.sort()
    bounds = [0, *(position for position, _ in found), len(logs)]
    points = []
    for i, (position, score) in enumerate(found):
        p, change = _split_test(logs[bounds[i]:position], logs[position:bounds[i + 2]])
        points.append(ChangePoint(position, change, p, score))
    return points


def segment_noise(values: Sequence[float], points: Sequence[ChangePoint], left_out: frozenset = frozenset()) -> Noise:
    """The between-run spread within the segments between change points, without the
    points at indexes ``left_out`` (those being compared)."""
    bounds = [0, *(point.position for point in points), len(values)]
    noise = NO_NOISE
    for start, end in zip(bounds, bounds[1:], strict=False):
        noise = noise + spread_of([values[i] for i in range(start, end) if i not in left_out])
    return noise


def _split_test(left: list[float], right: list[float]) -> tuple[float, float]:
    """(p of a two-sided pooled t-test of the logs, relative change of the level)."""
    mean_left, mean_right = sum(left) / len(left), sum(right) / len(right)
    squares = sum((x - mean_left) ** 2 for x in left) + sum((x - mean_right) ** 2 for x in right)
    df = len(left) + len(right) - 2
    change = bounded_exp(mean_right - mean_left) - 1
    if df < 1:
        return 1.0, change
    se = math.sqrt(squares / df * (1 / len(left) + 1 / len(right)))
    if se == 0:
        return (1.0 if mean_left == mean_right else 0.0), change
    return t_two_sided_p((mean_right - mean_left) / se, df), change


def _best_split(logs: list[float]) -> tuple[int, float] | None:
    """The split (index of the right side's first point) maximising Q, with its Q."""
    n = len(logs)
    if n < MIN_POINTS:
        return None
    distance = [[abs(x - y) for y in logs] for x in logs]
    total = sum(sum(row) for row in distance) / 2
    # within the left side, and across the split, maintained as the split moves right
    within_left = sum(distance[i][k] for i in range(MIN_SEGMENT) for k in range(i + 1, MIN_SEGMENT))
    across = sum(distance[i][j] for i in range(MIN_SEGMENT) for j in range(MIN_SEGMENT, n))
    best: tuple[int, float] | None = None
    for split in range(MIN_SEGMENT, n - MIN_SEGMENT + 1):
        if split > MIN_SEGMENT:
            moved = split - 1  # the point that joined the left side
            to_left = sum(distance[moved][:moved])
            to_right = sum(distance[moved][moved + 1:])
            within_left += to_left
            across += to_right - to_left
        within_right = total - within_left - across
        m, r = split, n - split
        energy = 2 * across / (m * r) - 2 * within_left / (m * (m - 1)) - 2 * within_right / (r * (r - 1))
        score = m * r / n * energy
        if best is None or score > best[1] + 1e-12:
            best = (split, score)
    return best
