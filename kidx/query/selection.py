"""Finding the catalog entries that targets and selectors mean.

A name may also be given as a digest (``sha256:…``) or a unique digest prefix of at least
eight hex digits; an exact name always wins over a digest reading.
"""

from __future__ import annotations

import re
from functools import cache

from kidx.errors import KidxError
from kidx.kinds.registry import KindInfo
from kidx.query.targets import Target
from kidx.store.catalog import Catalog, CatalogQuery, Entry


@cache  # compiled when a name is looked up: a selection by labels looks none up
def _digest_prefix() -> re.Pattern:
    return re.compile(r"^(?:sha256:)?([0-9a-f]{8,64})$")


class AmbiguousDigestError(KidxError):
    pass


def not_found_message(info: KindInfo, name: str) -> str:
    return f'{info.resource} "{name}" not found'


class Selection:
    """What a command found: entries per kind in target order, and the names it did not."""

    __slots__ = ("groups", "missing")

    def __init__(self) -> None:
        self.groups: list[tuple[KindInfo, list[Entry]]] = []
        self.missing: list[str] = []  # NotFound messages, in argument order

    @property
    def entries(self) -> list[tuple[KindInfo, Entry]]:
        return [(info, entry) for info, entries in self.groups for entry in entries]

    @property
    def count(self) -> int:
        return sum(len(entries) for _, entries in self.groups)


def find_entry(catalog: Catalog, info: KindInfo, name: str) -> Entry | None:
    entry = catalog.get(info.kind, name)
    if entry is not None:
        return entry
    match = _digest_prefix().match(name)
    if match is None:
        return None
    candidates = catalog.by_digest_prefix(match.group(1), info.kind)
    if len(candidates) > 1:
        listed = ", ".join(f"{info.qualified_name}/{c.name} ({c.digest[:19]}…)" for c in candidates[:10])
        more = f" and {len(candidates) - 10} more" if len(candidates) > 10 else ""
        what = "digest" if len(match.group(1)) == 64 else "digest prefix"
        raise AmbiguousDigestError(f'{what} "{name}" is ambiguous: it matches {listed}{more}')
    return candidates[0] if candidates else None


def select(catalog: Catalog, targets: list[Target], label_selector=None, conditions: CatalogQuery | None = None,
           store=None) -> Selection:
    """Entries for targets; names that match nothing are reported, not raised.

    ``conditions`` carries further typed conditions (references, fields, reference-following
    fields) for listed types; objects asked for by name are not filtered by them. With
    ``store``, conditions on the objects' own spec are checked too (``Store.select``).
    """
    selection = Selection()
    base = conditions if conditions is not None else CatalogQuery()
    if label_selector is not None:
        from kidx.query.label_selector import resolved

        base = base._replace(labels=resolved(label_selector.requirements, catalog.label_values))
    for target in targets:
        if target.names is None:
            query = base._replace(kind=target.info.kind)
            entries = store.select(query, catalog) if store is not None else catalog.list(query)
        else:
            entries = []
            for name in target.names:
                entry = find_entry(catalog, target.info, name)
                if entry is None:
                    selection.missing.append(not_found_message(target.info, name))
                elif entry not in entries:
                    entries.append(entry)
        selection.groups.append((target.info, entries))
    return selection
