"""kidx import kernelbench: baseline timings (level → problem file → statistics in ms) and a
run's eval_results.json (problem id → samples, with --level); a sample that did not compile,
raised or gave wrong output is a failed run with its reason, never a timing."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

DATA = REPO / "tests" / "data" / "kernelbench"
EAGER = DATA / "results" / "timing" / "H100_Modal" / "baseline_time_torch.json"
COMPILED = DATA / "results" / "timing" / "H100_Modal" / "baseline_time_torch_compile_inductor_default.json"
EVAL = DATA / "runs" / "level1_sample_run" / "eval_results.json"


def runs(kidx) -> dict:
    items = json.loads(kidx("get", "runs", "-o", "json").out)["items"]
    return {item["spec"]["sourceNative"]["benchmark"]: item for item in items}


def test_baselines(kidx):
    code, out, err = kidx("import", "kernelbench", str(EAGER), str(COMPILED))
    assert code == 0, err
    assert err == (
        "import kernelbench (2 files): 6 entries read; BenchmarkProtocol 1 created; ExecutionEnvironment 1 created; "
        "Implementation 6 created; Workload 4 created; BenchmarkRun 6 created; 0 entries skipped\n")
    items = json.loads(kidx("get", "runs", "-l", "problem=19", "-o", "json").out)["items"]
    by_backend = {item["metadata"]["labels"]["backend"]: item for item in items}
    eager = by_backend["eager"]
    assert eager["spec"]["status"] == "passed"
    assert eager["spec"]["timing"] == {
        "latencyNs": {"mean": 21300.0, "stddev": 1150.0, "min": 19500.0, "max": 29700.0}, "primaryStatistic": "mean"}
    assert eager["spec"]["sourceNative"]["metrics"] == {"mean": 0.0213, "std": 0.00115, "min": 0.0195,
                                                        "max": 0.0297, "num_trials": 100}
    assert eager["spec"]["sourceNative"]["problem"] == "19_ReLU.py"
    assert eager["metadata"]["labels"] == {"level": "1", "problem": "19", "backend": "eager",
                                           "gpu": "nvidia-h100-80gb-hbm3"}
    assert eager["metadata"]["annotations"]["kernelindex.dev/source-line"] == "12"
    assert by_backend["inductor"]["metadata"]["labels"]["variant"] == "default"
    # both references of one problem measure the same workload, on the same machine, the same way
    for key in ("workloadDigest", "environmentDigest", "protocolDigest"):
        assert eager["spec"][key] == by_backend["inductor"]["spec"][key]
    implementations = {i["metadata"]["name"]: i["spec"] for i in
                       json.loads(kidx("get", "implementations", "-o", "json").out)["items"]}
    assert implementations["kernelbench-level1-19-torch-inductor-default"] == {
        "library": "torch", "operation": "level1/19", "backend": "inductor", "variant": "default"}
    [environment] = json.loads(kidx("get", "environments", "-o", "json").out)["items"]
    assert environment["spec"]["hardware"] == {"vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "80GB HBM3",
                                               "architecture": "sm_90"}
    assert kidx("import", "kernelbench", str(EAGER), str(COMPILED)).out.count(" unchanged") == 18


def test_eval_results(kidx):
    code, out, err = kidx("import", "kernelbench", str(EVAL), "--level", "1")
    assert code == 0, err
    assert err == (
        "import kernelbench (1 file): 6 entries read; BenchmarkProtocol 1 created; ExecutionEnvironment 2 created; "
        "Implementation 6 created; Workload 2 created; BenchmarkRun 6 created; 0 entries skipped\n")
    found = runs(kidx)
    outcomes = {name: (item["spec"]["status"], item["spec"].get("failure"), "timing" in item["spec"])
                for name, item in found.items()}
    assert outcomes == {
        "level1/19/level1_sample_run/sample0": ("passed", None, True),
        "level1/19/level1_sample_run/sample1": ("failed", {
            "reason": "CompilationError",
            "message": "Error building extension 'relu_cuda': relu.cu(14): error: identifier \"blockDimx\" is "
                       "undefined"}, False),
        "level1/23/level1_sample_run/sample0": ("failed", {
            "reason": "IncorrectResult", "message": "Output mismatch (trials passed: (0 / 5))"}, False),
        "level1/23/level1_sample_run/sample1": ("failed", {
            "reason": "RuntimeError", "message": "CUDA error: an illegal memory access was encountered"}, False),
        "level1/23/level1_sample_run/sample2": ("error", {"reason": "Timeout", "message": "Evaluation timed out"},
                                                False),
        "level1/23/level1_sample_run/sample3": ("passed", None, True),
    }
    timed = found["level1/23/level1_sample_run/sample3"]
    assert timed["spec"]["timing"]["latencyNs"] == {"mean": 29800.0, "stddev": 1210.0, "min": 28400.0, "max": 36600.0}
    assert timed["metadata"]["labels"] == {"level": "1", "problem": "23", "run": "level1_sample_run", "sample": "3",
                                           "gpu": "nvidia-h100-80gb-hbm3"}
    assert timed["spec"]["sourceNative"]["sample"]["metadata"]["correctness_trials"] == "(5 / 5)"
    assert timed["metadata"]["annotations"]["kernelindex.dev/source-line"] == "77"
    failed = found["level1/23/level1_sample_run/sample0"]["spec"]
    assert "metrics" not in failed["sourceNative"] and "timing" not in failed


def test_generated_kernels_compare_with_the_baseline(kidx):
    assert kidx("import", "kernelbench", str(EAGER), str(EVAL), "--level", "1").code == 0
    items = json.loads(kidx("get", "runs", "-l", "problem=23", "-o", "json").out)["items"]
    passed = [item["spec"] for item in items if item["spec"]["status"] == "passed"]
    assert len(passed) == 2  # the eager reference and sample 3
    for key in ("workloadDigest", "environmentDigest", "protocolDigest"):
        assert passed[0][key] == passed[1][key]
    assert passed[0]["implementationDigest"] != passed[1]["implementationDigest"]


def test_the_older_single_sample_shape(kidx, tmp_path):
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps({"4": {"sample_id": 0, "compiled": True, "correctness": True, "metadata": {},
                                      "runtime": 1.5, "runtime_stats": {"mean": 1.5, "std": 0.01, "min": 1.49,
                                                                        "max": 1.6, "num_trials": 100}}}, indent=4))
    code, out, err = kidx("import", "kernelbench", str(path), "--level", "2")
    assert code == 0, err
    [item] = runs(kidx).values()
    assert item["spec"]["sourceNative"]["benchmark"] == f"level2/4/{tmp_path.name}/sample0"
    assert item["spec"]["timing"]["latencyNs"]["mean"] == 1500000.0


def test_a_correct_sample_not_timed_has_no_timing(kidx, tmp_path):
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps({"4": [{"sample_id": 0, "compiled": True, "correctness": True, "metadata": {},
                                       "runtime": -1.0, "runtime_stats": {}}]}, indent=4))
    code, out, err = kidx("import", "kernelbench", str(path), "--level", "1")
    assert code == 0
    assert err.endswith(f"Warning: {path}, line 4: sample 0 of problem 4 is correct but was not timed; its run has "
                        "no timing\n")
    [item] = runs(kidx).values()
    assert item["spec"]["status"] == "passed" and "timing" not in item["spec"]


def test_eval_results_need_the_level(kidx, store):
    code, out, err = kidx("import", "kernelbench", str(EVAL))
    assert (code, out) == (1, "")
    assert err == f"error: {EVAL}: an eval_results.json does not name its level: give --level N\n"
    assert not store.exists()


@pytest.mark.parametrize(("document", "line", "message"), [
    ({"level1": {"1_A.py": {"mean": float("nan"), "num_trials": 100}}}, 3,
     "level1.\"1_A.py\".mean: nan is not a finite number of 0 or more"),
    ({"level1": {"1_A.py": {"mean": -2.0}}}, 3, "level1.\"1_A.py\".mean: -2.0 is not a finite number of 0 or more"),
    ({"level1": {"1_A.py": {"std": 0.1}}}, 3, "level1.\"1_A.py\".mean: is missing: the mean time is the result"),
    ({"level1": {"1_A.py": {"mean": 1.0, "num_trials": 0}}}, 3,
     "level1.\"1_A.py\".num_trials: 0 is not a whole number of 1 or more"),
    ({"level1": ["1_A.py"]}, 2, "level1: must be an object of problem files"),
    ({"1": [{"sample_id": 0, "compiled": "yes", "correctness": False}]}, 4, "\"1\"[0].compiled: must be true or false"),
    ({"1": [7]}, 2, "\"1\"[0]: a sample must be an object"),
    ({"results": {}}, 2, "\"results\": not KernelBench results (results/timing/<GPU>/baseline_time_torch*.json, or "
                         "a run's eval_results.json): the keys must be levels (level1, …) or problem ids (1, 2, …)"),
    ({"²": [{"sample_id": 0, "compiled": True, "correctness": False}]}, 2,
     "\"²\": not KernelBench results (results/timing/<GPU>/baseline_time_torch*.json, or a run's eval_results.json): "
     "the keys must be levels (level1, …) or problem ids (1, 2, …)"),
    ({"level1": {"1_A.py": {"mean": 1.0}}, "1": [{"sample_id": 0, "compiled": True, "correctness": False}]}, 7,
     "\"1\": not KernelBench results (results/timing/<GPU>/baseline_time_torch*.json, or a run's eval_results.json): "
     "the keys mix levels (\"level1\", …) and problem ids (\"1\", …); a file holds one or the other"),
])
def test_bad_input_is_refused_at_its_line(kidx, store, tmp_path, document, line, message):
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps(document, indent=4))
    code, out, err = kidx("import", "kernelbench", str(path), "--level", "1")
    assert (code, out) == (1, "")
    assert err == f"error: {path}, line {line}: {message}\n"
    assert not store.exists()


def test_not_utf8_is_refused(kidx, store, tmp_path):
    path = tmp_path / "baseline_time_torch.json"
    path.write_bytes(b'{"level1": {"1_\xff.py": {"mean": 1.0}}}')
    code, out, err = kidx("import", "kernelbench", str(path))
    assert code == 1 and err == f"error: {path}, line 1: not UTF-8 text: byte 0xff at offset 15\n"
    assert not store.exists()


def test_describe_shows_what_the_format_could_not_carry(kidx):
    assert kidx("import", "kernelbench", str(EAGER)).code == 0
    [item] = json.loads(kidx("get", "runs", "-l", "problem=19", "-o", "json").out)["items"]
    lines = [line.strip() for line in kidx("describe", "runs", item["metadata"]["name"]).out.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("Not Carried:"))
    assert lines[start].split(":", 1)[1].strip() == ("the samples (KernelBench keeps mean, std, min and max, each to "
                                                     "three significant digits)")
    assert lines[start + 1:start + 4] == [
        "the timing method (CUDA events or host wall-clock time) and the warm-up calls",
        "the PyTorch and CUDA versions", "the problem's input shapes and dtypes (they are in the problem file's code)"]
    assert any(line.startswith("Digest:") and line.endswith(item["metadata"]["digest"]) for line in lines)
