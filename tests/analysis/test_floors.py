"""Floors: the between-run rule on the runs' fastest samples where those are steadier than the
runs' statistics (kidx.analysis.significance, docs/analysis.md)."""

from __future__ import annotations

import math

import pytest

from kidx.analysis.measures import Measure
from kidx.analysis.significance import (
    FLOOR_DF,
    FLOOR_SHARE,
    FLOORS,
    SLOWER,
    STATISTICS,
    Floors,
    floor_of,
    floors_of,
    judge_runs,
    rule_text,
    spread_of,
)


def latency(value: float, samples: tuple[float, ...] | None = None) -> Measure:
    return Measure("latency", "median", value, "ns", samples=samples)


def test_a_runs_floor_is_its_fastest_positive_sample():
    assert floor_of(latency(105.0, (107.0, 0.0, 101.5, 103.0))) == 101.5
    assert floor_of(latency(105.0)) is None
    assert floor_of(latency(105.0, (0.0,))) is None
    assert floor_of(Measure("throughput", "median", 5.0, "items/s", samples=(4.0, 6.0))) is None  # more is better
    assert floor_of(Measure("peak_memory", "max", 5.0, "B", samples=(4.0, 6.0))) is None  # no clock's doing
    assert floor_of(latency(105.0, (math.inf, math.nan, -3.0, 104.0))) == 104.0
    assert floor_of(latency(105.0, (math.inf,))) is None
    assert floor_of(None) is None
    assert floors_of([latency(1.0, (1.0,)), latency(2.0, (1.5, 2.5))]) == [1.0, 1.5]
    assert floors_of([latency(1.0, (1.0,)), latency(2.0)]) is None  # all or nothing


# five runs a side: medians 1 % apart between runs (a power cap's clock steps), the floors 0.1 %;
# side b 2 % slower in both
JITTER = (1.0, 0.985, 1.012, 0.993, 1.009)
FLOOR_JITTER = (1.0, 0.9987, 1.0011, 0.9994, 1.0009)
MEDIANS_A = [100.0 * j for j in JITTER]
MEDIANS_B = [102.0 * j for j in reversed(JITTER)]
FLOORS_A = [90.0 * j for j in FLOOR_JITTER]
FLOORS_B = [91.8 * j for j in reversed(FLOOR_JITTER)]


def _judged(floors: Floors | None, share: float = FLOOR_SHARE):
    return judge_runs(latency(102.0), latency(100.0), MEDIANS_B, MEDIANS_A, floors=floors, min_t=4.0,
                      floor_share=share)


def test_a_slowdown_the_medians_cannot_show_is_slower_on_the_floors():
    on_statistics = _judged(None)
    assert on_statistics.judged_on == STATISTICS and on_statistics.verdict != SLOWER
    judged = _judged(Floors(FLOORS_B, FLOORS_A))
    assert judged.verdict == SLOWER and judged.judged_on == FLOORS
    assert judged.ratio == pytest.approx(91.8 * 1.0 / (90.0 * 1.0), rel=1e-3)  # the floors' medians
    floor_sigma = (spread_of(FLOORS_A) + spread_of(FLOORS_B)).sigma
    median_sigma = (spread_of(MEDIANS_A) + spread_of(MEDIANS_B)).sigma
    assert judged.reason == (f"judged on the runs' floors (fastest samples), {floor_sigma * 100:.2g}% apart between "
                             f"runs where their medians are {median_sigma * 100:.2g}% apart")
    assert judged.detectable is not None and judged.detectable < on_statistics.detectable


def test_floors_judge_only_where_their_spread_is_under_the_share():
    assert _judged(Floors(FLOORS_B, FLOORS_A), share=0).judged_on == STATISTICS  # 0: never
    # floors as noisy as the medians: the medians judge
    assert _judged(Floors([0.9 * m for m in MEDIANS_B], [0.9 * m for m in MEDIANS_A])).judged_on == STATISTICS
    floor_sigma = (spread_of(FLOORS_A) + spread_of(FLOORS_B)).sigma
    median_sigma = (spread_of(MEDIANS_A) + spread_of(MEDIANS_B)).sigma
    ratio = floor_sigma / median_sigma
    assert _judged(Floors(FLOORS_B, FLOORS_A), share=ratio * 0.99).judged_on == STATISTICS
    assert _judged(Floors(FLOORS_B, FLOORS_A), share=ratio * 1.01).judged_on == FLOORS


def test_two_spreads_are_chosen_between_only_with_enough_degrees_of_freedom():
    # two runs a side: 2 degrees of freedom, under FLOOR_DF: the statistics judge
    assert FLOOR_DF == 4
    two = judge_runs(latency(102.0), latency(100.0), MEDIANS_B[:2], MEDIANS_A[:2],
                     floors=Floors(FLOORS_B[:2], FLOORS_A[:2]), min_t=4.0)
    assert two.judged_on == STATISTICS
    # three a side on the floors' side is exactly FLOOR_DF; three and two, one fewer
    assert judge_runs(latency(102.0), latency(100.0), MEDIANS_B[:3], MEDIANS_A[:3],
                      floors=Floors(FLOORS_B[:3], FLOORS_A[:3]), min_t=4.0).judged_on == FLOORS
    assert judge_runs(latency(102.0), latency(100.0), MEDIANS_B[:3], MEDIANS_A[:2],
                      floors=Floors(FLOORS_B[:3], FLOORS_A[:2]), min_t=4.0).judged_on == STATISTICS
    # the statistics' spread needs its degrees of freedom too: history on the floors' side only
    assert judge_runs(latency(102.0), latency(100.0), MEDIANS_B[:2], MEDIANS_A[:2],
                      floors=Floors(FLOORS_B[:2], FLOORS_A[:2], spread_of(FLOORS_A)), min_t=4.0).judged_on == STATISTICS
    # the series' history of floors adds the degrees of freedom the arms lack
    history = spread_of([90.0 * j for j in FLOOR_JITTER])
    statistics_history = spread_of([100.0 * j for j in JITTER])
    with_history = judge_runs(latency(102.0), latency(100.0), MEDIANS_B[:2], MEDIANS_A[:2], statistics_history,
                              floors=Floors(FLOORS_B[:2], FLOORS_A[:2], history), min_t=4.0)
    assert with_history.judged_on == FLOORS


def test_floors_that_never_move_are_no_evidence():
    """The same floor in every run (a timer's clamp, one glitch sample each): a spread of 0 is
    not under any share of the medians', and the medians, 10 % apart, judge."""
    judged = judge_runs(latency(110.0), latency(100.0), [110.0 * j for j in JITTER], MEDIANS_A,
                        floors=Floors([1.0] * 5, [1.0] * 5), min_t=4.0)
    assert judged.judged_on == STATISTICS and judged.verdict == SLOWER


def test_a_change_the_statistics_confirm_stands_whatever_the_floors_say():
    """A version that draws more power: its medians 5 % slower, its floors (at the top clock)
    unchanged. The statistics confirm the slowdown; the floors, steadier, would call it same."""
    steady = [100.0 * j for j in (1.0, 1.001, 0.999, 1.0005, 0.9995)]
    slower = [105.0 * j for j in (1.0, 1.001, 0.999, 1.0005, 0.9995)]
    floors = Floors(list(FLOORS_A), list(reversed(FLOORS_A)))
    judged = judge_runs(latency(105.0), latency(100.0), slower, steady, floors=floors, min_t=4.0, floor_share=100.0)
    assert judged.verdict == SLOWER and judged.judged_on == STATISTICS
    # without a confirmed change the floors judge: the same runs 0.1 % apart are same on floors
    same = judge_runs(latency(100.1), latency(100.0), [100.1 * j for j in JITTER], MEDIANS_A, floors=floors,
                      min_t=4.0, floor_share=100.0)
    assert same.judged_on == FLOORS


def test_the_rule_says_when_floors_judge():
    assert ("a kernel timer's runs with samples are judged on their floors (fastest samples) instead where the "
            f"floors' spread between runs is under {FLOOR_SHARE:g} times the statistics' (each from {FLOOR_DF} degrees "
            "of freedom or more), unless the statistics confirm a change themselves") in rule_text(None)
    assert math.isclose(FLOOR_SHARE, 0.5)


def test_the_rule_names_floors_only_where_runs_may_be_judged_on_them():
    from kidx.analysis.significance import FLOOR_SHARE, rule_text

    clause = (f"judged on their floors (fastest samples) instead where the floors' spread between runs is under "
              f"{FLOOR_SHARE:g} times the statistics'")
    assert clause in rule_text(None) and clause in rule_text(0.05)
    assert "0.25 times the statistics'" in rule_text(None, floor_share=0.25)
    assert "floors" not in rule_text(None, floor_share=0) and "floors" not in rule_text(0.05, floor_share=0)
