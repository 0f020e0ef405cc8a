"""kidx import liger end to end: summary, store contents, re-import, output modes, bad input.

Small inputs are built from the real header and real rows of the published CSV (read
here, not copied), written with its CRLF line endings."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LIGER_DATA, REPO, SEED_ENVIRONMENT_DIGEST, SEED_PROTOCOL_DIGEST, SEED_RUN_NAME

# every test here runs on a folder store and on a PostgreSQL store (conftest.py)
pytestmark = pytest.mark.both_backends

DATA = LIGER_DATA
MAIN = DATA / "all_benchmark_data.csv"
FILES = [MAIN, DATA / "all_benchmark_data_cutedsl.csv", DATA / "all_benchmark_data_cutile.csv"]
CRLF = "\r\n"
R = "benchmarkrun.kernelindex.dev/"


def physical_lines(path: Path) -> list[str]:
    return path.read_bytes().decode("utf-8").split(CRLF)


LINES = physical_lines(MAIN)
HEADER = LINES[0]
SEED_ROW = LINES[1487]  # physical line 1488: the seed's row
MEMORY_ROW = LINES[1467]  # physical line 1468: a peak-memory row of the same kernel
COLUMNS = HEADER.split(",")


def fields(row: str) -> list[str]:
    return next(csv.reader([row]))


def changed(row: str, **values: str) -> str:
    """A real row with some columns replaced, written as Liger's csv writer writes it."""
    parts = fields(row)
    for column, value in values.items():
        parts[COLUMNS.index(column)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(parts)
    return out.getvalue()


def csv_text(*rows: str, header: str = HEADER) -> str:
    return CRLF.join([header, *rows]) + CRLF


def test_the_rows_read_are_the_expected_ones():
    assert COLUMNS[0] == "kernel_name" and len(COLUMNS) == 15
    seed = fields(SEED_ROW)
    assert seed[:4] == ["llama4_rope", "liger", "backward", "speed"]
    assert seed[COLUMNS.index("timestamp")] == "2025-08-07 21:42:15"
    memory = fields(MEMORY_ROW)
    assert memory[:4] == ["llama4_rope", "liger", "full", "memory"]


def _run_cli(args: list[str]) -> tuple[int, str, str]:
    from kidx.cli.app import run

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def module_environment(tmp_path_factory):
    """For module fixtures: the same isolation as conftest gives each test."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
        monkeypatch.setenv("NO_COLOR", "1")
        monkeypatch.delenv("KIDX_STORE", raising=False)
        yield


@pytest.fixture
def write(tmp_path):
    def write(text: str, name: str = "data.csv") -> str:
        path = tmp_path / name
        path.write_bytes(text.encode("utf-8"))
        return str(path)

    return write


def without_unpublished(spec: dict) -> dict:
    """The seed's Workload and Implementation were never published, only their digests, and
    their specs are kidx's to define (docs/design.md §1): the importer cannot reproduce those two
    digests. Everything else in the run's spec must be the seed's."""
    assert set(spec) >= {"workloadDigest", "implementationDigest"}
    return {key: value for key, value in spec.items() if key not in ("workloadDigest", "implementationDigest")}


SEED_RUN_NEW_LABELS = {
    "kernel": "llama4_rope", "operation": "backward", "provider": "liger", "metric": "speed",
    "gpu": "nvidia-h100-80gb-hbm3",
}

# ------------------------------------------------------------------ the three published files


@pytest.fixture(scope="module")
def full(tmp_path_factory, module_environment):
    """The three files imported once; tests only read this store (or re-import unchanged)."""
    store = tmp_path_factory.mktemp("full") / "store"
    code, out, err = _run_cli(["import", "liger", *map(str, FILES), "--store", str(store)])
    return store, code, out, err


def in_full(full, *args: str) -> tuple[int, str, str]:
    return _run_cli([*args, "--store", str(full[0])])


def test_full_import_summary(full):
    _, code, out, err = full
    assert code == 0
    assert err == (
        "import liger (3 files): 3897 rows read; BenchmarkProtocol 7 created; ExecutionEnvironment 6 created; "
        "Implementation 114 created; Workload 329 created; BenchmarkRun 3897 created; 0 rows skipped\n"
    )
    lines = out.splitlines()
    assert len(lines) == 7 + 6 + 114 + 329 + 3897
    assert all(line.endswith(" created") for line in lines)


@pytest.mark.parametrize(
    "kind, count",
    [("runs", 3897), ("protocols", 7), ("environments", 6), ("workloads", 329), ("implementations", 114)],
)
def test_full_import_counts_per_kind(full, kind, count):
    code, out, err = in_full(full, "get", kind, "-o", "name")
    assert (code, err) == (0, "")
    assert len(out.splitlines()) == count == len(set(out.splitlines()))


def test_full_import_has_the_seed_objects(full, seed_bundle):
    code, out, err = in_full(full, "get", "run", SEED_RUN_NAME, "-o", "json")
    assert (code, err) == (0, "")
    run = json.loads(out)
    seed = seed_bundle["run"]
    assert without_unpublished(run["spec"]) == without_unpublished(seed["spec"])
    # the seed's published labels, and what the importer adds for selection
    assert run["metadata"]["labels"] == {**seed["metadata"]["labels"], **SEED_RUN_NEW_LABELS}
    assert run["metadata"]["title"] == seed["metadata"]["title"]
    assert in_full(full, "get", "protocol", "liger-bench-do-bench-backward", "-o", "jsonpath={.metadata.digest}") == (
        0, SEED_PROTOCOL_DIGEST, "")
    assert in_full(full, "get", "env", "liger-bench-nvidia-h100-80gb-hbm3", "-o", "jsonpath={.metadata.digest}") == (
        0, SEED_ENVIRONMENT_DIGEST, "")
    assert run["spec"]["protocolDigest"] == SEED_PROTOCOL_DIGEST
    assert run["spec"]["environmentDigest"] == SEED_ENVIRONMENT_DIGEST


def test_every_run_refers_to_stored_objects(full):
    code, out, err = in_full(
        full, "get", "runs", "--references", "env/liger-bench-nvidia-h100-80gb-hbm3", "-o", "name")
    assert code == 0 and R + SEED_RUN_NAME + "\n" in out
    # the seed's workload and implementation are the ones the import stored
    for digest_field, kind in (("workloadDigest", "workloads"), ("implementationDigest", "implementations")):
        _, digest, _ = in_full(full, "get", "run", SEED_RUN_NAME, "-o", f"jsonpath={{.spec.{digest_field}}}")
        code, out, err = in_full(full, "get", kind, digest, "-o", "name")
        assert (code, err) == (0, ""), (kind, digest)
        assert len(out.splitlines()) == 1


def test_full_reimport_is_unchanged(full):
    code, out, err = in_full(full, "import", "liger", *map(str, FILES))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 7 + 6 + 114 + 329 + 3897
    assert all(line.endswith(" unchanged") for line in lines)
    assert err == (
        "import liger (3 files): 3897 rows read; BenchmarkProtocol 7 unchanged; ExecutionEnvironment 6 unchanged; "
        "Implementation 114 unchanged; Workload 329 unchanged; BenchmarkRun 3897 unchanged; 0 rows skipped\n"
    )
    assert in_full(full, "history", "run", SEED_RUN_NAME, "--no-headers")[1].count("\n") == 1


# ------------------------------------------------------------------ small inline files

SMALL_SUMMARY = (
    "import liger (1 file): 2 rows read; BenchmarkProtocol 2 created; ExecutionEnvironment 1 created; "
    "Implementation 1 created; Workload 2 created; BenchmarkRun 2 created; 0 rows skipped\n"
)
SMALL_NAMES = [
    "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward",
    "benchmarkprotocol.kernelindex.dev/liger-bench-peak-memory-full",
    "executionenvironment.kernelindex.dev/liger-bench-nvidia-h100-80gb-hbm3",
    "implementation.kernelindex.dev/liger-llama4-rope-liger-triton",
    "workload.kernelindex.dev/liger-llama4-rope-hidden8192-kv-heads8-q-heads32-seq16384-bf16",
    "workload.kernelindex.dev/liger-llama4-rope-hidden512-kv-heads8-q-heads32-seq2048-bf16",
    R + SEED_RUN_NAME,
    R + "liger-llama4-rope-full-memory-liger-nvidia-h100-80gb-hbm3-hidden512-kv-heads8-q-heads32-s-99b0a28c65",
]


def test_small_import(kidx, write):
    path = write(csv_text(SEED_ROW, MEMORY_ROW))
    assert kidx("import", "liger", path) == (0, "".join(f"{name} created\n" for name in SMALL_NAMES), SMALL_SUMMARY)
    code, out, err = kidx("get", "all", "-o", "name")
    assert sorted(out.splitlines()) == sorted(SMALL_NAMES)


def test_small_reimport_is_unchanged(kidx, write):
    path = write(csv_text(SEED_ROW, MEMORY_ROW))
    assert kidx("import", "liger", path)[0] == 0
    code, out, err = kidx("import", "liger", path)
    assert code == 0
    assert out == "".join(f"{name} unchanged\n" for name in SMALL_NAMES)
    assert err == SMALL_SUMMARY.replace(" created", " unchanged")


def test_small_import_of_the_seed_row_matches_the_seed(kidx, write, seed_bundle):
    assert kidx("import", "liger", write(csv_text(SEED_ROW)))[0] == 0
    run = json.loads(kidx("get", "run", SEED_RUN_NAME, "-o", "json").out)
    assert without_unpublished(run["spec"]) == without_unpublished(seed_bundle["run"]["spec"])
    assert run["metadata"]["title"] == seed_bundle["run"]["metadata"]["title"]
    assert run["metadata"]["labels"] == {**seed_bundle["run"]["metadata"]["labels"], **SEED_RUN_NEW_LABELS}
    annotations = run["metadata"]["annotations"]
    assert annotations["kernelindex.dev/source-line"] == "2"
    assert annotations["liger.kernelindex.dev/row"] == SEED_ROW


def test_dry_run_writes_nothing(kidx, write, store):
    code, out, err = kidx("import", "liger", write(csv_text(SEED_ROW, MEMORY_ROW)), "--dry-run")
    assert code == 0
    assert out == "".join(f"{name} created (dry run)\n" for name in SMALL_NAMES)
    assert err == SMALL_SUMMARY
    assert not store.exists()
    assert kidx("get", "all", "-o", "name").err.startswith(f"error: no store at {store} (--store)")


def test_dry_run_on_a_filled_store_changes_nothing(kidx, write, store):
    path = write(csv_text(SEED_ROW))
    assert kidx("import", "liger", path)[0] == 0
    before = kidx("get", "all", "-o", "json").out
    newer = write(csv_text(SEED_ROW, MEMORY_ROW), "newer.csv")
    code, out, err = kidx("import", "liger", newer, "--dry-run=server")
    assert code == 0
    assert out.splitlines()[-1].endswith(" created (server dry run)")
    assert kidx("get", "all", "-o", "json").out == before


def test_output_name(kidx, write):
    assert kidx("import", "liger", write(csv_text(SEED_ROW, MEMORY_ROW)), "-o", "name") == (
        0, "".join(f"{name}\n" for name in SMALL_NAMES), SMALL_SUMMARY)
    assert sorted(kidx("get", "all", "-o", "name").out.splitlines()) == sorted(SMALL_NAMES)


def test_output_json_prints_a_list_and_stores_nothing(kidx, write, store):
    code, out, err = kidx("import", "liger", write(csv_text(SEED_ROW, MEMORY_ROW)), "-o", "json")
    assert code == 0
    listing = json.loads(out)
    assert (listing["apiVersion"], listing["kind"]) == ("v1", "List")
    assert [f"{item['kind'].lower()}.kernelindex.dev/{item['metadata']['name']}" for item in listing["items"]] == SMALL_NAMES
    assert out.startswith('{\n    "apiVersion": "v1",\n    "items": [\n')
    assert err == (
        "import liger (1 file): 2 rows read; BenchmarkProtocol 2; ExecutionEnvironment 1; Implementation 1; "
        "Workload 2; BenchmarkRun 2; 0 rows skipped\n"
    )
    assert not store.exists()


def test_output_yaml_applies_to_the_same_objects(kidx, write, tmp_path):
    path = write(csv_text(SEED_ROW, MEMORY_ROW))
    code, listing, _ = kidx("import", "liger", path, "-o", "yaml")
    assert code == 0 and listing.startswith("apiVersion: v1\nitems:\n")
    assert kidx("apply", "-f", "-", stdin=listing)[0] == 0
    other = tmp_path / "other"
    assert kidx("import", "liger", path, store_path=other)[0] == 0

    def contents(store_path=None):
        items = json.loads(kidx("get", "all", "-o", "json", store_path=store_path).out)["items"]
        for item in items:
            del item["metadata"]["creationTimestamp"]
        return items

    assert contents() == contents(other)


def test_unknown_output_mode(kidx, write, store):
    assert kidx("import", "liger", write(csv_text(SEED_ROW)), "-o", "wide") == (
        1, "", 'error: unable to match a printer suitable for the output format "wide", allowed formats are: json,name,yaml\n')
    assert not store.exists()


def test_a_remeasured_row_adds_a_run_and_keeps_the_old_one(kidx, tmp_path):
    """A newer version of the file: the seed row was measured again (new numbers, new time)."""
    old, new = tmp_path / "old" / "all_benchmark_data.csv", tmp_path / "new" / "all_benchmark_data.csv"
    remeasured = changed(SEED_ROW, y_value_50="0.5", y_value_20="0.49", y_value_80="0.51",
                         timestamp="2025-09-01 10:00:00")
    for path, text in ((old, csv_text(SEED_ROW, MEMORY_ROW)), (new, csv_text(remeasured, MEMORY_ROW))):
        path.parent.mkdir()
        path.write_bytes(text.encode("utf-8"))
    assert kidx("import", "liger", str(old))[0] == 0
    code, out, err = kidx("import", "liger", str(new))
    assert code == 0, err
    lines = out.splitlines()
    assert sum(line.endswith(" created") for line in lines) == 1
    assert lines[-2].startswith(R + "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-")
    assert lines[-2].endswith(" created")
    assert lines[-1].endswith(" unchanged")
    assert "BenchmarkRun 1 created, 1 unchanged" in err
    code, out, err = kidx("get", "runs", "--field-selector", "spec.sourceNative.benchmark=llama4_rope/backward",
                          "-o", "custom-columns=NAME:.metadata.name,MEDIAN:.spec.timing.latencyNs.median,"
                          "AT:.spec.observedAt", "--sort-by", ".spec.observedAt", "--no-headers")
    assert code == 0
    rows = [line.split() for line in out.splitlines()]
    assert [row[1:] for row in rows] == [["417536", "2025-08-07T21:42:15.000Z"], ["500000", "2025-09-01T10:00:00.000Z"]]
    assert rows[0][0] == SEED_RUN_NAME and rows[1][0] != SEED_RUN_NAME
    # the old run is untouched: still its first revision
    assert kidx("history", "run", SEED_RUN_NAME, "--no-headers").out.count("\n") == 1


def test_nan_gives_a_failed_run(kidx, write):
    row = changed(SEED_ROW, y_value_50="nan")
    code, out, err = kidx("import", "liger", write(csv_text(row)))
    assert code == 0, err
    run = json.loads(kidx("get", "run", SEED_RUN_NAME, "-o", "json").out)
    assert run["spec"]["status"] == "failed"
    assert "timing" not in run["spec"]
    assert run["spec"]["failure"] == {"reason": "MissingMeasurement", "message": "y_value_50 is 'nan'"}
    assert run["spec"]["sourceNative"]["metrics"]["ms_50"] is None
    assert kidx("get", "runs", "--field-selector", "spec.status=failed", "-o", "name").out == R + SEED_RUN_NAME + "\n"


def test_blank_trailing_record_is_skipped_and_counted(kidx, write):
    path = write(csv_text(SEED_ROW) + CRLF)
    code, out, err = kidx("import", "liger", path)
    assert code == 0
    assert out.splitlines()[-1] == f"{R}{SEED_RUN_NAME} created"
    assert err == (
        "import liger (1 file): 2 rows read; BenchmarkProtocol 1 created; ExecutionEnvironment 1 created; "
        "Implementation 1 created; Workload 1 created; BenchmarkRun 1 created; 1 rows skipped (1 blank record)\n"
        f"  skipped {path}, line 3: blank record\n"
    )


def test_a_duplicate_row_is_skipped_and_counted(kidx, write):
    path = write(csv_text(SEED_ROW, SEED_ROW))
    code, out, err = kidx("import", "liger", path)
    assert code == 0
    assert "2 rows read" in err and "BenchmarkRun 1 created" in err
    assert "1 rows skipped (1 duplicate)" in err
    assert err.endswith(f"  skipped {path}, line 3: duplicate of line 2\n")


# ------------------------------------------------------------------ bad input


BAD = {
    "wrong header": (
        csv_text(SEED_ROW, header=HEADER.replace("kernel_name", "kernel")),
        ["{path}, line 1: not a Liger benchmark CSV header (column 1 is 'kernel', expected 'kernel_name'); "
         "expected " + HEADER],
    ),
    "too many fields": (
        csv_text(SEED_ROW, SEED_ROW.replace("2025-08-07", "2025-08-08") + ",extra"),
        ["{path}, line 3: expected 15 fields, found 16"],
    ),
    "too few fields": (
        csv_text(MEMORY_ROW, ",".join(fields(SEED_ROW)[:5])),
        ["{path}, line 3: expected 15 fields, found 5"],
    ),
    "non-numeric y": (
        csv_text(MEMORY_ROW, changed(SEED_ROW, y_value_50="fast")),
        ["{path}, line 3: y_value_50: 'fast' is not a number"],
    ),
    "conflict markers": (
        csv_text("<<<<<<< HEAD", SEED_ROW, "=======", MEMORY_ROW, ">>>>>>> theirs"),
        ["{path}, line 2: git conflict marker '<<<<<<< HEAD': the file holds an unresolved merge",
         "{path}, line 4: git conflict marker '=======': the file holds an unresolved merge",
         "{path}, line 6: git conflict marker '>>>>>>> theirs': the file holds an unresolved merge",
         "3 problems found; nothing was changed"],
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_refused_with_file_and_line(kidx, write, store, case):
    text, messages = BAD[case]
    path = write(text, "bad.csv")
    code, out, err = kidx("import", "liger", path)
    assert (code, out) == (1, "")
    assert err == "".join(f"error: {message.format(path=path)}\n" for message in messages)
    assert not store.exists()


@pytest.mark.parametrize("case", list(BAD))
def test_bad_file_among_good_ones_stores_nothing(kidx, write, case):
    good = write(csv_text(SEED_ROW), "good.csv")
    assert kidx("import", "liger", good)[0] == 0
    before = kidx("get", "all", "-o", "json").out
    newer = write(csv_text(MEMORY_ROW), "newer.csv")
    bad = write(BAD[case][0], "bad.csv")
    code, out, err = kidx("import", "liger", newer, bad)
    assert (code, out) == (1, "")
    assert f"error: {bad}, line " in err
    assert kidx("get", "all", "-o", "json").out == before


def test_missing_file(kidx, tmp_path, store):
    missing = tmp_path / "nope.csv"
    assert kidx("import", "liger", str(missing)) == (1, "", f"error: {missing}: cannot read file: No such file or directory\n")
    assert not store.exists()


def test_import_needs_a_file(kidx):
    code, out, err = kidx("import", "liger")
    assert (code, out) == (1, "")
    assert err.startswith("error: ")


def test_summary_counts_every_file_read(kidx, write):
    """A file with a header and no rows was still read (the summary said 1 file, then 0)."""
    rows = write(csv_text(SEED_ROW), "rows.csv")
    empty = write(HEADER + CRLF, "header-only.csv")
    code, out, err = kidx("import", "liger", rows, empty, "--dry-run")
    assert code == 0
    assert err.startswith("import liger (2 files): 1 rows read; ")
    assert kidx("import", "liger", empty) == (0, "", "import liger (1 file): 0 rows read; 0 rows skipped\n")
    code, out, err = kidx("import", "liger", empty, "-o", "json")
    assert (code, err) == (0, "import liger (1 file): 0 rows read; 0 rows skipped\n")
    assert json.loads(out)["items"] == []


def test_progress_bar_on_a_terminal_reaches_the_end(tmp_path):
    """On a terminal, a large import shows its phases on stderr and finishes them."""
    import shutil as _shutil

    script = _shutil.which("script")
    if script is None:
        pytest.skip("util-linux script(1) is needed to give kidx a terminal")
    csv_path = LIGER_DATA / "all_benchmark_data.csv"
    store = tmp_path / "store"
    transcript = tmp_path / "typescript"
    command = f"{sys.executable} -m kidx import liger {csv_path} --store {store} -o name > {tmp_path / 'names.txt'}"
    completed = subprocess.run([script, "-q", "-c", command, str(transcript)], cwd=REPO, capture_output=True,
                               env={**os.environ, "NO_COLOR": "1", "TERM": "xterm"}, timeout=300)
    assert completed.returncode == 0
    screen = transcript.read_text(encoding="utf-8", errors="replace")
    assert "validating" in screen and "storing" in screen
    assert "2782/2782" in screen  # each phase ends at its total (2,448 runs + 334 shared objects)
    assert "import liger (1 file): 2448 rows read" in screen
    assert len((tmp_path / "names.txt").read_text().splitlines()) == 2782


def _google_benchmark_file(path, name: str):
    record = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
              "threads": 1, "iterations": 10, "real_time": 5.0, "cpu_time": 5.0, "time_unit": "ns"}
    path.write_text(json.dumps({"context": {"library_version": "1.9.5", "date": "2026-12-01T10:39:05+00:00"},
                                "benchmarks": [record]}))
    return str(path)


@pytest.mark.parametrize("fmt, first, second", [("bmf", "a/b", "a-b"), ("google-benchmark", "BM_a/1", "BM_a-1")])
def test_names_that_slug_alike_never_take_over_each_others_workload(kidx, tmp_path, fmt, first, second):
    """Within one file two specs of one name each get a hashed suffix; across imports too:
    the second benchmark's workload never reconfigures the first's."""
    def written(name, file):
        if fmt == "bmf":
            file.write_text(json.dumps({name: {"latency": {"value": 5.0}}}))
            return str(file)
        return _google_benchmark_file(file, name)

    assert kidx("import", fmt, written(first, tmp_path / "1.json"))[0] == 0
    before = json.loads(kidx("get", "workloads", "-o", "json").out)["items"]
    code, out, err = kidx("import", fmt, written(second, tmp_path / "2.json"))
    assert code == 0, err
    assert " configured" not in out
    workloads = json.loads(kidx("get", "workloads", "-o", "json").out)["items"]
    assert len(workloads) == 2
    [kept] = before
    still = {w["metadata"]["name"]: w for w in workloads}[kept["metadata"]["name"]]
    assert (still["spec"], still["metadata"]["generation"]) == (kept["spec"], 1)
    [new] = [w for w in workloads if w["metadata"]["name"] != kept["metadata"]["name"]]
    assert new["metadata"]["name"].startswith(kept["metadata"]["name"] + "-")
    runs = {run["spec"]["workloadDigest"]: run for run in json.loads(kidx("get", "runs", "-o", "json").out)["items"]}
    assert set(runs) == {kept["metadata"]["digest"], new["metadata"]["digest"]}
    again = kidx("import", fmt, str(tmp_path / "2.json"))  # the same file again: nothing changes
    assert again[0] == 0 and all(line.endswith(" unchanged") for line in again.out.splitlines())
