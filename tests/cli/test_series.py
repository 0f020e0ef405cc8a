"""kidx series on the Liger history: points over releases, changes, and the speedup over
the baseline measured in the same session."""

from __future__ import annotations

import csv
import io
import json

import pytest

KTO_B16 = "liger-kto-loss-batch16-beta0-1-biastrue-hidden1024-ignore-index42-modeforward-seq512-vocab128256-bf16"


def test_kto_loss_across_0_5_3_and_0_5_4_is_a_kernel_change(kidx, history_store):
    code, out, err = kidx("series", "-l", "liger_version in (0.5.3,0.5.4)", "--label", "liger_version",
                          "--baseline", "huggingface", "--field-selector", "spec.sourceNative.benchmark=kto_loss/forward",
                          store_path=history_store)
    assert (code, err) == (0, "")
    block = out.split("\n\n")[0].splitlines()
    assert block[0] == (f"protocol liger-bench-do-bench-forward, workload {KTO_B16}, "
                        "environment liger-bench-nvidia-h100-80gb-hbm3, implementation liger-kto-loss-liger-triton")
    assert block[1].split() == ["OBSERVED", "LIGER_VERSION", "MEDIAN", "P20-P80", "CHANGE", "VERDICT",
                                "SPEEDUP-VS-HUGGINGFACE", "SPEEDUP-CHANGE", "RUN"]
    assert [line.split()[:-1] for line in block[2:]] == [
        ["2025-02-28T22:34:06.000Z", "0.5.3", "77.56ms", "77.56ms-77.56ms", "0.35x"],
        ["2025-03-01T01:34:35.000Z", "0.5.3", "79.86ms", "79.86ms-79.86ms", "+3.0%", "unconfirmed", "(same)",
         "0.34x", "-2.8%"],
        ["2025-03-03T08:22:44.000Z", "0.5.4", "30.67ms", "30.66ms-30.67ms", "-61.6%", "unconfirmed", "(faster)",
         "0.88x", "+160.0%"],
    ]
    # three points: each step leaves one other point, too few for a between-run spread
    assert out.endswith("\nsummary: 0 slower, 0 faster, 0 same, 0 inconclusive, 20 unconfirmed; 0 change points: "
                        "no series has the 4 points one needs\n")


def test_markdown_keeps_the_tables_band_and_speedup_columns(kidx, history_store):
    code, out, err = kidx("series", "-l", "liger_version in (0.5.3,0.5.4)", "--label", "liger_version",
                          "--baseline", "huggingface", "--field-selector", "spec.sourceNative.benchmark=kto_loss/forward",
                          "-o", "markdown", store_path=history_store)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[2] == (f"protocol liger-bench-do-bench-forward, workload {KTO_B16}, "
                        "environment liger-bench-nvidia-h100-80gb-hbm3, implementation liger-kto-loss-liger-triton")
    assert lines[4] == ("| OBSERVED | LIGER\\_VERSION | MEDIAN | P20-P80 | CHANGE | VERDICT | SPEEDUP-VS-HUGGINGFACE | "
                        "SPEEDUP-CHANGE | RUN |")
    assert lines[6].startswith("| 2025-02-28T22:34:06.000Z | 0.5.3 | 77.56ms | 77.56ms-77.56ms |  |  | 0.35x |  | ")


def test_jsd_across_0_3_0_and_0_3_1_moved_with_its_baseline(kidx, history_store):
    code, out, _ = kidx("series", "-l", "liger_version in (0.3.0,0.3.1)", "--label", "liger_version",
                        "--baseline", "torch", "--fail-on-regression", "-o", "json", store_path=history_store)
    assert code == 0  # slower by the bands, but unconfirmed: two points, no between-run spread
    document = json.loads(out)
    assert document["label"] == "liger_version" and document["baseline"] == "torch"
    liger = [s for s in document["series"] if s["implementation"] == "liger-jsd-liger-triton"
             and s["protocol"] == "liger-bench-do-bench-forward" and s["workload"] == "liger-jsd-batch4-seq2048-vocab131072"]
    [series] = liger
    first, second = series["points"]
    assert (first["label"], first["value"], first["change"], first["verdict"]) == ("0.3.0", 77741821, None, None)
    assert (second["label"], second["value"], second["verdict"], second["withinRun"]) == (
        "0.3.1", 87036354, "unconfirmed", "slower")
    assert series["changePoints"] == []
    assert round(second["change"], 3) == 0.120
    # torch, measured a second later in the same session, slowed as much: the speedup barely moved
    assert second["baselineRun"].startswith("liger-jsd-forward-torch-nvidia-h100-pcie-batch4-seq2048-vocab131072-2024-10-02")
    assert round(second["speedupChange"], 3) == 0.019


def test_series_csv_and_single_point_notice(kidx, history_store):
    code, out, err = kidx("series", "-l", "liger_version in (0.3.0,0.3.1)", "--label", "liger_version",
                          "-o", "csv", store_path=history_store)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 72 and {row["label"] for row in rows} == {"0.3.0", "0.3.1"}
    assert sum(row["withinRun"] == "slower" for row in rows) == 20
    assert {row["verdict"] for row in rows} == {"", "unconfirmed"}
    code, out, err = kidx("series", "-l", "liger_version in (0.3.0,0.3.1)", "--label", "liger_version",
                          store_path=history_store)
    assert "series with a single point: nothing to follow" in err


def test_the_same_shape_measured_in_two_sweeps_of_one_release(kidx, head_store):
    # at HEAD, llama4_rope's H-sweep and T-sweep both measured hidden 8192 / seq 2048, 11 s apart
    code, out, err = kidx("series", "-l", "liger_version=0.6.1", "--field-selector",
                          "spec.sourceNative.benchmark=llama4_rope/backward", "-o", "json", store_path=head_store)
    assert code == 0
    document = json.loads(out)
    assert [(s["implementation"], [p["verdict"] for p in s["points"]]) for s in document["series"]] == [
        ("liger-llama4-rope-liger-triton", [None, "unconfirmed"]),
        ("liger-llama4-rope-transformers-eager", [None, "unconfirmed"]),
    ]
    assert [[p["withinRun"] for p in s["points"]] for s in document["series"]] == [[None, "faster"], [None, "same"]]
    assert {s["workload"] for s in document["series"]} == {"liger-llama4-rope-hidden8192-kv-heads8-q-heads32-seq2048-bf16"}
    assert document["singlePointSeries"] == 12


def test_series_error_exit_2(kidx, history_store):
    code, out, err = kidx("series", "no-such-run", store_path=history_store)
    assert (code, out, err) == (2, "", 'Error (NotFound): benchmarkruns.kernelindex.dev "no-such-run" not found\n')
    assert kidx("series", "-o", "name", store_path=history_store).code == 2


def test_latencies_at_the_ends_of_the_float_range(kidx, tmp_path):
    """1e-300 ns, then 1e300 ns: a change too large for a float is infinite, never an
    OverflowError, and prints short."""
    (tmp_path / "x.json").write_text(json.dumps({"x": {"latency": {"value": 1.0}}}))
    code, out, err = kidx("import", "bmf", str(tmp_path / "x.json"), "-o", "json")
    assert code == 0, err
    items = json.loads(out)["items"]
    [run] = [item for item in items if item["kind"] == "BenchmarkRun"]
    items.remove(run)
    for index in range(12):
        point = json.loads(json.dumps(run))
        point["metadata"]["name"] = f"r{index:02d}"
        point["spec"]["observedAt"] = f"2026-01-{index + 1:02d}T00:00:00Z"
        point["spec"]["timing"]["latencyNs"]["median"] = 1e-300 if index < 6 else 1e300
        items.append(point)
    (tmp_path / "runs.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    assert kidx("apply", "-f", str(tmp_path / "runs.json"))[0] == 0
    code, out, err = kidx("series")
    assert code == 0, err
    rows = out.splitlines()
    assert rows[2].split() == ["2026-01-01T00:00:00Z", "1e-300ns", "<none>", "r00"]
    assert rows[8].split() == ["2026-01-07T00:00:00Z", "1e+291s", "<none>", "+inf%", "slower", "r06"]
    assert "change point at r06 (position 6): +inf%" in out
    code, out, err = kidx("series", "-o", "json")
    assert code == 0, err
    assert "Infinity" not in out and json.loads(out)


def test_a_step_within_the_threshold_on_bands_too_wide_to_show_it_is_inconclusive(kidx, history_store):
    code, out, err = kidx("series", "-l", "liger_version in (0.5.3,0.5.4),provider=liger", "--label", "liger_version",
                          "--field-selector", "workload.spec.operation=kto_loss,workload.spec.parameters.batch=2,"
                          "protocol.metadata.name=liger-bench-do-bench-full",
                          "-o", "json", store_path=history_store)
    assert code == 0, err
    [series] = json.loads(out)["series"]
    step = series["points"][1]
    # +3.7% is within 5%, but a 10.61ms-11.29ms band could not have shown a 5% change
    assert (round(step["change"], 3), step["verdict"]) == (0.037, "inconclusive")
    assert step["reason"] == "p20-p80 bands too wide to show a 5% change"


def _series_of(kidx, tmp_path, values: list[float], label: str = "release") -> None:
    """One series of single runs: ``values`` (ns) in order, labelled r-00, r-01, …"""
    (tmp_path / "x.json").write_text(json.dumps({"x": {"latency": {"value": 1.0}}}))
    code, out, err = kidx("import", "bmf", str(tmp_path / "x.json"), "-o", "json")
    assert code == 0, err
    items = json.loads(out)["items"]
    [run] = [item for item in items if item["kind"] == "BenchmarkRun"]
    items.remove(run)
    for index, value in enumerate(values):
        point = json.loads(json.dumps(run))
        point["metadata"]["name"] = f"r-{index:02d}"
        point["metadata"].setdefault("labels", {})[label] = f"r-{index:02d}"
        point["spec"]["observedAt"] = f"2026-01-{index + 1:02d}T00:00:00Z"
        point["spec"]["timing"]["latencyNs"]["median"] = value
        items.append(point)
    (tmp_path / "runs.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    assert kidx("apply", "-f", str(tmp_path / "runs.json"))[0] == 0


def test_a_slower_change_point_fails_the_regression_gate(kidx, tmp_path):
    """Ten releases each 4% slower: no step is beyond the 5% threshold, but the level moved
    +24% at a significant change point, and that is a regression the gate reports."""
    _series_of(kidx, tmp_path, [1000.0 * 1.04 ** index for index in range(11)])
    code, out, err = kidx("series", "--label", "release")
    assert (code, err) == (0, "")
    assert "change point at r-05 (position 5): +24.1%, p=0.00057; cause: release r-04 → r-05" in out
    code, gated, err = kidx("series", "--label", "release", "--fail-on-regression")
    assert (code, gated, err) == (1, out, "")


def test_a_faster_change_point_passes_the_regression_gate(kidx, tmp_path):
    _series_of(kidx, tmp_path, [1000.0 / 1.04 ** index for index in range(11)])
    code, out, err = kidx("series", "--label", "release", "--fail-on-regression")
    assert "change point at r-05 (position 5): -19.4%" in out
    assert (code, err) == (0, "")


@pytest.mark.parametrize("output", ["table", "wide", "json", "yaml", "csv", "tsv", "markdown"])
def test_latencies_at_both_ends_of_the_float_range_in_turn(kidx, tmp_path, output):
    """1e-300 and 1e300 ns in turn: the interval's ends are 0 and infinite, and each step is
    judged, never a ZeroDivisionError, in every output format."""
    _series_of(kidx, tmp_path, [1e-300, 1e300, 1e300, 1e-300])
    code, out, err = kidx("series", "-o", output)
    assert (code, err) == (0, "")
    assert "Infinity" not in out and "NaN" not in out
    code, out, err = kidx("series", "-o", "json")
    [series] = json.loads(out)["series"]
    assert [point["verdict"] for point in series["points"]] == [None, "inconclusive", "same", "inconclusive"]
    assert [series["points"][index]["reason"][:18] for index in (1, 3)] == ["noise between runs"] * 2




def _applied(kidx, tmp_path, values: list[float], order=None) -> None:
    """``_series_of``'s runs, applied in ``order`` (indexes; default: as observed)."""
    _series_of(kidx, tmp_path, values)
    if order is not None:
        document = json.loads((tmp_path / "runs.json").read_text())
        runs = {item["metadata"]["name"]: item for item in document["items"] if item["kind"] == "BenchmarkRun"}
        others = [item for item in document["items"] if item["kind"] != "BenchmarkRun"]
        assert kidx("delete", "runs", "--all")[0] == 0
        document["items"] = others + [runs[f"r-{index:02d}"] for index in order]
        (tmp_path / "runs.json").write_text(json.dumps(document))
        assert kidx("apply", "-f", str(tmp_path / "runs.json"))[0] == 0


HEADING = "protocol bmf, workload bmf-x, environment bmf-unknown-machine, implementation <none>\n"
COLUMNS = "OBSERVED               RELEASE   MEDIAN   P20-P80   CHANGE    VERDICT                RUN\n"


def test_tail_shows_each_series_newest_points_the_first_judged_against_the_hidden_one(kidx, tmp_path):
    _series_of(kidx, tmp_path, [1000.0, 1010.0, 990.0, 1000.0, 2000.0])
    code, out, err = kidx("series", "--label", "release")
    assert (code, err) == (0, "")
    rule = next(line for line in out.splitlines() if line.startswith("rule: "))
    assert out == (HEADING + COLUMNS +
                   "2026-01-01T00:00:00Z   r-00      1µs      <none>                                     r-00\n"
                   "2026-01-02T00:00:00Z   r-01      1.01µs   <none>    +1.0%     inconclusive           r-01\n"
                   "2026-01-03T00:00:00Z   r-02      990ns    <none>    -2.0%     inconclusive           r-02\n"
                   "2026-01-04T00:00:00Z   r-03      1µs      <none>    +1.0%     inconclusive           r-03\n"
                   "2026-01-05T00:00:00Z   r-04      2µs      <none>    +100.0%   unconfirmed (slower)   r-04\n"
                   f"\n{rule}\nsummary: 0 slower, 0 faster, 0 same, 3 inconclusive, 1 unconfirmed; 0 change points\n")
    # the two newest, read with r-02: r-03's +1.0% is against it; the spread between runs
    # comes from the three points read, too few for one (so within-run evidence: unconfirmed)
    code, out, err = kidx("series", "--label", "release", "--tail", "2")
    assert (code, err) == (0, "")
    assert out == (HEADING + COLUMNS +
                   "2026-01-04T00:00:00Z   r-03      1µs      <none>    +1.0%     unconfirmed (same)     r-03\n"
                   "2026-01-05T00:00:00Z   r-04      2µs      <none>    +100.0%   unconfirmed (slower)   r-04\n"
                   f"\n{rule}\nsummary: 0 slower, 0 faster, 0 same, 0 inconclusive, 2 unconfirmed; 0 change points: "
                   "no series has the 4 points one needs\n")
    # a tail as long as the series, or longer, shows it all as without one
    assert kidx("series", "--label", "release", "--tail", "5").out == kidx("series", "--label", "release").out
    assert kidx("series", "--label", "release", "--tail", "9").out == kidx("series", "--label", "release").out


def test_tail_shows_the_newest_by_observed_at_whatever_order_they_were_applied_in(kidx, tmp_path):
    """A backfill: the newest points applied first, the oldest last."""
    _applied(kidx, tmp_path, [1000.0, 1010.0, 990.0, 1000.0, 2000.0], order=[4, 3, 2, 1, 0])
    code, out, err = kidx("series", "--label", "release", "--tail", "1", "-o", "json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    [series] = document["series"]
    [point] = series["points"]
    assert (point["run"], point["change"], point["verdict"]) == ("r-04", 1.0, "unconfirmed")
    assert [entry["run"] for entry in document["inputs"]] == ["r-03", "r-04"]  # what was read: the tail and one before


def test_tail_finds_change_points_over_the_points_read_at_their_shown_positions(kidx, tmp_path):
    _series_of(kidx, tmp_path, [1000.0, 1002.0, 998.0, 1001.0, 999.0, 1000.0, 1200.0, 1202.0, 1198.0, 1201.0, 1199.0])
    code, out, err = kidx("series", "--label", "release")
    assert (code, err) == (0, "")
    assert "change point at r-06 (position 6): +20.0%" in out
    code, out, err = kidx("series", "--label", "release", "--tail", "9")  # r-02 … r-10, read with r-01
    assert (code, err) == (0, "")
    assert "change point at r-06 (position 4): +20.0%" in out
    code, out, err = kidx("series", "--label", "release", "--tail", "9", "-o", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(row["run"], row["changePoint"]) for row in rows if row["changePoint"] == "true"] == [("r-06", "true")]
    assert rows[0]["run"] == "r-02" and rows[0]["change"] != ""
    # too few points read for a change point: none, though the whole series has one
    code, out, err = kidx("series", "--label", "release", "--tail", "2")
    assert (code, err) == (0, "") and "change point at" not in out


def test_the_gates_judge_the_points_shown(kidx, tmp_path):
    """Ten releases each 4% slower: the whole series' change point fails the gate; the
    newest three, read with one more, hold no change point and pass it."""
    _series_of(kidx, tmp_path, [1000.0 * 1.04 ** index for index in range(11)])
    assert kidx("series", "--fail-on-regression").code == 1
    code, out, err = kidx("series", "--fail-on-regression", "--tail", "3")
    assert (code, err) == (0, "")
    assert [line.split()[-1] for line in out.splitlines()[2:5]] == ["r-08", "r-09", "r-10"]
    assert out.splitlines()[-1] == "summary: 0 slower, 0 faster, 0 same, 3 inconclusive, 0 unconfirmed; 0 change points"
    assert kidx("series", "--fail-on-inconclusive", "--tail", "3").code == 1


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "x", ""])
def test_tail_is_a_whole_number_of_points_1_or_more(kidx, tmp_path, value):
    _series_of(kidx, tmp_path, [1000.0, 1010.0, 990.0])
    code, out, err = kidx("series", "--tail", value)
    assert (code, out) == (2, "")
    if value.lstrip("-").isdigit():
        assert err == f"error: invalid --tail {value}: a whole number of points, 1 or more\n"
    else:
        assert err == (f"error: Invalid value for '--tail': '{value}' is not a valid int.\n"
                       "See 'kidx series --help' for usage.\n")


@pytest.mark.parametrize("output", ["table", "wide", "json", "yaml", "csv", "tsv", "markdown"])
def test_tail_in_every_output_format(kidx, tmp_path, output):
    _series_of(kidx, tmp_path, [1000.0, 1010.0, 990.0, 1000.0, 2000.0])
    code, out, err = kidx("series", "--tail", "2", "-o", output)
    assert (code, err) == (0, "")
    if output in ("json", "yaml"):
        code, out, err = kidx("series", "--tail", "2", "-o", "json")
        [series] = json.loads(out)["series"]
        assert [(point["run"], point["verdict"]) for point in series["points"]] == [
            ("r-03", "unconfirmed"), ("r-04", "unconfirmed")]
    else:
        assert "r-03" in out and "r-04" in out and "r-02" not in out


@pytest.mark.parametrize("options", [("--baseline", "torch"),
                                     ("-l", "liger_version in (0.5.3,0.5.4)", "--baseline", "huggingface")])
def test_a_tail_as_long_as_every_series_shows_what_series_shows_without_one(kidx, history_store, options):
    """The Liger history's series have three points at most: --tail 3 reads and judges them
    all, with the baseline's runs of the same sessions, from the catalog's rows first."""
    whole = kidx("series", "--label", "liger_version", "-o", "csv", *options, store_path=history_store)
    assert whole.code == 0 and whole.out.count("\n") > 10
    assert kidx("series", "--label", "liger_version", "-o", "csv", *options, "--tail", "3",
                store_path=history_store) == whole
