"""The verdict words are defined once, in kidx.analysis.significance: no other module of
kidx spells one in its code (a docstring may name it), and every ordering of them there
covers every verdict."""

from __future__ import annotations

import ast

from conftest import REPO

from kidx.analysis import significance
from kidx.analysis.significance import (
    BASELINE,
    REGRESSIONS,
    SEVERITY,
    SUMMARY_ORDER,
    UNDECIDED,
    UNKNOWN_DIRECTION,
    VERDICTS,
)

KIDX = REPO / "kidx"
WORDS = frozenset(VERDICTS)  # (not BASELINE: "baseline" is also a flag, a key and a kind of file)
# modules allowed to spell a verdict word, and which (none: add one only with a reason)
KNOWN: dict[str, list[str]] = {}


def spelled_in_code(path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value) for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in WORDS
                  and id(node) not in docstrings)


def test_the_verdict_words_are_spelled_only_where_they_are_defined():
    found = {}
    for path in sorted(KIDX.rglob("*.py")):
        name = str(path.relative_to(REPO))
        if path == KIDX / "analysis" / "significance.py":
            continue
        words = [word for _, word in spelled_in_code(path)]
        if words:
            found[name] = words
    assert found == KNOWN


def test_the_check_finds_a_literal(tmp_path):
    path = tmp_path / "module.py"
    path.write_text('"""Counts slower rows."""\nREGRESSED = [r for r in rows if r.verdict == "slower"]\n'
                    'UNKNOWN = "direction-unknown"\n')
    assert spelled_in_code(path) == [(2, "slower"), (3, "direction-unknown")]


def test_every_ordering_covers_every_verdict():
    assert sorted(SEVERITY) == sorted(VERDICTS) and len(SEVERITY) == len(VERDICTS)
    assert SEVERITY[-1] == UNKNOWN_DIRECTION  # no direction: read after every better or worse
    # the summary counts every verdict, direction-unknown only where it occurs
    assert sorted([*SUMMARY_ORDER, UNKNOWN_DIRECTION]) == sorted(VERDICTS)
    assert REGRESSIONS | UNDECIDED <= set(VERDICTS)
    assert BASELINE not in VERDICTS
    assert significance.SLOWER in REGRESSIONS and not REGRESSIONS & UNDECIDED
