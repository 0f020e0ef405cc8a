"""Floors (docs/analysis.md, "Floors: a power-capped GEMM"): a kernel timer's runs are judged on
their fastest samples where those are far steadier between runs than the runs' medians. Real
runs: Liger's geglu forward timed by `kidx record --timer cuda_graph --min-time 1` on an H100
(tests/data/h100-geglu-min-time), whose medians move 0.85 % between processes (up to 1.4 %) with the
power cap's clock steps while their fastest samples move 0.26 %. Five processes a side,
one side slowed by 2 %: slower in all four shapes, the two the medians miss on floors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recorded_sides import recorded_sides

from kidx.kinds.registry import registry
from kidx.operations.analyse.compare import CompareRequest, compare
from kidx.operations.analyse.series import SeriesRequest, build_series
from kidx.store.store import Store

GEGLU = Path(__file__).resolve().parents[1] / "data" / "h100-geglu-min-time" / "store.kidx.json"
SELECTOR = "kernel=geglu,operation=forward,provider=liger,batch=1"


@pytest.fixture
def sides(kidx, tmp_path):
    """A store of geglu forward's liger runs of batch 1 (ten processes, four shapes), labelled
    side=a (repetitions 1-5) and side=b (6-10), side b's figures times a factor."""
    def side_of(run: dict) -> str:
        return "a" if int(run["metadata"]["labels"]["repetition"]) <= 5 else "b"

    return recorded_sides(kidx, tmp_path / "recorded", GEGLU, ("-l", SELECTOR), side_of, 40)


def _rows(kidx, store: Path, *arguments: str) -> list[dict]:
    code, out, err = kidx("compare", "--by", "label=side", "--baseline", "a", "-o", "json", *arguments,
                          store_path=store)
    assert code == 0, err
    return sorted((row for group in json.loads(out)["groups"] for row in group["rows"] if row["verdict"] != "baseline"),
                  key=lambda row: row["run"])


def test_a_2_percent_slowdown_of_a_power_capped_gemm_is_slower_on_floors(kidx, sides, tmp_path):
    store = sides(1.02, tmp_path / "slowed")
    rows = _rows(kidx, store)
    assert len(rows) == 4
    # slower in all four: on floors in the two shapes whose medians do not confirm it themselves
    assert [row["verdict"] for row in rows] == ["slower"] * 4
    assert sorted(row["judgedOn"] for row in rows) == ["floors", "floors", "statistics", "statistics"]
    for row in rows:
        if row["judgedOn"] == "statistics":
            assert row["reason"] is None
            continue
        assert row["ratio"] == pytest.approx(1.02, abs=0.004)  # the ratio of the sides' floors
        assert row["reason"].startswith("judged on the runs' floors (fastest samples), ")
        assert row["detectableChange"] < 0.02  # a 2 % change shows 95 % of the time
    # the medians alone (floors never used): two of the four slower, one inconclusive, one even same
    medians = compare(Store(store), registry(), CompareRequest(names=[], label_key="side", baseline="a",
                                                                floor_share=0))
    verdicts = [row.verdict for row in medians.rows if row.verdict != "baseline"]
    assert sorted(verdicts) == ["inconclusive", "same", "slower", "slower"]
    assert {row.judgement.judged_on for row in medians.rows if row.judgement} == {"statistics"}
    assert "floors" not in medians.rule  # the rule as it was applied
    # the table says what the verdict was judged on
    code, out, err = kidx("compare", "--by", "label=side", "--baseline", "a", store_path=store)
    assert code == 0, err
    assert out.count(" slower on floors ") == 2 and out.count(" slower ") == 4


def test_the_same_processes_unchanged_are_same_on_floors(kidx, sides, tmp_path):
    store = sides(1.0, tmp_path / "unchanged")
    rows = _rows(kidx, store)
    assert [(row["verdict"], row["judgedOn"]) for row in rows] == [("same", "floors")] * 4
    for row in rows:
        bound = max(0.005, row["detectableChange"])
        assert row["ciLow"] >= 1 - bound and row["ciHigh"] <= 1 + bound


def test_series_judges_the_step_on_floors_too(kidx, sides, tmp_path):
    """The same rule in `kidx series`: each shape's ten runs in the order observed, the last
    five slowed by 2 %, each step judged one run against the one before it, with the spread
    of the series' other runs: the step into the sixth is slower on floors in two shapes,
    where the medians alone call it in none (same in one, inconclusive in three)."""
    store = sides(1.02, tmp_path / "slowed")
    code, out, err = kidx("series", "-o", "json", store_path=store)
    assert code == 0, err
    series = json.loads(out)["series"]
    assert [len(one["points"]) for one in series] == [10] * 4
    steps = sorted((one["points"][5]["verdict"], one["points"][5]["judgedOn"]) for one in series)
    assert steps == [("inconclusive", "floors"), ("inconclusive", "statistics"), ("slower", "floors"),
                     ("slower", "floors")]
    for one in series:
        step = one["points"][5]
        if step["judgedOn"] == "floors":
            assert step["reason"].startswith("judged on the runs' floors (fastest samples), ")
    medians = build_series(Store(store), registry(), SeriesRequest(names=[], floor_share=0))
    assert "floors" not in medians.rule
    assert sorted(one.points[5].verdict for one in medians.series) == ["inconclusive", "inconclusive", "inconclusive",
                                                                      "same"]


def test_a_published_site_says_which_steps_were_judged_on_floors(kidx, sides, tmp_path):
    """Pages show the floors' ratio as the change of such a step: its verdict says so, as the
    tables of compare and series do (the counts key on the verdict alone)."""
    import re

    from kidx.publish.tree import html, unpack

    store = sides(1.02, tmp_path / "slowed")
    site = tmp_path / "site"
    code, _, err = kidx("publish", str(site), store_path=store)
    assert code == 0, err
    cells = []
    for page in sorted((site / "series").glob("*.html")):
        data = unpack(re.search(r'<div id="page-data" data-deflate="([A-Za-z0-9+/=]*)" hidden></div>',
                                page.read_text(encoding="utf-8"))[1])
        for section in data.values():
            cells += re.findall(r'<td class="num">[+-][0-9.]+%</td><td>([a-z ()]+)</td>', html(section["body"]))
    # the step into the slowed runs, as kidx series judges it
    assert sorted(cell for cell in cells if cell.startswith("slower")) == ["slower on floors"] * 2
    assert "inconclusive on floors" in cells and "inconclusive" in cells
    regressions = (site / "regressions.html").read_text(encoding="utf-8")
    verdicts = re.findall(r'<tr class="verdict-[a-z]+"><td>([a-z ()]+)</td>', regressions)
    assert sorted(verdicts) == ["inconclusive", "same on floors", "same on floors", "same on floors"]
    assert "4 series: 1 inconclusive, 3 same." in regressions
