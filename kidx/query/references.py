"""``--references`` and reference-following fields, as typed store conditions.

Each ``--references`` value is one of
- ``TYPE/NAME``: refers to that object (its current digest);
- ``sha256:HEX`` or a digest prefix of at least 8 hex digits: refers to that digest,
  whether or not the target is in the store;
- ``TYPE:SELECTOR``: refers to any object of TYPE whose labels match SELECTOR
  (``environment:vendor=nvidia``).
Several values must all hold. Each becomes one ``ReferenceCondition``; the store's
backend answers it from its index of references.

A reference-following field (``workload.spec.parameters.seq``) is the reference field's
name without ``Digest`` and then a path in the referenced object;
``referenced_field_condition`` turns one into a ``ReferencedFieldCondition``.
"""

from __future__ import annotations

import re

from kidx.errors import NotFoundError, UsageError
from kidx.kinds.registry import KindInfo, KindRegistry, ReferenceField
from kidx.query.selection import find_entry, not_found_message
from kidx.store.catalog import Catalog, ReferenceCondition, ReferencedFieldCondition

_DIGEST = re.compile(r"^(?:sha256:)?([0-9a-f]{8,64})$")
_DIGEST_SUFFIX = "Digest"


def reference_condition(text: str, registry: KindRegistry, catalog: Catalog) -> ReferenceCondition:
    if ":" in text and not text.startswith("sha256:"):
        spelling, _, selector_text = text.partition(":")
        from kidx.query.label_selector import LabelSelector, SelectorError, resolved

        info = registry.resolve(spelling)
        try:
            selector = LabelSelector.parse(selector_text)
        except SelectorError as exc:
            raise UsageError(f'the provided selector "{selector_text}" is not valid: {exc}') from None
        return ReferenceCondition(target_kind=info.kind, target_labels=resolved(selector.requirements,
                                                                                    catalog.label_values))
    if "/" in text:
        spelling, _, name = text.partition("/")
        info = registry.resolve(spelling)
        entry = find_entry(catalog, info, name)
        if entry is None:
            raise NotFoundError(not_found_message(info, name))
        return ReferenceCondition(digests=(entry.digest,))
    match = _DIGEST.match(text)
    if match is None:
        raise UsageError(
            f'--references "{text}": expected TYPE/NAME, a digest (sha256:… or 8+ hex digits) or TYPE:SELECTOR'
        )
    hexdigits = match.group(1)
    if len(hexdigits) == 64:
        return ReferenceCondition(digests=("sha256:" + hexdigits,))
    return ReferenceCondition(digest_prefix=hexdigits)


def reference_conditions(values: list[str], registry: KindRegistry, catalog: Catalog) -> list[ReferenceCondition]:
    return [reference_condition(value, registry, catalog) for value in values]


def reference_prefixes(info: KindInfo) -> dict[str, ReferenceField]:
    """``workload`` -> the ReferenceField ``workloadDigest`` (the prefixes a path may use)."""
    return {
        reference.field[: -len(_DIGEST_SUFFIX)]: reference
        for reference in info.references
        if reference.field.endswith(_DIGEST_SUFFIX)
    }


def referenced_field_condition(
    info: KindInfo, dotted: str, operator: str, value: str
) -> ReferencedFieldCondition | None:
    """``workload.spec.parameters.seq`` (on a kind with ``workloadDigest``) as a typed
    condition; None when ``dotted`` does not start with one of the kind's reference
    names. The path after it must be ``metadata.name``, ``metadata.title`` or into ``spec``."""
    head, _, rest = dotted.partition(".")
    reference = reference_prefixes(info).get(head)
    if reference is None or not rest:
        return None
    from kidx.query.field_selector import split_path

    path = tuple(split_path(rest))
    if operator == "==":
        operator = "="
    if operator not in ("=", "!="):
        raise UsageError(f"unknown field selector operator {operator!r}")
    return ReferencedFieldCondition(
        field=reference.field, target_kind=reference.target_kind, path=path, operator=operator, value=value
    )
