"""The scale benchmark's own tools: bench/timed_apply.py applies as the console script does
and says where the time went; bench_scale.py adds the stages up and reads Python's import
profile. A driver that no longer found what it wraps would report nothing, silently."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SEED_BUNDLE

TIMED_APPLY = REPO / "bench" / "timed_apply.py"


@pytest.fixture(scope="module")
def bench_scale():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import bench_scale

        yield bench_scale
    finally:
        sys.path.remove(str(REPO / "bench"))


def timed_apply(tmp_path: Path, *arguments: str) -> tuple[subprocess.CompletedProcess, dict | None]:
    stages = tmp_path / "stages.json"
    done = subprocess.run([sys.executable, str(TIMED_APPLY), str(stages), "--", "apply", *arguments],
                          capture_output=True, text=True, cwd=tmp_path)
    return done, json.loads(stages.read_text()) if stages.exists() else None


def test_timed_apply_applies_as_the_command_does_and_times_each_stage(tmp_path):
    store = tmp_path / "store"
    done, measured = timed_apply(tmp_path, "-f", str(SEED_BUNDLE), "-o", "name", "--store", str(store))
    plain = subprocess.run([sys.executable, "-m", "kidx", "apply", "-f", str(SEED_BUNDLE), "-o", "name",
                            "--store", str(tmp_path / "plain")], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, plain.stdout, plain.stderr)
    listed = subprocess.run([sys.executable, "-m", "kidx", "get", "runs", "-o", "name", "--store", str(store)],
                            capture_output=True, text=True)
    applied = {line.removesuffix(" created") for line in done.stdout.splitlines()}
    assert listed.stdout and set(listed.stdout.splitlines()) <= applied  # the runs it applied are stored
    assert set(measured) == {"wall_s", "cpu_user_s", "cpu_system_s", "stages_s"}
    assert set(measured["stages_s"]) == {"read", "apply", "validate", "digest", "objects", "flush", "catalog",
                                         "commit"}
    inside = sum(measured["stages_s"][stage] for stage in ("validate", "digest", "objects", "flush", "catalog",
                                                           "commit"))
    assert 0 < inside <= measured["stages_s"]["apply"] < measured["wall_s"]


def test_timed_apply_keeps_the_commands_exit_status_and_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kernelindex.dev/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec: [1\n")
    done, measured = timed_apply(tmp_path, "-f", str(bad), "--store", str(tmp_path / "store"))
    plain = subprocess.run([sys.executable, "-m", "kidx", "apply", "-f", str(bad), "--store", str(tmp_path / "s")],
                           capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (plain.returncode, plain.stderr)
    assert done.returncode != 0 and "bad.yaml" in done.stderr
    assert measured is not None and "apply" not in measured["stages_s"]  # it never got that far
    assert not (tmp_path / "store").exists()


def test_apply_stages_add_up_each_chunk_and_say_each_parts_share(bench_scale):
    stages = bench_scale.ApplyStages()
    chunk = {"wall_s": 9.0, "cpu_user_s": 6.0, "cpu_system_s": 1.0,
             "stages_s": {"read": 2.0, "apply": 7.0, "validate": 1.0, "digest": 0.5, "objects": 0.5, "flush": 0.01,
                          "catalog": 3.24, "commit": 0.25}}
    stages.add(chunk, 10.0, 2.5)
    stages.add(chunk, 10.0, 1.5)
    assert stages.rows("1,000", 40_000) == [
        ["1,000", "read, parse and check the file", "4.0", "20%", "10,000"],
        ["1,000", "validate", "2.0", "10%", "20,000"],
        ["1,000", "digest", "1.0", "5%", "40,000"],
        ["1,000", "objects", "1.0", "5%", "40,000"],
        ["1,000", "flush", "0.0", "0%", "-"],
        ["1,000", "catalog", "6.5", "32%", "6,173"],
        ["1,000", "commit", "0.5", "2%", "80,000"],
        ["1,000", "plan (pin references, look up names)", "3.0", "15%", "13,333"],
        ["1,000", "start, print the names, exit", "2.0", "10%", "20,000"],
        ["1,000", "apply process CPU", "14.0", "70%", "2,857"],
        ["1,000", "apply process waiting (wall less CPU)", "6.0", "30%", "6,667"],
        ["1,000", "database server CPU", "4.0", "20%", "10,000"],
    ]


def test_the_import_profile_adds_up_the_top_level_imports_only(bench_scale):
    profile = ("import time: self [us] | cumulative | imported package\n"
               "import time:       120 |        120 |   _io\n"
               "import time:       500 |        620 | site\n"
               "import time:       300 |        300 |     re._parser\n"
               "import time:      1000 |       4380 | kidx.store\n"
               "something else | on stderr | too\n")
    assert bench_scale.imports_total_ms(profile) == 5.0


RECORDING_TIME_REPORT = REPO / "bench" / "reports" / "bench_recording_time-20261207-090426.json"


def test_the_recording_time_figures_are_the_h100_recordings_and_the_page_copies_them(bench_scale):
    """bench_recording_time.py, read again from tests/data/h100-ab, gives the tables of its
    kept report, and docs/measuring.md ("Adaptive stopping") shows that report's figures
    (the fixture puts bench/ on the path)."""
    import bench_recording_time

    found = bench_recording_time.tables()
    assert found == json.loads(RECORDING_TIME_REPORT.read_text(encoding="utf-8"))["tables"]
    phases = [{row[0]: dict(zip(table["header"], row, strict=True)) for row in table["rows"]} for table in found[:2]]
    (before, after), (precise_before, precise_after) = ([by["before"], by["after"]] for by in phases)
    page = (REPO / "docs" / "measuring.md").read_text(encoding="utf-8")
    assert RECORDING_TIME_REPORT.with_suffix(".txt").name in page
    for line in [
        f"| device time, all 240 timed calls | {before['device s']} s | {after['device s']} s |",
        f"| device time per configuration (10 calls: 5 a side), median | "
        f"{before['device s per configuration (median)']} s | {after['device s per configuration (median)']} s |",
        f"| device time per configuration, largest (Liger's forward at 1,024 rows, Liger's first call in each "
        f"process) | {before['largest']} s | {after['largest']} s |",
        f"| samples per call: median (fewest–most) | {before['samples per run (median)']} ({before['fewest']}–"
        f"{before['most']}) | {after['samples per run (median)']} ({after['fewest']}–{after['most']}) |",
        f"| the 10 harness processes' wall time, summed | {before['their wall s']} s | {after['their wall s']} s |",
        f"| wall time of the whole `kidx record` | {before['record wall s']} s | {after['record wall s']} s |",
        f"| detectableChange: median over rows (largest) | {precise_before['median']} ({precise_before['largest']}) | "
        f"{precise_after['median']} ({precise_after['largest']}) |",
        f"| rows whose detectableChange is at most 2 % | {precise_before['rows at most 2%']} | "
        f"{precise_after['rows at most 2%']} |",
    ]:
        assert line in page, line


SPREAD_REPORT = REPO / "bench" / "reports" / "bench_spread-20261207-191856.json"


@pytest.mark.slow
def test_the_spread_figures_are_the_h100_recordings_and_the_pages_copy_them(bench_scale):
    """bench_spread.py, read again from the H100 recordings in tests/data, gives its kept
    report's rows (the t test's shares drawn with a fixed seed), and docs/analysis.md's tables
    show the 19-process recording's median spreads and the 20-process geglu recording's
    spreads with the t test's shares (the fixture puts bench/ on the path)."""
    import bench_spread

    rows = bench_spread.table()
    assert rows == json.loads(SPREAD_REPORT.read_text(encoding="utf-8"))["rows"]
    page = (REPO / "docs" / "analysis.md").read_text(encoding="utf-8")
    assert SPREAD_REPORT.with_suffix(".txt").name in page
    sampled = {row[1]: row[4] for row in rows if row[0] == "steps H100 --min-time 0.3"}
    assert len(sampled) == 6
    for kernel_pass, spread in sampled.items():
        kernel, operation = kernel_pass.split("/")
        assert f"| {kernel} {operation} | {spread} |" in page, kernel_pass
    settled = [row for row in rows if row[0] == "geglu H100 --min-time 1 x20"]
    assert len(settled) == 2
    for row in settled:
        kernel, operation = row[1].split("/")
        assert f"| {kernel} {operation} | {row[4]} | {row[9]} | {row[10]} |" in page, row[1]


def test_the_placement_probe_summary_is_what_its_readme_shows():
    """tests/data/h100-placement/summarise.py, run on the kept timings, prints the table its
    README quotes (and that docs/measuring.md's figures come from)."""
    folder = REPO / "tests" / "data" / "h100-placement"
    done = subprocess.run([sys.executable, str(folder / "summarise.py")], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")
    assert len(done.stdout.splitlines()) == 21
    assert f"```\n{done.stdout}```\n" in (folder / "README.md").read_text(encoding="utf-8")


COMPRESSION_REPORT = REPO / "bench" / "reports" / "bench_object_compression-20261207-164237.json"


def test_the_object_compression_figures_are_the_kept_reports(bench_scale):
    """bench_object_compression.py, run again with its report's arguments, gives its sizes:
    the generator and the stored form of an object are what they were (the fixture puts
    bench/ on the path)."""
    import bench_object_compression

    report = json.loads(COMPRESSION_REPORT.read_text(encoding="utf-8"))
    arguments = report["arguments"]
    found = bench_object_compression.sizes(arguments["runs"], arguments["dictionary_runs"], arguments["seed"])
    exact = ("objects measured", "dictionary bytes", "as stored")
    assert {k: found[k] for k in exact} == {k: report["sizes"][k] for k in exact}
    for compressed in ("zlib level 9", "zlib level 9, preset dictionary"):  # another zlib may pack a little apart
        assert found[compressed] == pytest.approx(report["sizes"][compressed], rel=0.02), compressed
    assert found["zlib level 9, preset dictionary"] < found["zlib level 9"] < found["as stored"]


VERDICTS_REPORT = REPO / "bench" / "reports" / "bench_verdicts-20261207-173257.json"
VARIANTS_REPORT = REPO / "bench" / "reports" / "bench_verdicts-20261207-180305.json"


def _by_kernel(summary: list[list[str]], target: str) -> dict[str, str]:
    """The lines by kernel that follow a target's line in a bench_verdicts summary."""
    start = [row[0] for row in summary].index(target) + 1
    found = {}
    for row in summary[start:]:
        if not row[0].startswith("  ") or row[2] != "(by kernel)":
            break
        found[row[0].strip().split(":")[0]] = row[1]
    found.pop("all but geglu", None)  # n/a where geglu is all there is
    return found


def test_the_geglu_and_calibration_tables_are_the_kept_reports():
    """docs/analysis.md's table of geglu sampled for a second (kidx's figures from the full
    report, the t test's from bench_spread's) and its table of the calibration recording
    under three |t| are the kept reports' figures."""
    page = (REPO / "docs" / "analysis.md").read_text(encoding="utf-8")
    summary = json.loads(VERDICTS_REPORT.read_text(encoding="utf-8"))["summary"]
    source = "geglu H100 --min-time 1 x20"
    five = _by_kernel(summary, f"{source}, 5 a side, fresh store: 2% slowdown slower")
    eight = _by_kernel(summary, f"{source}, 8 a side, >= 25 us, fresh store: 1% slowdown slower")
    spreads = {row[1]: row for row in json.loads(SPREAD_REPORT.read_text(encoding="utf-8"))["rows"]
               if row[0] == source}
    assert sorted(five) == sorted(eight) == sorted(spreads) == ["geglu/backward", "geglu/forward"]
    for kernel_pass, row in spreads.items():
        kernel, operation = kernel_pass.split("/")
        line = f"| {kernel} {operation} | {row[4]} | {row[9]} | {row[10]} | {five[kernel_pass]} | {eight[kernel_pass]} |"
        assert line in page, line

    rows = json.loads(VARIANTS_REPORT.read_text(encoding="utf-8"))["rows"]

    def share(variant: str, store: str, scenario: str, n: int, counts: bool = False) -> str:
        [row] = [r for r in rows if (r["variant"], r["source"], r["store"], r["scenario"]) == (
            variant, "cuda_graph H100 x12", store, scenario)]
        hits, total = row["figures"][str(n)]
        return f"{100 * hits / total:.1f}% ({hits}/{total})" if counts else f"{100 * hits / total:.1f}%"

    variants = ("default", "t3", "t2.5")
    for n in (3, 5):
        cells = " | ".join(f"{share(v, 'fresh', 'aa', n)} / {share(v, 'history', 'aa', n)}" for v in variants)
        assert f"| A/A called faster/slower, {n} a side, fresh / with history | {cells} |" in page, n
    for scenario, title in (("slow-2", "2% slowdown found"), ("slow-1", "1% slowdown found")):
        cells = " | ".join(share(v, "fresh", scenario, 5, counts=True) for v in variants)
        assert f"| {title}, 5 a side, fresh | {cells} |" in page, scenario


FLOORS_REPORT = REPO / "bench" / "reports" / "bench_verdicts-20261207-201931.json"


def test_the_floors_tables_are_the_kept_reports():
    """docs/analysis.md's floors section: its spreads are bench_spread's report, its A/A rows on
    the calibration half and its rows on the test half the variants' report (floors off,
    FLOOR_SHARE 0.5, 0.7 and 1); changing one figure fails this."""
    page = (REPO / "docs" / "analysis.md").read_text(encoding="utf-8")
    section = page[page.index("## Floors: a power-capped GEMM"):page.index("## Is a timing")]
    assert FLOORS_REPORT.with_suffix(".txt").name in section and SPREAD_REPORT.with_suffix(".txt").name in section
    spreads = json.loads(SPREAD_REPORT.read_text(encoding="utf-8"))["rows"]
    shown = [row for row in spreads if f"| {row[0]} | {row[1].replace('/', ' ')} |" in section]
    assert len(shown) == 13
    for row in shown:
        assert f"| {row[0]} | {row[1].replace('/', ' ')} | {row[4]} | {row[7]} | {row[8]} |" in section, row[:2]
    rows = json.loads(FLOORS_REPORT.read_text(encoding="utf-8"))["rows"]

    def share(variant: str, source: str, store: str, scenario: str, n: int) -> str:
        [row] = [r for r in rows if (r["variant"], r["source"], r["store"], r["scenario"]) == (
            variant, source, store, scenario)]
        hits, total = row["figures"][str(n)]
        return f"{100 * hits / total:.1f}% ({hits}/{total})"

    calibration = (("cuda_graph", "H200 cuda_graph (8 processes)", (2, 3)), ("cupti", "H200 cupti (8 processes)", (2, 3)),
                   ("cuda_graph H100 x12", "H100 cuda_graph (12 processes)", (2, 3, 5)))
    for source, title, sides in calibration:
        for store, where in (("fresh", "fresh store"), ("history", "with history")):
            for n in sides:
                cells = " | ".join(share(v, source, store, "aa", n) for v in ("median", "default", "floor07", "floor1"))
                assert f"| {title}, {n} a side, {where} | {cells} |" in section, (source, store, n)
    measures = (("aa", 5, "A/A called faster/slower, 5 a side"), ("aa", 8, "A/A called faster/slower, 8 a side"),
                ("slow-2", 5, "2% slowdown found, 5 a side"), ("slow-1", 8, "1% slowdown found, 8 a side"))
    checked = 0
    for source in ("geglu H100 --min-time 1 x20", "steps H100 --min-time 0.3", "kernel timer H100"):
        for scenario, n, title in measures:
            line = f"| {source} | {title} | "
            if line not in section:
                continue
            cells = " | ".join(share(v, source, "fresh", scenario, n) for v in ("median", "default"))
            assert f"{line}{cells} |" in section, (source, title)
            checked += 1
    assert checked == 10


SERIES_REPORT = REPO / "bench" / "reports" / "bench_series_floors-20261207-203544.json"


def test_the_series_floors_report_is_the_recordings_and_the_page_copies_it(bench_scale):
    """bench_series_floors.py, run again on the H100 recordings, gives its kept report's rows,
    and docs/analysis.md's table of series A/A steps shows them."""
    import bench_series_floors

    rows = bench_series_floors.table()
    assert rows == json.loads(SERIES_REPORT.read_text(encoding="utf-8"))["rows"]
    page = (REPO / "docs" / "analysis.md").read_text(encoding="utf-8")
    assert SERIES_REPORT.with_suffix(".txt").name in page
    by_recording: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        by_recording.setdefault(row[0], {})[row[1]] = row
    assert len(by_recording) == 6
    for recording, rules in by_recording.items():
        off, on = rules["floors off"], rules["floors (default)"]
        assert f"| {recording} | {off[3]} | {on[3]} | {on[4]} of {on[2]} |" in page, recording
