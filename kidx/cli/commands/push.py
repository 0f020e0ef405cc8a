"""kidx push DEST [TYPE [NAME…] | TYPE/NAME… | TYPE -l SEL]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import kind_registry, open_store, output, parse_selector
from kidx.cli.options import DryRunOption, SelectorOption, StoreOption
from kidx.errors import UsageError

EXAMPLES = """\b
Examples:
  kidx push postgresql://kidx@db.example.org/bench
  kidx push /mnt/shared/kidx runs -l liger_version=0.6.1 --dry-run
  kidx push postgresql://kidx@db.example.org/bench --force run/my-run
"""

SelectionArgument = Annotated[
    list[str] | None,
    typer.Argument(help="What to copy: TYPE [NAME…] or TYPE/NAME… (default: everything).", show_default=False),
]
ForceOption = Annotated[
    bool, typer.Option("--force", help="Where both stores changed a name, give the destination this side's state.")
]


def push(
    destination: Annotated[
        str,
        typer.Argument(help="The store to copy to: a folder or a postgresql:// URL.", show_default=False),
    ],
    arguments: SelectionArgument = None,
    selector: SelectorOption = None,
    force: ForceOption = False,
    dry_run: DryRunOption = "none",
    store: StoreOption = None,
) -> int:
    """Copy objects, names and their revisions from this store to another.

    Objects go first (each re-hashed), then names with every revision they have here, so
    both stores end with the same history. Protocols, workloads, environments and
    implementations that the copied objects refer to travel with them. A name changed in
    both stores since they last agreed is a conflict: nothing is written unless --force.
    """
    from kidx.store.store import Store

    return run_transfer(open_store(store), Store(destination), arguments, selector, force, dry_run)


def run_transfer(source, destination, arguments, selector, force, dry_run) -> int:
    """What push and pull share: selection, the transfer itself, and its report."""
    from kidx.cli.common import parse_dry_run
    from kidx.operations.maintain.transfer import ConflictError, conflict_lines, transfer
    from kidx.query.targets import ALL, parse_targets, selection_rules

    suffix = parse_dry_run(dry_run)
    label_selector = parse_selector(selector)
    selection_rules(arguments or [], label_selector)
    if source.location == destination.location:
        raise UsageError(f"the source and the destination are the same store ({source.location})")
    registry = kind_registry()
    targets = parse_targets(arguments or [ALL], registry, "copy")
    out = output()
    try:
        report = transfer(source, destination, registry, targets, label_selector, force, suffix is not None)
    except ConflictError as exc:
        for line in conflict_lines(exc.conflicts, source.location, destination.location):
            out.error(line)
        count = len(exc.conflicts)
        out.error(f"{_counted(count, 'name')} changed in both stores; nothing was copied (--force gives "
                  f"{destination.location} the state from {source.location})")
        return 1
    finally:
        source.close()
        destination.close()
    lines = [
        f"{outcome.info.qualified_name}/{outcome.name} {outcome.action}" + (f" {suffix}" if suffix else "")
        for outcome in report.outcomes
    ]
    out.data("".join(line + "\n" for line in lines))
    from kidx.operations.events import Transferred
    from kidx.output.events import stderr_reporter

    stderr_reporter(out)(Transferred(destination.location, report.objects_copied,
                                     len(report.outcomes) - report.count("unchanged"), report.count("unchanged"),
                                     suffix is not None))
    return 0


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def register(app: typer.Typer) -> None:
    app.command("push", epilog=EXAMPLES)(push)
