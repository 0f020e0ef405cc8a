"""Verdicts a CI can gate on: gates that fail closed, label values as pooled arms, noise
measured between runs, confidence intervals, change points with their cause, and
reproducible, postable output."""

from __future__ import annotations

import hashlib
import json
import math
import random

import pytest
from conftest import REPO

from kidx.analysis.changepoints import change_points
from kidx.analysis.comparability import direction_of
from kidx.analysis.measures import Measure
from kidx.analysis.significance import judge, judge_runs, smallest_p, t_quantile, t_two_sided_p
from kidx.identity.canonical import digest_of

PROTOCOL = "sha256:" + "1" * 64
WORKLOAD = "sha256:" + "2" * 64
ENVIRONMENT = "sha256:" + "3" * 64


def run_manifest(name: str, implementation: str, median: float, *, day: int, hour: int = 0, labels: dict | None = None,
                 samples=None, environment: str = ENVIRONMENT, band: float | None = 0.001) -> str:
    """A run in YAML: a latency median in µs (p20/p80 ±band around it, or raw samples)."""
    measurements = ""
    if samples is not None:
        measurements = "".join(f"\n    - {{metric: latency, statistic: sample, unit: us, value: {v}}}" for v in samples)
    elif band is not None:
        measurements = (f"\n    - {{metric: latency, statistic: p20, unit: us, value: {median * (1 - band)}}}"
                        f"\n    - {{metric: latency, statistic: p80, unit: us, value: {median * (1 + band)}}}")
    label_text = "" if not labels else ", labels: {" + ", ".join(f"{k}: '{v}'" for k, v in labels.items()) + "}"
    return f"""apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata: {{name: {name}{label_text}}}
spec:
  status: passed
  observedAt: "2026-01-{day:02d}T{hour:02d}:00:00Z"
  timing: {{latencyNs: {{median: {median * 1000}}}, primaryStatistic: median}}
  protocolDigest: {PROTOCOL}
  workloadDigest: {WORKLOAD}
  environmentDigest: {environment}
  implementationDigest: sha256:{implementation * 64}
  measurements:{measurements or " []"}
"""


def apply(kidx, *manifests: str) -> None:
    result = kidx("apply", "-f", "-", stdin="---\n".join(manifests))
    assert result.code == 0, result.err


# ---------------------------------------------------------------- fail closed


@pytest.mark.parametrize("args, message", [
    (["--baseline", "0.3.9"],
     "no selected run has liger_version=0.3.9 (--baseline); liger_version values present: 0.3.1, 0.3.0"),
    (["--by", "label=liger_verison"],
     "no selected run has the label liger_verison (--by label=liger_verison); labels the selected runs carry: "
     "liger_version, gpu, kernel, metric, operation, provider"),
    (["-l", "kernel=jsdd"],
     "the selection matched no runs: no run has kernel=jsdd (kernel values present: jsd, cross_entropy, "),
])
def test_a_gate_with_a_typo_fails_closed(kidx, history_store, args, message):
    base = ["compare", "-l", "liger_version in (0.3.0,0.3.1)", "--by", "label=liger_version"]
    if args[0] == "-l":
        base = ["compare", "--by", "label=liger_version"]
    code, out, err = kidx(*base, *args, "--fail-on-regression", store_path=history_store)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: the gate cannot judge: {message}")
    assert err.endswith(" (--allow-empty passes when nothing could be judged)\n")
    assert kidx(*base, *args, "--fail-on-regression", "--allow-empty", store_path=history_store).code == 0
    assert kidx(*base, *args, "--fail-on-inconclusive", store_path=history_store).code == 2
    code, _, err = kidx(*base, *args, store_path=history_store)  # no gate: reported, exit 0
    assert code == 0 and message in err


def test_a_gate_on_a_store_that_does_not_exist_fails(kidx_process, tmp_path):
    code, out, err = kidx_process("compare", "--fail-on-regression", env={"KIDX_STORE": str(tmp_path / "typo")})
    assert (code, out) == (2, "")
    assert err == (f"error: no store at {tmp_path / 'typo'} ($KIDX_STORE): nothing has been written there (check the "
                   "path, or write to it first, e.g. kidx apply -f)\n")
    assert not (tmp_path / "typo").exists()


def test_releases_that_share_no_group_say_why(kidx, history_store):
    code, out, err = kidx("compare", "-l", "liger_version in (0.8.0,0.8.1)", "--by", "label=liger_version",
                          "--baseline", "0.8.0", "--fail-on-regression", store_path=history_store)
    assert (code, out) == (2, "")
    assert err == ("error: the gate cannot judge: nothing compared: each comparable group of the 1837 selected runs "
                   "holds a single arm (one liger_version value); 0.8.1 has runs only for megatron_swiglu; none "
                   "shares a workload and environment with a 0.8.0 run (--allow-empty passes when nothing could be "
                   "judged)\n")
    code, out, err = kidx("compare", "-l", "liger_version in (0.8.0,0.8.1)", "--by", "label=liger_version",
                          "-o", "json", store_path=history_store)
    document = json.loads(out)
    assert document["unmatched"] == [
        "0.8.1 has runs only for megatron_swiglu; none shares a workload and environment with a 0.8.0 run"]
    assert not [group for group in document["groups"] if group["note"] is None]


def test_series_gate_fails_closed_on_a_label_or_baseline_no_run_has(kidx, history_store):
    base = ("series", "-l", "liger_version in (0.3.0,0.3.1)", "--fail-on-regression")
    code, out, err = kidx(*base, "--label", "liger_verison", store_path=history_store)
    assert (code, out) == (2, "")
    assert err.startswith("error: the gate cannot judge: no selected run has the label liger_verison (--label); "
                          "labels the selected runs carry: gpu, kernel, liger_version, ")
    code, out, err = kidx(*base, "--baseline", "huggingfaces", store_path=history_store)
    assert (code, out) == (2, "") and "no selected run's implementation is huggingfaces" in err


def test_series_gate_fails_closed_on_an_empty_selection(kidx, history_store):
    code, out, err = kidx("series", "-l", "kernel=jsdd", "--fail-on-regression", store_path=history_store)
    assert (code, out) == (2, "")
    assert err.startswith("error: the gate cannot judge: the selection matched no runs: no run has kernel=jsdd "
                          "(kernel values present: jsd, ")
    assert kidx("series", "-l", "kernel=jsdd", "--fail-on-regression", "--allow-empty",
                store_path=history_store).code == 0


@pytest.mark.parametrize("command", ["compare", "series"])
def test_a_combination_that_matches_nothing_says_what_each_part_matches(kidx, history_store, command):
    code, out, err = kidx(command, "-l", "kernel=rms_norm,gpu=nvidia-h100-80gb-hbm3", "--fail-on-regression",
                          store_path=history_store)
    assert (code, out) == (2, "")
    assert err == ("error: the gate cannot judge: the selection matched no runs: no run matches every condition: "
                   "gpu=nvidia-h100-80gb-hbm3 matches 1142 runs, with kernel=layer_norm, megatron_rms_norm, "
                   "fused_add_rms_norm, distill_jsd_loss, fused_linear_jsd, fused_moe, fused_neighborhood_attention, "
                   "kto_loss, … (13 in all); kernel=rms_norm matches 48 runs, with gpu=nvidia-a100-sxm4-80gb "
                   "(--allow-empty passes when nothing could be judged)\n")
    code, out, err = kidx(command, "-l", "kernel=rms_norm,provider=nobody", store_path=history_store)
    assert code == 0
    assert "the selection matched no runs: no run has provider=nobody (provider values present: " in err


def test_a_label_selector_that_selects_runs_is_not_blamed(kidx, history_store):
    code, out, err = kidx("compare", "-l", "kernel=rms_norm,gpu=nvidia-a100-sxm4-80gb", "--field-selector",
                          "metadata.name=none", "--fail-on-regression", store_path=history_store)
    assert (code, out) == (2, "")
    assert err == ("error: the gate cannot judge: the selection matched no runs: no run matches every condition "
                   "(--allow-empty passes when nothing could be judged)\n")


# ---------------------------------------------------------------- baselines


def test_baseline_by_the_provider_label(kidx, head_store):
    code, out, err = kidx("compare", "-l", "kernel=llama4_rope,operation=backward,gpu=nvidia-h100-80gb-hbm3",
                          "--field-selector", "workload.spec.parameters.seq=16384", "--baseline", "huggingface",
                          "-o", "json", store_path=head_store)
    assert (code, err) == (0, "")
    [group] = json.loads(out)["groups"]
    assert [(row["implementation"], row["verdict"]) for row in group["rows"]] == [
        ("liger-llama4-rope-transformers-eager", "baseline"), ("liger-llama4-rope-liger-triton", "unconfirmed")]


def test_an_ambiguous_baseline_lists_the_candidates(kidx):
    apply(kidx, run_manifest("a", "a", 100, day=1, labels={"provider": "torch"}),
          run_manifest("b", "b", 110, day=2, labels={"provider": "torch"}))
    code, out, err = kidx("compare", "--baseline", "torch")
    assert (code, out) == (2, "")
    assert err == (f"error: --baseline torch is ambiguous: it matches implementations {('sha256:' + 'a' * 64)[:19]}, "
                   f"{('sha256:' + 'b' * 64)[:19]} in one group; name one of them\n")


def test_default_baseline_is_the_lowest_version(kidx):
    apply(kidx, run_manifest("new", "a", 100, day=1, labels={"v": "0.10.0"}),
          run_manifest("old", "a", 100, day=2, labels={"v": "0.9.1"}))
    code, out, err = kidx("compare", "--by", "label=v", "-o", "json")
    rows = json.loads(out)["groups"][0]["rows"]
    assert [(row["label"], row["verdict"]) for row in rows] == [("0.9.1", "baseline"), ("0.10.0", "unconfirmed")]


# ---------------------------------------------------------------- arms


def test_runs_of_one_release_are_one_arm_never_compared_with_each_other(kidx, history_store):
    code, out, err = kidx("compare", "-l", "liger_version in (0.5.3,0.5.4)", "--by", "label=liger_version",
                          "-o", "json", store_path=history_store)
    document = json.loads(out)
    compared = [group for group in document["groups"] if group["note"] is None]
    assert compared
    for group in compared:
        labels = [row["label"] for row in group["rows"]]
        assert len(labels) == len(set(labels)) and labels[0] == "0.5.3"  # one row per release; 0.5.3 the baseline
    pooled = [row for group in compared for row in group["rows"] if len(row["runs"]) == 2]
    assert pooled and all(row["label"] == "0.5.3" and row["spread"] is not None for row in pooled)
    code, out, _ = kidx("compare", "-l", "liger_version in (0.5.3,0.5.4)", "--by", "label=liger_version",
                        store_path=history_store)
    assert "   2 ±" in out  # the runs and their spread, in the table


def test_an_arm_pools_its_runs(kidx):
    apply(kidx, *[run_manifest(f"r{i}", "a", 100 + i, day=1 + i, labels={"v": "1"}) for i in range(3)],
          run_manifest("s", "a", 100, day=9, labels={"v": "2"}))
    rows = json.loads(kidx("compare", "--by", "label=v", "-o", "json").out)["groups"][0]["rows"]
    assert (rows[0]["label"], rows[0]["runs"], rows[0]["value"]) == ("1", ["r0", "r1", "r2"], 101000)
    assert rows[0]["spread"] == pytest.approx(math.log(1.01), rel=0.01)


# ---------------------------------------------------------------- verdicts


def _arms(kidx, baseline, contender, base_day=1):
    manifests = [run_manifest(f"base{i}", "a", v, day=base_day + i) for i, v in enumerate(baseline)]
    manifests += [run_manifest(f"new{i}", "b", v, day=base_day + 10 + i) for i, v in enumerate(contender)]
    apply(kidx, *manifests)
    code, out, err = kidx("compare", "--baseline", "sha256:" + "a" * 64, "-o", "json")
    assert code == 0, err
    return json.loads(out)["groups"][0]["rows"][1]


def test_only_filters_what_is_printed_never_what_the_gate_judges(kidx):
    manifests = [run_manifest(f"base{i}", "a", v, day=1 + i) for i, v in enumerate([100, 101, 99, 100.5])]
    manifests += [run_manifest(f"new{i}", "b", v, day=11 + i) for i, v in enumerate([200, 202, 198, 201])]
    apply(kidx, *manifests)
    code, out, err = kidx("compare", "--baseline", "sha256:" + "a" * 64, "--only", "faster", "--fail-on-regression")
    assert (code, out) == (1, "")  # the 2x slowdown fails the gate, though --only faster shows no row
    code, _, _ = kidx("compare", "--baseline", "sha256:" + "a" * 64, "--only", "slower", "--fail-on-regression")
    assert code == 1
    code, _, _ = kidx("compare", "--baseline", "sha256:" + "a" * 64, "--only", "faster")
    assert code == 0


def test_repeated_runs_decide_slower_with_an_interval(kidx):
    row = _arms(kidx, [100, 101, 99, 100.5], [110, 111, 109, 110.5])
    assert (row["verdict"], row["evidence"], row["test"]) == ("slower", "between-runs", "t-test")
    assert 1.08 < row["ciLow"] < 1.10 < row["ciHigh"] < 1.12
    assert row["pValue"] < 1e-5


def test_repeated_runs_that_agree_are_same(kidx):
    row = _arms(kidx, [100, 100.2, 99.9, 100.1], [100.1, 100, 100.2, 99.9])
    assert (row["verdict"], row["evidence"]) == ("same", "between-runs")
    assert 0.95 < row["ciLow"] and row["ciHigh"] < 1.05


def test_noise_wider_than_the_threshold_is_inconclusive(kidx):
    row = _arms(kidx, [100, 130, 80, 120], [110, 150, 90, 100])
    assert (row["verdict"], row["evidence"]) == ("inconclusive", "between-runs")
    assert row["reason"].startswith("noise between runs (±")


def test_three_samples_a_side_cannot_decide(kidx):
    # two runs of 3 raw samples each, 2x apart: Mann-Whitney cannot reach p < 0.05 with 3 and 3
    apply(kidx, run_manifest("a", "a", 101, day=1, samples=[100, 101, 102]),
          run_manifest("b", "b", 202, day=2, samples=[200, 202, 204]))
    row = json.loads(kidx("compare", "a", "b", "-o", "json").out)["groups"][0]["rows"][1]
    assert (row["verdict"], row["test"], row["reason"]) == (
        "inconclusive", "mann-whitney", "3 and 3 samples cannot reach p < 0.05")
    assert smallest_p(3, 3) == pytest.approx(0.1)
    # the same two runs without samples: the threshold alone, which is only unconfirmed
    apply(kidx, run_manifest("c", "c", 101, day=3, band=None), run_manifest("d", "d", 202, day=4, band=None))
    row = json.loads(kidx("compare", "c", "d", "-o", "json").out)["groups"][0]["rows"][1]
    assert (row["verdict"], row["withinRun"], row["test"]) == ("unconfirmed", "slower", "threshold")


def test_history_of_the_series_gives_the_noise_for_single_runs(kidx):
    # one run a side in the selection, but the store holds five more of each series (conbench's lookback)
    manifests = [run_manifest(f"base{i}", "a", 100 * (1 + 0.002 * (-1) ** i), day=1 + i, labels={"pick": str(i == 0)})
                 for i in range(6)]
    manifests += [run_manifest(f"new{i}", "b", 120 * (1 + 0.002 * (-1) ** i), day=11 + i, labels={"pick": str(i == 0)})
                  for i in range(6)]
    apply(kidx, *manifests)
    code, out, err = kidx("compare", "-l", "pick=True", "--baseline", "sha256:" + "a" * 64, "-o", "json")
    row = json.loads(out)["groups"][0]["rows"][1]
    assert row["runs"] == ["new0"]
    # one run a side: the history shows the change, but a second run must confirm it
    assert (row["verdict"], row["evidence"], row["withinRun"]) == ("unconfirmed", "between-runs", "slower")
    code, out, err = kidx("compare", "-l", "pick", "--baseline", "sha256:" + "a" * 64, "-o", "json")
    row = json.loads(out)["groups"][0]["rows"][1]
    assert len(row["runs"]) == 6 and (row["verdict"], row["evidence"]) == ("slower", "between-runs")


def test_summary_line_and_strict_gate(kidx):
    apply(kidx, *[run_manifest(f"base{i}", "a", v, day=1 + i) for i, v in enumerate([100, 101, 99])],
          *[run_manifest(f"new{i}", "b", v, day=11 + i) for i, v in enumerate([130, 180, 90])])
    code, out, err = kidx("compare", "--baseline", "sha256:" + "a" * 64, "--fail-on-regression")
    assert code == 0
    assert out.endswith("\nsummary: 0 slower, 0 faster, 0 same, 1 inconclusive, 0 unconfirmed\n")
    assert kidx("compare", "--baseline", "sha256:" + "a" * 64, "--fail-on-inconclusive").code == 1


def test_within_run_rule_unchanged_and_direction_unknown():
    base = Measure("latency", "median", 1000, "ns", 990, 1010)
    assert judge(Measure("latency", "median", 1100, "ns", 1090, 1110), base).verdict == "slower"
    unconfirmed = judge_runs(Measure("latency", "median", 1100, "ns", 1090, 1110), base, [1100], [1000])
    assert (unconfirmed.verdict, unconfirmed.within) == ("unconfirmed", "slower")
    odd = Measure("bandwidth", "median", 1100, "GB/s")
    judged = judge(odd, Measure("bandwidth", "median", 1000, "GB/s"))
    assert (judged.speedup, judged.verdict) == (None, "direction-unknown")
    assert direction_of("bandwidth", "GB/s") is None and direction_of("latency") == "lower"
    with pytest.raises(ValueError, match="metric bandwidth .GB/s. has no known direction"):
        assert odd.lower_is_better
    assert direction_of("throughput") == "higher" and direction_of(None, "B") == "lower"


def test_student_t_against_the_table():
    assert t_two_sided_p(2.228, 10) == pytest.approx(0.05, abs=1e-4)
    assert t_quantile(0.975, 1) == pytest.approx(12.706, abs=1e-3)
    assert t_quantile(0.975, 30) == pytest.approx(2.042, abs=1e-3)


# ---------------------------------------------------------------- change points


def test_a_ten_percent_step_in_one_percent_noise_is_found():
    found = flat_clean = 0
    for trial in range(200):
        rng = random.Random(trial)
        step = rng.randrange(5, 16)
        series = [rng.gauss(1, 0.01) * (1.1 if i >= step else 1) for i in range(20)]
        points = change_points(series)
        found += [p.position for p in points] == [step] and 0.08 < points[0].change < 0.12
        flat = [rng.gauss(1, 0.01) for _ in range(20)]
        flat_clean += change_points(flat) == []
    assert found >= 190 and flat_clean >= 198  # >= 95 % and >= 99 % of 200 seeded trials


def _environment(torch: str) -> tuple[str, str]:
    spec = {"hardware": {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90"},
            "software": {"torch": torch, "cuda": "13.0"}}
    manifest = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ExecutionEnvironment", "spec": spec}
    text = f"""apiVersion: kernelindex.dev/v1alpha1
kind: ExecutionEnvironment
metadata: {{name: h200-torch-{torch}}}
spec:
  hardware: {{vendor: nvidia, product: NVIDIA H200, architecture: sm_90}}
  software: {{torch: '{torch}', cuda: '13.0'}}
"""
    return digest_of(manifest), text


def test_series_change_point_names_the_software_that_changed(kidx):
    old, old_manifest = _environment("2.9.0")
    new, new_manifest = _environment("2.11.0")
    rng = random.Random(7)
    runs = [run_manifest(f"p{i:02d}", "a", 100 * rng.gauss(1, 0.005) * (1.15 if i >= 6 else 1), day=1 + i,
                         environment=new if i >= 6 else old, labels={"release": "1.0"}) for i in range(12)]
    apply(kidx, old_manifest, new_manifest, *runs)
    code, out, err = kidx("series", "--label", "release", "-o", "json")
    assert code == 0, err
    [series] = json.loads(out)["series"]
    assert series["environments"] == ["h200-torch-2.9.0", "h200-torch-2.11.0"]
    [change] = series["changePoints"]
    assert (change["run"], change["position"], change["before"], change["cause"]) == (
        "p06", 6, "p05", ["torch 2.9.0 → 2.11.0"])
    assert 0.13 < change["change"] < 0.17 and change["pValue"] < 1e-6 and change["score"] > 0
    code, out, err = kidx("series", "--label", "release")
    assert "change point at p06 (position 6): +" in out and "; cause: torch 2.9.0 → 2.11.0\n" in out
    assert out.endswith("; 1 change point\n")


def test_series_says_when_none_is_long_enough_for_a_change_point(kidx):
    """Three points cannot hold a change point (two a side): the summary says so; four can."""
    apply(kidx, *[run_manifest(f"p{i}", "a", v, day=1 + i) for i, v in enumerate([100, 101, 99])])
    assert kidx("series").out.endswith("; 0 change points: no series has the 4 points one needs\n")
    apply(kidx, run_manifest("p3", "a", 100, day=4))
    assert kidx("series").out.endswith("unconfirmed; 0 change points\n")


def test_compare_of_runs_found_but_none_compared_says_nothing_compared(kidx):
    """Runs were found: the closing line is "Nothing compared" (or what --only kept none of), never "No runs
    found"."""
    apply(kidx, *[run_manifest(f"f{i}", "a", 100, day=1 + i).replace("status: passed", "status: failed")
                  for i in range(2)])
    assert kidx("compare", "-l", "app=web").err.endswith("\nNo runs found\n")
    assert kidx("compare") == (0, "", "2 runs left out: not passed, or no figure to compare\n"
                                      "no selected run has a figure to compare (2 selected: not passed, or no figure)\n"
                                      "Nothing compared\n")
    apply(kidx, *[run_manifest(f"p{i}", "a", v, day=1 + i) for i, v in enumerate([100, 101, 99])],
          *[run_manifest(f"n{i}", "b", v, day=11 + i) for i, v in enumerate([100, 101, 99])])
    code, out, err = kidx("compare", "--only", "slower")  # compared, and --only keeps none: it says how they came out
    assert (code, out, err.splitlines()[-1]) == (0, "", "No row has the verdicts --only asks for; the 1 row compared: "
                                                        "0 slower, 0 faster, 0 same, 1 inconclusive, 0 unconfirmed")


def test_a_change_with_nothing_else_changed_says_so(kidx):
    rng = random.Random(3)
    apply(kidx, *[run_manifest(f"p{i:02d}", "a", 100 * rng.gauss(1, 0.005) * (0.8 if i >= 5 else 1), day=1 + i)
                  for i in range(10)])
    [series] = json.loads(kidx("series", "-o", "json").out)["series"]
    assert [(c["position"], c["cause"]) for c in series["changePoints"]] == [(5, ["same kernel, machine and harness"])]
    steps = [p["verdict"] for p in series["points"][1:]]
    assert steps[4] == "faster" and steps.count("faster") == 1 and set(steps) - {"faster"} == {"same"}


# ---------------------------------------------------------------- reproducible, postable


def test_json_is_reproducible_and_records_inputs_and_rule(kidx, history_store):
    args = ("compare", "-l", "liger_version in (0.5.3,0.5.4)", "--by", "label=liger_version", "-o", "json")
    first, second = kidx(*args, store_path=history_store), kidx(*args, store_path=history_store)
    assert first.code == 0 and first.out == second.out
    document = json.loads(first.out)
    assert document["parameters"]["alpha"] == 0.05 and document["parameters"]["threshold"] is None
    assert document["parameters"]["minT"] is None  # by the timer, and the threshold follows the evidence:
    assert document["parameters"]["byTimer"] == {"kernelTimer": {"threshold": 0.005, "minT": 4},
                                                 "other": {"threshold": 0.05, "minT": 5}}
    assert document["parameters"]["sameLimit"] == 0.05 and document["parameters"]["power"] == 0.95
    assert document["parameters"]["pooling"].startswith("an arm pools its runs")
    assert len(document["inputs"]) == 90 and all(item["digest"].startswith("sha256:") for item in document["inputs"])
    series_args = ("series", "-l", "liger_version in (0.5.3,0.5.4)", "--label", "liger_version", "-o", "json")
    assert kidx(*series_args, store_path=history_store).out == kidx(*series_args, store_path=history_store).out


def test_markdown_for_a_pull_request(kidx):
    apply(kidx, *[run_manifest(f"base{i}", "a", v, day=1 + i) for i, v in enumerate([100, 101, 99])],
          *[run_manifest(f"new{i}", "b", v, day=11 + i) for i, v in enumerate([120, 121, 119])])
    code, out, err = kidx("compare", "--baseline", "sha256:" + "a" * 64, "-o", "markdown")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "**1 slower, 0 faster, 0 same, 0 inconclusive, 0 unconfirmed**"
    assert lines[2] == f"protocol {PROTOCOL[:19]}, workload {WORKLOAD[:19]}, environment {ENVIRONMENT[:19]}"
    assert lines[4] == "| IMPLEMENTATION | MEDIAN | P20-P80 | RUNS | RATIO | RATIO-CI | SPEEDUP | VERDICT | RUN |"
    assert lines[5] == "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    assert lines[7].startswith(f"| {('sha256:' + 'b' * 64)[:19]} | 120µs | \\<none\\> | 3 ±0.8% | 1.200 | "
                               "1.175-1.225 | ")
    assert lines[7].endswith(" | 0.83x | slower | new2 |")
    assert lines[-1].startswith("rule: the threshold follows the evidence: a change counts when it exceeds 0.5% (a "
                                "kernel timer's runs; 5% for others)")
    series = kidx("series", "-o", "markdown").out.splitlines()
    assert series[0] == ("**0 slower, 0 faster, 0 same, 0 inconclusive, 4 unconfirmed; 0 change points: "
                         "no series has the 4 points one needs**")


def test_baseline_previous_sets_each_release_against_the_one_before_it_in_version_order(kidx):
    medians = {"0.5.2": 100, "0.5.3": 130, "0.5.10": 131}  # 0.5.10 sorts after 0.5.3, not before it
    apply(kidx, *[run_manifest(f"r{version.replace('.', '-')}", "a", median, day=1 + i, labels={"release": version})
                  for i, (version, median) in enumerate(medians.items())])
    code, out, err = kidx("compare", "--by", "label=release", "--baseline", "previous", "-o", "json")
    assert code == 0, err
    [group] = json.loads(out)["groups"]
    assert [(row["label"], row["verdict"], row["ratio"] and round(row["ratio"], 2)) for row in group["rows"]] == [
        ("0.5.2", "baseline", 1.0), ("0.5.3", "unconfirmed", 1.3), ("0.5.10", "unconfirmed", 1.01)]
    code, out, err = kidx("compare", "--baseline", "previous")
    assert (code, out) == (2, "")
    assert "--baseline previous sets each value of a label against the one before it: it needs --by label=KEY" in err


def test_only_with_baseline_previous_shows_each_kept_row_beside_the_value_it_was_set_against(kidx):
    """0.5.4 got slower than 0.5.3 (not than 0.5.2): --only slower keeps 0.5.4 with 0.5.3, its
    baseline, above it, and 0.5.2 as the group's first value."""
    medians = {"0.5.2": 100, "0.5.3": 100.5, "0.5.4": 130}
    apply(kidx, *[run_manifest(f"r{version.replace('.', '-')}", "a", median, day=1 + i, labels={"release": version})
                  for i, (version, median) in enumerate(medians.items())])
    args = ("compare", "--by", "label=release", "--baseline", "previous", "--only", "slower")
    code, out, err = kidx(*args, "-o", "json")
    assert code == 0, err
    [group] = json.loads(out)["groups"]
    assert [(row["label"], row["verdict"]) for row in group["rows"]] == [
        ("0.5.2", "baseline"), ("0.5.3", "unconfirmed"), ("0.5.4", "unconfirmed")]
    assert [row["withinRun"] for row in group["rows"]] == [None, "same", "slower"]
    code, out, err = kidx(*args)
    assert [line.split()[0] for line in out.splitlines()[2:5]] == ["0.5.2", "0.5.3", "0.5.4"]
    assert out.splitlines()[-1] == "summary: 0 slower, 0 faster, 0 same, 0 inconclusive, 1 unconfirmed"


def test_a_row_shown_only_as_a_kept_rows_baseline_is_not_counted_as_a_regression(kidx):
    """0.5.3 got slower than 0.5.2 and 0.5.4 faster than 0.5.3: --only faster shows 0.5.3 as
    0.5.4's baseline, but no regression among the rows it keeps, as its summary says."""
    medians = {"0.5.2": (100, 101, 99), "0.5.3": (120, 121, 119), "0.5.4": (100, 101, 99)}
    apply(kidx, *[run_manifest(f"r{version.replace('.', '-')}-{i}", "a", median, day=1 + 3 * n + i,
                               labels={"release": version})
                  for n, (version, values) in enumerate(medians.items()) for i, median in enumerate(values)])
    code, out, err = kidx("compare", "--by", "label=release", "--baseline", "previous", "--only", "faster", "-o",
                          "json")
    assert code == 0, err
    document = json.loads(out)
    assert [(row["label"], row["verdict"], row.get("shownAs", "-")) for row in document["groups"][0]["rows"]] == [
        ("0.5.2", "baseline", "-"), ("0.5.3", "slower", "baseline"), ("0.5.4", "faster", "-")]
    assert (document["regressions"], document["summary"]["slower"], document["summary"]["faster"]) == (0, 0, 1)
    # csv: under --only, a last column shownAs, "baseline" on such a row and empty on the others
    code, out, err = kidx("compare", "--by", "label=release", "--baseline", "previous", "--only", "faster", "-o",
                          "csv")
    assert code == 0, err
    header, *lines = out.splitlines()
    assert header.endswith(",withinRun,judgedOn,bytesPerSecond,flopsPerSecond,sol,solMeasured,metric,direction,shownAs")
    assert [(line.split(",")[4], line.split(",")[15], line.split(",")[-1]) for line in lines] == [
        ("0.5.2", "baseline", ""), ("0.5.3", "slower", "baseline"), ("0.5.4", "faster", "")]
    # the column comes with --only, whether or not a row is shown as a baseline; never without it
    only = kidx("compare", "--by", "label=release", "--baseline", "0.5.2", "--only", "slower", "-o", "csv").out
    assert only.splitlines()[0].endswith(",solMeasured,metric,direction,shownAs")
    assert [(line.split(",")[4], line.split(",")[-1]) for line in only.splitlines()[1:]] == [
        ("0.5.2", ""), ("0.5.3", "")]
    # the table and markdown say so beside its verdict
    for output in ("table", "markdown"):
        shown = kidx("compare", "--by", "label=release", "--baseline", "previous", "--only", "faster", "-o",
                     output).out
        assert [line.count("(shown as a baseline)") for line in shown.splitlines() if "0.5.3" in line
                or "0.5.4" in line][-2:] == [1, 0], shown
    every = kidx("compare", "--by", "label=release", "--baseline", "previous", "-o", "csv").out
    assert every.splitlines()[0].endswith(",sol,solMeasured,metric,direction")
    assert {line.split(",")[-2:] == ["latency", "lower"] for line in every.splitlines()[1:]} == {True}
    assert "shownAs" not in kidx("compare", "--by", "label=release", "--baseline", "previous", "-o", "json").out


def test_baseline_previous_names_the_value_before_the_one_with_nothing_to_compare(kidx):
    """0.5.10 was measured on another machine only: it has nothing to compare with, and the
    note names 0.5.3, the value before it (not 0.5.2, the lowest)."""
    other = "sha256:" + "4" * 64
    apply(kidx, *[run_manifest(f"r{i}", "a", 100 + i, day=1 + i, labels={"release": version},
                               environment=other if version == "0.5.10" else ENVIRONMENT)
                  for i, version in enumerate(["0.5.2", "0.5.3", "0.5.10", "0.5.11"])])
    code, out, err = kidx("compare", "--by", "label=release", "--baseline", "previous", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["unmatched"] == [
        f"0.5.10 shares no comparable group with 0.5.3: the nearest runs, r2 and r1, differ in environment "
        f"{other[:19]} vs {ENVIRONMENT[:19]}"]  # 0.5.11 is set against 0.5.3, the value before it in its group


HOSTILE_MARKDOWN = "2.11\n# Owned [link](https://evil.example) <img src=x> @admin `x` *b* _i_ | ~s~ !\x1b[31m"


def _json_environment(torch: str) -> tuple[str, str]:
    spec = {"hardware": {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90"},
            "software": {"torch": torch}}
    manifest = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ExecutionEnvironment", "spec": spec}
    name = "h200-" + hashlib.sha256(torch.encode()).hexdigest()[:8]
    return digest_of(manifest), json.dumps({**manifest, "metadata": {"name": name}}) + "\n"


def test_stored_strings_are_inert_in_markdown_and_escaped_in_tables(kidx):
    from kidx.output.comparison import markdown_text

    assert markdown_text(HOSTILE_MARKDOWN) == (
        "2.11 \\# Owned \\[link\\](https://evil.example) \\<img src=x\\> @\u2060admin \\`x\\` \\*b\\* \\_i\\_ "
        "\\| \\~s\\~ \\! \\[31m")
    old, old_manifest = _json_environment("2.9.0")
    new, new_manifest = _json_environment(HOSTILE_MARKDOWN)
    rng = random.Random(7)
    runs = [run_manifest(f"p{i:02d}", "a", 100 * rng.gauss(1, 0.005) * (1.15 if i >= 6 else 1), day=1 + i,
                         environment=new if i >= 6 else old, labels={"release": "1.0"}) for i in range(12)]
    apply(kidx, old_manifest, new_manifest, *runs)
    code, out, err = kidx("series", "--label", "release", "-o", "markdown")
    assert code == 0, err
    cause = [line for line in out.splitlines() if "cause:" in line]
    assert len(cause) == 1
    assert cause[0].endswith("cause: torch 2.9.0 → 2.11\\\\n\\# Owned \\[link\\](https://evil.example) \\<img src=x\\> "
                             "@\u2060admin \\`x\\` \\*b\\* \\_i\\_ \\| \\~s\\~ \\!^\\[\\[31m")
    assert all(ch.isprintable() or ch == "\u2060" for ch in out.replace("\n", ""))
    code, out, err = kidx("series", "--label", "release")
    assert code == 0, err
    assert "\x1b" not in out and "cause: torch 2.9.0 → 2.11\\n# Owned" in out


# ---------------------------------------------------------------- help examples and comparability


def test_help_examples_select_label_values_that_exist(kidx, head_store, history_store):
    import re

    from kidx.query.label_selector import LabelSelector
    from kidx.store.store import Store

    present: dict[str, set[str]] = {}
    for root in (head_store, history_store):
        catalog = Store(root).catalog()
        for key in catalog.label_keys():
            present.setdefault(key, set()).update(catalog.label_values(key))
    checked = 0
    for command in ("get", "describe", "delete", "compare", "series", "plot", "export"):
        text = kidx(command, "--help").out
        for quoted, bare in re.findall(r"-l (?:'([^']*)'|([^\s'\\]+))", text):
            if "=" not in quoted + bare and " in " not in quoted:
                continue  # a placeholder (-l SEL)
            for requirement in LabelSelector.parse(quoted or bare).requirements:
                if requirement.operator in ("=", "in") and requirement.key in present:  # else a user's own label
                    missing = set(requirement.values) - present.get(requirement.key, set())
                    assert not missing, f"kidx {command} --help: {requirement.key} has no value {sorted(missing)}"
                    checked += 1
    assert checked >= 5


def test_one_definition_of_comparability():
    import kidx.operations.analyse.compare as compare_operation
    import kidx.operations.analyse.plot as plot_operation
    import kidx.operations.analyse.series as series_operation
    import kidx.operations.select.analysed_runs as analysed_runs
    from kidx.analysis import comparability

    assert comparability.COMPARABLE_ROLES == ("protocol", "workload", "environment")
    assert analysed_runs.ROLES is comparability.ROLES
    for module in (compare_operation, plot_operation, series_operation):
        assert not [name for name in vars(module) if name.endswith("ROLES") and vars(module)[name] is not
                    getattr(comparability, name, None)], module.__name__

    class Ref:
        def __init__(self, digest, spec=None):
            self.digest, self.spec = digest, spec

    class Run:
        def __init__(self, environment):
            self.refs = {"protocol": Ref("p"), "workload": Ref("w"), "implementation": Ref("i"), "environment": environment}

        def reference(self, role):
            return self.refs[role]

    h200 = {"hardware": {"product": "NVIDIA H200"}}
    old = Run(Ref("e1", {**h200, "software": {"torch": "2.9.0"}}))
    new = Run(Ref("e2", {**h200, "software": {"torch": "2.11.0"}}))
    other_gpu = Run(Ref("e3", {"hardware": {"product": "NVIDIA H100"}}))
    assert comparability.comparable_key(old) != comparability.comparable_key(new)  # not side by side
    assert comparability.series_key(old) == comparability.series_key(new)  # but one series
    assert comparability.series_key(old) != comparability.series_key(other_gpu)


def test_a_change_must_stand_five_standard_errors_clear():
    # heavy-tailed noise between processes: p < 0.05 alone is not enough, |t| must reach 5
    base, new = Measure("latency", "median", 100, "ns"), Measure("latency", "median", 110, "ns")
    history = spread_noise([100, 103, 97, 101.5, 98.5, 104, 96, 100])  # about 2.8% between runs: |t| = 2.4
    strict = judge_runs(new, base, [110], [100], history, confirm_runs=1)
    loose = judge_runs(new, base, [110], [100], history, min_t=0, confirm_runs=1)
    assert loose.verdict == "slower" and loose.p_value < 0.05
    assert strict.verdict == "inconclusive" and strict.p_value == loose.p_value
    far = judge_runs(Measure("latency", "median", 150, "ns"), base, [150], [100], history, confirm_runs=1)  # |t| = 10
    assert far.verdict == "slower"
    assert judge_runs(Measure("latency", "median", 150, "ns"), base, [150], [100], history).verdict == "unconfirmed"


def spread_noise(values):
    from kidx.analysis.significance import spread_of

    return spread_of(values)


def test_the_aa_benchmark_script_reports_false_positives_and_power(tmp_path):
    # bench/bench_verdicts.py on three of the H200 A/A repetitions (docs/analysis.md has the full figures)
    import shutil
    import subprocess
    import sys

    repo = REPO
    data = tmp_path / "aa"
    for rep in ("rep-01", "rep-02", "rep-03"):
        shutil.copytree(repo / "tests" / "data" / "h200-aa" / rep, data / rep)
    completed = subprocess.run(
        [sys.executable, str(repo / "bench" / "bench_verdicts.py"), "--data", str(data), "--out", str(tmp_path / "out"),
         "--mode", "pairs", "--injected", "rep-02", "--variants"], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert "A/A pairs called faster or slower: " in completed.stdout
    [report_file] = (tmp_path / "out").glob("bench_verdicts-*.json")
    report = json.loads(report_file.read_text())
    [result] = report["results"]
    assert report["runs"] == 198 and result["default"] and result["minT"] == 5
    hit, total = result["aa"]["pairs"]
    assert total == 198 and 0 <= hit <= total  # 66 series, 3 pairs each
    caught, compared = result["power"]["pairs"]
    assert compared == 132 and 0 <= caught <= compared  # 66 latency series, 2 pairs with rep-02 each


@pytest.mark.slow
def test_the_timers_benchmark_reports_each_timer_by_runs_a_side(tmp_path):
    # bench/bench_verdicts.py's timers mode on the cuda_graph (H200) and the step (H100) recordings, 5 runs a
    # side, one split each
    import subprocess
    import sys

    completed = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_verdicts.py"), "--timer", "cuda_graph", "--timer", "steps",
         "--no-eager", "--sides", "5", "--trials", "1", "--out", str(tmp_path / "out")], capture_output=True,
        text=True, timeout=500)
    assert completed.returncode == 0, completed.stderr
    [report_file] = (tmp_path / "out").glob("bench_verdicts-*.json")
    report = json.loads(report_file.read_text())
    assert report["meta"]["title"].startswith("Verdicts per timer")
    measures = [row[0] for row in report["summary"] if row[3] != "-"]  # the targets, not the lines by kernel
    assert [row[0] for row in report["summary"] if row[3] == "-"][:2] == [
        "  geglu/backward: 2% slowdown slower, 5 a side, fresh store",
        "  geglu/forward: 2% slowdown slower, 5 a side, fresh store"]
    assert measures == [
        "kernel timer H100, 5 a side, fresh store: A/A called faster or slower",
        "kernel timer H100, 5 a side, fresh store: 2% slowdown slower",
        "steps H100 --min-time 0.3, 5 a side, fresh store: A/A called faster or slower",
        "steps H100 --min-time 0.3, 5 a side, fresh store: 2% slowdown slower",
        "geglu H100 --min-time 1 x20, 5 a side, fresh store: A/A called faster or slower",
        "geglu H100 --min-time 1 x20, 5 a side, fresh store: 2% slowdown slower",
        "kernel timer H100 x16, 8 a side, >= 25 us, fresh store: 1% slowdown slower",
        "kernel timer H100 x16, 8 a side, fresh store: A/A called faster or slower",
        "steps H100 --min-time 0.3, 8 a side, >= 25 us, fresh store: 1% slowdown slower",
        "steps H100 --min-time 0.3, 8 a side, fresh store: A/A called faster or slower",
        "geglu H100 --min-time 1 x20, 8 a side, >= 25 us, fresh store: 1% slowdown slower",
        "geglu H100 --min-time 1 x20, 8 a side, fresh store: A/A called faster or slower",
        "kernel timer H100, 5 a side, with history: A/A called faster or slower",
        "kernel timer H100, 5 a side, with history: 2% slowdown slower",
        "steps H100 --min-time 0.3, 5 a side, with history: A/A called faster or slower",
        "steps H100 --min-time 0.3, 5 a side, with history: 2% slowdown slower",
        "geglu H100 --min-time 1 x20, 5 a side, with history: A/A called faster or slower",
        "geglu H100 --min-time 1 x20, 5 a side, with history: 2% slowdown slower",
        "kernel timer H100 x16, 8 a side, >= 25 us, with history: 1% slowdown slower",
        "kernel timer H100 x16, 8 a side, with history: A/A called faster or slower",
        "steps H100 --min-time 0.3, 8 a side, >= 25 us, with history: 1% slowdown slower",
        "steps H100 --min-time 0.3, 8 a side, with history: A/A called faster or slower",
        "geglu H100 --min-time 1 x20, 8 a side, >= 25 us, with history: 1% slowdown slower",
        "geglu H100 --min-time 1 x20, 8 a side, with history: A/A called faster or slower"]
    rows = {(row["variant"], row["store"], row["scenario"], row["source"]): row["figures"]["5"]
            for row in report["rows"]}
    # the H100 recording: 48 configurations of 10 processes; the H200 one has 8, too few for 5 a side
    assert rows[("default", "fresh", "aa", "kernel timer H100")][1] == 48
    assert ("default", "fresh", "aa", "cuda_graph") not in rows
    assert rows[("default", "fresh", "aa", "steps H100 --min-time 0.3")][1] == 48  # 19 processes: both batches
    assert rows[("default", "fresh", "aa", "geglu H100 --min-time 1 x20")][1] == 16  # geglu's 16, 20 processes
    # a 5 % slowdown of softmax and layer_norm, 5 runs a side: found (geglu's GEMMs move 1-3 % between processes)
    assert rows[("default", "fresh", "slow-5", "kernel timer H100")][0] >= 32
    # with the old fixed 5 % threshold a 2 % slowdown is never found
    assert rows[("old", "fresh", "slow-2", "kernel timer H100")][0] == 0
    assert rows[("default", "history", "step-10", "cuda_graph")][1] == 20  # the H200 step's 20 twins, 5 a side
    assert "8 a side" in completed.stdout and "n/a" in completed.stdout


# One process far off an otherwise steady series is not a change (kidx.analysis.significance.CONFIRM_RUNS)

STEADY = [100, 100.2, 99.8, 100.1, 99.9, 100.2, 99.8, 100.1]


def test_a_one_run_slower_passes_the_gate_until_a_second_run_confirms_it(kidx):
    # the old rule called the single run slower and failed the gate (exit 1)
    apply(kidx, *[run_manifest(f"old{i}", "a", v, day=1 + i, labels={"release": "1.0"}) for i, v in enumerate(STEADY)],
          run_manifest("new0", "a", 141, day=20, labels={"release": "1.1"}))
    arguments = ("compare", "--by", "label=release", "--baseline", "1.0")
    code, out, err = kidx(*arguments, "--fail-on-regression")
    assert code == 0 and "unconfirmed (slower)" in out
    row = json.loads(kidx(*arguments, "-o", "json").out)["groups"][0]["rows"][1]
    assert row["verdict"] == "unconfirmed" and row["withinRun"] == "slower"
    assert row["reason"] == "one run a side: a change needs 2 runs a side that agree on it"
    assert kidx(*arguments, "--fail-on-inconclusive").code == 1  # a strict gate still fails on it
    # a second run at the new level confirms it: slower, and the gate fails
    apply(kidx, run_manifest("new1", "a", 140.5, day=21, labels={"release": "1.1"}))
    code, out, err = kidx(*arguments, "--fail-on-regression")
    assert code == 1 and "slower" in out and "unconfirmed" not in out.split("rule:")[0]


def test_a_run_off_its_series_on_either_side_is_not_a_change():
    base = Measure("latency", "median", 100.05, "ns")
    history = spread_noise(STEADY * 25)  # a long, steady history: the arms' own spread barely widens it
    # two runs a side, one of them 45% off: the old rule called it slower (|t| = 10), but 2 of 4 pairs agree
    off = judge_runs(Measure("latency", "median", 122.5, "ns"), base, [100, 145], [100, 100.1], history, 0.05)
    assert off.verdict == "unconfirmed" and off.within == "slower"
    assert off.reason == "only 2 of 4 pairs of runs differ by more than 5% that way: a run off its series is not a change"
    old = judge_runs(Measure("latency", "median", 122.5, "ns"), base, [100, 145], [100, 100.1], history,
                     confirm_runs=1)
    assert old.verdict == "slower"
    # the same on the baseline's side: one baseline run 45% off does not make the contender faster
    assert judge_runs(base, Measure("latency", "median", 122.5, "ns"), [100, 100.1], [100, 145],
                      history, 0.05).verdict == "unconfirmed"
    # a real 10% change: every pair agrees
    real = judge_runs(Measure("latency", "median", 110.1, "ns"), base, [110, 110.2], [100, 100.1], history)
    assert real.verdict == "slower" and real.within is None


def test_unconfirmed_because_counts_runs_and_pairs():
    from kidx.analysis.significance import unconfirmed_because

    assert unconfirmed_because([110], [100, 100], 1.1) == "one run a side: a change needs 2 runs a side that agree on it"
    assert unconfirmed_because([110], [100], 1.1, confirm_runs=1) is None
    assert unconfirmed_because([110, 111], [100, 100.5], 1.1) is None
    assert unconfirmed_because([110, 100], [100, 100], 1.05, 0.05) == (
        "only 2 of 4 pairs of runs differ by more than 5% that way: a run off its series is not a change")
    assert unconfirmed_because([90, 91], [100, 100], 0.9) is None  # faster: the pairs agree the other way


def test_series_outlier_is_not_a_step_and_the_latest_change_waits_for_a_second_run(kidx):
    values = [*STEADY[:4], 141, *STEADY[4:]]  # one process 41% off in the middle of a steady series
    apply(kidx, *[run_manifest(f"r{i:02d}", "a", v, day=1 + i) for i, v in enumerate(values)])
    code, out, err = kidx("series", "-o", "json", "--fail-on-regression")
    points = json.loads(out)["series"][0]["points"]
    verdicts = [(point.get("verdict"), point.get("withinRun")) for point in points[1:]]
    assert verdicts[3] == ("unconfirmed", "slower") and verdicts[4] == ("unconfirmed", "faster")  # into, out of it
    assert code == 0  # the old rule called the step into it slower and failed the gate
    # another steady series whose latest run is 20% up: no second run yet
    apply(kidx, *[run_manifest(f"b{i:02d}", "b", v, day=1 + i) for i, v in enumerate([*STEADY, 120])])
    code, out, err = kidx("series", "-o", "json", "--fail-on-regression", "--field-selector",
                          "spec.implementationDigest=sha256:" + "b" * 64)
    points = json.loads(out)["series"][0]["points"]
    assert (points[-1].get("verdict"), points[-1].get("withinRun")) == ("unconfirmed", "slower") and code == 0
    apply(kidx, run_manifest("b20", "b", 120.3, day=20))  # a second run at the new level confirms the step
    code, out, err = kidx("series", "-o", "json", "--fail-on-regression", "--field-selector",
                          "spec.implementationDigest=sha256:" + "b" * 64)
    points = json.loads(out)["series"][0]["points"]
    assert [point.get("verdict") for point in points[-2:]] == ["slower", "same"] and code == 1
