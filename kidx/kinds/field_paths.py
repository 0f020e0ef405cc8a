"""Which field paths a kind has, read from its CRD schema: what ``--field-selector`` may
name (kubectl answers an unknown field with "field label not supported").

A path is ``metadata.name``, ``metadata.title`` or ``spec.…`` through the schema's
``properties``; below a map whose values have a schema (``additionalProperties``:
workload ``spec.parameters.seq``) any key is allowed, and below a free-form object
(``additionalProperties: true``, ``x-kubernetes-preserve-unknown-fields``) any path.
A path may also start with a reference field's name without ``Digest`` and continue in
the referenced kind (``workload.spec.parameters.seq``, ``protocol.metadata.name``).
"""

from __future__ import annotations

from typing import NamedTuple

from kidx.kinds.registry import KindInfo, KindRegistry, ReferenceField

METADATA_FIELDS = ("name", "title")
_FREE_FORM = "x-kubernetes-preserve-unknown-fields"


class FieldPath(NamedTuple):
    """A path that a kind has: ``segments`` in the object that ``reference`` (if any)
    points at, else in the object itself."""

    reference: ReferenceField | None
    segments: tuple[str, ...]


def _schema_has(schema: dict, segments: list[str], fold: bool) -> list[str] | None:
    """The path as the schema spells it (``fold``: matching names case-insensitively),
    or None when the schema has no such path."""
    spelled: list[str] = []
    for index, segment in enumerate(segments):
        if schema.get(_FREE_FORM) and segment not in schema.get("properties", {}):
            return spelled + segments[index:]
        properties = schema.get("properties", {})
        name = segment if segment in properties else None
        if name is None and fold:
            name = next((key for key in properties if key.lower() == segment.lower()), None)
        if name is not None:
            spelled.append(name)
            schema = properties[name]
            continue
        extra = schema.get("additionalProperties")
        if extra is True or (isinstance(extra, dict) and not extra and "properties" not in schema):
            return spelled + segments[index:]
        if isinstance(extra, dict):
            spelled.append(segment)
            schema = extra
            continue
        branches = [branch for key in ("anyOf", "oneOf", "allOf") for branch in schema.get(key, ())]
        for branch in branches:
            found = _schema_has(branch, segments[index:], fold)
            if found is not None:
                return spelled + found
        return None
    return spelled


def _own_path(info: KindInfo, segments: list[str], fold: bool = False) -> list[str] | None:
    if len(segments) == 2 and segments[0] == "metadata":
        if segments[1] in METADATA_FIELDS:
            return segments
        if fold:
            return next((["metadata", f] for f in METADATA_FIELDS if f.lower() == segments[1].lower()), None)
        return None
    if len(segments) > 1 and (segments[0] == "spec" or (fold and segments[0].lower() == "spec")):
        found = _schema_has(info.spec_schema, segments[1:], fold)
        return None if found is None else ["spec", *found]
    return None


def resolve_field_path(registry: KindRegistry, info: KindInfo, path: str) -> FieldPath | None:
    """Where ``path`` leads in objects of ``info``; None when the kind has no such field."""
    segments = path.split(".")
    if _own_path(info, segments) is not None:
        return FieldPath(None, tuple(segments))
    for reference in info.references:
        if segments[0] == reference.field.removesuffix("Digest"):
            target = registry.by_kind(reference.target_kind)
            if target is not None and _own_path(target, segments[1:]) is not None:
                return FieldPath(reference, tuple(segments[1:]))
    return None


def suggest_field_path(registry: KindRegistry, info: KindInfo, path: str) -> str | None:
    """The path the user probably meant, when only the case of its names is wrong."""
    segments = path.split(".")
    found = _own_path(info, segments, fold=True)
    if found is not None:
        return ".".join(found)
    for reference in info.references:
        name = reference.field.removesuffix("Digest")
        if segments[0].lower() == name.lower():
            target = registry.by_kind(reference.target_kind)
            rest = _own_path(target, segments[1:], fold=True) if target is not None else None
            if rest is not None:
                return ".".join([name, *rest])
    return None


def nearest_field_path(registry: KindRegistry, info: KindInfo, path: str) -> str | None:
    """The real path nearest to a mistyped one, or None: the case corrected
    (``suggest_field_path``), else each name replaced by the nearest the schema has there
    (``spec.parameter.seq``: ``spec.parameters.seq``), else the first scalar path ending in
    the name given (``median``: ``spec.timing.latencyNs.median``)."""
    import difflib

    found = suggest_field_path(registry, info, path)
    if found is not None:
        return found
    segments = path.split(".")
    if not all(segments):
        return None
    own = _nearest_own(info, segments)
    if own is not None:
        return own
    for reference in info.references:
        name = reference.field.removesuffix("Digest")
        target = registry.by_kind(reference.target_kind)
        if target is not None and difflib.get_close_matches(segments[0], [name], n=1, cutoff=0.6):
            rest = _nearest_own(target, segments[1:])
            if rest is not None:
                return f"{name}.{rest}"
    candidates = scalar_paths(info)
    ending = [candidate for candidate in candidates if candidate.rsplit(".", 1)[-1].lower() == segments[-1].lower()]
    return ending[0] if ending else None


def _nearest_own(info: KindInfo, segments: list[str]) -> str | None:
    import difflib

    if len(segments) < 2:
        return None
    top = difflib.get_close_matches(segments[0], ["spec", "metadata"], n=1, cutoff=0.6)
    if not top:
        return None
    if top[0] == "metadata":
        close = difflib.get_close_matches(segments[1], list(METADATA_FIELDS), n=1, cutoff=0.8)
        return f"metadata.{close[0]}" if close and len(segments) == 2 else None
    rest = _nearest_in_schema(info.spec_schema, segments[1:])
    return None if rest is None else ".".join(["spec", *rest])


def _nearest_in_schema(schema: dict, segments: list[str]) -> list[str] | None:
    """``_schema_has`` with each name the schema lacks replaced by its nearest sibling."""
    import difflib

    spelled: list[str] = []
    for index, segment in enumerate(segments):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        if segment not in properties:
            if schema.get(_FREE_FORM) or extra is True or (isinstance(extra, dict) and not extra and not properties):
                return spelled + segments[index:]
            if isinstance(extra, dict):
                spelled.append(segment)
                schema = extra
                continue
            close = difflib.get_close_matches(segment, list(properties), n=1, cutoff=0.6)
            if not close:
                return None
            segment = close[0]
        spelled.append(segment)
        schema = properties[segment]
    return spelled


def scalar_paths(info: KindInfo) -> list[str]:
    """Every path to a named scalar field of the kind (``metadata.name``,
    ``spec.timing.latencyNs.median``), in schema order: what completion offers for
    ``--field-selector`` and ``--sort-by``. Free-form maps have no named fields to list."""
    paths = [f"metadata.{name}" for name in METADATA_FIELDS]

    def walk(schema: dict, prefix: str) -> None:
        properties = schema.get("properties")
        if not properties:
            if schema.get("type") not in ("object", "array"):
                paths.append(prefix)
            return
        for name, child in properties.items():
            walk(child, f"{prefix}.{name}")

    walk(info.spec_schema, "spec")
    return paths
