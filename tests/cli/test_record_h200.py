"""What kidx recorded on an NVIDIA H200 itself (tests/data/h200-record/README.md): the
environment captured with measured peaks, and the runs `kidx record` made around Liger's
harness, with their git labels and speed-of-light figures. No GPU is needed here."""

from __future__ import annotations

import json

from conftest import REPO

H200 = REPO / "tests" / "data" / "h200-record"
CSV = H200 / "all_benchmark_data.csv"
ENVIRONMENT = H200 / "environment.yaml"
RMS_FORWARD_LIGER = "liger-rms-norm-forward-liger-nvidia-h200-eps1e-06-hidden8192-seq32768-bf16-2026-12-01-11-42b8c6c9e1"


def test_the_recorded_store_restores_with_the_git_labels_of_the_checkout(kidx):
    code, _, err = kidx("import", "bundle", str(H200 / "record-store.kidx.json"))
    assert code == 0, err
    runs = json.loads(kidx("get", "runs", "-l", "suite=h200-record", "-o", "json").out)["items"]
    assert len(runs) == 12
    assert {run["metadata"]["labels"]["commit"] for run in runs} == {"6e1387ba56d9ec9d046d8308ec2684e094d017ec"}
    assert {run["metadata"]["labels"]["branch"] for run in runs} == {"main"}
    assert not any("dirty" in run["metadata"]["labels"] for run in runs)
    commands = {run["metadata"]["annotations"]["kernelindex.dev/recorded-command"] for run in runs}
    assert commands == {"python3 sol_driver.py rms_norm", "python3 sol_driver.py llama4_rope"}


def test_the_measured_peaks_give_a_share_of_what_the_machine_reached(kidx):
    code, _, err = kidx("import", "liger", str(CSV), "--environment", str(ENVIRONMENT))
    assert code == 0, err
    out = kidx("get", "runs", RMS_FORWARD_LIGER, "-o", "wide").out.splitlines()
    header, row = out[0].split(), out[1].split()
    figures = dict(zip(header[-3:], row[-3:], strict=True))
    # 3.272 TB/s is 68.2 % of the H200's published 4.8 TB/s and 77.0 % of the 4,247 GB/s copy measured there
    assert figures == {"BANDWIDTH": "3.272TB/s", "SOL": "68.2%", "SOL-MEASURED": "77.0%"}
