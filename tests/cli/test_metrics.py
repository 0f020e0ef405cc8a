"""Every metric a run may report: its figure shown in its unit by get, and compared by
which way is better (kidx/units.py's METRICS): a bandwidth, a FLOP rate, a throughput."""

from __future__ import annotations

import json

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
