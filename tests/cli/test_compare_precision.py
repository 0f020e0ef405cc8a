"""Verdicts at the timer's resolution (docs/analysis.md, "The threshold follows the
evidence"), on real kernel-timer runs: Liger's softmax forward timed by `kidx record
--timer cuda_graph` in 16 processes on an H100 (tests/data/h100-aa16), its processes
0.1-0.3 % apart. Five processes a side, one side slowed by 2 %: slower, where the old fixed
5 % threshold said same; the same ten processes unchanged: same, within what they can detect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recorded_sides import recorded_sides

AA16 = Path(__file__).resolve().parents[1] / "data" / "h100-aa16" / "store.kidx.json"
BENCHMARK = "softmax/forward"


@pytest.fixture
def sides(kidx, tmp_path):
    """A store of the softmax forward runs of processes 1-10 (liger), labelled side=a (1-5) and
    side=b (6-10), and a function that applies them with side b's figures times a factor."""
    def side_of(run: dict) -> str | None:
        repetition = int(run["metadata"]["labels"]["repetition"])
        return None if repetition > 10 else "a" if repetition <= 5 else "b"

    return recorded_sides(kidx, tmp_path / "recorded", AA16, ("-l", "provider=liger", "--field-selector",
                                                              f"spec.sourceNative.benchmark={BENCHMARK}"), side_of, 10)


def _verdict(kidx, store: Path, *arguments: str) -> dict:
    code, out, err = kidx("compare", "--by", "label=side", "--baseline", "a", "-o", "json", *arguments,
                          store_path=store)
    assert code == 0, err
    [row] = [row for group in json.loads(out)["groups"] for row in group["rows"] if row["verdict"] != "baseline"]
    return row


def test_a_real_2_percent_slowdown_in_5_processes_a_side_is_slower(kidx, sides, tmp_path):
    store = sides(1.02, tmp_path / "slowed")
    row = _verdict(kidx, store)
    assert row["verdict"] == "slower" and row["threshold"] == 0.005
    assert row["ratio"] == pytest.approx(1.02, abs=0.004)
    assert row["detectableChange"] < 0.01 and row["runsNeeded"] == 2 and row["runsNeededFor"] == 0.05
    # the old fixed 5 % threshold, given: same, within ±5 %
    fixed = _verdict(kidx, store, "--threshold", "5")
    assert fixed["verdict"] == "same" and fixed["reason"].startswith("within ±5%: a change of ")


def test_the_same_processes_unchanged_are_same_within_what_they_can_detect(kidx, sides, tmp_path):
    store = sides(1.0, tmp_path / "unchanged")
    row = _verdict(kidx, store)
    assert row["verdict"] == "same"
    bound = max(0.005, row["detectableChange"])
    assert row["reason"] == (f"within ±{bound * 100:.2g}%: a change of {row['detectableChange'] * 100:.2g}% or more "
                             "would have been called (95% of the time)")
    assert row["ciLow"] >= 1 - bound and row["ciHigh"] <= 1 + bound
