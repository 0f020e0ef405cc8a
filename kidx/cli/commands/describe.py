"""kidx describe TYPE [NAME…] | TYPE/NAME… [-l SEL]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import (
    SelectorOption,
    StoreOption,
    kind_registry,
    open_store,
    output,
    parse_selector,
    report_missing,
)

EXAMPLES = """\b
Examples:
  kidx describe protocol liger-bench-do-bench-backward
  kidx describe runs -l liger_version=0.6.1
"""


def describe(
    arguments: Annotated[
        list[str] | None,
        typer.Argument(help="TYPE [NAME…] or TYPE/NAME…", show_default=False),
    ] = None,
    selector: SelectorOption = None,
    store: StoreOption = None,
) -> int:
    """Show details of objects, with what they refer to and what refers to them.

    With TYPE NAME, when no object is called NAME, every object whose name starts with
    NAME is described (as kubectl does).
    """
    from kidx.operations.describe import describe_entry
    from kidx.output.describe import describe_text
    from kidx.query.selection import select
    from kidx.query.targets import parse_targets, selection_rules

    label_selector = parse_selector(selector)
    selection_rules(arguments or [], label_selector)
    targets = parse_targets(arguments or [], kind_registry(), "describe")
    the_store = open_store(store, must_exist=True)
    with the_store.reading() as catalog:
        selection = select(catalog, targets, label_selector)
        found = selection.entries
        separator = "\n\n"
        missing = selection.missing
        # kubectl: only for exactly TYPE NAME (with more names, a miss stays a NotFound)
        if missing and len(targets) == 1 and len(targets[0].names or ()) == 1 and "/" not in (arguments or [""])[0]:
            by_prefix = [
                (targets[0].info, entry)
                for name in targets[0].names or ()
                for entry in catalog.with_name_prefix(targets[0].info.kind, name)
                if (targets[0].info, entry) not in found
            ]
            if by_prefix:
                found, missing, separator = found + by_prefix, [], "\n"
        texts = [describe_text(describe_entry(the_store, info, entry)) for info, entry in found]
    out = output()
    out.data(separator.join(texts))
    if not found and not missing:
        out.notice("No resources found")
    return report_missing(out, missing, False)


def register(app: typer.Typer) -> None:
    app.command("describe", epilog=EXAMPLES)(describe)
