"""The lower bounds declared in pyproject.toml really work.

A fresh virtual environment gets kidx with every runtime dependency pinned to its declared
lower bound (``name>=X`` becomes the constraint ``name==X``), and the installed ``kidx``
command then prints its version, applies the seed bundle, lists it, reads YAML, refuses an
invalid document, and reports a usage error the way the parser of the oldest supported
typer raises it. Needs PyPI (or the configured index);
pip's own cache keeps repeated runs cheap.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import REPO, SEED_BUNDLE, SEED_RUN_NAME

INSTALL_TIMEOUT = 600
# the user's pip cache, read before the tests move XDG_CACHE_HOME into a temporary folder
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip"
)
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*?)\s*(?:;.*)?$")


def lower_bounds() -> dict[str, str]:
    """Each runtime dependency's declared lower bound: {"typer": "0.24", ...}."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    bounds = {}
    for requirement in project["dependencies"]:
        match = REQUIREMENT.match(requirement)
        assert match, requirement
        name, specifiers = match.groups()
        lower = [spec[2:].strip() for spec in specifiers.split(",") if spec.strip().startswith(">=")]
        assert len(lower) == 1, f"{requirement!r} must declare exactly one lower bound (>=)"
        bounds[name] = lower[0]
    return bounds


def test_every_dependency_has_a_lower_bound():
    assert set(lower_bounds()) == {"typer", "ruamel.yaml", "jsonschema", "rich", "platformdirs"}


def _run(command: list[str], what: str, **options) -> subprocess.CompletedProcess:
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, **options)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{what} took more than {INSTALL_TIMEOUT} s (is the package index reachable?)") from None
    assert completed.returncode == 0, f"{what} failed ({completed.returncode}):\n{completed.stderr[-3000:]}"
    return completed


@pytest.mark.slow
def test_kidx_runs_with_the_declared_lower_bounds(tmp_path):
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in lower_bounds().items()))
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], "creating a virtual environment")
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    environment = {**os.environ, "PIP_CACHE_DIR": PIP_CACHE, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    environment.pop("PYTHONPATH", None)
    _run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--no-compile", "-c", str(constraints), str(REPO)],
        "pip install kidx with the lower bounds pinned", env=environment,
    )
    listed = _run([str(bin_dir / "python"), "-m", "pip", "list", "--format=freeze"], "pip list", env=environment)
    installed = {line.split("==")[0].lower().replace("_", "-"): line.split("==")[1]
                 for line in listed.stdout.splitlines() if "==" in line}
    for name, version in lower_bounds().items():
        assert installed[name.lower().replace("_", "-")] == version, (name, installed)

    kidx = str(bin_dir / "kidx")
    store = str(tmp_path / "store")
    environment = {**environment, "KIDX_NO_CACHE": "1", "NO_COLOR": "1"}
    version = _run([kidx, "version"], "kidx version", cwd=tmp_path, env=environment)
    assert version.stdout.startswith("kidx ") and version.stderr == "", version
    applied = _run([kidx, "apply", "-f", str(SEED_BUNDLE), "--store", store], "kidx apply", cwd=tmp_path, env=environment)
    assert applied.stdout.count(" created\n") == 3, applied.stdout
    listing = _run([kidx, "get", "runs", "--store", store], "kidx get runs", cwd=tmp_path, env=environment)
    assert listing.stdout.splitlines()[0].startswith("NAME"), listing.stdout
    assert listing.stdout.splitlines()[1].startswith(SEED_RUN_NAME), listing.stdout
    # YAML through ruamel.yaml's C parser (no warning), and a document jsonschema explains
    as_yaml = _run([kidx, "get", "runs", "-o", "yaml", "--store", store], "kidx get -o yaml", cwd=tmp_path, env=environment)
    (tmp_path / "runs.yaml").write_text(as_yaml.stdout, encoding="utf-8")
    reapplied = _run([kidx, "apply", "-f", "runs.yaml", "--store", store], "kidx apply -f runs.yaml", cwd=tmp_path,
                     env=environment)
    assert reapplied.stdout.endswith(" unchanged\n") and "C parser" not in reapplied.stderr, reapplied
    (tmp_path / "bad.yaml").write_text(
        re.sub(r"observedAt: .*", "observedAt: 2025-13-99T99:99:99Z", as_yaml.stdout), encoding="utf-8"
    )
    refused = subprocess.run([kidx, "apply", "-f", "bad.yaml", "--store", store], capture_output=True, text=True,
                             timeout=60, cwd=tmp_path, env=environment)
    assert refused.returncode == 1, refused
    assert """spec.observedAt: Invalid value: "2025-13-99T99:99:99Z" is not a 'date-time'""" in refused.stderr
    # the parser's own errors go through typer's classes, which differ between typer versions
    wrong = subprocess.run([kidx, "get", "runs", "--no-such-flag", "--store", store], capture_output=True,
                           text=True, timeout=60, cwd=tmp_path, env=environment)
    assert (wrong.returncode, wrong.stdout) == (1, "")
    assert wrong.stderr == "error: unknown flag: --no-such-flag\nSee 'kidx get --help' for usage.\n"
