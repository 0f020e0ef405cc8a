"""Export a store, or part of it, as a bundle; restore a bundle into a store.

Export reads one consistent snapshot of the catalog. With no selection it takes every
name, every revision (deleted names' too) and every object they keep; with a selection,
the selected names, the names of every object they refer to (transitively), all their
revisions and every object those keep. Objects are copied as stored, after checking
that each still hashes to its name: a bundle never carries damage along.

Restore (``kidx import bundle``) writes the bundle's objects, then its names and
revisions exactly as recorded (times, generations), in one catalog transaction. A name
that already has a history must have exactly the bundle's (then it is unchanged);
anything else is a conflict and nothing is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kidx.errors import InvalidInputError, Location, Problem, StoreError, UsageError
from kidx.identity.canonical import digest_bytes
from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.operations.bundle import Bundle, BundleName, BundleRevision, write_bundle_file
from kidx.operations.fsck import references_of
from kidx.store.catalog import Change, Entry, Revision
from kidx.store.column_cache import column_values
from kidx.store.faults import crash_point
from kidx.store.store import Store, utc_now

if TYPE_CHECKING:
    from collections.abc import Callable

    from kidx.operations.reporting import Reporter


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


def export_selection(
    store: Store, registry: KindRegistry, arguments: list[str], selector, runs_only: bool = False,
    format_name: str = "bmf",
) -> tuple[list[tuple[str, str]] | None, list[str]]:
    """``(kind, name)`` of what ``export`` writes (None: the whole store) and the
    NotFound messages of names asked for that matched nothing. With ``runs_only`` (the
    Bencher Metric Format) a selection of any other kind is refused."""
    if not arguments and selector is None:
        return None, []
    from kidx.query.selection import select
    from kidx.query.targets import parse_targets, selection_rules

    selection_rules(arguments, selector)
    targets = parse_targets(arguments, registry, "export")
    others = sorted({target.info.kind for target in targets} - {"BenchmarkRun"})
    if runs_only and others:
        holder = "BMF" if format_name == "bmf" else format_name
        raise UsageError(f"{holder} holds runs only, not {', '.join(others)}: select runs (kidx export runs …)")
    chosen = select(store.catalog(), targets, selector)
    return [(info.kind, entry.name) for info, entry in chosen.entries], chosen.missing


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
        from kidx.operations.bundle import write_bundle

        write_bundle(stream, bundle)
    crash_point("after-commit")
    return report


# --- restore -------------------------------------------------------------------------------


@dataclass(slots=True)
class RestoreOutcome:
    info: KindInfo
    name: str
    action: str  # restored | unchanged


@dataclass(slots=True)
class RestoreReport:
    outcomes: list[RestoreOutcome] = field(default_factory=list)
    objects_written: int = 0


def _history_key(revision) -> tuple:
    return (revision.event, revision.digest, revision.title, revision.labels, revision.annotations,
            revision.generation, revision.recorded)


def restore(store: Store, registry: KindRegistry, bundle: Bundle, source: str, dry_run: bool = False) -> RestoreReport:
    from kidx.store.objects import PRESENT

    if dry_run:
        with store.reading() as catalog:
            return _plan_restore(catalog, registry, bundle, source)[0]
    with store.write() as transaction:
        report, restored = _plan_restore(transaction.catalog, registry, bundle, source)
        for digest, data in bundle.objects.items():
            if transaction.add_object(digest, data) != PRESENT:
                report.objects_written += 1
        names = {(name.kind, name.name): name for name in bundle.names}
        changes = []
        for key in restored:
            name = names.get(key)
            if name is None:
                continue  # deleted: history only
            info = registry.by_kind(name.kind)
            assert info is not None  # the bundle was read with the registry's kinds only
            spec = json.loads(bundle.objects[name.digest])["spec"]
            changes.append(Change(
                Entry(kind=name.kind, name=name.name, digest=name.digest, title=name.title, labels=name.labels,
                      annotations=name.annotations, created=name.created, generation=name.generation,
                      columns=column_values(info, spec)),
                sorted(references_of(info, spec)),
                spec,
            ))
        transaction.restore(changes, [
            Revision(r.kind, r.name, 0, r.event, r.digest, r.title, r.labels, r.annotations, r.generation, r.recorded)
            for r in bundle.revisions if (r.kind, r.name) in restored
        ])
    crash_point("after-commit")
    return report


def _plan_restore(catalog, registry: KindRegistry, bundle: Bundle, source: str) -> tuple[RestoreReport, set]:
    """Per name in the bundle: restored (the store never had it) or unchanged (it has the
    same history); any other overlap is a conflict, and nothing is written."""
    history: dict[tuple[str, str], list[BundleRevision]] = {}
    for revision in bundle.revisions:
        history.setdefault((revision.kind, revision.name), []).append(revision)
    stored: dict[tuple[str, str], list[Revision]] = {}
    for recorded in catalog.all_revisions():
        key = (recorded.kind, recorded.name)
        if key in history:
            stored.setdefault(key, []).append(recorded)
    report = RestoreReport()
    restored: set[tuple[str, str]] = set()
    conflicts: list[Problem] = []
    for key, revisions in history.items():
        existing = stored.get(key)
        if existing is None:
            restored.add(key)
            action = "restored"
        elif [_history_key(r) for r in existing] == [_history_key(r) for r in revisions]:
            action = "unchanged"
        else:
            conflicts.append(Problem(
                Location(source),
                f'{key[0]} "{key[1]}" already has a different history in the store '
                f"({len(existing)} revisions here, {len(revisions)} in the bundle)",
            ))
            continue
        info = registry.by_kind(key[0])
        assert info is not None  # the bundle was read with the registry's kinds only
        report.outcomes.append(RestoreOutcome(info, key[1], action))
    if conflicts:
        conflicts.append(Problem(Location(source), "a bundle restores into an empty store, or over its own "
                                 "earlier restore; nothing was changed"))
        raise InvalidInputError(conflicts)
    return report, restored


__all__ = ["ExportReport", "RestoreReport", "collect_bundle", "export", "restore"]


@dataclass(slots=True)
class BundleImport:
    """What ``kidx import bundle`` read and what restoring it did."""

    contents: Bundle
    report: RestoreReport


def import_bundle(path: str, registry: KindRegistry, open_store: Callable[[], Store], reporter: Reporter,
                  dry_run: bool = False) -> BundleImport:
    """``kidx import bundle FILE``: the bundle read and checked (what a reader could not
    check said through ``reporter``), then restored into the store ``open_store`` opens."""
    from kidx.operations.bundle import read_bundle
    from kidx.operations.events import BundleNote

    contents = read_bundle(path, registry)
    for warning in contents.warnings:
        reporter(BundleNote(warning))
    return BundleImport(contents, restore(open_store(), registry, contents, path, dry_run=dry_run))
