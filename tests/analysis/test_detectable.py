"""detectableChange: the smallest change the between-run rule calls at POWER (95 %) with the
spread and the runs at hand, never the threshold; runsNeeded: the runs a side with which a
change of the threshold (or, following the evidence, SAME_LIMIT) becomes detectable, never
fewer than the confirmation rule's two."""

from __future__ import annotations

import math

from kidx.analysis.measures import Measure
from kidx.analysis.significance import (
    CONFIRM_RUNS,
    POWER,
    critical_t,
    detectable_change,
    judge_runs,
    runs_needed,
    t_quantile,
)


def test_detectable_change_is_where_t_reaches_its_critical_value_plus_the_power_quantile():
    # df 4: t quantile 2.776 < MIN_T 5, so |t| >= 5 decides; 95 % of comparisons clear it at 5 + t(0.95, 4)
    assert critical_t(4) == 5.0
    assert detectable_change(0.1, 4, 3, 3) == math.expm1((5.0 + t_quantile(POWER, 4)) * 0.1 * math.sqrt(2 / 3))
    assert critical_t(4, min_t=4.0) == 4.0
    # df 1: the t quantile (12.7) is larger than MIN_T
    assert critical_t(1) == t_quantile(0.975, 1) > 12
    # what the evidence can detect, however small: 0.001 of spread, 3 a side, df 10
    assert detectable_change(0.001, 10, 3, 3) == math.expm1((5.0 + t_quantile(POWER, 10)) * 0.001 * math.sqrt(2 / 3))
    assert detectable_change(0.001, 10, 3, 3) < 0.01
    assert detectable_change(None, 0, 1, 1) is None


def test_runs_needed_is_the_fewest_that_detect_the_change_and_never_below_two():
    n = runs_needed(0.1, 4)  # a change of 5 % (SAME_LIMIT), spread 0.1 of the logs

    def detects(k: int) -> bool:
        df = max(4, 2 * (k - 1))
        return (critical_t(df) + t_quantile(POWER, df)) * 0.1 * math.sqrt(2 / k) <= math.log1p(0.05)

    assert detects(n) and not detects(n - 1)
    assert runs_needed(0.001, 4, 0.02) == CONFIRM_RUNS  # detectable with one run a side, but a change needs two
    assert runs_needed(0.0, 3) == CONFIRM_RUNS and runs_needed(None, 0) is None
    assert runs_needed(5.0, 3) is None  # beyond the limit


def _measure(value: float) -> Measure:
    return Measure("latency", "median", value, "ns")


def test_an_inconclusive_verdict_says_what_would_decide_it():
    base, head = [100.0, 130.0, 90.0], [110.0, 140.0, 95.0]
    judgement = judge_runs(_measure(110), _measure(100), head, base, threshold=0.05)
    assert judgement.verdict == "inconclusive"
    logs = [[math.log(v) for v in side] for side in (head, base)]
    squares = sum((x - sum(side) / 3) ** 2 for side in logs for x in side)
    sigma = math.sqrt(squares / 4)
    assert judgement.detectable == math.expm1((5.0 + t_quantile(POWER, 4)) * sigma * math.sqrt(2 / 3))
    assert (judgement.runs_needed, judgement.runs_needed_for) == (runs_needed(sigma, 4, 0.05), 0.05) == (None, 0.05)
    assert judgement.reason == (f"noise between runs (±{sigma * 100:.1f}%) lets only a change of "
                                f"{judgement.detectable * 100:.1f}% or more show, not 5%; needs more than 1000 runs "
                                "a side to show 5%")
    tighter = judge_runs(_measure(101), _measure(100), [101, 103, 99], [100, 102, 98], threshold=0.05)
    assert tighter.verdict == "inconclusive" and tighter.runs_needed == runs_needed(tighter_sigma(), 4, 0.05) > 3
    assert tighter.reason.endswith(f"; needs {tighter.runs_needed} runs a side to show 5%")


def tighter_sigma() -> float:
    logs = [[math.log(v) for v in side] for side in ([101, 103, 99], [100, 102, 98])]
    return math.sqrt(sum((x - sum(side) / 3) ** 2 for side in logs for x in side) / 4)


def test_same_only_where_a_change_of_the_threshold_would_have_been_called():
    """Three runs a side 1 % apart: the interval lies within ±5 %, but a 5 % change would not
    have been called in 95 % of such comparisons: inconclusive (before, same)."""
    base, head = [100.0, 101.0, 99.0], [100.5, 101.5, 99.5]
    given = judge_runs(_measure(100.5), _measure(100), head, base, threshold=0.05)
    assert given.ci[0] > 0.95 and given.ci[1] < 1.05 and given.detectable > 0.05
    assert given.verdict == "inconclusive"
    # with ten runs a side of the same spread the 5 % would show: same, within ±5 %
    many_base, many_head = base * 4, head * 4
    same = judge_runs(_measure(100.5), _measure(100), many_head, many_base, threshold=0.05)
    assert (same.verdict, same.bound) == ("same", 0.05) and same.detectable < 0.05


def test_following_the_evidence_a_2_percent_step_is_called_at_the_timer_s_precision():
    """Five runs a side at 0.2 % of spread, a kernel timer's (floor 0.5 %, |t| >= 4): a 2 %
    slowdown is slower; the same runs unchanged are same within the larger of 0.5 % and
    what they could detect; with a 5 % threshold given the 2 % is same, within ±5 %."""
    base = [100.0, 100.2, 99.8, 100.1, 99.9]
    head = [v * 1.02 for v in base[::-1]]
    slower = judge_runs(_measure(102), _measure(100), head, base, min_t=4.0, floor=0.005)
    assert slower.verdict == "slower" and slower.threshold == 0.005
    aa = judge_runs(_measure(100), _measure(100), base[::-1], base, min_t=4.0, floor=0.005)
    assert aa.verdict == "same" and aa.bound == max(0.005, aa.detectable) and aa.detectable < 0.01
    fixed = judge_runs(_measure(102), _measure(100), head, base, threshold=0.05, min_t=4.0)
    assert (fixed.verdict, fixed.bound) == ("same", 0.05)


def test_following_the_evidence_noise_wider_than_5_percent_is_inconclusive():
    base, head = [100.0, 110.0, 92.0, 104.0, 96.0], [101.0, 111.0, 93.0, 105.0, 97.0]
    judgement = judge_runs(_measure(101), _measure(100), head, base)
    assert judgement.verdict == "inconclusive" and judgement.detectable > 0.05
    assert judgement.reason.endswith(f"needs {judgement.runs_needed} runs a side to show 5%")
