"""The index's cell takes a kernel's shapes together as compare --aggregate does: one shape one vote."""

from __future__ import annotations

import math
import statistics

import pytest

from kidx.operations.select.analysed_runs import Referenced
from kidx.publish.matrix import cell_view
from kidx.publish.model import Cell, Line, summary

T_975_3 = 3.182446305284263  # Student t, 0.975 quantile, 3 degrees of freedom


def _cell(*speedups: float, baseline: bool = False) -> Cell:
    line = Line(Referenced("sha256:1", "impl", {}), "impl", [], baseline)
    return Cell(None, line, math.prod(speedups) ** (1 / len(speedups)), [], {}, speedups)  # type: ignore[arg-type]


def test_a_kernel_s_speedup_weighs_every_shape_once_whatever_its_family():
    """A family of three shapes 2x faster and one of a single shape 2x slower: the
    families' means would give 1.00x; the four shapes give 2^(1/2)."""
    taken = summary([_cell(2.0, 2.0, 2.0), _cell(0.5)])
    assert taken.speedup == pytest.approx(2 ** 0.5, rel=1e-12)
    assert (taken.shapes, taken.families) == (4, 2)
    logs = [math.log(1 / s) for s in (2.0, 2.0, 2.0, 0.5)]
    half = T_975_3 * statistics.stdev(logs) / 2
    low, high = math.exp(statistics.mean(logs) - half), math.exp(statistics.mean(logs) + half)
    assert taken.interval == pytest.approx((1 / high, 1 / low), rel=1e-9)


def test_the_cell_says_how_it_weighs_the_shapes():
    taken = summary([_cell(2.0, 2.0, 2.0), _cell(0.5)])
    assert taken.interval is not None
    low, high = taken.interval
    view = cell_view(taken, "k.html")
    assert view["speedup"] == "1.41×"
    assert view["tip"] == ("1.41× the baseline's speed, geometric mean of 4 shapes in 2 families, each shape one "
                           f"vote (95% interval {low:.2f}-{high:.2f}×)")
    assert cell_view(summary([_cell(1.5)]), "k.html")["tip"] == "1.50× the baseline's speed"
    assert cell_view(summary([_cell(1.0, 1.0, baseline=True)]), "k.html")["tip"] == "the baseline"
