"""Bencher Metric Format: kidx import bmf, kidx export --format bmf, and the round trips
between them (upstream values back without loss)."""

from __future__ import annotations

import json

from conftest import REPO

EXAMPLE = REPO / "tests" / "data" / "bmf" / "example.json"
GOOGLE = REPO / "tests" / "data" / "google-benchmark" / "results.json"
H200 = REPO / "tests" / "data" / "h200"


def test_import(kidx):
    code, out, err = kidx("import", "bmf", str(EXAMPLE))
    assert code == 0, err
    assert err == ("import bmf (1 file): 3 benchmarks read; BenchmarkProtocol 1 created; ExecutionEnvironment 1 "
                   "created; Workload 3 created; BenchmarkRun 3 created; 0 benchmarks skipped\n")
    runs = {run["spec"]["sourceNative"]["benchmark"]: run
            for run in json.loads(kidx("get", "runs", "-o", "json").out)["items"]}
    upstream = json.loads(EXAMPLE.read_text())
    assert set(runs) == set(upstream)
    spec = runs["benchmark_name"]["spec"]
    assert spec["timing"] == {"latencyNs": {"median": 88.0}, "primaryStatistic": "median"}
    assert spec["measurements"] == [{"metric": "latency", "statistic": "lower", "unit": "ns", "value": 87.42},
                                    {"metric": "latency", "statistic": "upper", "unit": "ns", "value": 88.88}]
    for name, run in runs.items():
        assert run["spec"]["sourceNative"]["measures"] == upstream[name]
    assert "timing" not in runs["my_binary"]["spec"]
    assert kidx("get", "runs", "--field-selector", "spec.sourceNative.benchmark=my_binary", "-o", "name").out == (
        "benchmarkrun.kernelindex.dev/bmf-my-binary-5d52a198a2\n")
    code, out, err = kidx("import", "bmf", str(EXAMPLE))
    assert code == 0 and all(line.endswith(" unchanged") for line in out.splitlines())


def test_round_trip_from_bmf(kidx):
    """BMF in, BMF out: every benchmark, measure and value as it came."""
    assert kidx("import", "bmf", str(EXAMPLE))[0] == 0
    code, out, err = kidx("export", "--format", "bmf", "-o", "-")
    assert code == 0, err
    assert json.loads(out) == json.loads(EXAMPLE.read_text())
    assert err == "exported 3 benchmarks in Bencher Metric Format to standard output\n"


def test_export_of_recorded_runs_round_trips(kidx, tmp_path):
    """Liger runs (median with their p20-p80 band) and Google Benchmark runs out as BMF,
    into another store and out again: the same file."""
    assert kidx("import", "liger", str(H200 / "all_benchmark_data.csv"))[0] == 0
    assert kidx("import", "google-benchmark", str(GOOGLE))[0] == 0
    first = tmp_path / "first.json"
    code, out, err = kidx("export", "runs", "--format", "bmf", "-o", str(first))
    assert code == 0, err
    assert err == (f"exported 47 benchmarks in Bencher Metric Format to {first}; left out: 1 runs without a figure\n")
    report = json.loads(first.read_text())
    name = ("liger-llama4-rope-hidden8192-kv-heads8-q-heads32-seq16384-bf16 · liger-llama4-rope-liger-triton"
            " · liger-bench-do-bench-backward")
    [run] = json.loads(kidx("get", "runs", "-l", "provider=liger,operation=backward,metric=speed",
                            "--field-selector", "spec.sourceNative.externalId=" + "llama4_rope/backward/liger/"
                            "nvidia-h200/hidden8192-kv_heads8-q_heads32-seq16384-bf16/2026-11-30-20-22-16",
                            "-o", "json").out)["items"]
    measured = {m["statistic"]: m["value"] for m in run["spec"]["measurements"]}
    assert report[name] == {"latency": {"value": run["spec"]["timing"]["latencyNs"]["median"],
                                        "lower_value": measured["p20"], "upper_value": measured["p80"]}}
    memory = [key for key in report if "liger-bench-peak-memory-full" in key]
    assert len(memory) == 10 and all(set(report[key]) == {"peak-memory"} for key in memory)
    sum_list = report["google-benchmark-sum-list"]["latency"]
    assert sum_list == {"value": 3360.5}

    other = tmp_path / "other"
    code, out, err = kidx("import", "bmf", str(first), store_path=other)
    assert code == 0, err
    code, out, err = kidx("export", "--format", "bmf", "-o", "-", store_path=other)
    assert code == 0, err
    assert out == first.read_text()


def test_one_value_per_benchmark_the_newest(kidx, tmp_path):
    """Two recordings of the same series: the newer one is written, the older counted."""
    data = json.loads(GOOGLE.read_text())
    assert kidx("import", "google-benchmark", str(GOOGLE))[0] == 0
    data["context"]["date"] = "2026-12-02T09:00:00+00:00"
    for entry in data["benchmarks"]:
        if "real_time" in entry and entry["run_type"] == "aggregate" and entry["aggregate_name"] == "median":
            entry["real_time"] *= 2
    later = tmp_path / "later.json"
    later.write_text(json.dumps(data))
    assert kidx("import", "google-benchmark", str(later))[0] == 0
    code, out, err = kidx("export", "runs", "--format", "bmf", "-o", "-")
    assert code == 0, err
    assert err == ("exported 7 benchmarks in Bencher Metric Format to standard output; left out: 7 older runs of the "
                   "same benchmarks, 2 runs without a figure\n")
    median = next(e for e in data["benchmarks"] if e["name"] == "sum_list_median")
    assert json.loads(out)["google-benchmark-sum-list"]["latency"]["value"] == round(median["real_time"], 3)


def test_series_on_two_machines_are_told_apart(kidx, tmp_path):
    assert kidx("import", "google-benchmark", str(GOOGLE))[0] == 0
    data = json.loads(GOOGLE.read_text())
    data["context"]["date"] = "2026-12-02T09:00:00+00:00"
    later = tmp_path / "later.json"
    later.write_text(json.dumps(data))
    assert kidx("import", "google-benchmark", str(later), "--environment", str(H200 / "environment.yaml"))[0] == 0
    code, out, err = kidx("export", "runs", "--format", "bmf", "-o", "-")
    assert code == 0, err
    names = sorted(key for key in json.loads(out) if key.startswith("google-benchmark-sum-list"))
    assert names == ["google-benchmark-sum-list · google-benchmark-host-61ecd20321",
                     "google-benchmark-sum-list · nvidia-h200-1x-2959180400"]


def test_bad_input(kidx, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "a": {"latency": {"value": "fast"}},\n  "b": {"latency": {"lower_value": 1}},\n'
                   '  "c": {"latency": {"value": 1, "middle": 2}},\n  "d": []\n}\n')
    code, out, err = kidx("import", "bmf", str(bad))
    assert (code, out) == (1, "")
    assert err == (f'error: {bad}, line 2: "a".latency.value: \'fast\' is not a finite number\n'
                   f'error: {bad}, line 3: "b".latency.value: is missing\n'
                   f'error: {bad}, line 4: "c".latency.middle: is not one of value, lower_value, upper_value\n'
                   f'error: {bad}, line 5: "d": must be an object of measures (measure slug → '
                   "{value, lower_value, upper_value})\n"
                   "error: 4 problems found; nothing was changed\n")
    other = tmp_path / "list.json"
    other.write_text("[]")
    code, out, err = kidx("import", "bmf", str(other))
    assert code == 1 and "expected an object of benchmarks" in err
    code, out, err = kidx("export", "workloads", "--format", "bmf", "-o", "-")
    assert code == 1 and "BMF holds runs only, not Workload" in err
    code, out, err = kidx("export", "--format", "csv", "-o", "-")
    assert code == 1 and "unknown --format csv: bundle, bmf, pytorch-benchmark or parquet" in err


def test_impossible_bounds_are_refused_at_their_field(kidx, tmp_path, store):
    """A negative latency bound, and a lower bound above its upper bound, cannot have been measured."""
    bad = tmp_path / "bounds.json"
    bad.write_text('{\n  "a": {"latency": {"value": 5, "lower_value": -1}},\n'
                   '  "b": {"latency": {"value": 5, "lower_value": 7, "upper_value": 6}},\n'
                   '  "c": {"throughput": {"value": 5, "lower_value": 9, "upper_value": 1.5}},\n'
                   '  "d": {"latency": {"value": 5, "lower_value": 4, "upper_value": 6}}\n}\n')
    code, out, err = kidx("import", "bmf", str(bad))
    assert (code, out) == (1, "")
    assert err == (f'error: {bad}, line 2: "a".latency.lower_value: -1: a latency cannot be negative\n'
                   f'error: {bad}, line 3: "b".latency.lower_value: 7 is above upper_value 6: a lower bound cannot '
                   "exceed its upper bound\n"
                   f'error: {bad}, line 4: "c".throughput.lower_value: 9 is above upper_value 1.5: a lower bound '
                   "cannot exceed its upper bound\n"
                   "error: 3 problems found; nothing was changed\n")
    assert not store.exists()
