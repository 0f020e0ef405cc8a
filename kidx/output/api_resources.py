"""``api-resources``: the kinds as kubectl lists resource types (table, wide, name, json, yaml)."""

from __future__ import annotations

from collections.abc import Sequence

from kidx.kinds.registry import KindInfo
from kidx.output.serialize import to_json, to_yaml
from kidx.output.table import render_table

VERBS = "apply,delete,describe,diff,explain,get"


def render_api_resources(kinds: Sequence[KindInfo], output_format: str | None, no_headers: bool = False) -> str:
    """The kinds in the order given; ``output_format`` one of None (table), wide, name, json, yaml."""
    if output_format == "name":
        return "".join(f"{k.plural}.{k.group}\n" for k in kinds)
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
        return to_json(listing) if output_format == "json" else to_yaml(listing)
    headers = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    rows = [[k.plural, ",".join(k.short_names), k.api_version, str(k.scope == "Namespaced").lower(), k.kind]
            for k in kinds]
    if output_format == "wide":
        headers += ["VERBS", "CATEGORIES"]
        rows = [row + [VERBS, ",".join(k.categories)] for row, k in zip(rows, kinds, strict=True)]
    return render_table(None if no_headers else headers, rows)
