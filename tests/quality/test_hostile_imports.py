"""Hostile files given to the importers: side files that lead out of their folder, FIFOs,
/dev/zero, values that apply would refuse (NaN, infinities, integers beyond 64 bits,
objects of more than 200,000 values). Each ends in a clear error at its file, line and
field, quickly, and nothing is stored; what is imported round-trips through apply."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

H200 = REPO / "tests" / "data" / "h200"
NVBENCH = H200 / "nvbench.json"
NVBENCH_TEXT = NVBENCH.read_text()
LIGER_HEADER = (REPO / "tests" / "data" / "liger" / "all_benchmark_data.csv").read_text().splitlines()[0]
LIGER_ROW = ('cross_entropy,liger,forward,speed,ms,V,vocab size,{x},{y},0.5,0.5,"{config}",NVIDIA A100-SXM4-80GB,'
             "2024-09-03 15:31:39,0.2.1")
SIZE_LIMIT = "error: {path}: input is larger than 4 MiB, the limit for one source (set KIDX_MAX_INPUT_SIZE to change it)"


def run_kidx(*args: str, store, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """kidx as a process, killed (and the test failed) if it hangs."""
    environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "kidx", *args], capture_output=True, text=True, env=environment,
                          cwd=REPO, timeout=timeout)


# --- NVBench side files ----------------------------------------------------------------


@pytest.fixture
def nvbench_copy(tmp_path):
    """A copy of the H200 NVBench file and its side files, and a way to point the first
    state's side file elsewhere."""
    folder = tmp_path / "results"
    folder.mkdir()
    shutil.copy(NVBENCH, folder / "nvbench.json")
    shutil.copytree(H200 / "nvbench.json-bin", folder / "nvbench.json-bin")
    document = json.loads(NVBENCH.read_text())

    def pointing_at(filename: str):
        changed = copy.deepcopy(document)
        for summary in changed["benchmarks"][0]["states"][0]["summaries"]:
            if summary.get("hint") == "file/sample_times":
                summary["data"][0]["value"] = filename
        path = folder / "nvbench.json"
        path.write_text(json.dumps(changed, indent=2))
        return path

    return folder, pointing_at


SIDE_FIELD = "benchmarks[0].states[0].summaries[24].data[0].value"


@pytest.mark.parametrize("filename", ["/proc/self/environ", "/etc/hostname", "../../../../../../proc/self/environ",
                                      "nvbench.json-bin/../../outside.bin"])
def test_a_side_file_outside_the_folder_is_refused(kidx, store, nvbench_copy, filename):
    folder, pointing_at = nvbench_copy
    (folder.parent / "outside.bin").write_bytes(b"\0\0\0\0")
    path = pointing_at(filename)
    result = kidx("import", "nvbench", str(path))
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        f"error: {path}, line 103: {SIDE_FIELD}: the side file {filename!r} is outside the folder of {path}; "
        "kidx reads side files only from beside the JSON file\n"
    )
    assert not store.exists()


def test_a_symbolic_link_out_of_the_folder_is_refused(kidx, store, nvbench_copy):
    folder, pointing_at = nvbench_copy
    (folder / "secret.bin").symlink_to("/proc/self/environ")
    path = pointing_at("secret.bin")
    result = kidx("import", "nvbench", str(path))
    assert result.code == 1
    assert "the side file 'secret.bin' is outside the folder of" in result.err
    assert not store.exists()


def test_a_fifo_side_file_is_refused_without_waiting(store, nvbench_copy):
    folder, pointing_at = nvbench_copy
    os.mkfifo(folder / "samples.fifo")
    path = pointing_at("samples.fifo")
    result = run_kidx("import", "nvbench", str(path), store=store, timeout=30)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"error: {path}, line 103: {SIDE_FIELD}: cannot read the side file {folder / 'samples.fifo'}: "
        "not a regular file (a FIFO)\n"
    )
    assert not store.exists()


def test_a_folder_as_side_file_is_refused(kidx, store, nvbench_copy):
    folder, pointing_at = nvbench_copy
    path = pointing_at("nvbench.json-bin")
    result = kidx("import", "nvbench", str(path))
    assert result.err == (
        f"error: {path}, line 103: {SIDE_FIELD}: cannot read the side file {folder / 'nvbench.json-bin'}: "
        "not a regular file (a folder)\n"
    )


def test_a_side_file_over_the_input_limit_is_refused(kidx, store, nvbench_copy, monkeypatch):
    folder, pointing_at = nvbench_copy
    path = pointing_at("nvbench.json-bin/0.bin")
    monkeypatch.setenv("KIDX_MAX_INPUT_SIZE", str(os.path.getsize(path)))  # the JSON fits; its 2400-byte side file does not
    (folder / "nvbench.json-bin" / "0.bin").write_bytes(b"\0" * (os.path.getsize(path) + 4))
    result = kidx("import", "nvbench", str(path))
    assert result.err == (
        f"error: {path}, line 103: {SIDE_FIELD}: the side file {folder / 'nvbench.json-bin' / '0.bin'}: input is "
        f"larger than {os.path.getsize(path)} bytes, the limit for one source (set KIDX_MAX_INPUT_SIZE to change it)\n"
    )
    assert not store.exists()


def test_side_files_inside_the_folder_still_import(kidx, nvbench_copy):
    folder, pointing_at = nvbench_copy
    path = pointing_at("nvbench.json-bin/0.bin")
    result = kidx("import", "nvbench", str(path))
    assert result.code == 0, result.err
    values = kidx("get", "runs", "-o", "jsonpath={.items[*].spec.samples.unit}").out.split()
    assert values == ["ns"] * 4 and "Warning" not in result.err


# --- /dev/zero as any importer's input --------------------------------------------------


@pytest.mark.parametrize("format_name", ["liger", "pytest-benchmark", "nvbench", "google-benchmark", "tritonbench", "pytorch-benchmark",
                                         "kernelbench", "bundle"])
def test_dev_zero_is_refused_at_apply_s_limit(store, format_name):
    result = run_kidx("import", format_name, "/dev/zero", store=store, env={"KIDX_MAX_INPUT_SIZE": "4Mi"}, timeout=30)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == SIZE_LIMIT.format(path="/dev/zero") + "\n"
    assert not store.exists()


# --- values apply refuses -----------------------------------------------------------------


def nvbench_with_axis(tmp_path, axis: dict) -> str:
    document = json.loads(NVBENCH.read_text())
    document["benchmarks"][0]["states"][0]["axis_values"][0] = axis
    path = tmp_path / "nvbench.json"
    path.write_text(json.dumps(document, indent=2))
    return str(path)


@pytest.mark.parametrize(("axis", "message"), [
    ({"name": "Seq", "type": "float64", "value": "nan"},
     "axis Seq: 'nan' is not a finite number (NaN and infinities cannot be stored)"),
    ({"name": "Seq", "type": "float64", "value": "1e400"},
     "axis Seq: '1e400' is not a finite number (NaN and infinities cannot be stored)"),
    ({"name": "Seq", "type": "int64", "value": "100000000000000000000000"},
     "axis Seq: '100000000000000000000000' is out of range (an int64 must fit in 64 bits)"),
])
def test_nvbench_axis_values_apply_would_refuse(kidx, store, tmp_path, axis, message):
    path = nvbench_with_axis(tmp_path, axis)
    for args in ((), ("-o", "json")):
        result = kidx("import", "nvbench", path, *args)
        assert (result.code, result.out) == (1, "")
        assert result.err == f"error: {path}, line 103: benchmarks[0].states[0].axis_values: {message}\n"
    assert not store.exists()


def liger_file(tmp_path, *rows: str) -> str:
    path = tmp_path / "all_benchmark_data.csv"
    path.write_text("\n".join([LIGER_HEADER, *rows]) + "\n")
    return str(path)


@pytest.mark.parametrize(("row", "message"), [
    (LIGER_ROW.format(x=4096, y="1e300", config='{""B"": 8}'),
     "y_value_50: '1e300' is out of range (1.000e+306 ns does not fit in 64 bits)"),
    (LIGER_ROW.format(x=4096, y="0.5", config='{""B"": 1e400}'),
     "extra_benchmark_config_str: key 'B': 1e400 is out of range (a number kidx stores is a 64-bit integer or a "
     "finite float)"),
    (LIGER_ROW.format(x=4096, y="0.5", config='{""B"": 100000000000000000000000}'),
     "extra_benchmark_config_str: key 'B': 100000000000000000000000 is out of range (a number kidx stores is a "
     "64-bit integer or a finite float)"),
    (LIGER_ROW.format(x="100000000000000000000000", y="0.5", config='{""B"": 8}'),
     "spec.parameters.vocab: the Workload made from this record cannot be stored: integer out of range "
     "(must fit in 64 bits)"),
])
def test_liger_values_apply_would_refuse(kidx, store, tmp_path, row, message):
    path = liger_file(tmp_path, row)
    for args in ((), ("-o", "json")):
        result = kidx("import", "liger", path, *args)
        assert (result.code, result.out) == (1, "")
        assert result.err == f"error: {path}, line 2: {message}\n"
    assert not store.exists()


def pytest_benchmark_file(tmp_path, rounds=5, data=None) -> str:
    stats = {"min": 0.001, "max": 0.002, "mean": 0.0015, "stddev": 0.0001, "median": 0.0015, "iqr": 0.0001,
             "q1": 0.0014, "q3": 0.0016, "rounds": rounds, "iterations": 1}
    if data is not None:
        stats["data"] = data
    document = {
        "machine_info": {"node": "host", "processor": "x86_64", "machine": "x86_64", "python_version": "3.12.0",
                         "system": "Linux", "release": "6.0", "cpu": {"brand_raw": "CPU"}},
        "commit_info": {},
        "benchmarks": [{"group": None, "name": "test_x", "fullname": "test_a.py::test_x", "params": None,
                        "param": None, "extra_info": {}, "options": {"timer": "perf_counter"}, "stats": stats}],
        "datetime": "2026-11-30T20:31:48.948020+00:00",
        "version": "5.1.0",
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document, indent=1))
    return str(path)


def test_a_pytest_benchmark_integer_beyond_64_bits_is_refused(kidx, store, tmp_path):
    path = pytest_benchmark_file(tmp_path, rounds=2**70)
    for args in ((), ("-o", "json")):
        result = kidx("import", "pytest-benchmark", path, *args)
        assert (result.code, result.out) == (1, ""), result
        assert result.err.splitlines() == [
            f"error: {path}, line 18: spec.measurements[3].value: the BenchmarkRun made from this record "
            "cannot be stored: integer out of range (must fit in 64 bits)",
        ]
    assert not store.exists()


def test_a_run_of_more_values_than_apply_allows_is_refused(kidx, store, tmp_path):
    path = pytest_benchmark_file(tmp_path, data=[0.001] * 200_001)
    result = kidx("import", "pytest-benchmark", path)
    assert (result.code, result.out) == (1, "")
    [line] = result.err.splitlines()
    assert line.startswith(f"error: {path}, line 18: spec.samples.values[")
    assert line.endswith(": the BenchmarkRun made from this record cannot be stored: document has more than 200000 "
                         "values (the limit for one object; YAML aliases expand to copies)")
    assert not store.exists()


def test_what_imports_round_trips_through_apply(kidx, store, tmp_path):
    """The largest run an import accepts goes back in through apply unchanged."""
    path = pytest_benchmark_file(tmp_path, data=[0.001] * 199_000)
    assert kidx("import", "pytest-benchmark", path).code == 0
    exported = kidx("get", "runs", "-o", "json").out
    assert "Infinity" not in exported and "NaN" not in exported
    again = kidx("apply", "-f", "-", stdin=exported)
    assert again.code == 0, again.err
    assert again.out.endswith(" unchanged\n")


def test_a_google_benchmark_integer_beyond_64_bits_is_refused(kidx, store, tmp_path):
    document = json.loads((REPO / "tests" / "data" / "google-benchmark" / "results.json").read_text())
    for benchmark in document["benchmarks"]:
        benchmark["iterations"] = 2**70
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document, indent=1))
    for args in ((), ("-o", "json")):
        result = kidx("import", "google-benchmark", str(path), *args)
        assert (result.code, result.out) == (1, ""), result
        assert "integer out of range (must fit in 64 bits)" in result.err and "Traceback" not in result.err
    assert not store.exists()


# --- fuzz: whatever the numbers say, an import ends in runs apply takes, or in problems ---

NUMBERS = st.one_of(
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e400", "-1e400", "1e300", "1e-400", "9" * 30, "-0", "0x10",
                     "1_000", "²", "١٢", " 5", "5 ", "", "1e19", "9223372036854775807", "9223372036854775808"]),
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=12),
)
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _accepted_or_refused(convert) -> None:
    """The conversion either raises InvalidInputError or gives documents that apply's
    data check passes (and so canonical JSON: no NaN, no infinity, 64-bit integers)."""
    from kidx.errors import InvalidInputError
    from kidx.identity import canonical_json
    from kidx.manifests.values import check_json_data

    try:
        conversion = convert()
    except InvalidInputError as exc:
        assert exc.problems
        return
    for document in conversion.documents:
        check_json_data(document.body)
        canonical_json(document.body)


@FUZZ
@given(x=NUMBERS, y=NUMBERS, config=NUMBERS)
def test_liger_numbers_never_escape_the_checks(x, y, config):
    from kidx.formats.liger import convert_text

    config_text = json.dumps({"B": 8, "T": 2048}).replace("8", config.replace('"', "")).replace('"', '""')
    row = LIGER_ROW.format(x=x.replace(",", "").replace('"', "").replace("\n", ""),
                           y=y.replace(",", "").replace('"', "").replace("\n", ""), config=config_text)
    _accepted_or_refused(lambda: convert_text(f"{LIGER_HEADER}\n{row}\n", "fuzz.csv"))


@FUZZ
@given(axis_type=st.sampled_from(["int64", "float64", "string"]), value=NUMBERS, summary=NUMBERS)
def test_nvbench_numbers_never_escape_the_checks(tmp_path_factory, axis_type, value, summary):
    from kidx.formats.nvbench import convert_files

    document = json.loads(NVBENCH_TEXT)
    state = document["benchmarks"][0]["states"][0]
    state["axis_values"][0] = {"name": "Seq", "type": axis_type, "value": value}
    for item in state["summaries"]:
        for data in item.get("data") or []:
            if data.get("name") == "value" and data.get("type") in ("int64", "float64"):
                data["value"] = summary
    document["benchmarks"] = document["benchmarks"][:1]
    document["benchmarks"][0]["states"] = [state]
    path = tmp_path_factory.mktemp("fuzz") / "nvbench.json"
    path.write_text(json.dumps(document))
    _accepted_or_refused(lambda: convert_files([str(path)]))
