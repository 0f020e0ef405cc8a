"""A capture without --measure-peaks, stored, keeps the peaks measured on the same
environment before (env capture --apply, import --environment FILE); an environment
whose spec changed under the same name is told apart. Run as processes, on the fake torch
of test_measure_peaks (a CPU environment: its torch reads no GPU)."""

from __future__ import annotations

import json

import pytest
from capture.test_measure_peaks import FAKE_TORCH, capturing
from conftest import REPO

GPU = "AVAILABLE = True\n" + FAKE_TORCH
MEASURED = "kernelindex.dev/measured-"
OLD = "2026-01-01T00:00:00Z"


@pytest.fixture
def capture(tmp_path, kidx_process):
    return capturing(tmp_path, kidx_process)


def measured(body: dict) -> dict:
    return {key: value for key, value in body["metadata"]["annotations"].items() if key.startswith(MEASURED)}


def stored(kidx_process, name: str) -> dict:
    code, out, err = kidx_process("get", "environment", name, "-o", "json")
    assert code == 0, err
    return json.loads(out)


def applied_with_peaks(capture, kidx_process, tmp_path, edit=None) -> dict:
    """A measured capture, applied (captured an hour ago, so that a new capture differs)."""
    code, out, err = capture("-o", "json", torch=GPU)
    assert code == 0, err
    body = json.loads(out)
    body["metadata"]["annotations"]["kernelindex.dev/captured-at"] = OLD
    if edit:
        edit(body)
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(body))
    code, out, err = kidx_process("apply", "-f", str(path))
    assert (code, out) == (0, f"executionenvironment.kernelindex.dev/{body['metadata']['name']} created\n"), err
    assert len(measured(body)) == 7
    return body


def test_env_capture_apply_without_measuring_keeps_the_measured_peaks(capture, kidx_process, tmp_path):
    before = applied_with_peaks(capture, kidx_process, tmp_path)
    name, at = before["metadata"]["name"], measured(before)[MEASURED + "peaks-at"]
    code, out, err = capture("--apply", torch=GPU, measure=False)
    assert (code, out) == (0, f"executionenvironment.kernelindex.dev/{name} configured\n"), err
    assert err.splitlines()[-1] == (f"note: kept the peaks measured at {at} on executionenvironment {name} "
                                    "(--measure-peaks measures them again)")
    after = stored(kidx_process, name)
    assert measured(after) == measured(before)
    assert after["metadata"]["annotations"]["kernelindex.dev/captured-at"] != OLD  # the new capture's metadata
    code, out, err = capture("--apply", "--dry-run", torch=GPU, measure=False)
    assert code == 0 and out.endswith(" (dry run)\n") and "note: kept the peaks measured at" in err


def test_import_with_a_plain_captured_file_keeps_the_measured_peaks(capture, kidx_process, tmp_path):
    before = applied_with_peaks(capture, kidx_process, tmp_path)
    name, at = before["metadata"]["name"], measured(before)[MEASURED + "peaks-at"]
    code, out, err = capture("-o", "yaml", torch=GPU, measure=False)
    assert code == 0, err
    plain = tmp_path / "environment.yaml"
    plain.write_text(out)
    results = REPO / "docs/examples/pytest-benchmark/sample-project/results.json"
    code, out, err = kidx_process("import", "pytest-benchmark", str(results), "--environment", str(plain), "-o",
                                  "name")
    assert code == 0, err
    assert f"executionenvironment.kernelindex.dev/{name}" in out.splitlines()
    assert (f"note: kept the peaks measured at {at} on executionenvironment {name} (--measure-peaks measures them "
            "again)") in err.splitlines()
    assert measured(stored(kidx_process, name)) == measured(before)


def test_peaks_of_another_spec_under_the_name_are_not_carried_and_it_says_so(capture, kidx_process, tmp_path):
    def another_spec(body):
        body["metadata"]["name"] = "the-box"
        body["spec"]["software"]["driver"] = "1.0"

    applied_with_peaks(capture, kidx_process, tmp_path, another_spec)
    at = measured(stored(kidx_process, "the-box"))[MEASURED + "peaks-at"]
    code, out, err = capture("--apply", "--name", "the-box", torch=GPU, measure=False)
    assert (code, out) == (0, "executionenvironment.kernelindex.dev/the-box configured\n"), err
    assert err.splitlines()[-1] == (
        f"note: the stored executionenvironment the-box has peaks measured at {at} for another spec: they are not "
        "carried over (its history keeps them: kidx history environment the-box)")
    assert measured(stored(kidx_process, "the-box")) == {}
    code, out, err = kidx_process("history", "environment", "the-box", "--revision", "1", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["metadata"]["annotations"][MEASURED + "peaks-at"] == at
