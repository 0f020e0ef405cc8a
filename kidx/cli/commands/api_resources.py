"""kidx api-resources: the kinds this kidx knows, from its CRDs."""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import kind_registry, output
from kidx.errors import UsageError
from kidx.output.printers import check_output, output_help


def api_resources(
    output_format: Annotated[str | None, typer.Option("--output", "-o", help=output_help("api-resources"))] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers", help="Omit the header row.")] = False,
    sort_by: Annotated[str | None, typer.Option("--sort-by", help="name or kind.")] = None,
) -> None:
    """List the resource types (kinds) with their short names and API version."""
    from kidx.output.api_resources import render_api_resources

    if sort_by not in (None, "name", "kind"):
        raise UsageError("--sort-by accepts only name or kind")
    check_output("api-resources", output_format)
    kinds = sorted(kind_registry().kinds, key=lambda k: (k.group, k.kind if sort_by == "kind" else k.plural))
    output().data(render_api_resources(kinds, output_format, no_headers))


def register(app: typer.Typer) -> None:
    app.command("api-resources")(api_resources)
