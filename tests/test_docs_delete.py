"""docs/commands/delete.md shows a session: its commands, run in order on the store it
describes, print what it shows (timestamps aside)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

DOC = REPO / "docs" / "commands" / "delete.md"
CUTEDSL = REPO / "tests" / "data" / "liger" / "all_benchmark_data_cutedsl.csv"
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _session(text: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
    return steps


def test_delete_page_session_is_real(tmp_path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    shutil.copy(CUTEDSL, tmp_path / CUTEDSL.name)
    environment = {**os.environ, "KIDX_STORE": str(tmp_path / "store"), "NO_COLOR": "1",
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}

    def shell(command: str) -> subprocess.CompletedProcess:
        return subprocess.run([bash, "-c", command], capture_output=True, text=True, env=environment, cwd=REPO)

    assert shell("kidx apply -f docs/examples/seed-bundle.json").returncode == 0
    assert shell(f"kidx import liger {tmp_path / CUTEDSL.name}").returncode == 0
    steps = _session(DOC.read_text(encoding="utf-8"))
    assert len(steps) >= 14
    for command, shown in steps:
        done = shell(command)
        out = [TIME.sub("<time>", line) for line in done.stdout.splitlines()]
        err = [TIME.sub("<time>", line) for line in done.stderr.splitlines()]
        expected = [TIME.sub("<time>", line) for line in shown]
        assert sorted(out + err) == sorted(expected), command
        assert [line for line in expected if line in out] == out, command  # standard output in its order
