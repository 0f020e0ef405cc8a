"""Elements as data: what the group and series pages draw, kept as JSON in their shard
pages and built by the site's script with ``createElement`` / ``setAttribute`` /
``createTextNode`` (``sections`` in ``assets/site.js``), never parsed as HTML.

An element is a list ``[tag, {attribute: value}, child, ...]``; a child is an element or
a string (text). Tag and attribute names are the site's own (written here, never taken
from the store); stored strings are only ever text or attribute values. ``html`` writes
the same elements as HTML/SVG text, escaped, for a chart outside the site (bench) and
for tests.
"""

from __future__ import annotations

import base64
import json
import zlib
from html import escape
from typing import Any

Element = list  # [tag, attributes, *children]
LEVEL = 4  # as for the run pages (kidx.publish.run_shards.LEVEL)
VOID = frozenset({"br"})


def E(tag: str, attributes: dict[str, Any] | None = None, *children) -> Element:
    """An element; ``None`` children are left out."""
    if None in children:  # a site has millions of elements: the filter only where it is needed
        return [tag, attributes or {}, *(child for child in children if child is not None)]
    return [tag, attributes or {}, *children]


def html(node, svg: bool = False) -> str:
    """The element as text: every string escaped; SVG elements without children closed with ``/>``."""
    if isinstance(node, str):
        return escape(node, quote=False)
    tag, attributes, *children = node
    inside = svg or tag == "svg"
    text = "".join(f' {name}="{escape(str(value))}"' for name, value in attributes.items())
    if not children:
        if inside:
            return f"<{tag}{text}/>"
        if tag in VOID:
            return f"<{tag}{text}>"
    return f"<{tag}{text}>" + "".join(html(child, inside) for child in children) + f"</{tag}>"


# the order elements were made in; no check for circles (elements are a tree: a site has millions of them)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


def pack(document) -> str:
    """A page's data: base64 of the zlib-compressed JSON (the browser inflates it with ``DecompressionStream``)."""
    return base64.b64encode(zlib.compress(_COMPACT(document).encode("utf-8"), LEVEL)).decode("ascii")


def unpack(data: str):
    """A page's data, as the script reads it (for tests and tools)."""
    return json.loads(zlib.decompress(base64.b64decode(data)).decode("utf-8"))
