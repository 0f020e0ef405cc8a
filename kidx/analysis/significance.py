"""When is a difference between two figures real? One rule, stated in every output.

- With raw samples on both sides: a two-sided Mann–Whitney U test (as asv uses), exact
  for small samples without ties, else the normal approximation with tie correction;
  significant when p < ALPHA and the change exceeds the threshold.
- With p20/p80 bands on both sides: significant when the change exceeds the threshold
  and the bands do not overlap.
- With neither: significant when the change exceeds the threshold (the output says no
  spread was recorded).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from kidx.analysis.measures import Measure

ALPHA = 0.05
DEFAULT_THRESHOLD = 0.05
EXACT_LIMIT = 400  # n1 * n2 up to which the exact U distribution is counted


class Judgement(NamedTuple):
    ratio: float  # value / baseline
    speedup: float  # how many times better than the baseline (baseline / value when less is better)
    significant: bool
    test: str  # "mann-whitney", "bands" or "threshold"
    p_value: float | None = None

    @property
    def verdict(self) -> str:
        """faster, slower or same; the speedup already knows which direction is better."""
        if not self.significant:
            return "same"
        return "faster" if self.speedup > 1 else "slower"


def judge(value: Measure, baseline: Measure, threshold: float = DEFAULT_THRESHOLD) -> Judgement:
    ratio = value.value / baseline.value if baseline.value else math.inf
    if value.lower_is_better:
        speedup = baseline.value / value.value if value.value else math.inf
    else:
        speedup = ratio
    beyond = abs(ratio - 1) > threshold
    if value.samples and baseline.samples:
        p = mann_whitney_u(value.samples, baseline.samples)
        return Judgement(ratio, speedup, beyond and p < ALPHA, "mann-whitney", p)
    if None not in (value.low, value.high, baseline.low, baseline.high):
        apart = value.low > baseline.high or value.high < baseline.low
        return Judgement(ratio, speedup, beyond and apart, "bands")
    return Judgement(ratio, speedup, beyond, "threshold")


def rule_text(threshold: float) -> str:
    pct = f"{threshold * 100:g}%"
    return (f"a change is significant when it exceeds {pct} and the p20-p80 bands do not overlap "
            f"(with raw samples: Mann-Whitney U, p < {ALPHA:g}; with no spread recorded: the {pct} threshold alone)")


def mann_whitney_u(a, b) -> float:
    """Two-sided p-value of the Mann–Whitney U test of samples ``a`` and ``b``."""
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        return 1.0
    ranks = _ranks(list(a) + list(b))
    r1 = sum(ranks[:n1])
    u1 = r1 - n1 * (n1 + 1) / 2
    u = min(u1, n1 * n2 - u1)
    tied = len(set(a) | set(b)) < n1 + n2
    if not tied and n1 * n2 <= EXACT_LIMIT:
        return min(1.0, 2 * _exact_cdf(int(round(u)), n1, n2))
    n = n1 + n2
    counts: dict = {}
    for x in list(a) + list(b):
        counts[x] = counts.get(x, 0) + 1
    tie_term = sum(t ** 3 - t for t in counts.values())
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0:
        return 1.0
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / math.sqrt(variance)  # continuity correction
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # ties share the mean rank
        i = j + 1
    return ranks


def _exact_cdf(u: int, n1: int, n2: int) -> float:
    """P(U <= u) under the null hypothesis, by counting the arrangements (no ties)."""
    # counts[i][j][k]: arrangements of i and j items with U = k, rolled over one dimension
    previous = [[1] + [0] * (n1 * n2) for _ in range(n2 + 1)]
    for i in range(1, n1 + 1):
        current = [[0] * (n1 * n2 + 1) for _ in range(n2 + 1)]
        current[0][0] = 1
        for j in range(1, n2 + 1):
            for k in range(n1 * n2 + 1):
                # the largest item is from the first sample (it beats all j) or from the second
                total = current[j - 1][k]
                if k >= j:
                    total += previous[j][k - j]
                current[j][k] = total
        previous = current
    counts = previous[n2]
    return sum(counts[: u + 1]) / math.comb(n1 + n2, n1)
