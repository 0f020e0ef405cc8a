"""kidx history TYPE NAME [--revision N -o yaml|json]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import kind_registry, open_store, output
from kidx.cli.options import StoreOption
from kidx.errors import UsageError
from kidx.output.printers import output_help
from kidx.output.to_printer import to_printer


def history(
    arguments: Annotated[list[str], typer.Argument(help="TYPE NAME or TYPE/NAME", show_default=False)],
    revision: Annotated[
        int | None,
        typer.Option("--revision", help="Print this revision's manifest instead of the list.", min=1),
    ] = None,
    output_format: Annotated[
        str | None,
        typer.Option("--output", "-o", help=output_help("history")),
    ] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers", help="Omit the header row.")] = False,
    store: StoreOption = None,
) -> None:
    """List every stored revision of a name (nothing applied is ever lost), or print one.

    Deleted names keep their history: a deletion is a revision too.
    """
    from kidx.operations.maintain.history import history as revisions_of
    from kidx.operations.maintain.history import revision_manifest
    from kidx.output.reports import history_table
    from kidx.query.targets import parse_targets

    targets = parse_targets(arguments, kind_registry(), "show the history of")
    if len(targets) != 1 or not targets[0].names or len(targets[0].names) != 1:
        raise UsageError("history needs exactly one object: TYPE NAME or TYPE/NAME")
    info, name = targets[0].info, targets[0].names[0]
    the_store = open_store(store, must_exist=True)
    out = output()
    if revision is not None:
        printing = to_printer("history", output_format)
        out.data(printing.render(revision_manifest(the_store, info, name, revision)))
        return
    if output_format is not None:
        raise UsageError("-o needs --revision")
    out.data(history_table(revisions_of(the_store, info, name), no_headers))


def register(app: typer.Typer) -> None:
    app.command("history")(history)
