"""``-o custom-columns=SPEC`` and ``-o custom-columns-file=FILE``, as kubectl reads them.

SPEC is ``HEADER:PATH[,HEADER:PATH…]``; each PATH is "relaxed" (``metadata.name``,
``.metadata.name``, ``{metadata.name}`` and ``{.metadata.name}`` all mean
``{.metadata.name}``) and is then a JSONPath (see ``kidx.output.jsonpath``). A cell shows
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

import re
from functools import lru_cache
from typing import Any, Sequence

from kidx.errors import UsageError
from kidx.output.jsonpath import JSONPath, format_value

__all__ = [
    "CustomColumnsError",
    "compile_relaxed",
    "custom_column_cells",
    "parse_custom_columns",
    "parse_custom_columns_file",
    "raw_custom_column_cells",
    "relaxed_path",
    "split_outside_brackets",
]

NONE_CELL = "<none>"

# kubectl's RelaxedJSONPathExpression pattern, anchored with fullmatch (Python's ``$``
# would also match before a trailing newline, Go's does not).
_RELAXED = re.compile(r"\{\.?([^{}]+)\}|\.?([^{}]+)")
_RELAXED_ERROR = ("unexpected path string, expected a 'name1.name2' or '.name1.name2' "
                  "or '{name1.name2}' or '{.name1.name2}'")
_FILE_FORMAT = ("Expected format is one line of space separated headers, "
                "one line of space separated column specs.")


class CustomColumnsError(UsageError):
    """A custom-columns spec or file that kubectl would also reject."""


def relaxed_path(text: str) -> str:
    """Normalise a relaxed path to its ``{.…}`` form (kubectl's RelaxedJSONPathExpression).

    ``""`` stays ``""`` (a column that always shows ``<none>``). A path that starts with
    ``$`` or ``@`` keeps it (``{$.a}``) instead of becoming kubectl's ``{.$.a}``, which
    finds nothing there.
    """
    if not text:
        return text
    match = _RELAXED.fullmatch(text)
    if match is None:
        raise CustomColumnsError(_RELAXED_ERROR)
    spec = match.group(1) if match.group(1) is not None else match.group(2)
    if spec.startswith(("$", "@")):
        return "{" + spec + "}"
    return "{." + spec + "}"


@lru_cache(maxsize=256)
def compile_relaxed(normalised: str) -> JSONPath | None:
    """Compile a path returned by :func:`relaxed_path`; ``None`` for the empty path.

    Parse errors name the ``{.…}`` form, as kubectl's do.
    """
    if not normalised:
        return None
    return JSONPath.parse(normalised[1:-1], display=normalised)


def split_outside_brackets(text: str, sep: str = ",") -> list[str]:
    """Split ``text`` at ``sep`` except inside ``[…]`` (and quoted strings within), or
    where ``sep`` is escaped with a backslash."""
    parts: list[str] = []
    start = depth = 0
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if quote:
            if ch == quote:
                quote = None
        elif ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
        elif depth and ch in "'\"":
            quote = ch
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _column(header: str, spec: str) -> tuple[str, str]:
    path = relaxed_path(spec)
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
    return [_column(header, spec) for header, spec in zip(headers, specs)]


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
