"""``--references``: select objects by what they refer to, through the catalog's refs index.

Each value is one of
- ``TYPE/NAME``: refers to that object (its current digest);
- ``sha256:HEX`` or a digest prefix of at least 8 hex digits: refers to that digest,
  whether or not the target is in the store;
- ``TYPE:SELECTOR``: refers to any object of TYPE whose labels match SELECTOR
  (``environment:vendor=nvidia``).
Several values must all hold. Each becomes one SQL clause over ``objects.id`` that is
answered from the (target, object_id) primary key of ``refs``.
"""

from __future__ import annotations

import re

from kidx.errors import NotFoundError, UsageError
from kidx.kinds.registry import KindRegistry
from kidx.query.selection import find_entry, not_found_message
from kidx.store.catalog import Catalog

_DIGEST = re.compile(r"^(?:sha256:)?([0-9a-f]{8,64})$")
_REFERS_TO = "id IN (SELECT object_id FROM refs WHERE target IN ({marks}))"
_REFERS_TO_PREFIX = "id IN (SELECT object_id FROM refs WHERE target >= ? AND target < ?)"


def reference_clause(text: str, registry: KindRegistry, catalog: Catalog) -> tuple[str, list]:
    if ":" in text and not text.startswith("sha256:"):
        spelling, _, selector_text = text.partition(":")
        from kidx.query.label_selector import LabelSelector, SelectorError

        info = registry.resolve(spelling)
        try:
            selector = LabelSelector.parse(selector_text)
        except SelectorError as exc:
            raise UsageError(f'the provided selector "{selector_text}" is not valid: {exc}') from None
        digests = sorted({e.digest for e in catalog.list(info.kind) if selector.matches(e.labels)})
        return _in(digests)
    if "/" in text:
        spelling, _, name = text.partition("/")
        info = registry.resolve(spelling)
        entry = find_entry(catalog, info, name)
        if entry is None:
            raise NotFoundError(not_found_message(info, name))
        return _in([entry.digest])
    match = _DIGEST.match(text)
    if match is None:
        raise UsageError(
            f'--references "{text}": expected TYPE/NAME, a digest (sha256:… or 8+ hex digits) or TYPE:SELECTOR'
        )
    hexdigits = match.group(1)
    if len(hexdigits) == 64:
        return _in(["sha256:" + hexdigits])
    return _REFERS_TO_PREFIX, ["sha256:" + hexdigits, "sha256:" + hexdigits + "\uffff"]


def _in(digests: list[str]) -> tuple[str, list]:
    if not digests:
        return "0", []  # refers to nothing that exists: matches no object
    return _REFERS_TO.format(marks=",".join("?" * len(digests))), digests


def reference_clauses(values: list[str], registry: KindRegistry, catalog: Catalog) -> list[tuple[str, list]]:
    return [reference_clause(value, registry, catalog) for value in values]
