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
    from kidx.operations.describe import describe_objects
    from kidx.output.describe import describe_texts

    label_selector = parse_selector(selector)
    result = describe_objects(open_store(store, must_exist=True), kind_registry(), arguments or [], label_selector)
    out = output()
    out.data(describe_texts(result.descriptions, result.by_prefix))
    if not result.descriptions and not result.missing:
        out.notice("No resources found")
    return report_missing(out, result.missing, False)


def register(app: typer.Typer) -> None:
    app.command("describe", epilog=EXAMPLES)(describe)
