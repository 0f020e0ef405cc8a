"""What ``describe`` shows of one object: its manifest, and its references resolved both
ways (what it refers to, what refers to it). A result type both ``operations/`` and
``output/`` see."""

from __future__ import annotations

from kidx.kinds.registry import KindInfo
from kidx.records import NamedTuple
from kidx.store.catalog import Entry
from kidx.store.store import Store

REFERRER_NAMES_SHOWN = 3


class ReferenceLine(NamedTuple):
    field: str
    kind: str
    digest: str
    name: str | None  # None: not in the store
    title: str | None


class ReferrerLine(NamedTuple):
    kind: str
    referrers: int  # how many objects of this kind refer (not ``count``: that would hide tuple.count)
    names: list[str]


class Description(NamedTuple):
    manifest: dict
    references: list[ReferenceLine]
    referrers: list[ReferrerLine]
    # a run's: what its source format could not carry (the importer's NOT_CARRIED)
    not_carried: tuple[str, ...] = ()


def describe_entry(store: Store, info: KindInfo, entry: Entry) -> Description:
    catalog = store.catalog()
    manifest = store.manifest(entry)
    references: list[ReferenceLine] = []
    for reference in info.references:
        digest = manifest["spec"].get(reference.field)
        if not isinstance(digest, str):
            continue
        targets = [t for t in catalog.by_digest(digest) if t.kind == reference.target_kind]
        target = targets[0] if targets else None
        references.append(
            ReferenceLine(
                field=reference.field,
                kind=reference.target_kind,
                digest=digest,
                name=target.name if target else None,
                title=target.title if target else None,
            )
        )
    referrers = [
        ReferrerLine(kind, count, catalog.referrer_names(entry.digest, kind, REFERRER_NAMES_SHOWN))
        for kind, count in catalog.referrer_counts(entry.digest)
    ]
    return Description(manifest, references, referrers)
