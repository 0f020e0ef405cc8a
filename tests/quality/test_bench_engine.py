"""bench/bench_engine.py: its synthetic Parquet writer writes what ``kidx export --format
parquet`` writes (the same columns, types and order), and its DuckDB "median by series"
finds kidx's own series with kidx's medians. A writer that drifted from the export, or a
query that grouped runs otherwise than kidx does, would time the wrong thing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import REPO

pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def bench_engine():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import bench_engine

        yield bench_engine
    finally:
        sys.path.remove(str(REPO / "bench"))


def exported_store(bench_engine, folder, runs: int, **shape):
    """A store of ``runs`` generated runs and its Parquet export by the kidx command."""
    data = bench_engine.bench_store.generate(runs, 7, **shape)
    documents = folder / "runs.json"
    documents.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": data.documents}))
    store, exported = folder / "store", folder / "runs.parquet"
    for argv in (["apply", "-f", str(documents)], ["export", "runs", "--format", "parquet", "-o", str(exported)]):
        done = subprocess.run([sys.executable, "-m", "kidx", *argv, "--store", str(store)], capture_output=True,
                              text=True, cwd=REPO)
        assert done.returncode == 0, done.stderr
    return store, exported


def test_the_synthetic_file_has_the_exports_columns_types_and_order(bench_engine, tmp_path):
    _, exported = exported_store(bench_engine, tmp_path, 400)
    table = pq.read_table(exported)
    template = bench_engine.Template(table)
    synthetic = tmp_path / "synthetic.parquet"
    bench_engine.write_synthetic(template, synthetic, 3_000, 7)

    assert pq.read_schema(synthetic).remove_metadata().equals(table.schema.remove_metadata())
    rows = pq.read_table(synthetic).to_pylist()
    assert len(rows) == 3_000
    assert len({row["name"] for row in rows}) == 3_000
    assert len({row["digest"] for row in rows}) == 3_000
    assert all(row["digest"].startswith("sha256:") and len(row["digest"]) == 71 for row in rows)
    # a run's workload is of its implementation's kernel, its gpu label its environment's
    assert all(row["workload.spec.operation"] == row["implementation.spec.operation"] for row in rows)
    gpu_of = {row["environment.digest"]: row["labels.gpu"] for row in table.to_pylist()}
    assert all(gpu_of[row["environment.digest"]] == row["labels.gpu"] for row in rows)
    assert {row["labels.suite"] for row in rows} == {f"s{i:03d}" for i in range(100)}
    assert {row["unit"] for row in rows} == {row["unit"] for row in table.to_pylist()}


def test_duckdbs_median_by_series_is_kidx_series_median(bench_engine, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    store, exported = exported_store(bench_engine, tmp_path, 600, **bench_engine.CHECK_SHAPE)

    ours, single = bench_engine.kidx_medians(store)
    theirs = bench_engine.duckdb_medians(duckdb, exported, pq.read_schema(exported).names)

    assert len(ours) > 50 and max(runs for runs, _ in ours.values()) >= 3
    assert {key: value for key, value in theirs.items() if value[0] >= 2} == ours
    assert sum(1 for runs, _ in theirs.values() if runs == 1) == single
    assert sum(runs for runs, _ in theirs.values()) == 600


def test_an_environment_without_hardware_counts_by_its_digest(bench_engine, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    import pyarrow as pa

    path = tmp_path / "two.parquet"
    names = ["protocol.digest", "workload.digest", "environment.digest", "environment.spec.hardware.product",
             "implementation.digest", "metric", "value"]
    pq.write_table(pa.table({
        "protocol.digest": ["p"] * 4, "workload.digest": ["w"] * 4, "environment.digest": ["e1", "e2", "e3", "e4"],
        "environment.spec.hardware.product": ["H100", "H100", None, None], "implementation.digest": ["i"] * 4,
        "metric": ["latency"] * 4, "value": [1.0, 3.0, 5.0, 6.0]}), path)

    found = bench_engine.duckdb_medians(duckdb, path, names)

    assert found == {("p", "w", '{"product": "H100"}', "i", "latency"): (2, 2.0),
                     ("p", "w", "e3", "i", "latency"): (1, 5.0), ("p", "w", "e4", "i", "latency"): (1, 6.0)}


def test_without_duckdb_it_names_the_extra_and_exits_2(bench_engine, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "duckdb", None)

    with pytest.raises(SystemExit) as stopped:
        bench_engine.require_engines()

    assert stopped.value.code == 2
    assert capsys.readouterr().err == ("bench_engine.py needs duckdb and pyarrow (duckdb is not installed): "
                                       "pip install '.[bench]' from a checkout of kidx\n")
