"""kidx explain TYPE[.field…] [--recursive]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import kind_registry, output
from kidx.errors import UsageError


def explain(
    resource: Annotated[
        str | None,
        typer.Argument(help="TYPE or TYPE.field.field, e.g. runs.spec.timing", show_default=False),
    ] = None,
    recursive: Annotated[
        bool,
        typer.Option("--recursive", help="Print the whole field tree (names and types)."),
    ] = False,
    max_depth: Annotated[
        int | None,
        typer.Option("--max-depth", help="With --recursive: how many levels to show.", min=1),
    ] = None,
) -> None:
    """Describe a kind and its fields, from the descriptions in its CRD schema."""
    from kidx.kinds.registry import UnknownTypeError
    from kidx.output.explain import explain_text

    if resource is None:
        raise UsageError(
            'You must specify the type of resource to explain. Use "kidx api-resources" for a '
            "complete list of supported resources."
        )
    if max_depth is not None and not recursive:
        raise UsageError("--max-depth requires --recursive")
    spelling, *path = resource.split(".")
    registry = kind_registry()
    # a group-qualified type (runs.kernelindex.dev.spec) is tried longest first
    for cut in range(len(path), -1, -1):
        try:
            info = registry.resolve(".".join([spelling, *path[:cut]]))
        except UnknownTypeError:
            if cut == 0:
                raise
            continue
        output().data(explain_text(info, path[cut:], recursive, max_depth))
        return


def register(app: typer.Typer) -> None:
    app.command("explain")(explain)
