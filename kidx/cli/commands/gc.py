"""kidx gc [--dry-run]"""

from __future__ import annotations

import typer

from kidx.cli.common import kind_registry, open_store, output, parse_dry_run
from kidx.cli.options import DryRunOption, StoreOption

EXAMPLES = """\b
Examples:
  kidx gc --dry-run
  kidx gc
"""


def gc(dry_run: DryRunOption = "none", store: StoreOption = None) -> None:
    """Remove objects that no name, revision or reference keeps, and temporary files
    left by interrupted writes.

    Deleted names keep their objects (their history still shows them); gc removes what a
    crashed or interrupted write left behind. Safe while other kidx commands run.
    """
    from kidx.operations.maintain.fsck import shown_path
    from kidx.operations.maintain.gc import gc as collect
    from kidx.output.reports import gc_removed, gc_summary

    suffix = parse_dry_run(dry_run)
    the_store = open_store(store)
    report = collect(the_store, kind_registry(), dry_run=suffix is not None)
    out = output()
    out.data(gc_removed(report, lambda where: shown_path(the_store, where), suffix))
    out.notice(gc_summary(report, suffix))


def register(app: typer.Typer) -> None:
    app.command("gc", epilog=EXAMPLES)(gc)
