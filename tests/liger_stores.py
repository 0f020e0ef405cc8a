"""Stores holding the Liger data, imported once per test session and only read by tests.

``head``: the three CSVs at HEAD; ``history``: every distinct row of their git history.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from conftest import LIGER_DATA, LIGER_HISTORY


def _import(root: Path, files: list[Path]) -> Path:
    from kidx.cli.app import run

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = run(["import", "liger", *map(str, files), "--store", str(root)])
    assert code == 0, err.getvalue()
    return root


@pytest.fixture(scope="session")
def head_store(tmp_path_factory) -> Path:
    return _import(tmp_path_factory.mktemp("liger-head") / "store", sorted(LIGER_DATA.glob("all_benchmark_data*.csv")))


@pytest.fixture(scope="session")
def history_store(tmp_path_factory) -> Path:
    return _import(tmp_path_factory.mktemp("liger-history") / "store", sorted(LIGER_HISTORY.glob("*.history.csv")))
