"""Every metric a run may report: its figure shown in its unit by get, and compared by
which way is better (kidx/units.py's METRICS): a bandwidth, a FLOP rate, a throughput."""

from __future__ import annotations

import json
import re

from conftest import REPO

TRITONBENCH = REPO / "tests" / "data" / "tritonbench"
RULE_START = "rule: a change counts when it exceeds 5%"


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line and not line.startswith(("rule:", "summary:"))]


def test_get_shows_a_bandwidth_runs_figure_in_its_unit(kidx):
    assert kidx("import", "tritonbench", str(TRITONBENCH / "softmax.csv"), "--op", "softmax", "--mode", "fwd").code == 0
    code, out, err = kidx("get", "runs", "-l", "backend=triton_softmax,metric=gbps")
    assert (code, err) == (0, "")
    assert [row[3] for row in rows(out)[1:]] == ["910.2GB/s", "2.149TB/s", "292.6GB/s", "1.82TB/s"]
    code, out, err = kidx("get", "runs", "-l", "backend=triton_softmax,metric=gbps", "-o", "csv")
    assert sorted(line.split(",")[3] for line in out.splitlines()[1:]) == [
        "1820444000000", "2148721000000", "292571000000", "910222000000"]  # bytes/s


def test_compare_a_bandwidth_more_is_better(kidx):
    assert kidx("import", "tritonbench", str(TRITONBENCH / "softmax.csv"), "--op", "softmax", "--mode", "fwd").code == 0
    code, out, err = kidx("compare", "-l", "metric=gbps", "--references", "workload/tritonbench-softmax-fwd-1024",
                          "--baseline", "tritonbench-softmax-naive-softmax", "-o", "json")
    assert (code, err) == (0, "")
    [group] = json.loads(out)["groups"]
    assert [(r["implementation"], r["value"], r["unit"], round(r["speedup"], 3), r["verdict"], r["withinRun"])
            for r in group["rows"]] == [
        ("tritonbench-softmax-naive-softmax", 341333000000.0, "B/s", 1.0, "baseline", None),
        ("tritonbench-softmax-torch-compile-softmax", 819200000000.0, "B/s", 2.4, "unconfirmed", "faster"),
        ("tritonbench-softmax-triton-softmax", 910222000000.0, "B/s", 2.667, "unconfirmed", "faster"),
    ]


def test_compare_a_flop_rate_less_is_worse(kidx):
    assert kidx("import", "tritonbench", str(TRITONBENCH / "result.json")).code == 0
    code, out, err = kidx("compare", "-l", "metric=tflops", "--baseline", "tritonbench-gemm-aten-matmul")
    assert (code, err) == (0, "")
    table = rows(out)
    assert table[1][:2] == ["IMPLEMENTATION", "MEDIAN"] and table[1][6] == "SPEEDUP"
    assert [row[:3] + row[4:7] for row in table[2:]] == [  # RATIO-CI is empty
        ["tritonbench-gemm-aten-matmul", "123.4TFLOP/s", "<none>", "1.000", "1.00x", "baseline"],
        ["tritonbench-gemm-triton-tutorial-matmul", "110.4TFLOP/s", "<none>", "0.895", "0.89x", "unconfirmed"],
    ]
    assert table[3][7] == "(slower)"


NVBENCH_SOL = REPO / "tests" / "data" / "h200-sol" / "nvbench-sol.json"
GOOGLE_BENCHMARK = REPO / "tests" / "data" / "google-benchmark" / "results.json"


def names(kidx, *args: str) -> list[str]:
    return [line.split("/", 1)[1] for line in kidx("get", "runs", *args, "-o", "name").out.splitlines()]


def test_compare_nvbench_global_memory_bandwidth_with_metric(kidx):
    """NVBench's bytes_per_second summary, a measurement beside the latency: --metric judges
    by it, and more bytes a second is faster, as the latency says."""
    assert kidx("import", "nvbench", str(NVBENCH_SOL)).code == 0
    [huggingface] = [n for n in names(kidx) if "llama4-rope-forward-t-16384-provider-huggingface" in n]
    [liger] = [n for n in names(kidx) if "llama4-rope-forward-t-16384-provider-liger" in n]
    code, out, err = kidx("compare", huggingface, liger, "--force", "--metric", "global_memory_bandwidth",
                          "-o", "json")
    assert (code, err) == (0, "")
    [group] = json.loads(out)["groups"]
    assert [(r["run"], r["statistic"], r["unit"], round(r["value"] / 1e9, 1), round(r["speedup"], 2), r["withinRun"])
            for r in group["rows"]] == [
        (huggingface, "mean", "B/s", 538.7, 1.0, None), (liger, "mean", "B/s", 1540.1, 2.86, "faster")]
    code, latency, err = kidx("compare", huggingface, liger, "--force", "-o", "json")
    assert round(json.loads(latency)["groups"][0]["rows"][1]["speedup"], 2) == 2.86  # the same way


def test_compare_google_benchmark_counters_with_metric(kidx, tmp_path):
    """The sample's sum_list has byte and item counters; a later run with 20% fewer of each a
    second is slower by either, as by its time."""
    later = json.loads(GOOGLE_BENCHMARK.read_text())
    later["context"]["date"] = "2026-12-02T10:39:05+00:00"
    for entry in later["benchmarks"]:
        if entry["run_name"] == "sum_list" and entry.get("aggregate_name") != "cv":
            entry.update(bytes_per_second=entry["bytes_per_second"] * 0.8,
                         items_per_second=entry["items_per_second"] * 0.8,
                         real_time=entry["real_time"] * 1.25, cpu_time=entry["cpu_time"] * 1.25)
    (tmp_path / "later.json").write_text(json.dumps(later))
    assert kidx("import", "google-benchmark", str(GOOGLE_BENCHMARK), str(tmp_path / "later.json")).code == 0
    for metric, shown in (("memory_bandwidth", ["2.381GB/s", "1.904GB/s"]),
                          ("throughput", ["297.6M items/s", "238.1M items/s"])):
        code, out, err = kidx("compare", "-l", "benchmark=sum_list", "--metric", metric)
        assert (code, err) == (0, "")
        lines = out.splitlines()
        assert [re.split(r"\s{2,}", line)[1] for line in lines[2:4]] == shown
        assert "0.800" in lines[3] and "0.80x" in lines[3] and "unconfirmed (slower)" in lines[3]
    code, out, err = kidx("compare", "-l", "benchmark=sum_list", "--metric", "no_such_metric")
    assert "no selected run has a figure to compare" in err


V3_METRICS = REPO / "tests" / "data" / "pytorch-benchmark" / "softmax-metrics.jsonl"


def test_baseline_takes_the_backend_a_user_knows(kidx):
    """tritonbench's backend and a v3 record's model.backend name a baseline, as Liger's
    provider does."""
    assert kidx("import", "tritonbench", str(TRITONBENCH / "softmax.csv"), "--op", "softmax", "--mode", "fwd").code == 0
    code, out, err = kidx("compare", "-l", "metric=gbps", "--references", "workload/tritonbench-softmax-fwd-4096",
                          "--baseline", "naive_softmax", "-o", "json")
    assert (code, err) == (0, "")
    [group] = json.loads(out)["groups"]
    assert group["rows"][0]["implementation"] == "tritonbench-softmax-naive-softmax"
    assert group["rows"][0]["verdict"] == "baseline"
    assert kidx("import", "pytorch-benchmark", str(V3_METRICS)).code == 0
    code, out, err = kidx("compare", "-l", "metric=gbps,model=softmax", "--baseline", "naive_softmax", "-o", "json")
    assert (code, err) == (0, "")
    [group] = json.loads(out)["groups"]
    assert [(r["implementation"].startswith("pytorch-benchmark-tritonbench-oss-softmax-naive-softmax"), r["verdict"])
            for r in group["rows"]] == [(True, "baseline"), (False, "inconclusive")]


def test_a_backend_two_implementations_share_is_ambiguous(kidx, tmp_path):
    records = [json.loads(line) for line in V3_METRICS.read_text().splitlines()]
    other = json.loads(json.dumps(records[2]))  # naive_softmax's latency, from another library
    other["model"]["type"] = "other-suite"
    (tmp_path / "two.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (records[2], other)))
    assert kidx("import", "pytorch-benchmark", str(tmp_path / "two.jsonl")).code == 0
    code, out, err = kidx("compare", "--baseline", "naive_softmax")
    assert code == 2 and out == ""
    assert err.startswith("error: --baseline naive_softmax is ambiguous: it matches implementations "
                          "pytorch-benchmark-other-suite-softmax-naive-softmax-")
    assert "pytorch-benchmark-tritonbench-oss-softmax-naive-softmax-" in err and "name one of them" in err
