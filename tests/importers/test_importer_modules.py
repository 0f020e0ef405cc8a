"""What holds for every module of kidx.importers: its size."""

from __future__ import annotations

import pytest
from conftest import REPO

MODULES = sorted((REPO / "kidx" / "importers").glob("*.py"))
LIMIT = 700


def test_there_are_modules_to_check():
    assert {"framework.py", "liger.py", "bmf.py"} <= {path.name for path in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_no_module_is_over_700_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= LIMIT, f"{path.name} has {lines} lines; split it (at most {LIMIT})"
