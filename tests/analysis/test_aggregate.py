"""kidx.analysis.aggregate: configurations taken together, one vote each, checked by hand."""

from __future__ import annotations

import math

import pytest

from kidx.analysis.aggregate import Configuration, aggregate, worst_of
from kidx.analysis.significance import VERDICTS

T_975_2 = 4.302652729749464  # Student t, 0.975 quantile, 2 degrees of freedom (any table)


def _config(ratio: float, verdict: str | None = "same", ci=None, name: str = "") -> Configuration:
    return Configuration(ratio, 1 / ratio if ratio > 0 and math.isfinite(ratio) else None, verdict, ci, name)


def test_geomean_and_t_interval_over_the_log_ratios():
    ratios = [1.2, 1.0, 0.75]
    result = aggregate([_config(r, v, name=n) for r, v, n in
                        zip(ratios, ("slower", "same", "faster"), "abc", strict=True)])
    logs = [math.log(r) for r in ratios]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 2)
    assert result.geomean == pytest.approx((1.2 * 1.0 * 0.75) ** (1 / 3), rel=1e-12)
    assert result.ci == pytest.approx((math.exp(mean - T_975_2 * sd / math.sqrt(3)),
                                       math.exp(mean + T_975_2 * sd / math.sqrt(3))), rel=1e-9)
    assert result.configurations == 3
    assert result.counts == {"faster": 1, "slower": 1, "same": 1, "inconclusive": 0, "unconfirmed": 0,
                             "direction-unknown": 0}
    assert list(result.counts) == list(VERDICTS)
    assert result.worst is not None and result.worst.identity == "a"  # the lowest speedup: 1 / 1.2


def test_each_configuration_is_one_vote():
    """Four shapes of one kernel at 2x slower and one of another at 2x faster: the mean
    of the five, not of the two kernels."""
    result = aggregate([_config(2.0)] * 4 + [_config(0.5)])
    assert result.geomean == pytest.approx(2 ** (3 / 5), rel=1e-12)


def test_one_configuration_keeps_its_own_interval_and_none_has_none():
    assert aggregate([_config(1.1, ci=(1.05, 1.15))]).ci == (1.05, 1.15)
    assert aggregate([_config(1.1)]).ci is None
    empty = aggregate([])
    assert (empty.configurations, empty.geomean, empty.ci, empty.worst) == (0, None, None, None)


def test_equal_ratios_give_a_point_interval_and_a_bad_ratio_is_counted_not_averaged():
    result = aggregate([_config(1.5), _config(1.5), _config(math.inf, "unconfirmed"), _config(0.0, "faster")])
    assert result.geomean == pytest.approx(1.5) and result.ci == pytest.approx((1.5, 1.5))
    assert (result.configurations, result.counts["unconfirmed"], result.counts["faster"]) == (4, 1, 1)


def test_unjudged_configurations_are_counted_nowhere_and_no_direction_is_never_the_worst():
    result = aggregate([Configuration(3.0, None, "direction-unknown", None, "x"), _config(1.2, None, name="y")])
    assert sum(result.counts.values()) == 1 and result.configurations == 2
    assert result.worst is not None and result.worst.identity == "y"
    assert worst_of([None, Configuration(3.0, None, "direction-unknown", None, "x")]).identity == "x"
