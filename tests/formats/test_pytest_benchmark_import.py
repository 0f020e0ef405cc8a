"""kidx import pytest-benchmark, on JSON that pytest-benchmark itself wrote: a small
benchmark module (tests/benchmarks/) run in a subprocess with a few rounds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, environment_without_xdist

MODULE = REPO / "tests" / "benchmarks" / "pytest_benchmark_sample.py"
R = "benchmarkrun.kernelindex.dev/"


def run_pytest_benchmark(folder: Path, *options: str) -> None:
    """pytest-benchmark for real: the sample module, 5 to a few dozen rounds each."""
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", str(MODULE), "--noconftest", "-p", "no:cacheprovider", "-o", "addopts=",
         "-q", "--benchmark-min-rounds=5", "--benchmark-max-time=0.0005", "--benchmark-warmup=off", *options],
        capture_output=True, text=True, cwd=folder, timeout=300, env=environment_without_xdist(),
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """--benchmark-json output, which always holds the raw round times."""
    folder = tmp_path_factory.mktemp("saved")
    run_pytest_benchmark(folder, f"--benchmark-json={folder / 'results.json'}")
    return folder / "results.json"


@pytest.fixture(scope="module")
def summarised(tmp_path_factory) -> Path:
    """A file kept by --benchmark-autosave without --benchmark-save-data: summaries only."""
    folder = tmp_path_factory.mktemp("summarised")
    run_pytest_benchmark(folder, "--benchmark-autosave", f"--benchmark-storage=file://{folder / 'kept'}")
    [kept] = (folder / "kept").rglob("*.json")
    return kept


def test_import_summary_and_objects(kidx, saved):
    code, out, err = kidx("import", "pytest-benchmark", str(saved))
    assert code == 0, err
    assert err == (
        "import pytest-benchmark (1 file): 3 benchmarks read; BenchmarkProtocol 1 created; "
        "ExecutionEnvironment 1 created; Implementation 2 created; Workload 3 created; BenchmarkRun 3 created; "
        "0 benchmarks skipped\n"
    )
    assert "workload.kernelindex.dev/pytest-benchmark-sum-of-squares-100 created\n" in out
    assert "workload.kernelindex.dev/pytest-benchmark-test-sorted created\n" in out
    assert "benchmarkprotocol.kernelindex.dev/pytest-benchmark-perf-counter created\n" in out


def test_stats_and_raw_samples(kidx, saved):
    source = json.loads(saved.read_text())
    assert kidx("import", "pytest-benchmark", str(saved))[0] == 0
    runs = json.loads(kidx("get", "runs", "-o", "json").out)["items"]
    by_benchmark = {run["spec"]["sourceNative"]["benchmark"]: run for run in runs}
    assert len(by_benchmark) == 3
    for benchmark in source["benchmarks"]:
        stats, spec = benchmark["stats"], by_benchmark[benchmark["fullname"]]["spec"]
        assert spec["status"] == "passed"
        assert spec["timing"]["primaryStatistic"] == "median"
        assert spec["timing"]["latencyNs"] == {
            key: round(stats[key] * 1e9, 3) for key in ("min", "max", "mean", "stddev", "median")}
        assert {(m["statistic"], m["value"]) for m in spec["measurements"]} == {
            ("p25", round(stats["q1"] * 1e9, 3)), ("p75", round(stats["q3"] * 1e9, 3)),
            ("iqr", round(stats["iqr"] * 1e9, 3)), ("count", stats["rounds"]), ("count", stats["iterations"])}
        assert stats["rounds"] >= 5 and len(stats["data"]) == stats["rounds"]
        assert spec["samples"] == {"metric": "latency", "unit": "ns",
                                   "values": [round(value * 1e9, 3) for value in stats["data"]]}
        assert spec["observedAt"] == source["datetime"].replace("+00:00", "Z")
        assert spec["sourceNative"]["options"] == benchmark["options"]


def test_environment_from_machine_info(kidx, saved):
    machine = json.loads(saved.read_text())["machine_info"]
    assert kidx("import", "pytest-benchmark", str(saved))[0] == 0
    [env] = json.loads(kidx("get", "environments", "-o", "json").out)["items"]
    assert env["spec"]["hardware"]["product"] == machine["cpu"]["brand_raw"]
    assert env["spec"]["hardware"]["architecture"] == machine["machine"]
    assert env["spec"]["software"] == {
        "python": machine["python_version"], "python-implementation": machine["python_implementation"],
        "os": machine["system"], "pytest-benchmark": json.loads(saved.read_text())["version"]}
    assert env["metadata"]["annotations"]["kernelindex.dev/hostname"] == machine["node"]


def test_labels_and_workload_parameters(kidx, saved):
    assert kidx("import", "pytest-benchmark", str(saved))[0] == 0
    code, out, err = kidx("get", "runs", "-l", "group=sum_of_squares", "-o", "jsonpath={.items[*].metadata.labels.test}")
    assert (code, out) == (0, "test_sum_of_squares test_sum_of_squares")
    code, out, err = kidx("get", "workload", "pytest-benchmark-sum-of-squares-1000", "-o", "jsonpath={.spec.parameters}")
    assert json.loads(out) == {"n": 1000}


def test_without_saved_data_there_are_no_samples(kidx, summarised):
    assert "data" not in json.loads(summarised.read_text())["benchmarks"][0]["stats"]
    assert kidx("import", "pytest-benchmark", str(summarised))[0] == 0
    code, out, err = kidx("get", "runs", "-o", "jsonpath={.items[*].spec.samples}")
    assert (code, out) == (0, "")


def test_reimport_is_unchanged_and_dry_run_stores_nothing(kidx, saved):
    assert kidx("import", "pytest-benchmark", str(saved), "--dry-run")[1].endswith("created (dry run)\n")
    assert kidx("get", "runs", "-o", "name").out == ""
    assert kidx("import", "pytest-benchmark", str(saved))[0] == 0
    code, out, err = kidx("import", "pytest-benchmark", str(saved))
    assert code == 0 and all(line.endswith(" unchanged") for line in out.splitlines())


def test_yaml_output_applies_to_the_same_objects(kidx, saved, tmp_path):
    code, out, err = kidx("import", "pytest-benchmark", str(saved), "-o", "yaml")
    assert code == 0 and out.startswith("apiVersion: v1\nitems:\n")
    assert err.startswith("import pytest-benchmark (1 file): 3 benchmarks read; BenchmarkProtocol 1; ")
    manifests = tmp_path / "m.yaml"
    manifests.write_text(out)
    assert kidx("apply", "-f", str(manifests))[0] == 0
    assert len(kidx("get", "runs", "-o", "name").out.splitlines()) == 3


def test_bad_input_is_reported_at_file_and_line(kidx, saved, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"machine_info": {},\n "benchmarks": [\n')
    code, out, err = kidx("import", "pytest-benchmark", str(broken))
    assert (code, out) == (1, "")
    assert err == (f"error: {broken}, line 3: not valid JSON (Expecting value); "
                   "expected pytest-benchmark JSON (pytest --benchmark-json=FILE)\n")

    data = json.loads(saved.read_text())
    del data["benchmarks"][1]["stats"]["median"]
    data["benchmarks"][2]["stats"]["min"] = -1
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data, indent=4))
    lines = edited.read_text().splitlines()
    second = next(i for i, line in enumerate(lines, 1) if data["benchmarks"][1]["fullname"] in line)
    third = next(i for i, line in enumerate(lines, 1) if data["benchmarks"][2]["fullname"] in line)
    code, out, err = kidx("import", "pytest-benchmark", str(edited))
    assert (code, out) == (1, "")
    assert f"{edited}, line {second}: benchmarks[1].stats.median: is missing" in err
    assert f"{edited}, line {third}: benchmarks[2].stats.min: -1 is not a non-negative number" in err
    assert kidx("get", "runs", "-o", "name").out == ""

    other = tmp_path / "other.json"
    other.write_text('{"benchmarks": []}')
    code, out, err = kidx("import", "pytest-benchmark", str(other))
    assert code == 1 and "expected an object with machine_info and benchmarks" in err


@pytest.fixture(scope="module")
def twins(tmp_path_factory) -> tuple[Path, Path]:
    """One session written twice: --benchmark-json (with the round times) and an autosave
    file without --benchmark-save-data (summaries only); their datetimes differ."""
    folder = tmp_path_factory.mktemp("twins")
    run_pytest_benchmark(folder, f"--benchmark-json={folder / 'results.json'}", "--benchmark-autosave",
                         f"--benchmark-storage=file://{folder / 'kept'}")
    [kept] = (folder / "kept").rglob("*.json")
    assert json.loads(kept.read_text())["datetime"] != json.loads((folder / "results.json").read_text())["datetime"]
    return folder / "results.json", kept


def stored(kidx) -> dict[str, dict]:
    return {run["metadata"]["name"]: run for run in json.loads(kidx("get", "runs", "-o", "json").out)["items"]}


def test_a_sessions_json_and_autosave_files_give_the_same_runs(kidx, twins, tmp_path):
    saved, kept = twins
    assert kidx("import", "pytest-benchmark", str(saved))[0] == 0
    first = stored(kidx)
    code, out, err = kidx("import", "pytest-benchmark", str(kept))
    assert code == 0, err
    assert [line.rsplit(" ", 1)[1] for line in out.splitlines()] == ["unchanged"] * 10
    assert stored(kidx) == first and all("samples" in run["spec"] for run in first.values())

    # the other order: the summary-only runs gain their round times and the earlier time
    other = tmp_path / "other"
    assert kidx("import", "pytest-benchmark", str(kept), store_path=other)[0] == 0
    code, out, err = kidx("import", "pytest-benchmark", str(saved), store_path=other)
    assert code == 0, err
    assert sorted(line for line in out.splitlines() if line.startswith(R)) == sorted(
        f"{R}{name} configured" for name in first)
    again = {run["metadata"]["name"]: run for run in
             json.loads(kidx("get", "runs", "-o", "json", store_path=other).out)["items"]}
    assert {name: run["metadata"]["digest"] for name, run in again.items()} == {
        name: run["metadata"]["digest"] for name, run in first.items()}

    # both files in one import: one run each, the twin listed as skipped
    both = tmp_path / "both"
    code, out, err = kidx("import", "pytest-benchmark", str(kept), str(saved), store_path=both)
    assert code == 0, err
    assert "6 benchmarks read; " in err and "BenchmarkRun 3 created; 3 benchmarks skipped (3 duplicate)\n" in err
    first_line = next(i for i, line in enumerate(kept.read_text().splitlines(), 1) if '"fullname"' in line)
    assert f": duplicate of line {first_line} of {kept}, the same session's record (merged into one run)\n" in err
    assert err.count(f"  skipped {saved}, line ") == 3
    assert {run["metadata"]["digest"] for run in
            json.loads(kidx("get", "runs", "-o", "json", store_path=both).out)["items"]} == {
        run["metadata"]["digest"] for run in first.values()}


def clone(parent: Path, folder: str) -> Path:
    """A checkout of a small project named sample-project, in a folder of the given name."""
    root = parent / folder
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "sample-project"\n\n[tool.pytest.ini_options]\n')
    (root / "test_sample.py").write_text(MODULE.read_text())
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "test_sample.py", "-p", "no:cacheprovider", "-q", "--benchmark-min-rounds=5",
         "--benchmark-max-time=0.0005", "--benchmark-warmup=off", f"--benchmark-json={root / 'results.json'}"],
        capture_output=True, text=True, cwd=root, timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return root


def implementations(kidx, store_path: Path) -> dict[str, dict]:
    items = json.loads(kidx("get", "implementations", "-o", "json", store_path=store_path).out)["items"]
    return {item["metadata"]["digest"]: item["spec"] for item in items}


def test_the_library_is_the_projects_name_not_its_folders(kidx, tmp_path, monkeypatch):
    """Two clones in differently named folders give the same implementations."""
    alpha, beta = clone(tmp_path, "alpha-checkout"), clone(tmp_path, "beta")
    assert json.loads((alpha / "results.json").read_text())["commit_info"]["project"] == "alpha-checkout"
    found = []
    for root in (alpha, beta):
        monkeypatch.chdir(root)
        assert kidx("import", "pytest-benchmark", "results.json", store_path=tmp_path / root.name)[0] == 0
        found.append(implementations(kidx, tmp_path / root.name))
    assert found[0] == found[1]
    assert {spec["library"] for spec in found[0].values()} == {"sample-project"}
    assert {spec["entryPoint"] for spec in found[0].values()} == {"test_sample.py::test_sorted",
                                                                  "test_sample.py::test_sum_of_squares"}
    # --library names it outright; a folder without a project file says what it used
    code, out, err = kidx("import", "pytest-benchmark", str(alpha / "results.json"), "--library", "mylib",
                          store_path=tmp_path / "named")
    assert code == 0 and {s["library"] for s in implementations(kidx, tmp_path / "named").values()} == {"mylib"}
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    code, out, err = kidx("import", "pytest-benchmark", str(alpha / "results.json"), store_path=tmp_path / "plain")
    assert code == 0
    assert err.splitlines()[-1] == (f"Warning: no project name in a pyproject.toml or setup.cfg of {elsewhere} or "
                                    "above: the implementations' library is 'unknown' (pass --library NAME)")
    assert {s["library"] for s in implementations(kidx, tmp_path / "plain").values()} == {"unknown"}


def test_the_band_is_the_quartiles_and_says_so(kidx, saved, twins):
    """pytest-benchmark keeps q1 and q3, not p20 and p80: the band shown is p25-p75, labelled."""
    from kidx.analysis.measures import measure_of

    assert kidx("import", "pytest-benchmark", str(saved), str(twins[0]))[0] == 0
    run = next(iter(stored(kidx).values()))
    measure = measure_of(run["spec"])
    quartiles = {m["statistic"]: m["value"] for m in run["spec"]["measurements"]}
    assert (measure.band, measure.low, measure.high) == ("p25-p75", quartiles["p25"], quartiles["p75"])
    code, out, err = kidx("series", "-l", "test=test_sorted")
    assert code == 0, err
    assert out.count(" (p25-p75)") == 2
