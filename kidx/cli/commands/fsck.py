"""kidx fsck [--repair [--from-bundle FILE]] [-o json]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import kind_registry, open_store, output
from kidx.cli.options import StoreOption
from kidx.errors import UsageError
from kidx.output.printers import output_help
from kidx.output.to_printer import to_printer

EXAMPLES = """\b
Examples:
  kidx fsck
  kidx fsck -o json
  kidx fsck --repair --from-bundle backup.kidx.json
"""


def fsck(
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help=(
                "Rebuild indexes and cached columns from the objects; with --from-bundle, also restore missing or "
                "damaged objects."
            ),
        ),
    ] = False,
    from_bundle: Annotated[
        str | None,
        typer.Option(
            "--from-bundle",
            help="A bundle (kidx export) to restore missing or damaged objects from; needs --repair.",
        ),
    ] = None,
    output_format: Annotated[str | None, typer.Option("--output", "-o", help=output_help("fsck"))] = None,
    store: StoreOption = None,
) -> int:
    """Check the store: every object file against its digest, every name, revision and
    index against the objects; report stray and orphaned files.

    Exit 0 when no problem is found (notes such as orphaned objects are not problems),
    1 otherwise. With --repair, fix what can be rebuilt and report what is left.
    """
    from kidx.operations.maintain.fsck import REPAIRABLE_FROM_OBJECTS
    from kidx.operations.maintain.fsck import fsck as check
    from kidx.output.reports import FSCK, fsck_advice

    printing = to_printer("fsck", output_format, FSCK)
    if from_bundle is not None and not repair:
        raise UsageError("--from-bundle needs --repair")
    report = check(open_store(store), kind_registry(), repair=repair, bundle_path=from_bundle)
    out = output()
    out.data(printing.render(report, repair))
    if report.problems:
        out.notice(fsck_advice(report.problems, repair, REPAIRABLE_FROM_OBJECTS))
    return 1 if report.problems else 0


def register(app: typer.Typer) -> None:
    app.command("fsck", epilog=EXAMPLES)(fsck)
