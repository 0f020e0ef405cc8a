"""Printing an analysis result (compare's, series'): the renderers the printer table's
``compare`` and ``series`` rows name, each taking the result, its ``AnalysisPrinter``
(what the result's own module renders it with) and the ``-o`` format."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kidx.output.printers import PRINTERS, Format
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kidx.output.gateway import Output


class AnalysisPrinter(NamedTuple):
    """How one kind of analysis result is shown (``output/comparison.py``'s COMPARISON,
    ``output/series.py``'s SERIES)."""

    table: Callable[[Any, bool], str]  # the table, wide or not
    notices: Callable[[Any, str], list[str]]  # stderr lines, given the table's text
    document: Callable[[Any], dict]  # json and yaml
    fields: Sequence[str]  # csv and tsv: the header
    rows: Callable[[Any], list]  # and the rows
    markdown: Callable[[Any], str]


class Printed(NamedTuple):
    text: str  # standard output
    notices: Sequence[str] = ()  # standard error, one line each


def render_table(result: Any, printer: AnalysisPrinter, fmt: Format) -> Printed:
    """The table (with the speed-of-light columns where the format shows them), with its notices."""
    text = printer.table(result, bool(fmt.shows))
    return Printed(text, printer.notices(result, text))


def render_json(result: Any, printer: AnalysisPrinter, fmt: Format) -> Printed:
    from kidx.output.serialize import to_json

    return Printed(to_json(printer.document(result)))


def render_yaml(result: Any, printer: AnalysisPrinter, fmt: Format) -> Printed:
    from kidx.output.serialize import to_yaml

    return Printed(to_yaml(printer.document(result)))


def render_delimited(result: Any, printer: AnalysisPrinter, fmt: Format) -> Printed:
    from kidx.output.delimited import render_delimited as delimited

    return Printed(delimited(fmt.name, printer.fields, printer.rows(result)))


def render_markdown(result: Any, printer: AnalysisPrinter, fmt: Format) -> Printed:
    return Printed(printer.markdown(result))


# the renderers by the name the printer table's rows give them (test_printers.py holds the
# two equal)
RENDERERS: dict[str, Callable[[Any, AnalysisPrinter, Format], Printed]] = {
    "table": render_table, "json": render_json, "yaml": render_yaml, "delimited": render_delimited,
    "markdown": render_markdown,
}


def print_analysis(out: Output, command: str, result: Any, fmt: str, printer: AnalysisPrinter) -> None:
    """``result`` of ``command`` (compare, series) in the ``-o`` format ``fmt`` (checked)."""
    found = PRINTERS[command].find(fmt, False)
    assert found is not None, fmt  # check_output let only the table's formats through
    printed = RENDERERS[found.render](result, printer, found)
    out.data(printed.text)
    for note in printed.notices:
        out.notice(note)
