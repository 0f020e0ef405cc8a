"""kidx api-resources: the kinds this kidx knows, from its CRDs."""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import kind_registry, output
from kidx.errors import UsageError

VERBS = "apply,delete,describe,diff,explain,get"


def api_resources(
    output_format: Annotated[str | None, typer.Option("--output", "-o", help="wide, name, json or yaml.")] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers", help="Omit the header row.")] = False,
    sort_by: Annotated[str | None, typer.Option("--sort-by", help="name or kind.")] = None,
) -> None:
    """List the resource types (kinds) with their short names and API version."""
    from kidx.output.serialize import to_json, to_yaml
    from kidx.output.table import render_table

    if sort_by not in (None, "name", "kind"):
        raise UsageError("--sort-by accepts only name or kind")
    if output_format not in (None, "wide", "name", "json", "yaml"):
        raise UsageError(f'unable to match a printer suitable for the output format "{output_format}", '
                         "allowed formats are: json,name,wide,yaml")
    kinds = sorted(kind_registry().kinds, key=lambda k: (k.group, k.kind if sort_by == "kind" else k.plural))
    out = output()
    if output_format == "name":
        out.data("".join(f"{k.plural}.{k.group}\n" for k in kinds))
        return
    if output_format in ("json", "yaml"):
        listing = {
            "apiVersion": "v1",
            "kind": "APIResourceList",
            "groupVersion": f"{kinds[0].group}/{kinds[0].version}" if kinds else "",
            "resources": [
                {
                    "name": k.plural, "singularName": k.singular, "namespaced": k.scope == "Namespaced",
                    "kind": k.kind, "shortNames": list(k.short_names), "categories": list(k.categories),
                    "verbs": VERBS.split(","),
                }
                for k in kinds
            ],
        }
        out.data(to_json(listing) if output_format == "json" else to_yaml(listing))
        return
    headers = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    rows = [[k.plural, ",".join(k.short_names), k.api_version, str(k.scope == "Namespaced").lower(), k.kind]
            for k in kinds]
    if output_format == "wide":
        headers += ["VERBS", "CATEGORIES"]
        rows = [row + [VERBS, ",".join(k.categories)] for row, k in zip(rows, kinds, strict=True)]
    out.data(render_table(None if no_headers else headers, rows))


def register(app: typer.Typer) -> None:
    app.command("api-resources")(api_resources)
