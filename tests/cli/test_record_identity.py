"""kidx record keeps every process's run: a run's identity is where it came from (the
recording, the process, the harness's key), never its figures (docs/commands/record.md,
"Every process's runs are kept"), and a failed recording is stored by --recover exactly as
it would have been."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow  # a harness process per repetition, and kidx around them

# a BMF harness: writes one benchmark whose latency is the same in every process (a quantised
# timer's exact repeat), FACTOR times it; fails in its process FAIL_AFTER+1 when asked
BMF_HARNESS = """\
import json, os, sys
factor = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
counter = os.path.join(os.path.dirname(os.path.abspath(__file__)), "processes-so-far")
runs = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
open(counter, "w").write(str(runs))
if os.environ.get("FAIL_AFTER") and runs > int(os.environ["FAIL_AFTER"]):
    sys.exit("the harness fails, as asked")
with open("results.bmf.json", "w") as handle:
    json.dump({"rms_norm/T=1024": {"latency": {"value": 1000.0 * factor}}}, handle)
"""
# a Liger-style harness whose rows are stamped with one second whatever the process
LIGER_HARNESS = """\
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
target = os.environ.get("LIGER_BENCH_TARGET", "").strip().lower()
path = os.path.join(here, "..", "data", f"all_benchmark_data_{target}.csv" if target else "all_benchmark_data.csv")
header = ("kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,"
          "y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version")
value = 0.5 + 0.01 * int(target.rsplit("-", 1)[-1]) if target else 0.5
with open(path, "a") as handle:
    if handle.tell() == 0:
        handle.write(header + "\\n")
    handle.write(f'rms_norm,liger,forward,speed,ms,T,Sequence length,1024,{value},0.4,0.6,'
                 f'"{{""hidden_size"": 4096, ""dtype"": ""torch.bfloat16"", ""eps"": 1e-06}}",NVIDIA H200,'
                 f'2026-12-01 10:00:00,0.8.2\\n')
"""
RECORDING = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{6}$")


@pytest.fixture
def harness(tmp_path) -> Path:
    folder = tmp_path / "harness"
    folder.mkdir()
    (folder / "bench.py").write_text(BMF_HARNESS)
    return folder


def kidx_in(folder: Path, store: Path, *arguments: str, **environment: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kidx", *arguments], cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1", **environment}, timeout=300)


def stored_runs(store: Path) -> list[dict]:
    completed = kidx_in(REPO, store, "get", "runs", "-o", "json")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)["items"]


def record_bmf(folder: Path, store: Path, *arguments: str, **environment: str) -> subprocess.CompletedProcess:
    return kidx_in(folder, store, "record", "bmf", "--no-capture", "--results", "results.bmf.json", *arguments,
                   **environment)


def test_n_processes_give_n_runs_whatever_their_figures(harness, tmp_path):
    store = tmp_path / "store"
    done = record_bmf(harness, store, "--processes", "3", "--", sys.executable, "bench.py")
    assert done.returncode == 0, done.stderr
    assert "BenchmarkRun 3 created" in done.stderr and "0 benchmarks skipped" in done.stderr
    runs = stored_runs(store)
    assert sorted(run["metadata"]["labels"]["repetition"] for run in runs) == ["1", "2", "3"]
    assert len({run["metadata"]["name"] for run in runs}) == 3
    assert {run["spec"]["timing"]["latencyNs"]["median"] for run in runs} == {1000.0}
    [recording] = {run["metadata"]["labels"]["recording"] for run in runs}
    assert RECORDING.match(recording)
    assert sorted(run["spec"]["sourceNative"]["externalId"].split("/")[1] for run in runs) == ["01", "02", "03"]
    assert all(run["spec"]["sourceNative"]["externalId"].startswith(recording + "/") for run in runs)


def test_a_second_recording_never_relabels_the_first(harness, tmp_path):
    store = tmp_path / "store"
    for suite in ("first", "second"):
        done = record_bmf(harness, store, "--label", f"suite={suite}", "--", sys.executable, "bench.py")
        assert done.returncode == 0, done.stderr
        assert "BenchmarkRun 1 created" in done.stderr
    assert sorted(run["metadata"]["labels"]["suite"] for run in stored_runs(store)) == ["first", "second"]


def test_an_interleaved_deterministic_regression_fails_the_gate(harness, tmp_path):
    """An A/B whose head is exactly twice the base in every process: three runs a side are
    kept, and compare confirms the regression (before, one run a side survived and the gate
    passed it as unconfirmed)."""
    store = tmp_path / "store"
    done = record_bmf(harness, store, "--interleave", "--processes", "3", "--", sys.executable, "bench.py", "1",
                      "--", sys.executable, "bench.py", "2")
    assert done.returncode == 0, done.stderr
    sides = sorted((run["metadata"]["labels"]["side"], run["metadata"]["labels"]["repetition"])
                   for run in stored_runs(store))
    assert sides == [(side, str(n)) for side in ("base", "head") for n in (1, 2, 3)]
    compared = kidx_in(REPO, store, "compare", "--by", "label=side", "--baseline", "base", "--fail-on-regression",
                       "-o", "json")
    assert compared.returncode == 1, compared.stdout + compared.stderr
    rows = [row for group in json.loads(compared.stdout)["groups"] for row in group["rows"]
            if row["verdict"] != "baseline"]
    assert [row["verdict"] for row in rows] == ["slower"]


def test_an_interleaved_a_a_keeps_both_sides(harness, tmp_path):
    store = tmp_path / "store"
    done = record_bmf(harness, store, "--interleave", "--processes", "2", "--", sys.executable, "bench.py", "--",
                      sys.executable, "bench.py")
    assert done.returncode == 0, done.stderr
    assert sorted(run["metadata"]["labels"]["side"] for run in stored_runs(store)) == ["base", "base", "head", "head"]


def test_liger_rows_of_processes_stamped_in_one_second_stay_distinct(tmp_path):
    scripts = tmp_path / "benchmark" / "scripts"
    scripts.mkdir(parents=True)
    (tmp_path / "benchmark" / "data").mkdir()
    (scripts / "utils.py").write_text("")
    (scripts / "benchmark_stand_in.py").write_text(LIGER_HARNESS)
    store = tmp_path / "store"
    done = kidx_in(scripts, store, "record", "liger", "--no-capture", "--processes", "2", "--", sys.executable,
                   "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    runs = stored_runs(store)
    assert sorted(run["metadata"]["labels"]["repetition"] for run in runs) == ["1", "2"]
    assert {run["spec"]["observedAt"] for run in runs} == {"2026-12-01T10:00:00.000Z"}


def test_a_failed_recording_is_stored_by_recover_as_it_would_have_been(harness, tmp_path):
    whole, recovered = tmp_path / "whole", tmp_path / "recovered"
    done = record_bmf(harness, whole, "--processes", "2", "--label", "suite=s", "--", sys.executable, "bench.py")
    assert done.returncode == 0, done.stderr
    (harness / "processes-so-far").unlink()
    failed = record_bmf(harness, recovered, "--processes", "3", "--label", "suite=s", "--", sys.executable,
                        "bench.py", FAIL_AFTER="2")
    assert failed.returncode == 1
    assert not recovered.exists()
    [line] = [line for line in failed.stderr.splitlines() if "measured so far" in line]
    command = line.split("store them as this recording would have with ", 1)[1]
    assert command.startswith("kidx record bmf --recover /")
    folder = Path(command.split("--recover ", 1)[1])
    assert (folder / "recording.json").is_file()
    done = kidx_in(REPO, recovered, *command.split()[1:])
    assert done.returncode == 0, done.stderr
    assert "BenchmarkRun 2 created" in done.stderr and "the folder may be removed" in done.stderr

    def comparable(run: dict) -> tuple:
        labels = {k: v for k, v in run["metadata"]["labels"].items() if k != "recording"}
        spec = {**run["spec"], "sourceNative": {**run["spec"]["sourceNative"], "externalId": None}}
        return json.dumps(labels, sort_keys=True), json.dumps(spec, sort_keys=True)

    assert sorted(map(comparable, stored_runs(recovered))) == sorted(map(comparable, stored_runs(whole)))
    # stored once; a second recovery of the same folder changes nothing
    again = kidx_in(REPO, recovered, *command.split()[1:])
    assert again.returncode == 0 and "BenchmarkRun 2 unchanged" in again.stderr, again.stderr


@pytest.mark.parametrize(("arguments", "message"), [
    (["--recover", "FOLDER", "--label", "a=b"], "error: --recover stores a kept recording as it was: it takes no "
                                                "--label\n"),
    (["--recover", "FOLDER", "--", "python", "x.py"], "error: --recover stores a kept recording as it was: it takes "
                                                      "no a command\n"),
    (["--recover", "FOLDER"], "error: --recover FOLDER: no recording.json there; it is not a folder kidx record "
                              "kept\n"),
])
def test_recover_refuses_what_it_cannot_use(tmp_path, arguments, message):
    done = kidx_in(tmp_path, tmp_path / "store", "record", "bmf", *arguments)
    assert (done.returncode, done.stderr) == (1, message)
    assert not (tmp_path / "store").exists()
