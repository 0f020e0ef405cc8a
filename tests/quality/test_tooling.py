"""CI runs what a contributor runs: the README's test command, then the linter, the type
checker and the layer check that the test extras install."""

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


def test_ci_runs_the_readme_test_command_then_ruff_mypy_and_lint_imports():
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "set -euo pipefail" in script  # a lint or type error fails CI
    # as a fresh machine: no pip cache to hide what a new machine downloads, set before any pip runs
    assert script.index("export PIP_NO_CACHE_DIR=1") < next(i for i, line in enumerate(script) if "pip install" in line)
    steps = [line for line in script if line.startswith((".venv/", "python3 "))]
    assert steps == [_readme_test_command(), ".venv/bin/ruff check kidx tests bench", ".venv/bin/mypy",
                     ".venv/bin/lint-imports"]


def test_the_test_extras_install_the_linter_the_type_checker_and_the_layer_check():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    test_extra = project["project"]["optional-dependencies"]["test"]
    assert {re.split(r"[<>=]", requirement)[0] for requirement in test_extra} >= {"ruff", "mypy", "import-linter"}
    assert project["tool"]["mypy"]["files"] == ["kidx"]


def _contract(containers: list[str]) -> dict:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = [c for c in project["tool"]["importlinter"]["contracts"]
                 if c["type"] == "layers" and c["containers"] == containers]
    return layers


def _design_tables() -> list[list[str]]:
    """The tables of docs/design.md §7, each as its rows (the header and rule left out)."""
    design = (REPO / "docs" / "design.md").read_text(encoding="utf-8").split("## 7. Code layout", 1)[1]
    design = design.split("\n## ", 1)[0]
    tables: list[list[str]] = []
    previous = ""
    for line in design.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append(line)
        previous = line
    return [table[2:] for table in tables]


def _in_contract(layers: dict) -> list[str]:
    return [name.strip(" ()") for layer in layers["layers"] for name in layer.split("|")]


def test_the_layer_contract_names_every_top_level_package_the_design_lists():
    """docs/design.md §7's table and the contract in pyproject.toml name the same packages,
    in the same order, and every package of kidx/ has its place in both."""
    in_contract = _in_contract(_contract(["kidx"]))
    rows = [re.split(r"(?<!\\)\|", line)[1] for line in _design_tables()[0]]
    in_design = [name.strip(" `/").removesuffix(".py") for row in rows for name in re.findall(r"`[^`]+`", row)]
    assert in_design == in_contract
    packages = {path.name.removesuffix(".py") for path in (REPO / "kidx").iterdir()
                if (path.is_dir() and (path / "__init__.py").exists()) or path.suffix == ".py"}
    assert packages - {"__init__"} <= set(in_contract), "a package of kidx/ without a place in the layers"


def test_the_operations_contract_names_every_family_the_design_lists():
    """The families of kidx.operations: design.md §7's table of them and the contract inside
    kidx.operations name the same ones, in the same order, and every module of
    kidx/operations is in a family (or the contract's bottom row)."""
    in_contract = _in_contract(_contract(["kidx.operations"]))
    assert in_contract == ["analyse", "ingest", "export", "select", "maintain", "reporting", "events"]
    first_cells = [line.split("|")[1].strip() for line in _design_tables()[1]]
    assert [cell.strip("`").removeprefix("operations/").strip("/").removesuffix(".py")
            for cell in first_cells] == in_contract
    operations = REPO / "kidx" / "operations"
    found = {path.name.removesuffix(".py") for path in operations.iterdir()
             if (path.is_dir() and (path / "__init__.py").exists()) or path.suffix == ".py"}
    assert found - {"__init__"} == set(in_contract)
