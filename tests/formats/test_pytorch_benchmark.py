"""PyTorch OSS benchmark records (v3): kidx import pytorch-benchmark, kidx export --format
pytorch-benchmark, the round trip, and the export loaded into the v3 column set by DuckDB."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import REPO

DATA = REPO / "tests" / "data" / "pytorch-benchmark"
VLLM = DATA / "vllm.json"
LINES = DATA / "tritonbench.jsonl"
TRITONBENCH = REPO / "tests" / "data" / "tritonbench" / "result.json"
NVBENCH = REPO / "tests" / "data" / "h200" / "nvbench.json"


def items(kidx, *args: str, store_path=None) -> list[dict]:
    return json.loads(kidx("get", *args, "-o", "json", store_path=store_path).out)["items"]


def test_import_a_list(kidx):
    code, out, err = kidx("import", "pytorch-benchmark", str(VLLM))
    assert code == 0, err
    assert err == ("import pytorch-benchmark (1 file): 3 records read; BenchmarkProtocol 3 created; "
                   "ExecutionEnvironment 1 created; Implementation 1 created; Workload 1 created; "
                   "BenchmarkRun 3 created; 0 records skipped\n")
    runs = {run["spec"]["sourceNative"]["record"]["metric"]["name"]: run["spec"] for run in items(kidx, "runs")}
    latency = runs["latency(ms)"]
    assert latency["timing"] == {"latencyNs": {"median": 811070000.0, "min": 809910000.0, "max": 815620000.0,
                                               "mean": 811902000.0}, "primaryStatistic": "median"}
    assert latency["samples"]["values"] == [812430000.0, 809910000.0, 811070000.0, 815620000.0, 810480000.0]
    assert latency["observedAt"] == "2025-07-31T08:32:45Z"
    assert runs["median_ttft_ms"]["timing"]["latencyNs"] == {"median": 21620000.0}
    assert "timing" not in runs["tokens_per_second"]
    assert runs["tokens_per_second"]["measurements"] == [
        {"metric": "throughput", "statistic": "median", "unit": "tokens/s", "value": 1260.4}]
    assert runs["tokens_per_second"]["sourceNative"]["metrics"] == {"tokens_per_second": 1260.4}
    [environment] = items(kidx, "environments")
    assert environment["spec"] == {
        "hardware": {"vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "80GB HBM3", "architecture": "sm_90",
                     "count": 1},
        "software": {"torch": "2.7.1+cu128", "vllm": "0.10.1.dev212"}}
    [implementation] = items(kidx, "implementations")
    assert implementation["spec"] == {"library": "vllm", "operation": "meta-llama/Meta-Llama-3.1-8B-Instruct"}
    assert kidx("import", "pytorch-benchmark", str(VLLM)).out.count(" unchanged") == 9


def test_import_gzipped_json_lines(kidx, tmp_path):
    packed = tmp_path / "records.json.gz"
    packed.write_bytes(gzip.compress(LINES.read_bytes()))
    code, out, err = kidx("import", "pytorch-benchmark", str(packed))
    assert code == 0, err
    runs = items(kidx, "runs")
    assert sorted(r["spec"]["sourceNative"]["record"]["model"]["backend"] for r in runs) == [
        "naive_softmax", "triton_softmax"]
    assert all(r["spec"]["sourceNative"]["metrics"] == {"latency": r["spec"]["sourceNative"]["record"]["metric"]
                                                        ["benchmark_values"][0]} for r in runs)
    assert {e["spec"]["software"]["cuda"] for e in items(kidx, "environments")} == {"12.8"}


def test_export_then_import_is_identical(kidx, tmp_path):
    assert kidx("import", "tritonbench", str(TRITONBENCH)).code == 0
    assert kidx("import", "nvbench", str(NVBENCH)).code == 0
    assert kidx("import", "pytorch-benchmark", str(VLLM)).code == 0
    exported = tmp_path / "records.jsonl"
    code, out, err = kidx("export", "runs", "--format", "pytorch-benchmark", "-o", str(exported))
    assert code == 0, err
    assert err == f"exported 18 runs as PyTorch OSS benchmark (v3) records to {exported}\n"
    other = tmp_path / "other"
    code, out, err = kidx("import", "pytorch-benchmark", str(exported), store_path=other)
    assert code == 0, err
    for kind in ("runs", "protocols", "workloads", "environments", "implementations"):
        before = {(i["metadata"]["name"], i["metadata"]["digest"]) for i in items(kidx, kind)}
        after = {(i["metadata"]["name"], i["metadata"]["digest"]) for i in items(kidx, kind, store_path=other)}
        assert before == after, kind
    code, again, err = kidx("export", "runs", "--format", "pytorch-benchmark", "-o", "-", store_path=other)
    assert again == exported.read_text()


V3_COLUMNS = {
    "timestamp": "UBIGINT", "schema_version": "VARCHAR", "name": "VARCHAR", "repo": "VARCHAR",
    "head_branch": "VARCHAR", "head_sha": "VARCHAR", "workflow_id": "UBIGINT", "run_attempt": "UINTEGER",
    "job_id": "UBIGINT",
    "runners": "STRUCT(name VARCHAR, type VARCHAR, cpu_info VARCHAR, cpu_count UINTEGER, mem_info VARCHAR, "
               "avail_mem_in_gb UINTEGER, gpu_info VARCHAR, gpu_count UINTEGER, gpu_mem_info VARCHAR, "
               "avail_gpu_mem_in_gb UINTEGER, extra_info MAP(VARCHAR, VARCHAR))[]",
    "benchmark": "STRUCT(name VARCHAR, mode VARCHAR, dtype VARCHAR, extra_info MAP(VARCHAR, VARCHAR))",
    "model": "STRUCT(name VARCHAR, type VARCHAR, backend VARCHAR, origins VARCHAR[], "
             "extra_info MAP(VARCHAR, VARCHAR))",
    "inputs": "MAP(VARCHAR, STRUCT(dtype VARCHAR, extra_info MAP(VARCHAR, VARCHAR)))",
    "dependencies": "MAP(VARCHAR, STRUCT(repo VARCHAR, branch VARCHAR, sha VARCHAR, version VARCHAR, "
                    "extra_info MAP(VARCHAR, VARCHAR)))",
    "metric": "STRUCT(name VARCHAR, benchmark_values FLOAT[], target_value FLOAT, extra_info MAP(VARCHAR, VARCHAR))",
}


def test_export_loads_into_the_v3_columns(kidx, tmp_path):
    """ClickHouse's oss_ci_benchmark_v3 column types, in DuckDB's spelling: every record loads,
    strictly typed (Float32 values, string maps), and reads back as written."""
    duckdb = pytest.importorskip("duckdb")
    assert kidx("import", "tritonbench", str(TRITONBENCH)).code == 0
    exported = tmp_path / "records.jsonl"
    assert kidx("export", "runs", "--format", "pytorch-benchmark", "-o", str(exported)).code == 0
    columns = ", ".join(f"'{name}': '{kind}'" for name, kind in V3_COLUMNS.items())
    connection = duckdb.connect()
    rows = connection.execute(
        f"SELECT model.name, model.backend, metric.name, metric.benchmark_values, runners[1].gpu_info, "
        f"dependencies['cuda'].version, timestamp FROM read_json('{exported}', format='newline_delimited', "
        f"columns={{{columns}}}) ORDER BY model.name, model.backend, metric.benchmark_values").fetchall()
    runs = [r for r in items(kidx, "runs") if "timing" in r["spec"]]
    assert len(rows) == 11
    latency = [row for row in rows if row[2] == "latency_ns" and row[3]]
    assert len(latency) == len(runs) == 5
    # every other metric written back as itself, in its unit
    others = sorted((row[2], row[3][0]) for row in rows if row[2] != "latency_ns")
    assert [name for name, _ in others] == ["memory_bandwidth"] * 3 + ["throughput"] * 2
    assert [value for _, value in others] == pytest.approx(  # bytes/s and FLOP/s, as float32 holds them
        [341.333e9, 910.222e9, 2148.721e9, 110.376e12, 123.362e12], rel=1e-6)
    assert sorted(row[3][0] for row in latency) == pytest.approx(
        sorted(r["spec"]["timing"]["latencyNs"]["median"] for r in runs), rel=1e-6)
    assert {row[4] for row in rows} == {"NVIDIA H100"} and {row[5] for row in rows} == {"12.8"}
    assert {row[6] for row in rows} == {1753949565}


def test_bad_records(kidx, store, tmp_path, monkeypatch):
    bad = tmp_path / "bad.json"
    bad.write_text('[\n {"metric": {"name": "latency_ms", "benchmark_values": [1, NaN]}},\n'
                   ' {"metric": {"benchmark_values": []}},\n 3\n]\n')
    code, out, err = kidx("import", "pytorch-benchmark", str(bad))
    assert (code, out) == (1, "")
    assert err == (f"error: {bad}, line 2: [0].metric.benchmark_values[1]: nan is not a finite number\n"
                   f"error: {bad}, line 3: [1].metric.name: is missing or not a string\n"
                   f"error: {bad}, line 1: [2]: a record must be an object\n"
                   "error: 3 problems found; nothing was changed\n")
    lines = tmp_path / "lines.json"
    lines.write_text('{"metric": {"name": "x", "benchmark_values": []}}\n{"metric": \n')
    assert kidx("import", "pytorch-benchmark", str(lines)).err.startswith(f"error: {lines}, line 2: not valid JSON")
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (5 << 20)))
    monkeypatch.setenv("KIDX_MAX_INPUT_SIZE", "4Mi")
    code, out, err = kidx("import", "pytorch-benchmark", str(bomb))
    assert (code, err) == (1, f"error: {bomb}: input is larger than 4 MiB, the limit for one source (set "
                                 "KIDX_MAX_INPUT_SIZE to change it) (uncompressed)\n")
    monkeypatch.delenv("KIDX_MAX_INPUT_SIZE")
    assert not store.exists()
    code, out, err = kidx("export", "workloads", "--format", "pytorch-benchmark", "-o", "-")
    assert code == 1 and "pytorch-benchmark holds runs only, not Workload" in err


def test_a_damaged_kidx_record_is_an_error_at_its_field(kidx, store, tmp_path):
    """A record kidx exported whose kidx.run has a sourceNative that is no object, or no
    metadata.name: an error naming file, line and field; nothing stored."""
    assert kidx("import", "pytorch-benchmark", str(VLLM), store_path=tmp_path / "source").code == 0
    code, out, err = kidx("export", "runs", "--format", "pytorch-benchmark", "-o", "-", store_path=tmp_path / "source")
    assert code == 0, err
    first, second = (json.loads(line) for line in out.splitlines()[:2])
    run = json.loads(first["metric"]["extra_info"]["kidx.run"])
    run["spec"]["sourceNative"] = "s"
    first["metric"]["extra_info"]["kidx.run"] = json.dumps(run)
    run = json.loads(second["metric"]["extra_info"]["kidx.run"])
    del run["metadata"]["name"]
    second["metric"]["extra_info"]["kidx.run"] = json.dumps(run)
    path = tmp_path / "damaged.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    code, out, err = kidx("import", "pytorch-benchmark", str(path))
    assert (code, out) == (1, "")
    assert err == (f'error: {path}, line 1: [0].metric.extra_info."kidx.run".spec.sourceNative: "s" is not an object\n'
                   f'error: {path}, line 2: [1].metric.extra_info."kidx.run".metadata.name: is missing or not a '
                   "string: an object kidx exported always has its name\n"
                   "error: 2 problems found; nothing was changed\n")
    assert not store.exists()
METRICS_LINES = DATA / "softmax-metrics.jsonl"


def test_a_units_name_or_extra_info_says_what_a_metric_measures(kidx):
    code, out, err = kidx("import", "pytorch-benchmark", str(METRICS_LINES))
    assert code == 0, err
    runs = {(r["spec"]["sourceNative"]["record"]["model"]["backend"], r["spec"]["sourceNative"]["record"]["metric"]
             ["name"]): r["spec"] for r in items(kidx, "runs")}
    # a bare latency whose unit is in metric.extra_info.unit: microseconds, the headline in ns
    assert runs["triton_softmax", "latency"]["timing"] == {
        "latencyNs": {"median": 9216.0, "min": 9124.0, "max": 9308.0, "mean": 9216.0}, "primaryStatistic": "median"}
    assert runs["triton_softmax", "latency"]["samples"] == {"metric": "latency", "unit": "ns",
                                                           "values": [9216.0, 9308.0, 9124.0]}
    # gbps: a bandwidth in bytes/s, its samples too
    bandwidth = runs["naive_softmax", "gbps"]
    assert "timing" not in bandwidth
    assert bandwidth["measurements"] == [{"metric": "memory_bandwidth", "statistic": "median", "unit": "bytes/s",
                                          "value": 341333000000.0}]
    assert bandwidth["samples"] == {"metric": "memory_bandwidth", "unit": "bytes/s",
                                    "values": [341333000000.0, 344746000000.0, 337920000000.0]}
    [protocol] = [p for p in items(kidx, "protocols") if p["metadata"]["name"].endswith("gbps")]
    assert protocol["spec"]["measurement"]["metric"] == "memory_bandwidth"


def test_compare_a_v3_bandwidth_more_is_better(kidx):
    assert kidx("import", "pytorch-benchmark", str(METRICS_LINES)).code == 0
    naive = next(i["metadata"]["name"] for i in items(kidx, "implementations") if "naive" in i["metadata"]["name"])
    code, out, err = kidx("compare", "-l", "metric=gbps", "--baseline", naive, "-o", "json")
    assert (code, err) == (0, "")
    [group] = json.loads(out)["groups"]
    assert [(r["value"], r["unit"], round(r["ratio"], 3), round(r["speedup"], 3)) for r in group["rows"]] == [
        (341333000000.0, "B/s", 1.0, 1.0), (910222000000.0, "B/s", 2.667, 2.667)]
    assert group["rows"][1]["ciLow"] > 1  # the samples: more bytes a second, better


def test_each_metric_is_exported_with_its_unit_and_read_back_as_itself(kidx, tmp_path):
    assert kidx("import", "pytorch-benchmark", str(METRICS_LINES)).code == 0
    code, out, err = kidx("export", "runs", "--format", "pytorch-benchmark", "-o", "-")
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert sorted((r["metric"]["name"], r["metric"]["extra_info"].get("unit"), len(r["metric"]["benchmark_values"]))
                  for r in records) == [("latency_ns", None, 3)] * 2 + [("memory_bandwidth", "bytes/s", 3)] * 2
    # read without kidx's own objects, as another tool's records: the same figures
    for record in records:
        for holder in (record["metric"], record["benchmark"], record["model"], record["runners"][0]):
            holder["extra_info"] = {k: v for k, v in holder["extra_info"].items() if not k.startswith("kidx.")}
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in records))
    other = tmp_path / "other"
    assert kidx("import", "pytorch-benchmark", str(plain), store_path=other).code == 0
    figures = sorted((r["spec"].get("measurements") or [{}])[0].get("value") or r["spec"]["timing"]["latencyNs"]["median"]
                     for r in items(kidx, "runs", store_path=other))
    assert figures == [9216.0, 24576.0, 341333000000.0, 910222000000.0]


def test_a_repeated_key_is_refused_at_its_line(kidx, tmp_path):
    lines = METRICS_LINES.read_text().splitlines()
    lines[2] = lines[2].replace('"name": "nightly"', '"name": "nightly", "name": "other"', 1)
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text("\n".join(lines) + "\n")
    code, out, err = kidx("import", "pytorch-benchmark", str(repeated))
    assert code != 0 and out == ""
    assert err == f'error: {repeated}, line 3: the key "name" appears twice in one object; expected one of each\n'
    listed = json.dumps(json.loads("[" + ",".join(METRICS_LINES.read_text().splitlines()) + "]"), indent=1)
    listed = listed.replace('"gbps"', '"gbps", "name": "gbps"', 1)
    as_list = tmp_path / "repeated.json"
    as_list.write_text(listed)
    line = listed[:listed.index('"gbps", "name"')].count("\n") + 1
    code, out, err = kidx("import", "pytorch-benchmark", str(as_list))
    assert code != 0 and f"{as_list}, line {line}: " in err and "appears twice" in err
    assert kidx("get", "runs", "-o", "name").out == ""  # nothing stored


def test_line_separators_inside_strings_survive_export_and_import(kidx, tmp_path):
    text = METRICS_LINES.read_text().replace('"runner-3"', '"runner\\u2028three\\u2029four\\u0085five"')
    text = text.replace('gcp-h100-runner-3', 'gcp\\u2028h100\\u2029runner\\u0085three')
    source = tmp_path / "separators.jsonl"
    source.write_text(text)
    assert kidx("import", "pytorch-benchmark", str(source)).code == 0
    code, exported, err = kidx("export", "runs", "--format", "pytorch-benchmark", "-o", "-")
    assert code == 0, err
    assert "\u2028" not in exported and "\u2029" not in exported and "\x85" not in exported
    assert len(exported.splitlines()) == 4 == exported.count("\n")
    written = tmp_path / "exported.jsonl"
    written.write_text(exported, encoding="utf-8")
    other = tmp_path / "other"
    code, out, err = kidx("import", "pytorch-benchmark", str(written), store_path=other)
    assert code == 0, err
    for kind in ("runs", "environments"):
        assert ({(i["metadata"]["name"], i["metadata"]["digest"]) for i in items(kidx, kind)}
                == {(i["metadata"]["name"], i["metadata"]["digest"]) for i in items(kidx, kind, store_path=other)})
    assert kidx("export", "runs", "--format", "pytorch-benchmark", "-o", "-", store_path=other).out == exported
    # a file holding them raw inside its strings reads the same: only a line feed ends a line
    raw = tmp_path / "raw.jsonl"
    raw.write_text(exported.replace("\\u2028", "\u2028").replace("\\u2029", "\u2029").replace("\\u0085", "\x85"),
                   encoding="utf-8")
    assert kidx("import", "pytorch-benchmark", str(raw), store_path=other).code == 0
