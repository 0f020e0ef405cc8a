"""The API version is defined once, in kidx.kinds.metadata: no other module of kidx spells
it in its code (a docstring may name it)."""

from __future__ import annotations

import ast

from conftest import REPO

from kidx.kinds.metadata import API_VERSION

KIDX = REPO / "kidx"


def spelled_in_code(path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value) for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "kernelindex.dev/v1" in node.value
            and id(node) not in docstrings]


def test_the_api_version_is_spelled_only_where_it_is_defined():
    assert API_VERSION == "kernelindex.dev/v1alpha1"
    found = {str(path.relative_to(REPO)): lines for path in sorted(KIDX.rglob("*.py"))
             if path.parent != KIDX / "kinds" and (lines := spelled_in_code(path))}
    assert found == {}


def test_the_check_finds_a_literal(tmp_path):
    path = tmp_path / "module.py"
    path.write_text('"""Writes kernelindex.dev/v1alpha1 bodies."""\nBODY = {"apiVersion": "kernelindex.dev/v1alpha1"}\n')
    assert spelled_in_code(path) == [2]
