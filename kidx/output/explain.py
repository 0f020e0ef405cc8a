"""``explain`` text from a kind's CRD schema, in kubectl's plaintext layout.

The dotted path walks object properties and steps through array items and map values
transparently (``runs.spec.measurements.unit``). Descriptions are wrapped at 76 columns
and indented four spaces, as kubectl does.
"""

from __future__ import annotations

import textwrap

from kidx.errors import KidxError
from kidx.kinds.registry import KindInfo

WRAP = 76
ENUM_SHOWN = 4


class FieldNotFoundError(KidxError):
    pass


def type_name(schema: dict) -> str:
    kind = schema.get("type")
    if kind == "array":
        item = type_name(schema.get("items", {}))
        return f"[]{item}"
    if kind == "object":
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict) and not schema.get("properties"):
            return f"map[string]{type_name(additional)}"
        return "Object"
    if kind is None and "anyOf" in schema:
        return "|".join(type_name(branch) for branch in schema["anyOf"])
    return kind or "Object"


def _children(schema: dict) -> dict:
    """The properties one level down, through arrays and maps."""
    while True:
        if schema.get("type") == "array":
            schema = schema.get("items", {})
        elif schema.get("type") == "object" and not schema.get("properties") and isinstance(
            schema.get("additionalProperties"), dict
        ):
            schema = schema["additionalProperties"]
        else:
            return schema.get("properties", {})


def _required(schema: dict) -> set:
    while schema.get("type") == "array":
        schema = schema.get("items", {})
    return set(schema.get("required", ()))


def _wrap(text: str, indent: int) -> list[str]:
    lines: list[str] = []
    for paragraph in (text or "").split("\n"):
        lines.extend(textwrap.wrap(paragraph, WRAP - indent) or [""])
    return [" " * indent + line if line else "" for line in lines]


def _field_entry(name: str, schema: dict, required: bool, indent: int, with_description: bool) -> list[str]:
    line = f"{' ' * indent}{name}\t<{type_name(schema)}>"
    if required:
        line += " -required-"
    lines = [line]
    if with_description and "enum" in schema:
        shown = ", ".join(str(v) for v in schema["enum"][:ENUM_SHOWN])
        if len(schema["enum"]) > ENUM_SHOWN:
            shown += ", ...."
        lines.append(f"{' ' * (indent + 2)}enum: {shown}")
    if with_description:
        description = schema.get("description")
        lines.extend(_wrap(description, indent + 2) if description else [" " * (indent + 2) + "<no description>"])
        lines.append("")
    return lines


def _tree(schema: dict, indent: int, depth: int, max_depth: int | None) -> list[str]:
    lines: list[str] = []
    required = _required(schema)
    for name in sorted(_children(schema)):
        child = _children(schema)[name]
        lines.extend(_field_entry(name, child, name in required, indent, False))
        if max_depth is None or depth < max_depth:
            lines.extend(_tree(child, indent + 2, depth + 1, max_depth))
    return lines


def explain_text(info: KindInfo, path: list[str], recursive: bool = False, max_depth: int | None = None) -> str:
    schema = info.schema
    parent = schema
    for segment in path:
        children = _children(schema)
        if segment not in children:
            raise FieldNotFoundError(f'field "{segment}" does not exist')
        parent, schema = schema, children[segment]
    lines = [f"GROUP:      {info.group}", f"KIND:       {info.kind}", f"VERSION:    {info.version}", ""]
    if path:
        field_line = f"FIELD: {path[-1]} <{type_name(schema)}>"
        if path[-1] in _required(parent):
            field_line += " -required-"
        lines += [field_line, ""]
    lines.append("DESCRIPTION:")
    description = schema.get("description")
    lines += _wrap(description, 4) if description else ["    <empty>" if not path else "    <no description>"]
    if "enum" in schema:
        lines.append("    enum: " + ", ".join(str(v) for v in schema["enum"]))
    children = _children(schema)
    if children:
        lines += ["", "FIELDS:"]
        if recursive:
            lines += _tree(schema, 2, 1, max_depth)
        else:
            required = _required(schema)
            for name in sorted(children):
                lines += _field_entry(name, children[name], name in required, 2, True)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"
