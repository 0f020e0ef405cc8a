"""kidx gc [--dry-run]"""

from __future__ import annotations

import typer

from kidx.cli.common import DryRunOption, StoreOption, kind_registry, open_store, output, parse_dry_run

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
    from kidx.operations.fsck import shown_path
    from kidx.operations.gc import gc as collect

    suffix = parse_dry_run(dry_run)
    the_store = open_store(store)
    report = collect(the_store, kind_registry(), dry_run=suffix is not None)
    out = output()
    tail = f" {suffix}" if suffix else ""
    out.data("".join(
        f"{shown_path(the_store, removal.where)} removed{tail}\n" for removal in report.removed
    ))
    objects = sum(1 for removal in report.removed if removal.digest is not None)
    temporary = len(report.removed) - objects
    size = sum(removal.size for removal in report.removed)
    out.notice(
        f"{_count(objects, 'unused object')} and {_count(temporary, 'temporary file')} removed "
        f"({size:,} bytes), {_count(report.kept, 'object')} kept{tail}"
    )


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def register(app: typer.Typer) -> None:
    app.command("gc", epilog=EXAMPLES)(gc)
