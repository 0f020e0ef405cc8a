"""The ``-o`` values ``get`` understands, parsed once into an OutputFormat."""

from __future__ import annotations

from typing import NamedTuple

from kidx.errors import UsageError

SIMPLE = ("csv", "json", "name", "tsv", "wide", "yaml")
# csv=SPEC and tsv=SPEC take a custom-columns spec
WITH_ARGUMENT = ("csv", "custom-columns", "custom-columns-file", "jsonpath", "jsonpath-file", "tsv")
ALLOWED = sorted(set(SIMPLE + WITH_ARGUMENT))


class OutputFormat(NamedTuple):
    kind: str  # table, wide, name, yaml, json, jsonpath, custom-columns, csv, tsv
    argument: str | None = None

    @property
    def is_table(self) -> bool:
        return self.kind in ("table", "wide")

    @property
    def is_delimited(self) -> bool:
        """csv or tsv: the table's columns (or a custom-columns spec) with raw values."""
        return self.kind in ("csv", "tsv")


def parse_output_format(value: str | None) -> OutputFormat:
    if value is None or value == "":
        return OutputFormat("table")
    name, equals, argument = value.partition("=")
    if name in SIMPLE and not equals:
        return OutputFormat(name)
    if name in WITH_ARGUMENT and equals:
        if name == "jsonpath-file":
            return OutputFormat("jsonpath", _read(argument))
        if name == "custom-columns-file":
            return OutputFormat("custom-columns-file", _read(argument))
        if name in ("csv", "tsv") and not argument:
            raise UsageError(f"{name} format specified with '=' but no custom columns given")
        if not argument:
            what = "template" if name == "jsonpath" else "custom columns"
            raise UsageError(f"{'template format' if name == 'jsonpath' else 'custom-columns format'} specified but no {what} given")
        return OutputFormat(name, argument)
    raise UsageError(
        f'unable to match a printer suitable for the output format "{value}", allowed formats are: '
        + ",".join(ALLOWED)
    )


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"error reading {path}: {exc.strerror}") from None
