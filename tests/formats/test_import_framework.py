"""What every `kidx import FORMAT` shares: the table of formats loaded lazily, the summary,
and attaching an environment (by stored name or captured file), with its errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import REPO

H200 = REPO / "tests" / "data" / "h200"
CSV = H200 / "all_benchmark_data.csv"
CAPTURED = H200 / "environment.yaml"


def test_help_lists_every_format(kidx_process):
    code, out, err = kidx_process("import", "--help")
    assert code == 0
    lines = out.split("Commands:")[1].splitlines()
    assert [line.split()[0] for line in lines if line.startswith("  ") and line.split()] == [
        "liger", "pytest-benchmark", "nvbench", "google-benchmark", "bmf", "tritonbench", "pytorch-benchmark", "kernelbench",
        "bundle"]


def test_converters_are_loaded_only_when_their_format_is_used():
    code = (
        "import sys\n"
        "from kidx.cli.app import run\n"
        "run(['import', 'liger', '--help'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('kidx.formats.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO).stdout
    assert out.splitlines()[-1] == "['kidx.formats.framework']"


def test_an_unknown_format_is_a_usage_error(kidx):
    code, out, err = kidx("import", "csv", "x.csv")
    assert (code, out) == (1, "")
    assert err.startswith("error: No such command 'csv'.")


def test_environment_by_a_name_the_store_does_not_hold(kidx):
    code, out, err = kidx("import", "liger", str(CSV), "--environment", "lab-h200")
    assert (code, out) == (1, "")
    assert err == ('error: --environment lab-h200: no such file, and no ExecutionEnvironment "lab-h200" '
                   "in the store (kidx get environments lists them)\n")
    assert kidx("get", "runs", "-o", "name").out == ""


def test_environment_of_another_gpu_is_refused(kidx, tmp_path):
    seed_row = CSV.read_text().splitlines()[:2]
    other = tmp_path / "h100.csv"
    other.write_text("\n".join([seed_row[0], seed_row[1].replace("NVIDIA H200", "NVIDIA H100 80GB HBM3")]) + "\n")
    code, out, err = kidx("import", "liger", str(other), "--environment", str(CAPTURED))
    assert (code, out) == (1, "")
    assert err == (f"error: {CAPTURED}: the runs in {other} (line 2) ran on NVIDIA H100, "
                   "but environment nvidia-h200-1x-2959180400 describes NVIDIA H200\n")
    assert kidx("get", "envs", "-o", "name").out == ""


@pytest.mark.parametrize(
    "content, message",
    [
        ("apiVersion: kernelindex.dev/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec: {operation: x}\n",
         "expected one ExecutionEnvironment manifest, found 0"),
        ("kind: [\n", "error: "),
    ],
)
def test_environment_file_that_is_not_one_environment(kidx, tmp_path, content, message):
    path = tmp_path / "env.yaml"
    path.write_text(content)
    code, out, err = kidx("import", "liger", str(CSV), "--environment", str(path))
    assert (code, out) == (1, "")
    assert message in err and str(path) in err


def test_an_invalid_environment_file_is_reported_at_its_field(kidx, tmp_path):
    path = tmp_path / "env.yaml"
    path.write_text(CAPTURED.read_text().replace("count: 1", "count: 0"))
    code, out, err = kidx("import", "liger", str(CSV), "--environment", str(path))
    assert (code, out) == (1, "")
    assert "spec.hardware.count" in err


def test_json_output_with_an_environment_holds_it_once(kidx):
    code, out, err = kidx("import", "liger", str(CSV), "--environment", str(CAPTURED), "-o", "json")
    assert code == 0
    items = json.loads(out)["items"]
    kinds = [item["kind"] for item in items]
    assert kinds.count("ExecutionEnvironment") == 1 and kinds[0] == "ExecutionEnvironment"
    assert err.startswith("import liger (1 file): 40 rows read; ExecutionEnvironment 1; ")
    assert "runs refer to ExecutionEnvironment nvidia-h200-1x-2959180400" in err
    assert kidx("get", "runs", "-o", "name").out == ""
