"""Export a store, or part of it, as a bundle (``kidx export``; restoring one is
``kidx.operations.ingest.restore_bundle``'s).

Export reads one consistent snapshot of the catalog. With no selection it takes every
name, every revision (deleted names' too) and every object they keep; with a selection,
the selected names, the names of every object they refer to (transitively), all their
revisions and every object those keep. Objects are copied as stored, after checking
that each still hashes to its name: a bundle never carries damage along.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kidx.errors import StoreError
from kidx.identity.canonical import digest_bytes
from kidx.kinds.registry import KindRegistry
from kidx.operations.maintain.bundle import Bundle, BundleName, BundleRevision, write_bundle_file
from kidx.operations.maintain.fsck import references_of
from kidx.store.faults import crash_point
from kidx.store.store import Store, utc_now

if TYPE_CHECKING:
    from kidx.store.catalog import Entry


@dataclass(slots=True)
class ExportReport:
    names: int = 0
    revisions: int = 0
    objects: int = 0
    dangling: int = 0  # references to digests the store does not hold (not exported)
    size: int = 0
    warnings: list[str] = field(default_factory=list)  # what fsck would find in what was exported


def collect_bundle(
    store: Store, registry: KindRegistry, selected: list[tuple[str, str]] | None, selection: str
) -> tuple[Bundle, int]:
    """The bundle for ``selected`` (kind, name) keys, or the whole store when None; and the
    number of dangling references left out."""
    with store.reading() as catalog:
        entries = list(catalog.all_entries())
        revisions = list(catalog.all_revisions())
    by_digest: dict[str, list[Entry]] = {}
    for entry in entries:
        by_digest.setdefault(entry.digest, []).append(entry)
    objects: dict[str, bytes] = {}
    dangling = 0

    def take(digest: str, needed: bool) -> bool:
        """Copy one object into the bundle; False when the store does not hold it."""
        if digest in objects:
            return True
        try:
            data = store.objects.read(digest)
        except FileNotFoundError:
            if needed:
                raise StoreError(f"cannot export: object {digest} is missing (run 'kidx fsck')") from None
            return False
        if digest_bytes(data) != digest:
            raise StoreError(
                f"cannot export: object {digest} is damaged: {store.objects.where(digest)} does not hash "
                "to its name (run 'kidx fsck')"
            )
        objects[digest] = data
        return True

    if selected is None:
        names = entries
        chosen_revisions = revisions
    else:
        keys = set(selected)
        pending = [entry.digest for entry in entries if (entry.kind, entry.name) in keys]
        seen_digests: set[str] = set()
        while pending:  # follow references; the names holding what is referred to come along
            digest = pending.pop()
            if digest in seen_digests:
                continue
            seen_digests.add(digest)
            for holder in by_digest.get(digest, ()):
                keys.add((holder.kind, holder.name))
            if not take(digest, needed=digest in by_digest):
                continue
            for target in _references(registry, objects[digest]):
                pending.append(target)
        names = [entry for entry in entries if (entry.kind, entry.name) in keys]
        chosen_revisions = [revision for revision in revisions if (revision.kind, revision.name) in keys]
    for entry in names:
        take(entry.digest, needed=True)
    for revision in chosen_revisions:
        if revision.digest is not None:
            take(revision.digest, needed=revision.event == "applied")
    # referenced objects the store holds come along even when no name holds them now
    pending = list(objects)
    while pending:
        for target in _references(registry, objects[pending.pop()]):
            if target in objects:
                continue
            if take(target, needed=False):
                pending.append(target)
            else:
                dangling += 1
    bundle = Bundle(
        objects=objects,
        names=[
            BundleName(entry.kind, entry.name, entry.digest, entry.title, entry.labels, entry.annotations,
                       entry.created, entry.generation)
            for entry in names
        ],
        revisions=[
            BundleRevision(revision.kind, revision.name, revision.event, revision.digest, revision.title,
                           revision.labels, revision.annotations, revision.generation, revision.recorded)
            for revision in chosen_revisions
        ],
        exported=utc_now(),
        selection=selection,
    )
    return bundle, dangling


def _generation_findings(revisions: list[BundleRevision]) -> list[str]:
    """fsck's revision-generation finding for the exported history: the bundle keeps it as
    the store has it (``import bundle`` restores it with the same warning)."""
    findings = []
    last: dict[tuple[str, str], BundleRevision] = {}
    for revision in revisions:
        key = (revision.kind, revision.name)
        if revision.event != "applied":
            last.pop(key, None)
            continue
        previous = last.get(key)
        if previous is not None and (revision.generation or 0) <= (previous.generation or 0):
            findings.append(f"revision-generation {revision.kind}/{revision.name}: generation "
                            f"{revision.generation} follows generation {previous.generation}; exported as the "
                            "store has it (see 'kidx fsck')")
        last[key] = revision
    return findings


def _references(registry: KindRegistry, data: bytes) -> list[str]:
    identity = json.loads(data)
    info = registry.by_kind(identity.get("kind", ""))
    if info is None:
        return []
    return [target for _, target in sorted(references_of(info, identity.get("spec") or {}))]


def export(
    store: Store, registry: KindRegistry, selected: list[tuple[str, str]] | None, selection: str, path: Path | None,
    stream=None,
) -> ExportReport:
    """Write the bundle to ``path`` (atomically: the old file or the whole new one) or to
    ``stream``."""
    bundle, dangling = collect_bundle(store, registry, selected, selection)
    report = ExportReport(len(bundle.names), len(bundle.revisions), len(bundle.objects), dangling,
                          warnings=_generation_findings(bundle.revisions))
    if path is not None:
        report.size = write_bundle_file(path, bundle, crash_point)
    else:
        from kidx.operations.maintain.bundle import write_bundle

        write_bundle(stream, bundle)
    crash_point("after-commit")
    return report


__all__ = ["ExportReport", "collect_bundle", "export"]
