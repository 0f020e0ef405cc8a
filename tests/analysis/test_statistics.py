"""The statistics behind compare and series: headline figures, bands, samples, and the
Mann-Whitney U test, checked against values worked out by hand and by the textbook."""

from __future__ import annotations

import math

import pytest

from kidx.analysis.measures import Measure, measure_of
from kidx.analysis.significance import judge, mann_whitney_u

LATENCY = {"status": "passed", "timing": {"latencyNs": {"median": 1000}, "primaryStatistic": "median"}}


def _latency(median, p20=None, p80=None, **extra):
    spec = {"status": "passed", "timing": {"latencyNs": {"median": median}, "primaryStatistic": "median"}, **extra}
    if p20 is not None:
        spec["measurements"] = [
            {"metric": "latency", "statistic": "p20", "unit": "ns", "value": p20},
            {"metric": "latency", "statistic": "p80", "unit": "ns", "value": p80},
        ]
    return measure_of(spec)


def test_latency_headline_with_band():
    assert _latency(417536, 417056, 418138) == Measure("latency", "median", 417536, "ns", 417056, 418138, None,
                                                       "p20-p80")


def test_memory_headline_and_direction_from_the_protocol():
    spec = {"status": "passed", "memory": {"peakAllocatedBytes": {"median": 734134784}, "primaryStatistic": "median"}}
    measure = measure_of(spec, {"measurement": {"metric": "peak_memory"}})
    assert (measure.metric, measure.unit, measure.value, measure.lower_is_better) == ("peak_memory", "B", 734134784, True)


def test_primary_statistic_falls_back_to_the_protocol_then_median():
    spec = {"status": "passed", "timing": {"latencyNs": {"median": 5, "min": 3}}}
    assert measure_of(spec, {"measurement": {"primaryStatistic": "min"}}).value == 3
    assert measure_of(spec).value == 5


def test_no_figure_is_none():
    assert measure_of({"status": "failed"}) is None
    assert measure_of({"status": "passed", "timing": {"latencyNs": {"mean": 4}}}) is None
    assert measure_of({"status": "passed", "timing": {"latencyNs": {"median": 0}}}) is None  # no ratio to 0


@pytest.mark.parametrize("extra, expected", [
    ({"samples": {"metric": "latency", "unit": "ns", "values": [1, 2, 3]}}, (1, 2, 3)),
    ({"samples": {"metric": "latency", "unit": "ms", "values": [1, 2]}}, (1e6, 2e6)),
    ({"samples": {"metric": "peak_memory", "unit": "bytes", "values": [1, 2]}}, None),  # another metric
    ({"measurements": [{"metric": "latency", "statistic": "sample", "unit": "us", "value": v} for v in (1, 2)]},
     (1e3, 2e3)),
])
def test_samples_in_each_form(extra, expected):
    assert _latency(1000, **extra).samples == expected


def test_band_rule_needs_the_threshold_and_apart_bands():
    base = _latency(1000, 990, 1010)
    assert judge(_latency(1100, 1090, 1110), base).verdict == "slower"  # +10%, apart
    assert judge(_latency(1040, 1030, 1050), base).verdict == "same"  # +4%: below 5%
    # +10% but bands overlap: they are too wide to show a change of 5%, so not "same"
    overlapping = judge(_latency(1100, 1000, 1200), base)
    assert (overlapping.verdict, overlapping.reason) == ("inconclusive", "p20-p80 bands too wide to show a 5% change")
    assert judge(_latency(1040, 1030, 1050), base, threshold=0.02).verdict == "slower"
    # no change, but bands of ±10% could not have shown one of 5% either way
    assert judge(_latency(1000, 900, 1100), base).verdict == "inconclusive"
    faster = judge(_latency(500, 490, 510), base)
    assert (faster.verdict, faster.ratio, faster.speedup, faster.test) == ("faster", 0.5, 2.0, "bands")


def test_without_spread_the_threshold_alone_decides():
    judgement = judge(_latency(1100), _latency(1000))
    assert (judgement.test, judgement.significant) == ("threshold", True)


def _sampled(values):
    return _latency(sorted(values)[len(values) // 2],
                    measurements=[{"metric": "latency", "statistic": "sample", "unit": "ns", "value": v} for v in values])


def test_samples_use_mann_whitney():
    base = _sampled([100, 101, 102, 103, 104, 105, 106, 107])
    shifted = _sampled([120, 121, 122, 123, 124, 125, 126, 127])
    judgement = judge(shifted, base)
    assert (judgement.test, judgement.verdict) == ("mann-whitney", "slower")
    assert judgement.p_value == pytest.approx(2 / math.comb(16, 8))  # exact: only one arrangement is as extreme
    mixed = _sampled([100, 120, 102, 122, 104, 124, 106, 126])
    assert judge(mixed, base).verdict == "same"


def test_mann_whitney_exact_small_samples():
    assert mann_whitney_u([1, 2, 3], [4, 5, 6]) == pytest.approx(0.1)  # 2 / C(6, 3)
    assert mann_whitney_u([1, 2, 3, 4, 5], [1.5, 2.5, 3.5, 4.5, 5.5]) == pytest.approx(0.6904761904761905)


def test_mann_whitney_normal_approximation_with_ties():
    # U = 0, n1 = n2 = 4, ties in pairs: variance 16/12 * (9 - 24/56); z = (8 - 0.5) / sqrt(variance)
    variance = 16 / 12 * (9 - 4 * 6 / (8 * 7))
    expected = math.erfc((8 - 0.5) / math.sqrt(variance) / math.sqrt(2))
    assert mann_whitney_u([1, 1, 2, 2], [3, 3, 4, 4]) == pytest.approx(expected)
    assert mann_whitney_u([5, 5, 5], [5, 5, 5]) == 1.0
