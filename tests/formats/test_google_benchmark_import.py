"""kidx import google-benchmark, on JSON that Google Benchmark itself wrote: the kept
file tests/data/google-benchmark/results.json, and a small benchmark program
(tests/benchmarks/google_benchmark_sample.py) run in a subprocess with the
google-benchmark package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

MODULE = REPO / "tests" / "benchmarks" / "google_benchmark_sample.py"
KEPT = REPO / "tests" / "data" / "google-benchmark" / "results.json"
R = "benchmarkrun.kernelindex.dev/"
SCALE = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def run_google_benchmark(folder: Path, *options: str) -> Path:
    """The sample program for real, with a short minimum time; returns the JSON file."""
    pytest.importorskip("google_benchmark")
    out = folder / "gbench.json"
    completed = subprocess.run(
        [sys.executable, str(MODULE), "--benchmark_min_time=0.001s", f"--benchmark_out={out}",
         "--benchmark_out_format=json", *options],
        capture_output=True, text=True, cwd=folder, timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return out


def runs(kidx) -> dict[str, dict]:
    items = json.loads(kidx("get", "runs", "-o", "json").out)["items"]
    return {run["spec"]["sourceNative"]["benchmark"]: run for run in items}


def upstream(path: Path) -> dict:
    return json.loads(path.read_text())


def test_import_summary_and_objects(kidx):
    code, out, err = kidx("import", "google-benchmark", str(KEPT))
    assert code == 0, err
    assert err == (
        "import google-benchmark (1 file): 8 benchmarks read; BenchmarkProtocol 2 created; "
        "ExecutionEnvironment 1 created; Workload 8 created; BenchmarkRun 8 created; 0 benchmarks skipped\n"
    )
    assert "benchmarkprotocol.kernelindex.dev/google-benchmark-real-time created\n" in out
    assert "benchmarkprotocol.kernelindex.dev/google-benchmark-manual-time created\n" in out
    assert "workload.kernelindex.dev/google-benchmark-sort-list-1000 created\n" in out
    assert R + "google-benchmark-google-benchmark-sample-py-sum-list-2026-12-01t10-39-05-00-00-2bab1834d6 created\n" in out
    code, out, err = kidx("import", "google-benchmark", str(KEPT))
    assert code == 0 and all(line.endswith(" unchanged") for line in out.splitlines())


def test_repetitions_are_samples_and_aggregates_are_not_runs(kidx):
    data = upstream(KEPT)
    assert kidx("import", "google-benchmark", str(KEPT))[0] == 0
    by_name = runs(kidx)
    instances = {e["run_name"] for e in data["benchmarks"] if e.get("aggregate_name") not in ("BigO", "RMS")}
    assert set(by_name) == instances and len(instances) == 8
    for name, run in by_name.items():
        spec = run["spec"]
        repetitions = [e for e in data["benchmarks"] if e["run_name"] == name and e["run_type"] == "iteration"]
        aggregates = {e["aggregate_name"]: e for e in data["benchmarks"]
                      if e["run_name"] == name and e["run_type"] == "aggregate"}
        assert len(repetitions) == 3
        if name == "broken":
            assert spec["status"] == "error"
            assert spec["failure"] == {"reason": "BenchmarkError", "message": "no device"}
            assert "timing" not in spec and "samples" not in spec
            continue
        real = [round(e["real_time"] * SCALE[e["time_unit"]], 3) for e in repetitions]
        assert spec["samples"] == {"metric": "latency", "unit": "ns", "values": real}
        scale = SCALE[aggregates["median"]["time_unit"]]
        assert spec["timing"] == {"primaryStatistic": "median", "latencyNs": {
            "median": round(aggregates["median"]["real_time"] * scale, 3),
            "mean": round(aggregates["mean"]["real_time"] * scale, 3),
            "stddev": round(aggregates["stddev"]["real_time"] * scale, 3),
            "min": min(real), "max": max(real)}}
        measured = {(m["metric"], m["statistic"]): (m["unit"], m["value"]) for m in spec["measurements"]}
        assert measured[("cpu_latency", "median")] == ("ns", round(aggregates["median"]["cpu_time"] * scale, 3))
        assert measured[("latency", "cv")] == ("ratio", aggregates["cv"]["real_time"])
        assert measured[("repetitions", "count")] == ("count", 3)
        assert measured[("iterations", "count")] == ("count", repetitions[0]["iterations"])


def test_time_units_and_counters(kidx):
    data = upstream(KEPT)
    assert kidx("import", "google-benchmark", str(KEPT))[0] == 0
    by_name = runs(kidx)
    sort_median = next(e for e in data["benchmarks"] if e["name"] == "sort_list/1000_median")
    assert sort_median["time_unit"] == "us"
    assert by_name["sort_list/1000"]["spec"]["timing"]["latencyNs"]["median"] == round(sort_median["real_time"] * 1e3, 3)
    assert by_name["sort_list/1000"]["spec"]["sourceNative"]["timeUnit"] == "us"
    assert by_name["sort_list/1000"]["spec"]["sourceNative"]["metrics"] == {
        "elements": sort_median["elements"], "rate": sort_median["rate"]}
    sum_median = next(e for e in data["benchmarks"] if e["name"] == "sum_list_median")
    spec = by_name["sum_list"]["spec"]
    assert {"metric": "memory_bandwidth", "statistic": "median", "unit": "bytes/s",
            "value": sum_median["bytes_per_second"]} in spec["measurements"]
    assert {"metric": "throughput", "statistic": "median", "unit": "items/s",
            "value": sum_median["items_per_second"]} in spec["measurements"]
    assert spec["sourceNative"]["metrics"] == {"bytes_per_second": sum_median["bytes_per_second"],
                                               "items_per_second": sum_median["items_per_second"]}
    code, out, err = kidx("get", "workload", "google-benchmark-sort-list-1000", "-o", "jsonpath={.spec.parameters}")
    assert json.loads(out) == {"arg0": 1000, "threads": 1}


def test_round_trip_keeps_every_upstream_value(kidx):
    """Every entry of the file, the family's complexity fit and the context come back from
    the stored runs exactly as written."""
    data = upstream(KEPT)
    assert kidx("import", "google-benchmark", str(KEPT))[0] == 0
    stored = runs(kidx).values()
    entries = [e for run in stored for e in run["spec"]["sourceNative"]["entries"]]
    family = {json.dumps(e, sort_keys=True) for run in stored for e in run["spec"]["sourceNative"].get("familyAggregates", [])}
    rebuilt = [json.dumps(e, sort_keys=True) for e in entries] + sorted(family)
    assert sorted(rebuilt) == sorted(json.dumps(e, sort_keys=True) for e in data["benchmarks"])
    assert all(run["spec"]["sourceNative"]["context"] == data["context"] for run in stored)
    assert {run["spec"]["sourceNative"]["benchmark"] for run in stored if "familyAggregates" in run["spec"]["sourceNative"]} == {
        "linear/8", "linear/16", "linear/32"}


def test_environment_from_the_context(kidx):
    context = upstream(KEPT)["context"]
    assert kidx("import", "google-benchmark", str(KEPT))[0] == 0
    [env] = json.loads(kidx("get", "environments", "-o", "json").out)["items"]
    assert env["spec"]["software"] == {"google-benchmark": "1.9.5", "google-benchmark-build": "release"}
    assert env["spec"]["host"]["caches"] == [
        {"type": c["type"], "level": c["level"], "sizeBytes": c["size"], "sharedBy": c["num_sharing"]}
        for c in context["caches"]]
    assert env["metadata"]["annotations"]["kernelindex.dev/cpu-count"] == str(context["num_cpus"])
    assert env["metadata"]["annotations"]["kernelindex.dev/hostname"] == context["host_name"]


def test_a_debug_build_is_flagged(kidx, tmp_path):
    data = upstream(KEPT)
    data["context"]["library_build_type"] = "debug"
    debug = tmp_path / "debug.json"
    debug.write_text(json.dumps(data, indent=2))
    code, out, err = kidx("import", "google-benchmark", str(debug))
    assert code == 0
    assert err.splitlines()[-1] == (f"Warning: {debug}: the Google Benchmark library was built as debug; timings "
                                    "may be affected (Google Benchmark warns the same)")
    code, out, err = kidx("get", "environments", "-o", "jsonpath={.items[0].spec.software}")
    assert json.loads(out)["google-benchmark-build"] == "debug"


def test_random_interleaving_and_a_live_run(kidx, tmp_path):
    """Two real runs with interleaved repetitions: each instance is one run with all its
    repetitions, whatever the order the file lists them in."""
    first = run_google_benchmark(tmp_path, "--benchmark_repetitions=4", "--benchmark_enable_random_interleaving=true",
                                 "--benchmark_filter=sum_list|sort_list")
    code, out, err = kidx("import", "google-benchmark", str(first))
    assert code == 0, err
    assert "3 benchmarks read" in err and "BenchmarkRun 3 created" in err
    for run in runs(kidx).values():
        assert len(run["spec"]["samples"]["values"]) == 4
        repetitions = [e for e in run["spec"]["sourceNative"]["entries"] if e["run_type"] == "iteration"]
        assert sorted(e["repetition_index"] for e in repetitions) == [0, 1, 2, 3]


def test_aggregates_only(kidx, tmp_path):
    """--benchmark_report_aggregates_only: the run's figures come from the aggregates; no samples."""
    out = run_google_benchmark(tmp_path, "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true",
                               "--benchmark_filter=sum_list")
    data = upstream(out)
    assert {e["run_type"] for e in data["benchmarks"]} == {"aggregate"}
    assert kidx("import", "google-benchmark", str(out))[0] == 0
    [run] = runs(kidx).values()
    median = next(e for e in data["benchmarks"] if e["aggregate_name"] == "median")
    assert run["spec"]["timing"]["latencyNs"]["median"] == round(median["real_time"], 3)
    assert "samples" not in run["spec"] and "min" not in run["spec"]["timing"]["latencyNs"]


def test_bad_input_is_reported_at_file_and_line(kidx, tmp_path):
    data = upstream(KEPT)
    data["benchmarks"][4]["real_time"] = -1
    data["benchmarks"][7]["time_unit"] = "fortnights"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data, indent=2))
    lines = edited.read_text().splitlines()
    starts = [i for i, line in enumerate(lines, 1) if line.strip().startswith('"name":')]
    code, out, err = kidx("import", "google-benchmark", str(edited))
    assert (code, out) == (1, "")
    assert err == (f"error: {edited}, line {starts[4]}: benchmarks[4].real_time: -1 is not a non-negative number\n"
                   f"error: {edited}, line {starts[7]}: benchmarks[7].time_unit: 'fortnights' is not one of ns, us, ms, s\n"
                   "error: 2 problems found; nothing was changed\n")
    assert kidx("get", "runs", "-o", "name").out == ""
    other = tmp_path / "other.json"
    other.write_text('{"benchmarks": []}')
    code, out, err = kidx("import", "google-benchmark", str(other))
    assert code == 1 and "expected an object with context and benchmarks" in err


@pytest.mark.parametrize("key, value", [("iterations", [1, 2]), ("time_unit", ["ns"]), ("aggregate_name", ["mean"]),
                                        ("family_index", {"a": 1}), ("threads", [1])])
def test_a_list_or_object_where_a_value_belongs_is_an_error_at_its_line(kidx, tmp_path, key, value):
    record = {"name": "BM_a/1", "run_name": "BM_a/1", "run_type": "iteration", "repetitions": 1,
              "repetition_index": 0, "threads": 1, "iterations": 10, "real_time": 5.0, "cpu_time": 5.0,
              "time_unit": "ns", key: value}
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"context": {"date": "2026-12-01T10:39:05+00:00"}, "benchmarks": [record]}, indent=1))
    code, out, err = kidx("import", "google-benchmark", str(path))
    assert (code, out) == (1, "")
    assert err == (f"error: {path}, line 7: benchmarks[0].{key}: {value!r} is not a single value (a string, number "
                   "or boolean)\n")


@pytest.mark.parametrize("value", [-5, 2.5, True])
def test_iterations_that_are_no_count_are_an_error_at_its_line(kidx, tmp_path, value):
    record = {"name": "BM_a/1", "run_name": "BM_a/1", "run_type": "iteration", "repetitions": 1,
              "repetition_index": 0, "threads": 1, "iterations": value, "real_time": 5.0, "cpu_time": 5.0,
              "time_unit": "ns"}
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"context": {"date": "2026-12-01T10:39:05+00:00"}, "benchmarks": [record]}, indent=1))
    code, out, err = kidx("import", "google-benchmark", str(path))
    assert (code, out) == (1, "")
    assert err == (f"error: {path}, line 7: benchmarks[0].iterations: {value!r} is not a count (a whole number, "
                   "0 or more)\n")
    assert kidx("get", "runs", "-o", "name").out == ""
