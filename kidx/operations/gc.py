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
from kidx.operations.fsck import kept_digests
from kidx.store.faults import crash_point
from kidx.store.store import Store


@dataclass(slots=True)
class Removal:
    path: Path
    digest: str | None  # None for a temporary file
    size: int


@dataclass(slots=True)
class GcReport:
    removed: list[Removal] = field(default_factory=list)
    kept: int = 0


def gc(store: Store, registry: KindRegistry, dry_run: bool = False) -> GcReport:
    report = GcReport()
    if not store.root.exists():
        return report
    if not store.catalog_path.exists():
        if any(True for _ in store.objects.digests()):
            raise StoreError(
                f"the catalog {store.catalog_path} is missing: every object would look unused, so gc "
                "removes nothing (see 'kidx fsck')"
            )
        return report
    catalog = store.catalog(write=True)
    catalog.begin_write()  # writers wait; readers do not
    try:
        entries = list(catalog.all_entries())
        revisions = list(catalog.all_revisions())
        identities: dict[str, dict] = {}
        stored = list(store.objects.digests())
        for digest in stored:
            try:
                data = store.objects.read(digest)
                if digest_bytes(data) == digest:
                    identities[digest] = json.loads(data)
            except (OSError, ValueError):
                continue
        kept = kept_digests(entries, revisions, identities, registry)
        for digest in stored:
            if digest in kept:
                report.kept += 1
                continue
            report.removed.append(Removal(store.objects.path_of(digest), digest, store.objects.size_of(digest) or 0))
        for leftover in store.objects.leftovers():
            if leftover.temporary:
                report.removed.append(Removal(leftover.path, None, leftover.size))
        if not dry_run:
            for position, removal in enumerate(report.removed):
                if removal.digest is not None:
                    store.objects.remove(removal.digest)
                else:
                    removal.path.unlink(missing_ok=True)
                if position == 0:
                    crash_point("objects")
        catalog.rollback()  # nothing in the catalog changed
    except BaseException:
        catalog.rollback()
        raise
    if not dry_run:
        crash_point("after-commit")
    return report


__all__ = ["GcReport", "Removal", "gc"]
