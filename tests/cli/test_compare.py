"""kidx compare on the Liger data: comparable groups, baselines, verdicts, exit codes."""

from __future__ import annotations

import json

import pytest
from conftest import RULE

SEED_RUN = "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-"
HF_RUN = "liger-llama4-rope-backward-huggingface-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads-7a1c5fe285"
SEQ8192_RUN = "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq-06a5f9125d"
WORKLOAD = "liger-llama4-rope-hidden8192-kv-heads8-q-heads32-seq16384-bf16"



def test_llama4_rope_backward_h100_speedup_over_transformers(kidx, head_store):
    code, out, err = kidx(
        "compare", "--references", f"workload/{WORKLOAD}", "--references", "environment/liger-bench-nvidia-h100-80gb-hbm3",
        "--field-selector", "spec.sourceNative.benchmark=llama4_rope/backward", "--baseline", "transformers",
        store_path=head_store,
    )
    assert (code, err) == (0, "")
    assert out == (
        f"protocol liger-bench-do-bench-backward, workload {WORKLOAD}, environment liger-bench-nvidia-h100-80gb-hbm3\n"
        "IMPLEMENTATION                         MEDIAN    P20-P80           RUNS   RATIO   RATIO-CI   SPEEDUP   "
        "VERDICT                RUN\n"
        "liger-llama4-rope-transformers-eager   1.482ms   1.481ms-1.483ms   1      1.000              1.00x     "
        f"baseline               {HF_RUN}\n"
        "liger-llama4-rope-liger-triton         417.5µs   417.1µs-418.1µs   1      0.282              3.55x     "
        f"unconfirmed (faster)   {SEED_RUN}\n"
        "\n" + RULE + "summary: 0 slower, 0 faster, 0 same, 0 inconclusive, 1 unconfirmed\n"
    )


def test_json_shape_and_numbers(kidx, head_store):
    code, out, err = kidx("compare", SEED_RUN, HF_RUN, "--baseline", "liger-llama4-rope-transformers-eager",
                          "-o", "json", store_path=head_store)
    assert code == 0
    document = json.loads(out)
    assert document["by"] == "implementation" and document["threshold"] is None  # it follows the evidence
    assert document["rule"] == RULE[len("rule: "):-1]
    [group] = document["groups"]
    assert (group["protocol"], group["workload"], group["environment"], group["implementation"]) == (
        "liger-bench-do-bench-backward", WORKLOAD, "liger-bench-nvidia-h100-80gb-hbm3", None)
    baseline, liger = group["rows"]
    assert baseline == {
        "run": HF_RUN, "implementation": "liger-llama4-rope-transformers-eager", "label": None,
        "observedAt": "2025-08-07T21:42:17.000Z", "metric": "latency", "direction": "lower",
        "statistic": "median", "value": 1482272, "unit": "ns",
        "low": 1481056, "high": 1483360, "samples": None, "runs": [HF_RUN], "spread": None, "ratio": 1.0,
        "speedup": 1.0, "verdict": "baseline", "test": None, "pValue": None, "ciLow": None, "ciHigh": None,
        "evidence": None, "withinRun": None, "reason": None, "detectableChange": None, "runsNeeded": None,
        "runsNeededFor": None, "threshold": None, "judgedOn": None,
        "forced": False,
        # no kernel-timer twin, and at 553 MB (above SMALL_WORKING_SET) and a seq sweep that grows: not host-bound
        "launchOverhead": None, "kernelTime": None, "kernelTimer": None, "hostBound": None,
        "likelyHostBound": False, "hostBoundReasons": [],
        # 553,648,128 B (docs/speed-of-light.md) in the median 1.482272 ms, of the H100 SXM's 3.35 TB/s
        "speedOfLight": {
            "costSource": "formula", "formula": "liger_kernel_bench/llama4_rope/backward", "bytes": 553648128,
            "bytesPerSecond": 553648128 / (1482272 * 1e-9),
            "ofPeak": {"bandwidth": 553648128 / (1482272 * 1e-9) / 3.35e12,
                       "sol": 553648128 / (1482272 * 1e-9) / 3.35e12},
            "peakOf": "H100 SXM 80GB HBM3"},
    }
    # one run a side and no history of either series: the bands are within-run evidence only
    assert (liger["value"], liger["verdict"], liger["withinRun"], liger["test"], liger["evidence"]) == (
        417536, "unconfirmed", "faster", "bands", "within-run")
    assert liger["reason"] == "only within-run evidence: no repeated runs or history of the series"
    assert document["summary"] == {"slower": 0, "faster": 0, "same": 0, "inconclusive": 0, "unconfirmed": 1}
    assert round(liger["speedup"], 4) == 3.5500 and round(liger["ratio"], 4) == 0.2817


def test_default_baseline_is_the_earliest_observed_run(kidx, head_store):
    code, out, _ = kidx("compare", HF_RUN, SEED_RUN, "-o", "json", store_path=head_store)
    rows = json.loads(out)["groups"][0]["rows"]
    assert [(r["run"], r["verdict"], r["withinRun"]) for r in rows] == [
        (SEED_RUN, "baseline", None), (HF_RUN, "unconfirmed", "slower")]
    assert code == 0


def test_within_run_evidence_alone_fails_only_a_strict_gate(kidx, head_store):
    # slower by its bands, but one run a side: unconfirmed, which --fail-on-regression lets pass
    assert kidx("compare", HF_RUN, SEED_RUN, "--fail-on-regression", store_path=head_store).code == 0
    assert kidx("compare", HF_RUN, SEED_RUN, "--fail-on-inconclusive", store_path=head_store).code == 1
    assert kidx("compare", HF_RUN, SEED_RUN, "--baseline", "transformers", "--fail-on-inconclusive",
                store_path=head_store).code == 1


def test_cross_gpu_comparison_is_refused_naming_the_reference(kidx, head_store):
    # the same workload, protocol and implementation, measured on an RTX 3090 and on an H100
    rtx = "liger-fused-neighborhood-attention-backward-liger-nvidia-geforce-rtx-3090-batch2-biastrue-040b236a73"
    h100 = "liger-fused-neighborhood-attention-backward-liger-nvidia-h100-80gb-hbm3-batch2-biastrue-d-8e31b67014"
    code, out, err = kidx("compare", rtx, h100, store_path=head_store)
    assert (code, out) == (2, "")
    assert err == (
        f"error: runs {rtx} and {h100} are not comparable: they differ in environment "
        "liger-bench-nvidia-geforce-rtx-3090 vs liger-bench-nvidia-h100-80gb-hbm3 (runs compare only under one "
        "protocol, workload and environment; --force compares them anyway)\n"
    )


def test_different_workload_is_named(kidx, head_store):
    code, out, err = kidx("compare", SEED_RUN, SEQ8192_RUN, store_path=head_store)
    assert code == 2 and out == ""
    assert err == (
        f"error: runs {SEED_RUN} and {SEQ8192_RUN} are not comparable: they differ in workload {WORKLOAD} vs "
        "liger-llama4-rope-hidden8192-kv-heads8-q-heads32-seq8192-bf16 (runs compare only under one protocol, "
        "workload and environment; --force compares them anyway)\n"
    )


def test_force_compares_anyway_and_says_so_in_every_row(kidx, head_store):
    code, out, err = kidx("compare", SEED_RUN, SEQ8192_RUN, "--force", store_path=head_store)
    assert code == 0
    lines = out.splitlines()
    assert lines[1].split() == ["IMPLEMENTATION", "MEDIAN", "P20-P80", "RUNS", "RATIO", "RATIO-CI", "SPEEDUP", "VERDICT",
                                "NOTE", "RUN"]
    assert all("forced: runs differ in workload" in line for line in lines[2:4])
    code, out, _ = kidx("compare", SEED_RUN, SEQ8192_RUN, "--force", "-o", "json", store_path=head_store)
    rows = json.loads(out)["groups"][0]["rows"]
    assert [row["forced"] for row in rows] == [True, True]
    assert json.loads(out)["groups"][0]["forced"] == "forced: runs differ in workload"


def test_markdown_of_a_forced_comparison_keeps_the_note_and_the_table_columns(kidx, head_store):
    code, out, err = kidx("compare", SEED_RUN, SEQ8192_RUN, "--force", "-o", "markdown", store_path=head_store)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[4] == "| IMPLEMENTATION | MEDIAN | P20-P80 | RUNS | RATIO | RATIO-CI | SPEEDUP | VERDICT | NOTE | RUN |"
    assert lines[6] == ("| liger-llama4-rope-liger-triton | 217.1µs | 216.6µs-217.5µs | 1 | 1.000 |  | 1.00x | baseline | "
                        f"forced: runs differ in workload | {SEQ8192_RUN} |")
    assert lines[7].endswith(f"| 0.52x | unconfirmed (slower) | forced: runs differ in workload | {SEED_RUN} |")


def test_markdown_of_memory_says_reduction(kidx, head_store):
    code, out, _ = kidx("compare", "--references", f"workload/{WORKLOAD}", "--references",
                        "environment/liger-bench-nvidia-h100-80gb-hbm3", "--field-selector",
                        "spec.sourceNative.benchmark=llama4_rope/full/memory", "--baseline", "transformers",
                        "-o", "markdown", store_path=head_store)
    assert code == 0
    assert out.splitlines()[4] == ("| IMPLEMENTATION | PEAK-MEDIAN | P20-P80 | RUNS | RATIO | RATIO-CI | REDUCTION | "
                                   "VERDICT | RUN |")
    assert "| 700.1MiB | 700.1MiB-700.1MiB | 1 | 0.306 |  | 3.27x | unconfirmed (faster) |" in out


def test_force_needs_named_runs(kidx, head_store):
    code, _, err = kidx("compare", "-l", "liger_version=0.6.1", "--force", store_path=head_store)
    assert code == 2 and "--force compares named runs" in err


def test_a_single_run_has_nothing_to_compare_with(kidx, head_store):
    code, out, err = kidx("compare", SEED_RUN, store_path=head_store)
    assert (code, out) == (0, "")
    assert err == (
        "1 comparable group with a single run: nothing to compare with\n"
        f"  protocol liger-bench-do-bench-backward, workload {WORKLOAD}, environment liger-bench-nvidia-h100-80gb-hbm3\n"
        "Nothing compared\n"
    )


def test_missing_run_is_an_error_with_exit_2(kidx, head_store):
    code, out, err = kidx("compare", SEED_RUN, "no-such-run", store_path=head_store)
    assert (code, out) == (2, "")
    # as get and describe say it (docs/scripting.md)
    assert err == 'Error (NotFound): benchmarkruns.kernelindex.dev "no-such-run" not found\n'


@pytest.mark.parametrize("args, message", [
    (["--by", "provider"], 'invalid --by value "provider"'),
    (["-o", "name"], 'unable to match a printer suitable for the output format "name", allowed formats are: '),
    (["--threshold", "-1"], "invalid --threshold -1"),
    (["--threshold", "100"], "invalid --threshold 100: a percentage from 0 up to, not including, 100"),
    (["--threshold", "250"], "invalid --threshold 250: a percentage from 0 up to, not including, 100"),
    (["--no-such-flag"], "unknown flag: --no-such-flag"),
])
def test_bad_arguments_exit_2(kidx, head_store, args, message):
    code, out, err = kidx("compare", SEED_RUN, *args, store_path=head_store)
    assert (code, out) == (2, "") and message in err


def test_memory_runs_compare_peak_bytes_lower_is_better(kidx, head_store):
    code, out, _ = kidx("compare", "--references", f"workload/{WORKLOAD}", "--references",
                        "environment/liger-bench-nvidia-h100-80gb-hbm3", "--field-selector",
                        "spec.sourceNative.benchmark=llama4_rope/full/memory", "--baseline", "transformers",
                        "-o", "json", store_path=head_store)
    assert code == 0
    [group] = json.loads(out)["groups"]
    assert group["protocol"] == "liger-bench-peak-memory-full"
    hf, liger = group["rows"]
    assert (hf["unit"], hf["value"], hf["verdict"]) == ("B", 2399273472, "baseline")
    assert {(row["metric"], row["direction"]) for row in group["rows"]} == {("peak_memory", "lower")}
    assert (liger["value"], liger["withinRun"]) == (734134784, "faster")  # less memory is better
    assert round(liger["speedup"], 2) == 3.27
    code, out, _ = kidx("compare", "--references", f"workload/{WORKLOAD}", "--references",
                        "environment/liger-bench-nvidia-h100-80gb-hbm3", "--field-selector",
                        "spec.sourceNative.benchmark=llama4_rope/full/memory", "--baseline", "transformers",
                        store_path=head_store)
    assert out.splitlines()[1].split()[:7] == ["IMPLEMENTATION", "PEAK-MEDIAN", "P20-P80", "RUNS", "RATIO", "RATIO-CI",
                                               "REDUCTION"]


def test_release_changes_0_3_0_to_0_3_1_rest_on_one_run_a_side(kidx, history_store):
    # each release measured each kernel once and the store holds no other run of those series: the
    # bands say slower 20 times, but with no between-run noise that is unconfirmed, not a regression
    code, out, err = kidx("compare", "-l", "liger_version in (0.3.0,0.3.1)", "--by", "label=liger_version",
                          "--baseline", "0.3.0", "--fail-on-regression", "-o", "csv", store_path=history_store)
    assert code == 0
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(out)))
    compared = [row for row in rows if row["verdict"] not in ("", "baseline")]
    assert {row["label"] for row in compared} == {"0.3.1"}
    assert {row["verdict"] for row in compared} == {"unconfirmed"}
    slower = sorted((row["workload"], row["protocol"], row["implementation"]) for row in compared
                    if row["withinRun"] == "slower")
    assert len(slower) == 20 and len(compared) == 36  # 24 latency, 12 peak memory
    assert all(w.startswith("liger-jsd-") for w, _, _ in slower)
    assert ("liger-jsd-batch4-seq2048-vocab131072", "liger-bench-do-bench-forward", "liger-jsd-liger-triton") in slower
    faster = [row for row in compared if row["withinRun"] == "faster"]
    assert [(r["workload"], r["protocol"], r["implementation"]) for r in faster] == [
        ("liger-jsd-batch4-seq2048-vocab4096", "liger-bench-do-bench-full", "liger-jsd-liger-triton")]
    assert kidx("compare", "-l", "liger_version in (0.3.0,0.3.1)", "--by", "label=liger_version",
                "--baseline", "0.3.0", "--fail-on-inconclusive", store_path=history_store).code == 1


def test_release_regression_table_names_the_release(kidx, history_store):
    code, out, err = kidx("compare", "-l", "liger_version in (0.3.0,0.3.1)", "--by", "label=liger_version",
                          "--baseline", "0.3.0", store_path=history_store)
    first = out.split("\n\n")[0].splitlines()
    assert first[0] == ("protocol liger-bench-do-bench-forward, workload liger-jsd-batch4-seq2048-vocab131072, "
                        "environment liger-bench-nvidia-h100-pcie, implementation liger-jsd-liger-triton")
    assert first[1].split() == ["LIGER_VERSION", "MEDIAN", "P20-P80", "RUNS", "RATIO", "RATIO-CI", "SPEEDUP", "VERDICT",
                                "RUN"]
    assert first[2].split()[:7] == ["0.3.0", "77.74ms", "77.74ms-77.74ms", "1", "1.000", "1.00x", "baseline"]
    assert first[3].split()[:8] == ["0.3.1", "87.04ms", "87.04ms-87.04ms", "1", "1.120", "0.89x", "unconfirmed",
                                    "(slower)"]
    assert out.endswith("summary: 0 slower, 0 faster, 0 same, 0 inconclusive, 36 unconfirmed\n")
    assert "comparable groups with a single run: nothing to compare with" in err


def test_only_lists_the_rows_of_a_verdict_with_their_baselines(kidx, history_store):
    code, out, err = kidx("compare", "-l", "liger_version in (0.3.0,0.3.1)", "--by", "label=liger_version",
                          "--baseline", "0.3.0", "--only", "unconfirmed", "--fail-on-inconclusive", "-o", "json",
                          store_path=history_store)
    assert code == 1
    groups = json.loads(out)["groups"]
    assert len(groups) == 36
    assert all([row["verdict"] for row in group["rows"]] == ["baseline", "unconfirmed"] for group in groups)
    slower = [group for group in groups if group["rows"][1]["withinRun"] == "slower"]
    assert len(slower) == 20
    assert {group["implementation"] for group in slower} == {"liger-jsd-liger-triton", "liger-jsd-torch-eager"}



def test_only_slower_keeps_what_got_slower_confirmed_or_not(kidx, history_store):
    """What regressed: nothing is confirmed slower (one run a side), and --only slower lists
    the 20 rows whose evidence says slower, unconfirmed, each with its baseline."""
    args = ("compare", "-l", "liger_version in (0.3.0,0.3.1)", "--by", "label=liger_version", "--baseline", "0.3.0")
    code, out, err = kidx(*args, "--only", "slower", "-o", "json", store_path=history_store)
    assert code == 0, err
    groups = json.loads(out)["groups"]
    assert len(groups) == 20
    assert all([(row["verdict"], row["withinRun"]) for row in group["rows"]] == [
        ("baseline", None), ("unconfirmed", "slower")] for group in groups)
    code, out, err = kidx(*args, "--only", "slower", store_path=history_store)
    assert out.count("unconfirmed (slower)") == 20 and "Nothing compared" not in err
    assert out.endswith("summary: 0 slower, 0 faster, 0 same, 0 inconclusive, 20 unconfirmed\n")
    # a verdict no row has: what was compared is said, never "Nothing compared"
    code, out, err = kidx(*args, "--only", "inconclusive", store_path=history_store)
    assert (code, out) == (0, "")
    assert err.endswith("No row has the verdicts --only asks for; the 36 rows compared: 0 slower, 0 faster, 0 same, "
                        "0 inconclusive, 36 unconfirmed\n")


def test_only_rejects_unknown_verdicts(kidx, head_store):
    code, _, err = kidx("compare", SEED_RUN, "--only", "worse", store_path=head_store)
    assert code == 2 and 'invalid --only value "worse"' in err


def _sampled_run(name, implementation, values):
    measurements = "".join(
        f"\n    - {{metric: latency, statistic: sample, unit: us, value: {v}}}" for v in values)
    return f"""apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata: {{name: {name}}}
spec:
  status: passed
  observedAt: "2026-01-0{len(name) % 9 + 1}T00:00:00Z"
  timing: {{latencyNs: {{median: {sorted(values)[len(values) // 2] * 1000}}}, primaryStatistic: median}}
  protocolDigest: sha256:{"1" * 64}
  workloadDigest: sha256:{"2" * 64}
  environmentDigest: sha256:{"3" * 64}
  implementationDigest: sha256:{implementation * 64}
  measurements:{measurements}
"""


def test_runs_with_samples_are_judged_by_mann_whitney(kidx):
    manifests = "---\n".join([
        _sampled_run("base", "a", [100, 101, 102, 103, 104, 105, 106, 107]),
        _sampled_run("new", "b", [120, 121, 122, 123, 124, 125, 126, 127]),
        _sampled_run("noisy", "c", [90, 125, 95, 130, 100, 128, 104, 131]),
    ])
    assert kidx("apply", "-f", "-", stdin=manifests).code == 0
    code, out, err = kidx("compare", "base", "new", "noisy", "--baseline", "sha256:" + "a" * 64, "-o", "json")
    assert code == 0, err
    rows = {row["run"]: row for row in json.loads(out)["groups"][0]["rows"]}
    assert rows["base"]["verdict"] == "baseline" and rows["base"]["samples"] == 8
    # one run each: the samples are within-run evidence, so at most unconfirmed
    assert (rows["new"]["test"], rows["new"]["verdict"], rows["new"]["withinRun"]) == (
        "mann-whitney", "unconfirmed", "slower")
    assert rows["new"]["pValue"] < 0.001
    assert 1.15 < rows["new"]["ciLow"] < 1.2 < rows["new"]["ciHigh"] < 1.25  # Hodges-Lehmann, around +20%
    # a median 20% higher, but the samples overlap too much to call it
    assert (rows["noisy"]["test"], rows["noisy"]["withinRun"]) == ("mann-whitney", "same")
    assert rows["noisy"]["implementation"] is None  # the implementation is not in the store
    code, out, _ = kidx("compare", "base", "new", "noisy", "--baseline", "sha256:" + "a" * 64)
    assert out.splitlines()[2].startswith("sha256:aaaaaaaaaaaa   ")  # shown as a short digest


def _measured_run(name: str, protocol: str, metric: str, unit: str, value: float, day: int) -> str:
    """A run whose figure is a measurement of ``metric`` in ``unit`` (no latency, no memory)."""
    return f"""apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata: {{name: {name}}}
spec:
  status: passed
  observedAt: "2026-01-{day:02d}T00:00:00Z"
  protocolDigest: sha256:{protocol * 64}
  workloadDigest: sha256:{"2" * 64}
  environmentDigest: sha256:{"3" * 64}
  implementationDigest: sha256:{name[-1] * 64}
  measurements:
    - {{metric: {metric}, statistic: median, unit: {unit}, value: {value}}}
"""


def test_each_row_says_the_metric_it_compared_and_which_way_is_better(kidx):
    """-o json and -o yaml name each row's metric and its direction in the words of
    kidx/units.py: lower, higher, or null where neither the metric nor its unit says (and
    the speedup is then null too)."""
    figures = [("1", "latency", "us"), ("4", "memory_bandwidth", "bytes/s"), ("5", "hit_count", "count")]
    manifests = [_measured_run(f"{metric}-{side}", protocol, metric, unit, value, day)
                 for protocol, metric, unit in figures for side, value, day in (("a", 100, 1), ("b", 130, 2))]
    assert kidx("apply", "-f", "-", stdin="---\n".join(manifests)).code == 0
    code, out, err = kidx("compare", "-o", "json")
    assert (code, err) == (0, "")
    rows = [row for group in json.loads(out)["groups"] for row in group["rows"]]
    assert sorted((row["run"], row["metric"], row["direction"], row["speedup"] and round(row["speedup"], 3))
                  for row in rows) == [
        ("hit_count-a", "hit_count", None, 1.0), ("hit_count-b", "hit_count", None, None),  # better: unknown
        ("latency-a", "latency", "lower", 1.0), ("latency-b", "latency", "lower", 0.769),
        ("memory_bandwidth-a", "memory_bandwidth", "higher", 1.0),
        ("memory_bandwidth-b", "memory_bandwidth", "higher", 1.3)]
    code, out, err = kidx("compare", "-o", "yaml")
    assert (code, err) == (0, "")
    assert out.count("  direction: lower\n") == out.count("  metric: latency\n") == 2
    assert out.count("  direction: higher\n") == out.count("  direction: null\n") == 2


def test_speedup_in_one_command_selecting_through_references(kidx, head_store):
    code, out, err = kidx(
        "compare", "--field-selector",
        "workload.spec.operation=llama4_rope,workload.spec.parameters.seq=16384,"
        "protocol.metadata.name=liger-bench-do-bench-backward,environment.metadata.name=liger-bench-nvidia-h100-80gb-hbm3",
        "--baseline", "transformers", "-o", "csv", store_path=head_store)
    assert (code, err) == (0, "")
    rows = [line.split(",") for line in out.splitlines()[1:]]
    assert [(row[3], row[8], row[14], row[15]) for row in rows] == [
        ("liger-llama4-rope-transformers-eager", "1482272", "1", "baseline"),
        ("liger-llama4-rope-liger-triton", "417536", "3.5500459840588596", "unconfirmed"),
    ]


def test_speedup_selecting_by_the_importers_labels(kidx, head_store):
    code, out, err = kidx("compare", "-l", "kernel=llama4_rope,operation=backward,gpu=nvidia-h100-80gb-hbm3",
                          "--field-selector", "workload.spec.parameters.seq=16384", "--baseline", "transformers",
                          store_path=head_store)
    assert (code, err) == (0, "")
    assert [line.split()[:8] for line in out.splitlines()[2:4]] == [
        ["liger-llama4-rope-transformers-eager", "1.482ms", "1.481ms-1.483ms", "1", "1.000", "1.00x", "baseline",
         HF_RUN],
        ["liger-llama4-rope-liger-triton", "417.5µs", "417.1µs-418.1µs", "1", "0.282", "3.55x", "unconfirmed",
         "(faster)"],
    ]


def _bmf_runs(kidx, tmp_path, values: dict[str, float | None]) -> None:
    """One BMF benchmark measured once per label value (version=KEY): its latency, or
    only a throughput (no figure to compare) where the value is None."""
    items = []
    for version, value in values.items():
        measure = {"latency": {"value": value}} if value is not None else {"throughput": {"value": 5.0}}
        (tmp_path / "x.json").write_text(json.dumps({"x": measure}))
        code, out, err = kidx("import", "bmf", str(tmp_path / "x.json"), "-o", "json")
        assert code == 0, err
        for item in json.loads(out)["items"]:
            if item["kind"] == "BenchmarkRun":
                item["metadata"]["name"] += "-" + version
                item["metadata"]["labels"] = {"version": version}
            items.append(item)
    (tmp_path / "runs.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    assert kidx("apply", "-f", str(tmp_path / "runs.json"))[0] == 0


def test_a_baseline_when_no_selected_run_has_a_figure(kidx, tmp_path):
    _bmf_runs(kidx, tmp_path, {"a": None, "b": None})
    problem = "no selected run has a figure to compare (2 selected: not passed, or no figure)"
    for by in ((), ("--by", "label=version")):
        code, out, err = kidx("compare", *by, "--baseline", "a")
        assert (code, out) == (0, ""), err
        assert problem + "\n" in err and "unexpected" not in err
        code, out, err = kidx("compare", *by, "--baseline", "a", "--fail-on-regression")
        assert (code, out) == (2, "")
        assert err.startswith(f"error: the gate cannot judge: {problem}")
        assert kidx("compare", *by, "--baseline", "a", "--fail-on-regression", "--allow-empty")[0] == 0


def test_a_ratio_that_overflows_is_null_in_json(kidx, tmp_path):
    _bmf_runs(kidx, tmp_path, {"a": 1e300, "b": 1e-300})
    code, out, err = kidx("compare", "--by", "label=version", "--baseline", "a", "-o", "json")
    assert code == 0, err
    assert "Infinity" not in out and "NaN" not in out
    [group] = json.loads(out)["groups"]
    assert [(row["label"], row["speedup"]) for row in group["rows"]] == [("a", 1.0), ("b", None)]


def test_a_baseline_whose_figure_is_zero_is_named_as_such(kidx, tmp_path):
    """The baseline's runs exist: the refusal says their figure is zero, not that none has the value."""
    _bmf_runs(kidx, tmp_path, {"a": 0.0, "b": 5.0})
    problem = ("the 1 selected run with version=a (--baseline) has no figure to compare with: its figure is zero "
               "(median latency 0, nothing to divide by): bmf-x-25d17184d9-a")
    code, out, err = kidx("compare", "--by", "label=version", "--baseline", "a")
    assert (code, out) == (0, ""), err
    assert problem + "\n" in err
    code, out, err = kidx("compare", "--by", "label=version", "--baseline", "a", "--fail-on-regression")
    assert (code, out, err) == (2, "", f"error: the gate cannot judge: {problem} (--allow-empty passes when nothing "
                                       "could be judged)\n")
