"""kidx describe TYPE [NAME…] | TYPE/NAME… [-l SEL]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.options import SelectorOption, StoreOption

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
    from kidx.cli.everyday import run_describe

    return run_describe(arguments=arguments, selector=selector, store=store)


def register(app: typer.Typer) -> None:
    app.command("describe", epilog=EXAMPLES)(describe)
