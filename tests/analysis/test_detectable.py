"""detectableChange: the smallest change the between-run rule could have called, and the
runs a side that would call a change of the threshold."""

from __future__ import annotations

import math

from kidx.analysis.measures import Measure
from kidx.analysis.significance import critical_t, detectable_change, judge_runs, runs_needed, t_quantile


def test_detectable_change_is_where_t_reaches_its_critical_value():
    # df 4: t quantile 2.776 < MIN_T 5, so |t| >= 5 decides
    assert critical_t(4) == 5.0
    assert detectable_change(0.1, 4, 3, 3) == math.expm1(5.0 * 0.1 * math.sqrt(2 / 3))
    # df 1: the t quantile (12.7) is larger than MIN_T
    assert critical_t(1) == t_quantile(0.975, 1) > 12
    assert detectable_change(0.001, 10, 3, 3) == 0.05  # never below the threshold
    assert detectable_change(None, 0, 1, 1) is None


def test_runs_needed_is_the_fewest_that_reach_the_threshold():
    n = runs_needed(0.1, 4)
    assert n == 211  # 5 * 0.1 * sqrt(2 / n) <= log(1.05)
    assert 5 * 0.1 * math.sqrt(2 / n) <= math.log1p(0.05) < 5 * 0.1 * math.sqrt(2 / (n - 1))
    assert runs_needed(0.0, 3) == 1 and runs_needed(None, 0) is None
    assert runs_needed(5.0, 3) is None  # beyond the limit


def _measure(value: float) -> Measure:
    return Measure("latency", "median", value, "ns")


def test_an_inconclusive_verdict_says_what_would_decide_it():
    base, head = [100.0, 130.0, 90.0], [110.0, 140.0, 95.0]
    judgement = judge_runs(_measure(110), _measure(100), head, base)
    assert judgement.verdict == "inconclusive"
    logs = [[math.log(v) for v in side] for side in (head, base)]
    squares = sum((x - sum(side) / 3) ** 2 for side in logs for x in side)
    sigma = math.sqrt(squares / 4)
    assert judgement.detectable == math.expm1(5.0 * sigma * math.sqrt(2 / 3))
    assert judgement.runs_needed == runs_needed(sigma, 4)
    assert judgement.reason.endswith(f"; needs {judgement.runs_needed} runs a side")
