"""docs/api.md's worked example runs: each python block, in order and in one namespace,
against a store holding the Liger data, prints exactly the text block that follows it."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from conftest import REPO

PAGE = REPO / "docs" / "api.md"
BLOCK = re.compile(r"```(python|text)\n(.*?)```", re.S)


def examples() -> list[tuple[str, str | None]]:
    """(code, the output shown after it, or None) for every python block of the page."""
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8").split("<!-- reference:", 1)[0])
    found: list[tuple[str, str | None]] = []
    for position, (kind, text) in enumerate(blocks):
        if kind == "python":
            following = blocks[position + 1] if position + 1 < len(blocks) else None
            found.append((text, following[1] if following and following[0] == "text" else None))
    return found


def test_the_page_has_examples_with_outputs():
    assert len(examples()) == 6 and all(output for _, output in examples())


def test_worked_example_prints_what_the_page_shows(head_store, monkeypatch):
    pytest.importorskip("pandas")
    monkeypatch.setenv("KIDX_STORE", str(head_store))
    monkeypatch.chdir(REPO)
    namespace: dict = {"__name__": "api_example"}
    for number, (code, shown) in enumerate(examples(), 1):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"docs/api.md example {number}", "exec"), namespace)
        assert printed.getvalue() == shown, f"example {number}"
