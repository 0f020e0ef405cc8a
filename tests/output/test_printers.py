"""The printer table (kidx/output/printers.py): every row of a command that prints through
a renderer table names one of its renderers, and every renderer is named by a row."""

from __future__ import annotations

import pytest

from kidx import errors as kidx_errors
from kidx.output import analysis_printing, listing, reports, summary, to_printer
from kidx.output.printers import PRINTERS

RENDERED = {"get": listing.RENDERERS, "compare": analysis_printing.RENDERERS, "series": analysis_printing.RENDERERS,
            "fsck": reports.FSCK, "summary": summary.RENDERERS}
# the commands that print through a family of kidx.output.to_printer
FAMILIES = ("apply", "delete", "import", "import bundle", "record", "env capture", "history", "version")


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
             for command, printer in PRINTERS.items() if command not in RENDERED and command not in FAMILIES}
    assert named == {command: [] for command in named}


def test_listing_renderers_are_the_modules_functions():
    assert {name: renderer.__name__ for name, renderer in listing.RENDERERS.items()} == {
        "tables": "render_tables", "delimited": "render_delimited", "names": "render_names",
        "documents": "render_documents", "jsonpath": "render_jsonpath", "custom_columns": "render_custom_columns"}


@pytest.mark.parametrize("command", FAMILIES)
def test_every_row_of_a_family_names_its_renderer(command):
    printer = PRINTERS[command]
    rows = [*printer.formats, *([printer.default] if printer.default else [])]
    assert [row.value for row in rows if row.render not in to_printer.RENDERERS] == []


def test_every_family_renderer_is_named_by_a_row():
    named = {row.render for command in FAMILIES for row in (*PRINTERS[command].formats, PRINTERS[command].default) if row}
    assert named == set(to_printer.RENDERERS)


def test_to_printer_gives_the_rows_renderer():
    assert to_printer.to_printer("delete", "name").render is to_printer.render_names
    assert to_printer.to_printer("delete", None).render is to_printer.render_lines
    assert to_printer.to_printer("import", "yaml").prints_manifests
    assert not to_printer.to_printer("import", "name").prints_manifests
    lines = [to_printer.NamedLine("kind/a", "kind/a created")]
    assert to_printer.to_printer("apply", "name").render(lines) == "kind/a\n"
    assert to_printer.to_printer("apply", None).render(lines) == "kind/a created\n"
    with pytest.raises(kidx_errors.UsageError, match='output format "yaml", allowed formats are: name'):
        to_printer.to_printer("delete", "yaml")
