"""The fast path: ``get`` and ``describe`` with simple arguments, read without typer.

Importing typer (and the click it carries) is a large part of an everyday command's
start. When the arguments are ones this module reads exactly as the parser
would (positional words and the commands' own options, each spelled in full, as
``--opt VALUE``, ``--opt=VALUE`` or ``-o VALUE``/``-oVALUE``), the command's body
(``cli/everyday.py``) is called directly. Anything else — ``--help``, ``--``, an option
unknown here, a flag given a value, a value missing or not a plain number where one is
needed — goes to typer, so help, completion and the parser's errors are typer's, byte
for byte.
"""

from __future__ import annotations

from collections.abc import Callable

from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

VALUE, LIST, FLAG, COUNT = "value", "list", "flag", "count"

# option spelling -> (parameter of the command's body, what it takes)
_GET = {
    "-o": ("output_format", VALUE), "--output": ("output_format", VALUE),
    "-l": ("selector", VALUE), "--selector": ("selector", VALUE),
    "--field-selector": ("field_selector", VALUE),
    "--show-labels": ("show_labels", FLAG),
    "-L": ("label_columns", LIST), "--label-columns": ("label_columns", LIST),
    "--no-headers": ("no_headers", FLAG),
    "--show-kind": ("show_kind", FLAG),
    "--sort-by": ("sort_by", VALUE),
    "--ignore-not-found": ("ignore_not_found", FLAG),
    "--references": ("references", LIST),
    "--limit": ("limit", COUNT),
    "--store": ("store", VALUE),
}
_DESCRIBE = {
    "-l": ("selector", VALUE), "--selector": ("selector", VALUE),
    "--store": ("store", VALUE),
}
_OPTIONS = {"get": _GET, "describe": _DESCRIBE}


def parse(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``(command, keyword arguments of its body)``, or None for typer to read ``argv``
    (already normalised as ``cli.app`` does)."""
    if not argv or argv[0] not in _OPTIONS:
        return None
    options = _OPTIONS[argv[0]]
    values: dict[str, Any] = {}
    positional: list[str] = []
    words = argv[1:]
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word in ("-h", "--help", "--"):
            return None
        if word == "-" or not word.startswith("-"):
            positional.append(word)
            continue
        name, equals, value = word.partition("=") if word.startswith("--") else (word[:2], "", word[2:])
        if name not in options:
            return None
        parameter, takes = options[name]
        attached = bool(equals) or (not word.startswith("--") and bool(value))
        if takes == FLAG:
            if attached:
                return None  # the parser's error: a flag takes no value
            values[parameter] = True
            continue
        if not attached:
            if i >= len(words):
                return None  # the parser's error: the value is missing
            value = words[i]
            i += 1
        if takes == LIST:
            values.setdefault(parameter, []).append(value)
        elif takes == COUNT:
            if not (value.isascii() and value.isdigit()):  # [0-9]+, without compiling a pattern
                return None  # the parser checks it, in its words
            values[parameter] = int(value)
        else:
            values[parameter] = value
    values["arguments"] = positional or None
    return argv[0], values


def body(command: str) -> Callable[..., int]:
    from kidx.cli import everyday

    return everyday.run_get if command == "get" else everyday.run_describe
