"""kidx import tritonbench: the --csv table (with --op and --mode), the --output-json map and
the nightly result.json; averages and pass flags are not runs; error cells are failed runs."""

from __future__ import annotations

import json

from conftest import REPO

DATA = REPO / "tests" / "data" / "tritonbench"
CSV = DATA / "softmax.csv"
NIGHTLY = DATA / "result.json"
OPERATOR = DATA / "layer_norm.json"


def runs(kidx, *selector: str) -> dict:
    items = json.loads(kidx("get", "runs", *selector, "-o", "json").out)["items"]
    return {(r["spec"]["sourceNative"]["input"], r["metadata"]["labels"]["backend"],
             r["spec"]["sourceNative"]["metric"]): r for r in items}


def test_csv(kidx):
    code, out, err = kidx("import", "tritonbench", str(CSV), "--op", "softmax", "--mode", "fwd")
    assert code == 0, err
    assert err == (
        "import tritonbench (1 file): 23 values read; BenchmarkProtocol 2 created; ExecutionEnvironment 1 created; "
        "Implementation 3 created; Workload 4 created; BenchmarkRun 23 created; 0 values skipped\n"
        f"Warning: {CSV}: 1 cells hold an error text instead of a value; they are failed runs, not values\n")
    found = runs(kidx)
    assert len(found) == 23  # 4 inputs x 3 backends x 2 metrics, less the empty cell; no average row
    spec = found[("4096", "triton_softmax", "latency")]["spec"]
    assert spec["status"] == "passed"
    assert spec["timing"] == {"latencyNs": {"median": 18432.0}, "primaryStatistic": "median"}
    assert spec["sourceNative"]["metrics"] == {"latency": 0.018432}
    gbps = found[("4096", "triton_softmax", "gbps")]["spec"]
    assert gbps["measurements"] == [{"metric": "memory_bandwidth", "statistic": "median", "unit": "bytes/s",
                                     "value": 1820444000000.0}]
    failed = found[("16384", "naive_softmax", "latency")]["spec"]
    assert failed["status"] == "failed" and failed["failure"] == {"reason": "BackendError", "message": "CUDA OOM"}
    assert "timing" not in failed and "metrics" not in failed["sourceNative"]
    assert ("16384", "naive_softmax", "gbps") not in found
    assert kidx("import", "tritonbench", str(CSV), "--op", "softmax", "--mode", "fwd").out.count(" unchanged") == 33


def test_csv_needs_the_operator(kidx, store):
    code, out, err = kidx("import", "tritonbench", str(CSV))
    assert (code, out) == (1, "")
    assert err == f"error: {CSV}: a tritonbench CSV does not name its operator: give --op NAME (and --mode)\n"
    code, out, err = kidx("import", "tritonbench", str(CSV), "--op", "softmax", "--mode", "sideways")
    assert code == 1 and err == "error: --mode sideways: one of bwd, fwd, fwd_bwd, fwd_no_grad\n"
    assert not store.exists()


def test_nightly_result(kidx):
    code, out, err = kidx("import", "tritonbench", str(NIGHTLY))
    assert code == 0, err
    assert err == (
        "import tritonbench (1 file): 11 values read; BenchmarkProtocol 3 created; ExecutionEnvironment 1 created; "
        "Implementation 4 created; Workload 3 created; BenchmarkRun 11 created; 0 values skipped\n"
        f"Warning: {NIGHTLY}, line 41: layer_norm_bwd did not run (its pass flag is 0)\n"
        f"Warning: {NIGHTLY}: 1 values are an error text instead of a number; they are failed runs, not values\n")
    found = runs(kidx)
    gemm = found[("(1024, 1024, 1024)", "aten_matmul", "tflops")]
    assert gemm["spec"]["observedAt"] == "2025-07-31T08:12:45Z"
    assert gemm["spec"]["measurements"] == [{"metric": "throughput", "statistic": "median", "unit": "flop/s",
                                             "value": 123362000000000.0}]
    assert gemm["spec"]["sourceNative"]["gpuStates"]["clocks.current.sm"] == "1980"
    assert gemm["metadata"]["labels"] == {"op": "gemm", "mode": "fwd", "backend": "aten_matmul", "metric": "tflops",
                                          "gpu": "nvidia-h100-80gb-hbm3"}
    [environment] = json.loads(kidx("get", "environments", "-o", "json").out)["items"]
    assert environment["spec"] == {
        "hardware": {"vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "80GB HBM3", "architecture": "sm_90"},
        "software": {"cuda": "12.8", "pytorch": "5d8a2264bc4d1ec5b7c1a6ed82b2f9b3c4f7e1a0",
                     "triton": "c2b3e1f7a09d4e5b8c6a7f1e2d3c4b5a69788776",
                     "tritonbench": "9f1e4c2a7b6d5e3f1a0b9c8d7e6f5a4b3c2d1e0f"}}
    assert environment["metadata"]["annotations"]["kernelindex.dev/pytorch-branch"] == "main"
    [workload] = [w for w in json.loads(kidx("get", "workloads", "-o", "json").out)["items"]
                  if w["spec"]["operation"] == "gemm"]
    assert workload["spec"]["parameters"] == {"input": "(1024, 1024, 1024)", "mode": "fwd"}


def test_operator_json(kidx):
    code, out, err = kidx("import", "tritonbench", str(OPERATOR))
    assert code == 0, err
    found = runs(kidx)
    assert sorted(found) == [("1024", "torch_layer_norm", "latency"), ("1024", "triton_layer_norm", "latency"),
                             ("1024", "triton_layer_norm", "speedup"), ("2048", "torch_layer_norm", "latency"),
                             ("2048", "triton_layer_norm", "latency"), ("2048", "triton_layer_norm", "speedup")]
    assert found[("2048", "triton_layer_norm", "speedup")]["spec"]["measurements"][0]["value"] == 1.442
    assert "observedAt" not in found[("2048", "triton_layer_norm", "speedup")]["spec"]


def test_repeats_are_samples(kidx, tmp_path):
    path = tmp_path / "ab.json"
    path.write_text(json.dumps({"tritonbench_softmax_fwd[x_1024-triton_softmax]_latency": [0.01, 0.012, 0.011]}))
    assert kidx("import", "tritonbench", str(path)).code == 0
    [run] = runs(kidx).values()
    assert run["spec"]["timing"]["latencyNs"] == {"median": 11000.0, "min": 10000.0, "max": 12000.0}
    assert run["spec"]["samples"] == {"metric": "latency", "unit": "ns", "values": [10000.0, 12000.0, 11000.0]}


def test_bad_input(kidx, store, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("N;triton_softmax-latency\n1024;nan\n2048;0.01;0.02\n")
    code, out, err = kidx("import", "tritonbench", str(bad), "--op", "softmax")
    assert (code, out) == (1, "")
    assert err == (f"error: {bad}, line 2: triton_softmax-latency: 'nan' is not a finite number\n"
                   f"error: {bad}, line 3: has 3 cells; the header has 2\n"
                   "error: 2 problems found; nothing was changed\n")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{\n "tritonbench_softmax_fwd[x_1-a]_latency": NaN,\n "tritonbench_x": 1,\n'
                        ' "other": 2,\n "tritonbench_softmax_fwd[x_2-a]_latency": {"p50": 1}\n}\n')
    code, out, err = kidx("import", "tritonbench", str(bad_json))
    assert err == (
        f'error: {bad_json}, line 2: "tritonbench_softmax_fwd[x_1-a]_latency": nan is not a finite number\n'
        f'error: {bad_json}, line 3: "tritonbench_x": is neither tritonbench_<op>_<mode>[x_<input>-<backend>]_<metric>, '
        "an average nor a pass flag\n"
        f'error: {bad_json}, line 4: "other": not tritonbench results (a \';\'-separated --csv table, or '
        "--output-json / result.json): a key must start with tritonbench_\n"
        f'error: {bad_json}, line 5: "tritonbench_softmax_fwd[x_2-a]_latency": must be a number, a list of numbers '
        "or an error text\n"
        "error: 4 problems found; nothing was changed\n")
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"N;a-latency\n\xe9;1\n")
    code, out, err = kidx("import", "tritonbench", str(latin), "--op", "x")
    assert err == f"error: {latin}, line 2: not UTF-8 text: byte 0xe9 at offset 12\n"
    assert not store.exists()
