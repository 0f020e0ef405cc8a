"""kidx delete TYPE NAME… | TYPE/NAME… | -f FILE | TYPE -l SEL | TYPE --all"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import kind_registry, open_store, output, parse_dry_run, parse_selector, report_missing
from kidx.cli.options import DryRunOption, FilenameOption, RecursiveOption, SelectorOption, StoreOption
from kidx.errors import UsageError
from kidx.output.printers import output_help

EXAMPLES = """\b
Examples:
  kidx delete run my-run
  kidx delete runs -l liger_version=0.5.10 --dry-run
  kidx delete -f run.yaml
"""


def delete(
    arguments: Annotated[
        list[str] | None,
        typer.Argument(help="TYPE NAME…, TYPE/NAME… or TYPE with -l/--all.", show_default=False),
    ] = None,
    filename: FilenameOption = None,
    recursive: RecursiveOption = False,
    selector: SelectorOption = None,
    all_objects: Annotated[bool, typer.Option("--all", help="Delete every object of the given types.")] = False,
    ignore_not_found: Annotated[
        bool | None,
        typer.Option(
            "--ignore-not-found",
            help="Named objects that do not exist are not an error (default with --all and -l).",
        ),
    ] = None,
    dry_run: DryRunOption = "none",
    output_format: Annotated[str | None, typer.Option("--output", "-o", help=output_help("delete"))] = None,
    store: StoreOption = None,
) -> int:
    """Delete objects by name, from files, by label selector, or all of a type.

    Deleting removes the name from the catalog; its revisions stay recorded, and so
    does its object file, which they keep (kidx gc leaves it).
    """
    from kidx.operations.maintain.delete import delete_selected, targets_from_files
    from kidx.output.reports import deletions
    from kidx.output.to_printer import to_printer
    from kidx.query.targets import parse_targets

    suffix = parse_dry_run(dry_run)
    printing = to_printer("delete", output_format)
    label_selector = parse_selector(selector)
    if all_objects and label_selector is not None:
        raise UsageError("cannot set --all and --selector at the same time")
    registry = kind_registry()
    if filename:
        if arguments:
            raise UsageError("cannot combine resource arguments with -f")
        targets = targets_from_files(filename, recursive, registry)
    else:
        targets = parse_targets(arguments or [], registry, "delete")
        if any(t.names is None for t in targets) and not (all_objects or label_selector is not None):
            raise UsageError("resource(s) were provided, but no name was specified")
        if label_selector is not None and any(t.names for t in targets):
            raise UsageError("name cannot be provided when a selector is specified")
    if ignore_not_found is None:
        ignore_not_found = all_objects or label_selector is not None
    result = delete_selected(open_store(store), targets, label_selector, dry_run=suffix is not None)
    out = output()
    out.data(printing.render(deletions(result.deleted, suffix)))
    if not result.deleted and (ignore_not_found or not result.missing) and (all_objects or label_selector is not None):
        out.line("No resources found")
    return report_missing(out, result.missing, ignore_not_found)


def register(app: typer.Typer) -> None:
    app.command("delete", epilog=EXAMPLES)(delete)
