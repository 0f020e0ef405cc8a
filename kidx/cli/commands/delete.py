"""kidx delete TYPE NAME… | TYPE/NAME… | -f FILE | TYPE -l SEL | TYPE --all"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kidx.cli.common import (
    DryRunOption,
    FilenameOption,
    RecursiveOption,
    SelectorOption,
    StoreOption,
    kind_registry,
    open_store,
    output,
    parse_dry_run,
    parse_selector,
    report_missing,
)
from kidx.errors import InvalidInputError, Problem, UsageError
from kidx.output.formats import checked_output

if TYPE_CHECKING:
    from kidx.kinds.registry import KindRegistry
    from kidx.query.targets import Target

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
    output_format: Annotated[str | None, typer.Option("--output", "-o", help="Only 'name'.")] = None,
    store: StoreOption = None,
) -> int:
    """Delete objects by name, from files, by label selector, or all of a type.

    Deleting removes the name from the catalog; its revisions stay recorded, and so
    does its object file, which they keep (kidx gc leaves it).
    """
    from kidx.operations.delete import delete_entries
    from kidx.query.selection import Selection, not_found_message, select
    from kidx.query.targets import parse_targets

    suffix = parse_dry_run(dry_run)
    checked_output(output_format, ("name",))
    label_selector = parse_selector(selector)
    if all_objects and label_selector is not None:
        raise UsageError("cannot set --all and --selector at the same time")
    registry = kind_registry()
    if filename:
        if arguments:
            raise UsageError("cannot combine resource arguments with -f")
        targets = _targets_from_files(filename, recursive, registry)
    else:
        targets = parse_targets(arguments or [], registry, "delete")
        if any(t.names is None for t in targets) and not (all_objects or label_selector is not None):
            raise UsageError("resource(s) were provided, but no name was specified")
        if label_selector is not None and any(t.names for t in targets):
            raise UsageError("name cannot be provided when a selector is specified")
    if ignore_not_found is None:
        ignore_not_found = all_objects or label_selector is not None
    the_store = open_store(store)
    catalog = the_store.catalog()
    selection: Selection = select(catalog, targets, label_selector)
    entries, gone = delete_entries(the_store, selection.entries, dry_run=suffix is not None)
    # names deleted by another process meanwhile are not this command's: NotFound, as kubectl
    missing = selection.missing + [not_found_message(info, entry.name) for info, entry in gone]
    out = output()
    lines = []
    for info, entry in entries:
        if output_format == "name":
            lines.append(f"{info.qualified_name}/{entry.name}")
        else:
            lines.append(f'{info.qualified_name} "{entry.name}" deleted' + (f" {suffix}" if suffix else ""))
    out.data("".join(line + "\n" for line in lines))
    if not entries and (ignore_not_found or not missing) and (all_objects or label_selector is not None):
        out.line("No resources found")
    return report_missing(out, missing, ignore_not_found)


def _targets_from_files(filename: list[str], recursive: bool, registry: KindRegistry) -> list[Target]:
    from kidx.manifests.reader import expand_sources, read_sources
    from kidx.query.targets import add_named

    result = read_sources(expand_sources(filename, recursive))
    if result.problems:
        raise InvalidInputError(result.problems)
    targets: list[Target] = []
    for document in result.documents:
        info = registry.by_kind(document.body.get("kind", ""))
        name = (document.body.get("metadata") or {}).get("name")
        if info is None or not isinstance(name, str):
            raise InvalidInputError([Problem(document.location(), "not a kidx object with a name")])
        add_named(targets, info, name)
    return targets


def register(app: typer.Typer) -> None:
    app.command("delete", epilog=EXAMPLES)(delete)
