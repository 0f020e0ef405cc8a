"""Speed of light in compare and series: -o wide's columns, the speedOfLight field of
-o json, and the raw csv fields; a run whose cost or peak is unknown shows nothing."""

from __future__ import annotations

import csv
import io
import json

import pytest
from conftest import REPO

SEED_RUN = "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-"
HF_RUN = "liger-llama4-rope-backward-huggingface-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads-7a1c5fe285"
HF = "liger-llama4-rope-transformers-eager"
AA = REPO / "tests" / "data" / "h200-aa"
MEASURED = REPO / "tests" / "data" / "h200-sol" / "environment-measured.yaml"
# the backward pass moves 553,648,128 B (docs/speed-of-light.md); the H100 SXM's peak is 3.35 TB/s
SEED_BANDWIDTH = 553648128 / (417536 * 1e-9)
HF_BANDWIDTH = 553648128 / (1482272 * 1e-9)


def test_compare_wide_adds_bandwidth_and_share_of_peak(kidx, head_store):
    code, out, err = kidx("compare", SEED_RUN, HF_RUN, "--baseline", HF, "-o", "wide", store_path=head_store)
    assert code == 0, err
    plain = kidx("compare", SEED_RUN, HF_RUN, "--baseline", HF, store_path=head_store).out
    header, baseline, liger = out.splitlines()[1:4]
    at = header.index(" RUN ") + 1  # then BANDWIDTH, SOL and DETECTABLE (the baseline has none)
    assert header[at:].split() == ["RUN", "BANDWIDTH", "SOL", "DETECTABLE"]
    assert baseline[at:].split() == [HF_RUN, "373.5GB/s", "11.1%"]
    assert liger[at:].split()[:3] == [SEED_RUN, "1.326TB/s", "39.6%"]
    # the plain table is the wide one without the columns after RUN
    cut = [line[:at] + line[at:].split(" ", 1)[0] if i in (1, 2, 3) else line for i, line in enumerate(out.splitlines())]
    assert [line.split() for line in cut] == [line.split() for line in plain.splitlines()]


def test_compare_json_and_csv_carry_the_figures(kidx, head_store):
    code, out, _ = kidx("compare", SEED_RUN, HF_RUN, "--baseline", HF, "-o", "json", store_path=head_store)
    assert code == 0
    baseline, liger = json.loads(out)["groups"][0]["rows"]
    assert liger["speedOfLight"] == {
        "costSource": "formula", "formula": "liger_kernel_bench/llama4_rope/backward", "bytes": 553648128,
        "bytesPerSecond": SEED_BANDWIDTH, "ofPeak": {"bandwidth": SEED_BANDWIDTH / 3.35e12, "sol": SEED_BANDWIDTH / 3.35e12},
        "peakOf": "H100 SXM 80GB HBM3"}
    assert baseline["speedOfLight"]["bytesPerSecond"] == HF_BANDWIDTH
    code, out, _ = kidx("compare", SEED_RUN, HF_RUN, "--baseline", HF, "-o", "csv", store_path=head_store)
    rows = {row["run"]: row for row in csv.DictReader(io.StringIO(out))}
    assert (rows[SEED_RUN]["bytesPerSecond"], rows[SEED_RUN]["sol"]) == (repr(SEED_BANDWIDTH), repr(SEED_BANDWIDTH / 3.35e12))
    assert (rows[SEED_RUN]["flopsPerSecond"], rows[SEED_RUN]["solMeasured"]) == ("", "")


def test_runs_without_a_cost_show_nothing(kidx, head_store):
    # memory runs have no latency: no figures in json, no columns in the wide table
    select = ["--references", "workload/liger-llama4-rope-hidden8192-kv-heads8-q-heads32-seq16384-bf16",
              "--field-selector", "spec.sourceNative.benchmark=llama4_rope/full/memory"]
    code, out, _ = kidx("compare", *select, "-o", "json", store_path=head_store)
    rows = [row for group in json.loads(out)["groups"] for row in group["rows"]]
    assert rows and all(row["speedOfLight"] is None for row in rows)
    code, out, _ = kidx("compare", *select, "-o", "wide", store_path=head_store)
    assert code == 0 and "BANDWIDTH" not in out and "SOL" not in out


@pytest.fixture
def two_repetitions(kidx):
    for rep in ("rep-01", "rep-02"):
        code, _, err = kidx("import", "liger", str(AA / rep / "all_benchmark_data.csv"), "--environment", str(MEASURED))
        assert code == 0, err


def test_series_wide_and_json_with_the_measured_peak(kidx, two_repetitions):
    select = ["--field-selector", "spec.sourceNative.benchmark=rms_norm/forward,workload.spec.parameters.seq=32768"]
    code, out, err = kidx("series", *select, "-o", "wide")
    assert code == 0, err
    [liger] = [block for block in out.split("\n\n") if "implementation liger-rms-norm-liger-triton" in block]
    header, first, second = liger.splitlines()[1:4]
    assert header.split()[-4:] == ["RUN", "BANDWIDTH", "SOL", "SOL-MEASURED"]
    # rep-01: 1,073,905,664 B in 327.872 µs; rep-02 in 328.464 µs; of 4.8 TB/s and of the measured 4.275 TB/s
    assert first.split()[-3:] == ["3.275TB/s", "68.2%", "76.6%"]
    assert second.split()[-3:] == ["3.269TB/s", "68.1%", "76.5%"]
    code, out, _ = kidx("series", *select, "-o", "json")
    points = [p for s in json.loads(out)["series"] if s["implementation"] == "liger-rms-norm-liger-triton"
              for p in s["points"]]
    measured = 4275334951753
    assert [p["speedOfLight"]["ofMeasuredPeak"]["bandwidth"] for p in points] == [
        1073905664 / (327872 * 1e-9) / measured, 1073905664 / (328464 * 1e-9) / measured]
    code, out, _ = kidx("series", *select, "-o", "csv")
    assert list(csv.DictReader(io.StringIO(out)))[0].keys() >= {"bytesPerSecond", "flopsPerSecond", "sol", "solMeasured"}
