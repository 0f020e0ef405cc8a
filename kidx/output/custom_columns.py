"""``-o custom-columns=SPEC`` and ``-o custom-columns-file=FILE``, as kubectl reads them.

SPEC is ``HEADER:PATH[,HEADER:PATH…]``; each PATH is "relaxed" (``metadata.name``,
``.metadata.name``, ``{metadata.name}`` and ``{.metadata.name}`` all mean
``{.metadata.name}``) and is then a JSONPath (see ``kidx.jsonpath``). A cell shows
every value the path finds, printed as ``-o jsonpath`` prints values, joined by ``,``;
``<none>`` when nothing is found. As in kubectl, ESC in a value shows as ``^[`` and a
carriage return as ``\\r``; a value that cannot be followed (``[5]`` of a shorter list)
is an error. Error texts are kubectl's. One deliberate difference: text after a line
feed becomes ``...`` (kubectl prints the raw line break), so every object stays on one
line for ``wc -l``, ``grep`` and ``awk``.

Where kidx does better than kubectl (kubectl splits SPEC at every comma, so a path can
never contain one, kubernetes/kubernetes#82950 and §11 of the conventions): commas inside
``[…]`` (and in quoted strings there) or escaped as ``\\,`` do not split columns, so
``PORTS:.spec.ports[0,1].port`` and ``X:.a[?(@.n=="a,b")].v`` work. Every SPEC kubectl
accepts is read the same way. Whitespace around a column, its header and its path is
ignored (kubectl would make it part of the header).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kidx.errors import UsageError
from kidx.jsonpath import RelaxedPathError, compile_relaxed, format_value, relaxed_path, split_outside_brackets

__all__ = [
    "CustomColumnsError",
    "custom_column_cells",
    "parse_custom_columns",
    "parse_custom_columns_file",
    "raw_custom_column_cells",
]

NONE_CELL = "<none>"

_FILE_FORMAT = ("Expected format is one line of space separated headers, "
                "one line of space separated column specs.")


class CustomColumnsError(UsageError):
    """A custom-columns spec or file that kubectl would also reject."""


def _column(header: str, spec: str) -> tuple[str, str]:
    try:
        path = relaxed_path(spec)
    except RelaxedPathError as exc:
        raise CustomColumnsError(str(exc)) from None
    compile_relaxed(path)  # report a bad path now, before anything is printed
    return header, path


def parse_custom_columns(spec: str) -> list[tuple[str, str]]:
    """``HEADER:PATH,…`` → ``[(header, "{.normalised.path}"), …]``."""
    if not spec.strip():
        raise CustomColumnsError("custom-columns format specified but no custom columns given")
    columns = []
    for raw in split_outside_brackets(spec):
        part = raw.strip()
        header, colon, path = part.partition(":")
        if not colon:
            raise CustomColumnsError(
                f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
        columns.append(_column(header.strip(), path.strip()))
    return columns


def parse_custom_columns_file(text: str) -> list[tuple[str, str]]:
    """A custom-columns file: line 1 headers, line 2 paths, both whitespace-separated;
    further lines are ignored (as kubectl does)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":  # a final newline ends a line, it does not start one
        lines.pop()
    lines = [line.removesuffix("\r") for line in lines]
    if not lines:
        raise CustomColumnsError(f"invalid template, missing header line. {_FILE_FORMAT}")
    if len(lines) < 2:
        raise CustomColumnsError(f"invalid template, missing spec line. {_FILE_FORMAT}")
    headers, specs = lines[0].split(), lines[1].split()
    if len(headers) != len(specs):
        raise CustomColumnsError(
            f"number of headers ({len(headers)}) and field specifications ({len(specs)}) don't match")
    return [_column(header, spec) for header, spec in zip(headers, specs, strict=True)]


def custom_column_cells(columns: Sequence[tuple[str, str]], obj: Any) -> list[str]:
    """One table row: for each column every value found, joined by ``,``, or ``<none>``."""
    cells = []
    for _, path in columns:
        compiled = compile_relaxed(path)
        values = compiled.find(obj) if compiled is not None else []
        cells.append(",".join(escape_terminal(format_value(v)) for v in values) if values else NONE_CELL)
    return cells


def raw_custom_column_cells(columns: Sequence[tuple[str, str]], obj: Any) -> list[str]:
    """One row for ``-o csv=SPEC``: as :func:`custom_column_cells`, but empty when nothing
    is found (a delimited file has no ``<none>``)."""
    cells = []
    for _, path in columns:
        compiled = compile_relaxed(path)
        values = compiled.find(obj) if compiled is not None else []
        cells.append(",".join(format_value(v) for v in values))
    return cells


def escape_terminal(text: str) -> str:
    """kubectl's escaping of custom-column values: ESC shows as ``^[`` and a carriage
    return as ``\\r``, so a value can neither drive the terminal nor overwrite its row."""
    if text.isprintable():
        return text
    return text.replace("\x1b", "^[").replace("\r", "\\r")
