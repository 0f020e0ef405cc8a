"""The repository stands alone: a clone with nothing beside it has every file the tests,
benchmarks and docs use, and no file points outside the repository."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

SCANNED = ("kidx", "tests", "bench", "docs", ".ci", "README.md", "pyproject.toml")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".json", ".txt", ".sh", ""}
# A path that leaves the repository: a sibling folder, an absolute machine path, or code
# that climbs above the repository root.
OUTSIDE = re.compile(r"\.\./shared|/work/|parents\[[2-9]\]|(?:REPO|REPO_ROOT|ROOT)\.parent\b")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: nothing to clone")
    # The clone sits alone in an empty folder, as a user's clone from a public host would.
    target = tmp_path_factory.mktemp("alone") / "kidx"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(target)], check=True)
    assert sorted(p.name for p in target.parent.iterdir()) == ["kidx"]
    return target


def _text_files(root: Path):
    for top in SCANNED:
        path = root / top
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        for file in candidates:
            if file.is_file() and file.suffix in TEXT_SUFFIXES:
                yield file


def test_no_file_names_a_path_outside_the_repository(clone):
    offenders = []
    for file in _text_files(clone):
        if file.name == "test_self_contained.py":
            continue
        for number, line in enumerate(file.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{file.relative_to(clone)}:{number}: {line.strip()}")
    assert offenders == []


def test_every_relative_link_in_the_docs_resolves_inside_the_clone(clone):
    broken = []
    for file in [clone / "README.md", *sorted((clone / "docs").rglob("*.md")), *sorted(clone.rglob("tests/**/README.md"))]:
        for target in MARKDOWN_LINK.findall(file.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            resolved = (file.parent / target).resolve()
            if not resolved.exists() or clone.resolve() not in resolved.parents:
                broken.append(f"{file.relative_to(clone)} -> {target}")
    assert broken == []


def test_the_liger_data_the_tests_use_is_in_the_clone(clone):
    data = clone / "tests" / "data" / "liger"
    expected = [
        "LICENSE",
        "README.md",
        "all_benchmark_data.csv",
        "all_benchmark_data_cutedsl.csv",
        "all_benchmark_data_cutile.csv",
        "history/all_benchmark_data.history.csv",
        "history/all_benchmark_data_cutedsl.history.csv",
        "history/all_benchmark_data_cutile.history.csv",
    ]
    assert all((data / name).is_file() for name in expected)
    assert "BSD 2-CLAUSE LICENSE" in (data / "LICENSE").read_text(encoding="utf-8")
    # bytes unchanged: CRLF line endings survive the clone, and every row is there
    main = (data / "all_benchmark_data.csv").read_bytes()
    assert main.count(b"\r\n") == 2449 and b"\n" not in main.replace(b"\r\n", b"")


@pytest.mark.slow
def test_the_test_suite_collects_in_the_clone(clone):
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert "error" not in completed.stdout.splitlines()[-1].lower()
