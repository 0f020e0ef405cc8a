"""Many compared configurations taken together: the suite's answer in one line.

A **configuration** is one compared row: an arm against its baseline in one comparable
group (one protocol, workload and environment: a shape of a kernel, a pass, a GPU). An
aggregate takes a set of them and says how many got each verdict, their **geometric-mean
ratio** (value / baseline) with its interval, and the worst of them.

- **Weights.** Shapes weigh equally, one configuration one vote, whatever its runs, its
  time or its family: a suite of 40 sequence lengths of one kernel and 2 of another says
  what its 42 configurations say, as the geometric mean over a benchmark suite does
  (Fleming and Wallace, 1986: the mean of ratios that is the same whichever side is the
  baseline).
- **The interval** is a Student t interval over the configurations' log ratios: their
  mean ± t(1 - alpha/2, k - 1) · s / √k, exponentiated (k configurations, s the standard
  deviation of their log ratios). It reads only each row's ratio, which every compared row
  has whatever its evidence (runs repeated, one run a side, bands or the threshold alone),
  and each observed log ratio carries both the noise of its runs and how far its shape's
  true change lies from the others', so the interval is wide when the shapes disagree or
  the runs are noisy: "the suite moved by this much" is claimed only where the shapes
  moved together. Combining the rows' own between-run intervals instead would need every
  row to have one (most rows of one run a side have none) and would say nothing of shapes
  that moved in opposite directions. With one configuration there is no spread between
  shapes: the interval is that row's own (from its test), if it has one.
- **The worst** is the configuration that lost most against its baseline: the lowest
  speedup (the highest ratio where less is better), whatever its verdict, which it carries
  beside it; a configuration without a better direction comes last.

Ratios that are not finite and positive (a baseline of 0, a figure too large to hold) are
counted with their verdict but left out of the mean and the interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from kidx.analysis.significance import ALPHA, VERDICTS, bounded_exp, t_quantile


class Configuration(NamedTuple):
    """One compared row, as an aggregate reads it."""

    ratio: float  # value / baseline
    speedup: float | None  # how many times better than the baseline; None without a direction
    verdict: str | None  # one of kidx.analysis.significance.VERDICTS; None: not judged, counted nowhere
    ci: tuple[float, float] | None = None  # the row's own interval of the ratio
    identity: Any = None  # what the caller names the row by: handed back as the worst


class Aggregate(NamedTuple):
    configurations: int
    counts: dict[str, int]  # by verdict, in VERDICTS order, each counted even when 0
    geomean: float | None  # the geometric-mean ratio; None without a finite positive ratio
    ci: tuple[float, float] | None  # its (1 - alpha) interval
    worst: Configuration | None


def aggregate(configurations: Sequence[Configuration], alpha: float = ALPHA) -> Aggregate:
    """The aggregate of ``configurations`` (one vote each) at confidence 1 - ``alpha``."""
    counts = dict.fromkeys(VERDICTS, 0)
    for configuration in configurations:
        if configuration.verdict is not None:
            counts[configuration.verdict] = counts.get(configuration.verdict, 0) + 1
    usable = [c for c in configurations if math.isfinite(c.ratio) and c.ratio > 0]
    logs = [math.log(c.ratio) for c in usable]
    geomean = ci = None
    if logs:
        mean = sum(logs) / len(logs)
        geomean = bounded_exp(mean)
        if len(logs) == 1:
            ci = usable[0].ci
        else:
            sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
            half = t_quantile(1 - alpha / 2, len(logs) - 1) * sd / math.sqrt(len(logs)) if sd else 0.0
            ci = (bounded_exp(mean - half), bounded_exp(mean + half))
    return Aggregate(len(configurations), counts, geomean, ci, worst_of(configurations))


def worst_of(configurations: Sequence[Configuration | None]) -> Configuration | None:
    """The configuration that lost most: the lowest speedup (the first of equals); one
    without a direction only where none has one."""
    found = [c for c in configurations if c is not None]
    return min(found, key=_loss, default=None)


def _loss(configuration: Configuration) -> tuple[int, float]:
    speedup = configuration.speedup
    if speedup is None or math.isnan(speedup):
        return (1, 0.0)
    return (0, speedup)
