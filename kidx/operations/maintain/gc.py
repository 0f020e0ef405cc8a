"""gc: remove objects that nothing keeps, and temporary files of interrupted writes.

An object is kept by a current name, by any revision (history stays readable), or by a
reference from a kept object. Everything runs under the catalog's write lock: an apply
writes its objects while holding that lock, so an object gc finds unkept cannot belong
to a write in flight, and no apply can start referring to it until gc is done.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from kidx.errors import StoreError
from kidx.identity.canonical import digest_bytes
from kidx.kinds.registry import KindRegistry
from kidx.operations.maintain.fsck import kept_digests, references_of
from kidx.store.faults import crash_point
from kidx.store.store import Store


@dataclass(slots=True)
class Removal:
    where: str  # the object's file (or other place), or a temporary file's path
    digest: str | None  # None for a temporary file
    size: int


@dataclass(slots=True)
class GcReport:
    removed: list[Removal] = field(default_factory=list)
    kept: int = 0


def gc(store: Store, registry: KindRegistry, dry_run: bool = False) -> GcReport:
    report = GcReport()
    stored = list(store.objects.digests())
    if not store.exists():
        if stored:
            raise StoreError(
                f"the store at {store.location} has objects but no catalog: every object would look unused, "
                "so gc removes nothing (see 'kidx fsck')"
            )
        return report
    with store.write() as transaction:  # the write lock: writers wait, readers do not
        catalog = transaction.catalog
        entries, revisions = list(catalog.all_entries()), list(catalog.all_revisions())
        stored = list(store.objects.digests())  # again, now that no writer is in flight
        references: dict[str, set] = {}  # of each intact object: what it keeps
        for digest in stored:
            try:
                data = store.objects.read(digest)
                if digest_bytes(data) == digest:
                    identity = json.loads(data)
                    info = registry.by_kind(identity.get("kind", ""))
                    references[digest] = references_of(info, identity["spec"]) if info else set()
            except (OSError, ValueError, KeyError, TypeError):
                continue  # damaged: kept if anything needs it, reported by fsck
        kept = kept_digests(entries, revisions, references)
        for digest in stored:
            if digest in kept:
                report.kept += 1
            else:
                report.removed.append(Removal(store.objects.where(digest), digest, store.objects.size(digest) or 0))
        for leftover in store.objects.leftovers():
            if leftover.temporary:
                report.removed.append(Removal(str(leftover.path), None, leftover.size))
        if not dry_run:
            for position, removal in enumerate(report.removed):
                if removal.digest is not None:
                    transaction.remove_object(removal.digest)
                else:
                    Path(removal.where).unlink(missing_ok=True)
                if position == 0:
                    crash_point("objects")
    if not dry_run:
        crash_point("after-commit")
    return report


__all__ = ["GcReport", "Removal", "gc"]
