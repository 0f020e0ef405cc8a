"""kidx summary: runs by operation and GPU with the release range, read from the catalog."""

from __future__ import annotations

import csv
import io
import json

SELECTOR = "kernel in (jsd,kto_loss)"


def test_table_counts_runs_by_operation_and_gpu_with_the_release_range(kidx, history_store):
    code, out, err = kidx("summary", "-l", SELECTOR, store_path=history_store)
    assert code == 0
    assert out == (
        "OPERATION   GPU                     RUNS   LIGER_VERSION   RELEASES\n"
        "jsd         NVIDIA B200             112    0.8.0           1\n"
        "jsd         NVIDIA H100 PCIe        72     0.3.0 - 0.3.1   2\n"
        "kto_loss    NVIDIA A100 SXM4 80GB   30     0.5.2           1\n"
        "kto_loss    NVIDIA H100 80GB HBM3   90     0.5.3 - 0.5.4   2\n"
    )
    assert err == "304 runs: 2 operations on 4 GPUs\n"


def test_json_and_csv_hold_the_same_rows(kidx, history_store):
    code, out, err = kidx("summary", "-l", SELECTOR, "-o", "json", store_path=history_store)
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert (document["releaseLabel"], document["runs"]) == ("liger_version", 304)
    assert document["rows"][1] == {"operation": "jsd", "gpu": "NVIDIA H100 PCIe", "runs": 72,
                                   "releases": ["0.3.0", "0.3.1"], "first": "0.3.0", "last": "0.3.1"}
    code, out, err = kidx("summary", "-l", SELECTOR, "-o", "csv", store_path=history_store)
    assert (code, err) == (0, "")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["operation", "gpu", "runs", "releases", "first", "last"]
    assert rows[1:] == [[r["operation"], r["gpu"], str(r["runs"]), str(len(r["releases"])), r["first"], r["last"]]
                        for r in document["rows"]]


def test_releases_are_in_version_order_and_whole_store_is_counted(kidx, history_store):
    code, out, err = kidx("summary", "-o", "json", store_path=history_store)
    assert code == 0
    rows = json.loads(out)["rows"]
    assert sum(row["runs"] for row in rows) == json.loads(out)["runs"] == 4421
    distill = [row for row in rows if row["operation"] == "distill_cosine_loss"]
    assert [row["releases"] for row in distill] == [["0.5.10"]]
    code, out, _ = kidx("summary", "-l", "kernel=fused_linear_cross_entropy", store_path=history_store)
    assert "0.2.1 - 0.4.2" in out  # 0.2.1 before 0.4.2, by version


def test_reads_no_run_object(kidx, history_store, monkeypatch):
    from kidx.store.store import Store

    def refused(self, entry):
        raise AssertionError(f"read the object of {entry.name}")

    monkeypatch.setattr(Store, "manifest", refused)
    code, out, err = kidx("summary", "-l", SELECTOR, store_path=history_store)
    assert (code, err) == (0, "304 runs: 2 operations on 4 GPUs\n")


def test_a_selection_of_nothing_says_why_on_stderr(kidx, history_store):
    code, out, err = kidx("summary", "-l", "kernal=jsd", store_path=history_store)
    assert (code, out) == (0, "")
    assert err.startswith("No resources found\nthe selection matched no runs: no run has the label kernal")


def test_bad_options_are_errors(kidx, history_store):
    code, out, err = kidx("summary", "--release-label", "release", store_path=history_store)
    assert (code, out) == (1, "")
    assert err == "error: no selected run has the label release (release labels present: liger_version)\n"
    code, out, err = kidx("summary", "-o", "wide", store_path=history_store)
    assert (code, out) == (1, "")
    assert err == ('error: unable to match a printer suitable for the output format "wide", allowed formats are: '
                   "csv,json,tsv,yaml\n")


def test_a_run_whose_workload_is_not_stored_counts_under_not_in_store(kidx, seed_bundle):
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle)).code == 0
    code, out, err = kidx("summary")
    assert (code, err) == (0, "1 run: 1 operation on 1 GPU\n")
    assert out == ("OPERATION        GPU                     RUNS   LIGER_VERSION   RELEASES\n"
                   "<not in store>   NVIDIA H100 80GB HBM3   1      0.6.1           1\n")
