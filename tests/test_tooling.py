"""CI runs what a contributor runs: the README's test command, then the linter and the type
checker that the test extras install."""

from __future__ import annotations

import re
import tomllib

from conftest import REPO


def _readme_test_command() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", setup, re.S)
    assert len(commands) == 2, commands  # install and run; install the tests and run them
    return commands[1]


def test_ci_runs_the_readme_test_command_then_ruff_and_mypy():
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "set -euo pipefail" in script  # a lint or type error fails CI
    steps = [line for line in script if line.startswith((".venv/", "python3 "))]
    assert steps == [_readme_test_command(), ".venv/bin/ruff check kidx tests bench", ".venv/bin/mypy"]


def test_the_test_extras_install_the_linter_and_the_type_checker():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    test_extra = project["project"]["optional-dependencies"]["test"]
    assert {re.split(r"[<>=]", requirement)[0] for requirement in test_extra} >= {"ruff", "mypy"}
    assert project["tool"]["mypy"]["files"] == ["kidx"]
