"""kidx import nvbench, on the NVBench JSON recorded on an H200 (tests/data/h200/README.md
says how): states, GPU-time summaries, raw samples from the --jsonbin side files, the
device's environment, and bad input."""

from __future__ import annotations

import json
import shutil
import struct

import pytest
from conftest import REPO

H200 = REPO / "tests" / "data" / "h200"
NVBENCH = H200 / "nvbench.json"
CAPTURED = H200 / "environment.yaml"
R = "benchmarkrun.kernelindex.dev/"
# (Seq, Provider) -> (mean, median) GPU time in seconds and sample count, as the file holds them
STATES = {
    (4096, "liger"): (0.00020906493335341402, 0.00021532799303531646, 2400),
    (16384, "liger"): (0.0005390494482206362, 0.0005415679812431336, 928),
    (4096, "huggingface"): (0.00041700576002399146, 0.0004166400134563446, 1200),
    (16384, "huggingface"): (0.0013355474773617021, 0.0013299200534820557, 672),
}


def runs_by_state(kidx) -> dict:
    items = json.loads(kidx("get", "runs", "-o", "json").out)["items"]
    result = {}
    for run in items:
        workload = json.loads(kidx("get", "workloads", run["spec"]["workloadDigest"], "-o", "json").out)
        parameters = workload["spec"]["parameters"]
        result[(parameters["Seq"], parameters["Provider"])] = run
    return result


def test_import_summary(kidx):
    code, out, err = kidx("import", "nvbench", str(NVBENCH))
    assert code == 0, err
    assert err == (
        "import nvbench (1 file): 4 states read; BenchmarkProtocol 1 created; ExecutionEnvironment 1 created; "
        "Workload 4 created; BenchmarkRun 4 created; 0 states skipped\n"
    )
    assert out.splitlines()[:6] == [
        "benchmarkprotocol.kernelindex.dev/nvbench-cold-0-1-0 created",
        "executionenvironment.kernelindex.dev/nvbench-nvidia-h200 created",
        "workload.kernelindex.dev/nvbench-llama4-rope-forward-seq-4096-provider-liger created",
        "workload.kernelindex.dev/nvbench-llama4-rope-forward-seq-16384-provider-liger created",
        "workload.kernelindex.dev/nvbench-llama4-rope-forward-seq-4096-provider-huggingface created",
        "workload.kernelindex.dev/nvbench-llama4-rope-forward-seq-16384-provider-huggingface created",
    ]


def test_gpu_time_and_samples(kidx):
    assert kidx("import", "nvbench", str(NVBENCH))[0] == 0
    runs = runs_by_state(kidx)
    assert set(runs) == set(STATES)
    for key, (mean, median, count) in STATES.items():
        spec = runs[key]["spec"]
        assert spec["status"] == "passed"
        assert spec["timing"]["primaryStatistic"] == "mean"
        assert spec["timing"]["latencyNs"]["mean"] == round(mean * 1e9, 3)
        assert spec["timing"]["latencyNs"]["median"] == round(median * 1e9, 3)
        assert {"metric": "samples", "statistic": "count", "unit": "count", "value": count} in spec["measurements"]
        samples = spec["samples"]
        assert (samples["metric"], samples["unit"], len(samples["values"])) == ("latency", "ns", count)
        # the side file's float32 seconds, in order
        [summary] = [s for s in _state(key)["summaries"] if s.get("hint") == "file/sample_times"]
        side = H200 / next(d["value"] for d in summary["data"] if d["name"] == "filename")
        raw = struct.unpack(f"<{count}f", side.read_bytes())
        assert samples["values"][:3] == [round(v * 1e9, 3) for v in raw[:3]]
        assert min(samples["values"]) == pytest.approx(spec["timing"]["latencyNs"]["min"], rel=1e-6)


def _state(key):
    data = json.loads(NVBENCH.read_text())
    for state in data["benchmarks"][0]["states"]:
        values = {v["name"]: v["value"] for v in state["axis_values"]}
        if (int(values["Seq"]), values["Provider"]) == key:
            return state
    raise KeyError(key)


def test_liger_is_faster_than_huggingface_in_nvbench_too(kidx):
    assert kidx("import", "nvbench", str(NVBENCH))[0] == 0
    runs = runs_by_state(kidx)
    ratio = (runs[(16384, "huggingface")]["spec"]["timing"]["latencyNs"]["mean"]
             / runs[(16384, "liger")]["spec"]["timing"]["latencyNs"]["mean"])
    assert round(ratio, 3) == 2.478


def test_the_device_becomes_a_gpu_only_environment(kidx):
    assert kidx("import", "nvbench", str(NVBENCH))[0] == 0
    code, out, err = kidx("get", "env", "nvbench-nvidia-h200", "-o", "jsonpath={.spec}")
    assert json.loads(out) == {
        "hardware": {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90"}, "software": {}}


def test_with_the_captured_environment(kidx):
    code, out, err = kidx("import", "nvbench", str(NVBENCH), "--environment", str(CAPTURED))
    assert code == 0, err
    assert "; runs refer to ExecutionEnvironment nvidia-h200-1x-2959180400; " in err
    assert "nvbench-nvidia-h200" not in out
    env_digest = kidx("get", "env", "nvidia-h200-1x-2959180400", "-o", "jsonpath={.metadata.digest}").out
    refs = kidx("get", "runs", "-o", "jsonpath={.items[*].spec.environmentDigest}").out.split()
    assert refs == [env_digest] * 4


def test_missing_side_files_keep_the_summaries_and_say_so(kidx, tmp_path):
    alone = tmp_path / "nvbench.json"
    shutil.copy(NVBENCH, alone)
    code, out, err = kidx("import", "nvbench", str(alone))
    assert code == 0
    assert err.count("Warning: ") == 4
    assert f"Warning: {alone}, line " in err and "samples not imported: cannot read" in err
    assert kidx("get", "runs", "-o", "jsonpath={.items[*].spec.samples}").out == ""
    assert kidx("get", "runs", "-o", "jsonpath={.items[*].spec.timing.primaryStatistic}").out == "mean mean mean mean"


def test_reimport_is_unchanged(kidx):
    assert kidx("import", "nvbench", str(NVBENCH))[0] == 0
    code, out, err = kidx("import", "nvbench", str(NVBENCH))
    assert code == 0 and all(line.endswith(" unchanged") for line in out.splitlines())


def test_a_skipped_state_is_a_skipped_run(kidx, tmp_path):
    data = json.loads(NVBENCH.read_text())
    state = data["benchmarks"][0]["states"][0]
    state["is_skipped"], state["skip_reason"], state["summaries"] = True, "Unsupported on this device", []
    edited = tmp_path / "skipped.json"
    edited.write_text(json.dumps(data, indent=2))
    assert kidx("import", "nvbench", str(edited))[0] == 0
    code, out, err = kidx("get", "runs", "-o", "jsonpath={.items[?(@.spec.status==\"skipped\")].spec.failure.message}")
    assert out == "Unsupported on this device"


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "the file is empty; expected NVBench JSON (written with --json FILE)"),
        ("[1, 2]", "line 1: not NVBench JSON (written with --json FILE): expected an object with a benchmarks list"),
        ('{"benchmarks": [\n', "line 2: not valid JSON"),
        ('{"meta": {"version": {"json": {"major": 2}}}, "benchmarks": []}',
         "line 1: meta.version.json: NVBench JSON format 2.x is not supported (kidx reads 1.x)"),
    ],
)
def test_bad_files(kidx, tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    code, out, err = kidx("import", "nvbench", str(path))
    assert (code, out) == (1, "")
    assert message in err and "Traceback" not in err


def test_a_state_on_an_unknown_device_is_an_error_at_its_line(kidx, tmp_path):
    data = json.loads(NVBENCH.read_text())
    data["benchmarks"][0]["states"][1]["device"] = 7
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data, indent=2))
    line = next(i for i, text in enumerate(edited.read_text().splitlines(), 1)
                if '"name": "Device=0 Seq=16384 Provider=liger"' in text)
    code, out, err = kidx("import", "nvbench", str(edited))
    assert (code, out) == (1, "")
    assert err == (f"error: {edited}, line {line}: benchmarks[0].states[1].device: "
                   "device 7 is not in the file's devices list\n")
