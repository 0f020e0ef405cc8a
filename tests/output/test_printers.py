"""The printer table (kidx/output/printers.py): every row of a command that prints through
a renderer table names one of its renderers, and every renderer is named by a row."""

from __future__ import annotations

import pytest

from kidx.output import analysis_printing, listing
from kidx.output.printers import PRINTERS

RENDERED = {"get": listing.RENDERERS, "compare": analysis_printing.RENDERERS, "series": analysis_printing.RENDERERS}


@pytest.mark.parametrize("command", sorted(RENDERED))
def test_every_row_names_a_renderer(command):
    printer = PRINTERS[command]
    rows = [*printer.formats, *([printer.default] if printer.default else [])]
    renderers = RENDERED[command]
    assert [row.value for row in rows if row.render not in renderers] == []
    assert {row.render for row in rows} == set(renderers), "a renderer no row names"
    assert all(callable(renderer) for renderer in renderers.values())


def test_rows_of_other_commands_name_no_renderer():
    """A renderer named where no printing module reads it would never print."""
    named = {command: [row.value for row in printer.formats if row.render]
             for command, printer in PRINTERS.items() if command not in RENDERED}
    assert named == {command: [] for command in named}


def test_listing_renderers_are_the_modules_functions():
    assert {name: renderer.__name__ for name, renderer in listing.RENDERERS.items()} == {
        "tables": "render_tables", "delimited": "render_delimited", "names": "render_names",
        "documents": "render_documents", "jsonpath": "render_jsonpath", "custom_columns": "render_custom_columns"}
