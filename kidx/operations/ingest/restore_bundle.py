"""Restore a bundle into a store: ``kidx import bundle`` (``Store.import_bundle``).

Restore writes the bundle's objects, then its names and revisions exactly as recorded
(times, generations), in one catalog transaction. A name that already has a history must
have exactly the bundle's (then it is unchanged); anything else is a conflict and nothing
is written. The bundle's format is ``kidx.operations.maintain.bundle``'s; writing one,
``kidx.operations.export.bundle_export``'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kidx.errors import InvalidInputError, Location, Problem
from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.operations.maintain.bundle import Bundle, BundleRevision
from kidx.operations.maintain.fsck import references_of
from kidx.store.catalog import Change, Entry, Revision
from kidx.store.column_cache import column_values
from kidx.store.faults import crash_point
from kidx.store.store import Store

if TYPE_CHECKING:
    from collections.abc import Callable

    from kidx.operations.reporting import Reporter


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


@dataclass(slots=True)
class BundleImport:
    """What ``kidx import bundle`` read and what restoring it did."""

    contents: Bundle
    report: RestoreReport


def import_bundle(path: str, registry: KindRegistry, open_store: Callable[[], Store], reporter: Reporter,
                  dry_run: bool = False) -> BundleImport:
    """``kidx import bundle FILE``: the bundle read and checked (what a reader could not
    check said through ``reporter``), then restored into the store ``open_store`` opens."""
    from kidx.operations.events import BundleNote
    from kidx.operations.maintain.bundle import read_bundle

    contents = read_bundle(path, registry)
    for warning in contents.warnings:
        reporter(BundleNote(warning))
    return BundleImport(contents, restore(open_store(), registry, contents, path, dry_run=dry_run))


__all__ = ["BundleImport", "RestoreOutcome", "RestoreReport", "import_bundle", "restore"]
