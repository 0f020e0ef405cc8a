"""kidx export --format parquet: one row per run, the columns of Store.records(), typed, read
back with pyarrow and DuckDB and checked against kidx get -o json; the missing extra's message."""

from __future__ import annotations

import datetime
import json
import math
import re
import sys

import pytest
from conftest import REPO

LIGER = REPO / "tests" / "data" / "liger" / "all_benchmark_data.csv"
KERNELBENCH = REPO / "tests" / "data" / "kernelbench"
EVAL = KERNELBENCH / "runs" / "level1_sample_run" / "eval_results.json"
BASELINE = KERNELBENCH / "results" / "timing" / "H100_Modal" / "baseline_time_torch.json"


def test_without_pyarrow_the_extra_is_named(kidx, store, tmp_path, monkeypatch):
    for module in ("pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, module, None)  # as where it is not installed: import fails
    assert kidx("import", "kernelbench", str(BASELINE)).code == 0
    target = tmp_path / "runs.parquet"
    code, out, err = kidx("export", "runs", "--format", "parquet", "-o", str(target))
    assert (code, out) == (1, "")
    assert err == ("error: kidx export --format parquet needs pyarrow, which is not installed: "
                   "pip install '.[parquet]' from a checkout of kidx\n")
    assert not target.exists()


def test_parquet_is_a_file_not_standard_output(kidx, store):
    code, out, err = kidx("export", "runs", "--format", "parquet", "-o", "-")
    assert (code, out, err) == (1, "", "error: --format parquet writes a binary file: give -o FILE, not -o -\n")
    code, out, err = kidx("export", "workloads", "--format", "parquet", "-o", "x.parquet")
    assert code == 1 and "parquet holds runs only, not Workload" in err


def _export(kidx, tmp_path, *selection: str):
    target = tmp_path / "runs.parquet"
    code, out, err = kidx("export", "runs", *selection, "--format", "parquet", "-o", str(target))
    assert code == 0, err
    return target, err


def test_read_back_with_pyarrow(kidx, store, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    assert kidx("import", "kernelbench", str(BASELINE), str(EVAL), "--level", "1").code == 0
    target, err = _export(kidx, tmp_path)
    table = pq.read_table(target)
    assert err == f"exported 10 runs ({table.num_columns} columns) as Parquet to {target} ({target.stat().st_size:,} bytes)\n"
    schema = table.schema
    assert schema.field("observedAt").type == pa.timestamp("us", tz="UTC")
    for name in ("value", "low", "high", "sol.ofPeak"):
        assert schema.field(name).type == pa.float64()
    assert schema.field("samples").type == pa.list_(pa.float64())
    assert schema.field("labels.problem").type == pa.string()
    assert schema.field("workload.spec.parameters.level").type == pa.int64()
    rows = {row["name"]: row for row in table.to_pylist()}
    stored = {item["metadata"]["name"]: item for item in json.loads(kidx("get", "runs", "-o", "json").out)["items"]}
    assert set(rows) == set(stored)
    import kidx as library  # the rows are Store.records()'s, column for column

    records = {row["name"]: row for row in library.open_store(str(store)).records()}
    leading = list(next(iter(records.values())))
    assert table.column_names == [*leading, "samples", "samples.unit", "sol.bytes", "sol.flops",
                                  "sol.bytesPerSecond", "sol.flopsPerSecond", "sol.ofPeak", "sol.ofMeasuredPeak"]
    for name, item in stored.items():
        row = rows[name]
        assert row["digest"] == item["metadata"]["digest"]
        assert row["status"] == item["spec"]["status"]
        assert row["workload.digest"] == item["spec"]["workloadDigest"]
        assert row["implementation.digest"] == item["spec"]["implementationDigest"]
        for key in ("level", "problem", "run", "sample", "backend"):
            assert row[f"labels.{key}"] == item["metadata"]["labels"].get(key)
        timing = item["spec"].get("timing")
        assert row["value"] == (timing["latencyNs"]["mean"] if timing else None)
        assert row["statistic"] == ("mean" if timing else None)
        for key, value in records[name].items():
            assert row[key] == value, (name, key)


def test_samples_spread_and_selection(kidx, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    assert kidx("import", "liger", str(LIGER), "-o", "name").code == 0
    target, _ = _export(kidx, tmp_path, "-l", "kernel=llama4_rope")
    table = pq.read_table(target)
    stored = json.loads(kidx("get", "runs", "-l", "kernel=llama4_rope", "-o", "json").out)["items"]
    assert table.num_rows == len(stored) > 0
    rows = {row["name"]: row for row in table.to_pylist()}
    for item in stored:
        row = rows[item["metadata"]["name"]]
        spec = item["spec"]
        samples = (spec.get("samples") or {}).get("values")
        assert row["samples"] == ([float(v) for v in samples] if samples else None)
        if spec["status"] == "passed" and "timing" in spec:
            assert row["value"] == spec["timing"]["latencyNs"]["median"]
        observed = spec.get("observedAt")
        if observed:
            assert row["observedAt"] == datetime.datetime.fromisoformat(observed.replace("Z", "+00:00"))
        for value in (row["value"], row["low"], row["high"]):
            assert value is None or (isinstance(value, float) and math.isfinite(value))


def test_read_by_duckdb(kidx, tmp_path):
    pytest.importorskip("pyarrow")
    duckdb = pytest.importorskip("duckdb")
    assert kidx("import", "kernelbench", str(BASELINE), str(EVAL), "--level", "1").code == 0
    target, _ = _export(kidx, tmp_path)
    connection = duckdb.connect()
    counts = connection.execute(
        f"select status, count(*) from read_parquet('{target}') group by status order by status").fetchall()
    assert counts == [("error", 1), ("failed", 3), ("passed", 6)]
    [(mean,)] = connection.execute(
        f"""select value from read_parquet('{target}') where "labels.problem" = '23' and "labels.sample" = '3'"""
    ).fetchall()
    stored = json.loads(kidx("get", "runs", "-l", "problem=23,sample=3", "-o", "json").out)["items"]
    assert mean == stored[0]["spec"]["timing"]["latencyNs"]["mean"] == 29800.0


def test_parquet_is_synced_before_it_replaces_the_old_file(kidx, tmp_path, monkeypatch):
    """Through kidx/files.py: the bytes reach the disk under a temporary name of its own,
    then are renamed over the target; the target is never written in place."""
    pytest.importorskip("pyarrow")
    import os

    from kidx import files

    assert kidx("import", "kernelbench", str(BASELINE)).code == 0
    target = tmp_path / "runs.parquet"
    target.write_bytes(b"old")
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor):
        events.append(("fsync", os.path.basename(os.readlink(f"/proc/self/fd/{descriptor}"))))
        real_fsync(descriptor)

    def replace(source, destination):
        events.append(("replace", os.path.basename(os.fspath(destination))))
        real_replace(source, destination)

    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.setattr(files.os, "replace", replace)
    _export(kidx, tmp_path)
    assert [kind for kind, _ in events] == ["fsync", "replace"]
    assert re.fullmatch(files.TEMPORARY, events[0][1]).group(1) == "runs.parquet"
    assert events[1] == ("replace", "runs.parquet")
    assert target.read_bytes()[:4] == b"PAR1"
    assert sorted(path.name for path in tmp_path.iterdir() if path.is_file()) == ["runs.parquet"]
