"""fsck: check that the store is what it claims to be, and repair what can be repaired.

Problems (each makes fsck exit 1):

- ``catalog-integrity``: the catalog database fails its own consistency check;
- ``catalog-missing``: object files exist but the catalog does not;
- ``damaged-object``: an object file, or a row of the object pack, does not hash to its
  name (edited, truncated, empty);
- ``missing-object``: a name or revision refers to an object that is not stored;
- ``name-revision``: a name's current state is not its last revision;
- ``revision-generation``: an applied revision of a name whose generation is not higher
  than the one before it (each change raises it; a re-created name starts again at 1);
- ``unknown-kind``: a name's kind has no CRD, so its indexes cannot be checked;
- ``invalid-metadata``: a name, label or annotation key that apply refuses (written by a
  kidx whose bundle import did not check them): such a name cannot be given to commands;
- ``wrong-kind``: a name whose object is of another kind;
- ``label-index``, ``reference-index``: the label or reference rows of a name disagree
  with its labels or its object's reference fields (or belong to no name);
- ``cached-columns``: the printer-column values cached with a name disagree with its object
  (values cached for other printer columns, by a kidx whose CRDs print others, carry
  another fingerprint: reads never use them, so they are no inconsistency).

Notes (reported, not problems):

- ``orphaned-object``: an object no name, revision or reference keeps (``kidx gc``);
- ``temporary-file``: left by an interrupted write (``kidx gc``);
- ``stray-file``: a file under objects/ that kidx did not write (left alone);
- ``dangling-reference``: a reference to a digest the store does not hold (allowed, as
  ``apply`` warns).

Repair rebuilds indexes and cached columns from the names and objects, and writes back
missing or damaged objects found in a bundle (a damaged file is moved to ``lost+found/``
first, never deleted). What cannot be rebuilt is reported, not guessed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from pathlib import Path

from kidx.errors import KidxError, StoreError
from kidx.identity.canonical import digest_bytes
from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.store.catalog import Change, Entry, Revision
from kidx.store.column_cache import column_values
from kidx.store.store import Store

PROBLEM_CHECKS = (
    "catalog-integrity", "catalog-missing", "damaged-object", "missing-object", "name-revision",
    "revision-generation", "unknown-kind", "invalid-metadata", "wrong-kind", "label-index", "reference-index",
    "cached-columns",
)
NOTE_CHECKS = ("orphaned-object", "temporary-file", "stray-file", "dangling-reference")
REINDEXED = ("label-index", "reference-index", "cached-columns")  # --repair rebuilds them
REPAIRABLE_FROM_OBJECTS = ("label-index", "reference-index", "cached-columns", "catalog-integrity")
MAX_HOLDERS = 3  # names listed for a missing object


@dataclass(slots=True)
class Finding:
    check: str
    subject: str  # a digest, Kind/name, or a path relative to the store
    message: str
    path: str | None = None  # the file concerned, relative to the store

    @property
    def is_problem(self) -> bool:
        return self.check in PROBLEM_CHECKS

    def as_dict(self) -> dict:
        found = {"check": self.check, "subject": self.subject, "message": self.message}
        if self.path is not None:
            found["path"] = self.path
        return found


@dataclass(slots=True)
class FsckReport:
    checked: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    repaired: list[Finding] = field(default_factory=list)

    @property
    def problems(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.is_problem]

    @property
    def notes(self) -> list[Finding]:
        return [finding for finding in self.findings if not finding.is_problem]


def _made_for_other_columns(cached: str | None, current: str | None) -> bool:
    """A cached value whose fingerprint is another set of printer columns' (kidx.store.
    column_cache): a kidx whose CRDs print other columns wrote it; reads never use it."""
    if not isinstance(cached, str) or not isinstance(current, str):
        return False
    return cached.partition(":")[0] != current.partition(":")[0]


def references_of(info: KindInfo, spec: dict) -> set[tuple[str, str]]:
    return {
        (reference.field, spec[reference.field])
        for reference in info.references
        if isinstance(spec.get(reference.field), str)
    }


class _Scan:
    """One pass over the store: everything fsck needs, read once."""

    def __init__(self, store: Store, registry: KindRegistry):
        self.store = store
        self.registry = registry
        self.report = FsckReport()
        # intact objects: their reference pairs and printer-column values, not the whole
        # object, so that a large store is checked in little memory
        self.intact: dict[str, tuple[frozenset, str | None]] = {}
        self.kinds: dict[str, str] = {}  # intact object -> its kind
        self.damaged: set[str] = set()
        self.entries: list[Entry] = []
        self.revisions: list[Revision] = []

    def add(self, check: str, subject: str, message: str, path: str | None = None) -> None:
        self.report.findings.append(Finding(check, subject, message, path))

    def relative(self, path: Path | str) -> str:
        return shown_path(self.store, path)

    def run(self) -> FsckReport:
        catalog_exists = self.store.exists()
        with self.store.reading(lost_ok=True) as catalog:  # fsck reports a lost catalog itself
            if catalog_exists:
                for message in catalog.integrity_problems():
                    self.add("catalog-integrity", "catalog", message)
            try:
                self.entries = list(catalog.all_entries())
                self.revisions = list(catalog.all_revisions())
                indexed, stray_labels, stray_references = catalog.index_rows()
            except Exception as exc:  # a damaged catalog: say so, check the objects anyway
                if isinstance(exc, KidxError):
                    raise
                self.add("catalog-integrity", "catalog", f"cannot be read: {exc}")
                self.entries, self.revisions, indexed, stray_labels, stray_references = [], [], {}, 0, 0
        self._objects()
        if not catalog_exists and self.intact:
            self.add("catalog-missing", "catalog",
                     f"{len(self.intact)} object files but no catalog: names and history can only be "
                     "restored from a bundle (kidx import bundle FILE)")
        self._needed_objects()
        self._names_match_history()
        self._generations_increase()
        self._names_valid()
        self._indexes(indexed, stray_labels, stray_references)
        self._orphans_and_dangling()
        self._leftovers()
        self.report.checked = {
            "objects": len(self.intact) + len(self.damaged),
            "names": len(self.entries),
            "revisions": len(self.revisions),
        }
        return self.report

    def _objects(self) -> None:
        """Every object re-hashed, loose files and packed rows alike (a packed object's
        path is the pack's, so its message names the digest)."""
        objects = self.store.objects
        for digest in objects.digests():
            path = objects.where(digest)
            which = "" if os.path.basename(path) == digest[9:] else f"packed object {digest}: "
            try:
                data = objects.read(digest)
            except OSError as exc:
                self.damaged.add(digest)
                self.add("damaged-object", digest, f"{which}cannot be read: {exc.strerror or exc}", self.relative(path))
                continue
            actual = digest_bytes(data)
            if actual != digest:
                self.damaged.add(digest)
                detail = ("empty file" if not which else "empty") if not data else (
                    f"content hashes to {actual}, not to its name")
                self.add("damaged-object", digest, which + detail, self.relative(path))
                continue
            try:
                identity = json.loads(data)
            except ValueError:
                identity = None
            if not isinstance(identity, dict) or not isinstance(identity.get("spec"), dict):
                self.damaged.add(digest)
                self.add("damaged-object", digest, f"{which}not a kidx object ({{apiVersion, kind, spec}})",
                         self.relative(path))
                continue
            if isinstance(identity.get("kind"), str):
                self.kinds[digest] = identity["kind"]
            info = self.registry.by_kind(identity.get("kind", ""))
            if info is None:
                self.intact[digest] = (frozenset(), None)
            else:
                self.intact[digest] = (frozenset(references_of(info, identity["spec"])),
                                       column_values(info, identity["spec"]))

    def _needed_objects(self) -> None:
        holders: dict[str, list[str]] = {}
        for entry in self.entries:
            holders.setdefault(entry.digest, []).append(f"{entry.kind}/{entry.name}")
        for revision in self.revisions:
            if revision.digest is not None:
                holders.setdefault(revision.digest, []).append(
                    f"{revision.kind}/{revision.name} revision {revision.revision}"
                )
        for digest, names in holders.items():
            if digest in self.intact or digest in self.damaged:
                continue
            shown = ", ".join(dict.fromkeys(names[:MAX_HOLDERS]))
            more = f" and {len(names) - MAX_HOLDERS} more" if len(names) > MAX_HOLDERS else ""
            self.add("missing-object", digest, f"no object file; needed by {shown}{more}",
                     self.relative(self.store.objects.where(digest)))

    def _names_match_history(self) -> None:
        last: dict[tuple[str, str], Revision] = {}
        for recorded in self.revisions:
            last[(recorded.kind, recorded.name)] = recorded
        for entry in self.entries:
            revision: Revision | None = last.pop((entry.kind, entry.name), None)
            if revision is None:
                self.add("name-revision", f"{entry.kind}/{entry.name}", "has no revision")
            elif revision.event != "applied" or (
                revision.digest, revision.title, revision.labels, revision.annotations, revision.generation
            ) != (entry.digest, entry.title, entry.labels, entry.annotations, entry.generation):
                self.add("name-revision", f"{entry.kind}/{entry.name}",
                         f"current state differs from its last revision ({revision.revision}, {revision.event})")
        for (kind, name), revision in last.items():
            if revision.event == "applied":
                self.add("name-revision", f"{kind}/{name}",
                         f"revision {revision.revision} applied it, but the name is not in the catalog")

    def _generations_increase(self) -> None:
        """Each applied revision of a name raises its generation, from 1 when the name is
        created (again, after a deletion, whose revision keeps the generation it ended)."""
        before: dict[tuple[str, str], Revision] = {}
        for revision in self.revisions:
            key = (revision.kind, revision.name)
            if revision.event != "applied":
                before.pop(key, None)
                continue
            previous = before.get(key)
            if previous is not None and (revision.generation or 0) <= (previous.generation or 0):
                self.add("revision-generation", f"{revision.kind}/{revision.name}",
                         f"revision {revision.revision} has generation {revision.generation}, no higher than "
                         f"revision {previous.revision} before it ({previous.generation})")
            before[key] = revision

    def _names_valid(self) -> None:
        """What apply would refuse in a stored name: its metadata, or an object of another kind."""
        from kidx.kinds.metadata import metadata_errors

        for entry in self.entries:
            subject = f"{entry.kind}/{entry.name}"
            metadata = {"name": entry.name, "labels": entry.labels, "annotations": entry.annotations}
            for path, message in metadata_errors(metadata):
                self.add("invalid-metadata", subject, f"{path}: {message}")
            kind = self.kinds.get(entry.digest)
            if kind is not None and kind != entry.kind:
                self.add("wrong-kind", subject, f"its object {entry.digest} is of kind {kind}")

    def _indexes(self, indexed, stray_labels: int, stray_references: int) -> None:
        for entry in self.entries:
            subject = f"{entry.kind}/{entry.name}"
            labels, references = indexed.get((entry.kind, entry.name), ({}, set()))
            if labels != entry.labels:
                self.add("label-index", subject,
                         f"label rows {_mapping(labels)} differ from its labels {_mapping(entry.labels)}")
            info = self.registry.by_kind(entry.kind)
            if info is None:
                self.add("unknown-kind", subject, f"no CRD declares kind {entry.kind}")
                continue
            summary = self.intact.get(entry.digest)
            if summary is None:
                continue  # missing or damaged: reported already
            expected, columns = summary
            if references != expected:
                self.add("reference-index", subject,
                         f"reference rows {_pairs(references)} differ from its object's {_pairs(expected)}")
            if entry.columns != columns and not _made_for_other_columns(entry.columns, columns):
                self.add("cached-columns", subject, "cached printer-column values differ from its object")
        if stray_labels:
            self.add("label-index", "(no name)", f"{stray_labels} label rows belong to no name")
        if stray_references:
            self.add("reference-index", "(no name)", f"{stray_references} reference rows belong to no name")

    def _orphans_and_dangling(self) -> None:
        kept = kept_digests(self.entries, self.revisions, {digest: refs for digest, (refs, _) in self.intact.items()})
        for digest in sorted(self.intact.keys() - kept):
            path = self.store.objects.where(digest)
            which = "" if os.path.basename(path) == digest[9:] else f"packed object {digest}: "
            self.add("orphaned-object", digest, f"{which}no name, revision or reference keeps it (kidx gc removes it)",
                     self.relative(path))
        stored = self.intact.keys() | self.damaged
        for entry in self.entries:
            summary = self.intact.get(entry.digest)
            if summary is None:
                continue
            for field_name, target in sorted(summary[0]):
                if target not in stored:
                    self.add("dangling-reference", f"{entry.kind}/{entry.name}",
                             f"{field_name} {target} is not in the store")

    def _leftovers(self) -> None:
        for leftover in self.store.objects.leftovers():
            if leftover.temporary:
                self.add("temporary-file", self.relative(leftover.path),
                         "left by an interrupted write (kidx gc removes it)", self.relative(leftover.path))
            else:
                self.add("stray-file", self.relative(leftover.path), "not written by kidx (left alone)",
                         self.relative(leftover.path))


def _mapping(mapping: dict) -> str:
    return json.dumps(mapping, sort_keys=True, ensure_ascii=False)


def _pairs(pairs: Set) -> str:
    return "{" + ", ".join(f"{field_name}={target[:19]}…" for field_name, target in sorted(pairs)) + "}"


def kept_digests(
    entries: Iterable[Entry], revisions: Iterable[Revision], references: Mapping[str, Iterable[tuple[str, str]]]
) -> set[str]:
    """Digests that a name, a revision, or a reference from a kept object keeps;
    ``references``: the (field, target) pairs of each stored object."""
    kept = {entry.digest for entry in entries}
    kept |= {revision.digest for revision in revisions if revision.digest is not None}
    pending = list(kept)
    while pending:
        for _, target in references.get(pending.pop(), ()):
            if target not in kept:
                kept.add(target)
                pending.append(target)
    return kept


def shown_path(store: Store, path: Path | str) -> str:
    """A path inside a folder store, relative to it (as fsck and gc print them)."""
    text = str(path)
    return os.path.relpath(text, store.location) if text.startswith(str(store.location) + os.sep) else text


def fsck(store: Store, registry: KindRegistry, repair: bool = False, bundle_path: str | None = None) -> FsckReport:
    if not store.exists() and next(iter(store.objects.digests()), None) is None:
        raise StoreError(f"there is no store at {store.location}")
    report = _Scan(store, registry).run()
    if not repair or not report.problems or not store.exists():
        return report  # without a catalog there is nothing to repair against: never create one here
    repaired, unrepaired = _repair(store, registry, report, bundle_path)
    report = _Scan(store, registry).run()
    report.repaired = repaired
    reasons = {(finding.check, finding.subject): finding.message for finding in unrepaired}
    for finding in report.findings:
        reason = reasons.get((finding.check, finding.subject))
        if reason is not None:
            finding.message += f"; {reason}"
    return report


def _repair(
    store: Store, registry: KindRegistry, report: FsckReport, bundle_path: str | None
) -> tuple[list[Finding], list[Finding]]:
    """What was repaired, and what could not be, with why."""
    repaired: list[Finding] = []
    unrepaired: list[Finding] = []
    bundle_objects: dict[str, bytes] = {}
    if bundle_path is not None:
        from kidx.operations.maintain.bundle import read_bundle

        bundle_objects = read_bundle(bundle_path, registry).objects
    with store.write() as transaction:  # under the write lock: no apply changes what is being repaired
        integrity = [f for f in report.problems if f.check == "catalog-integrity"]
        if integrity:
            transaction.rebuild_catalog_indexes()  # what a damaged index needs; what is left is reported
            repaired.append(Finding("catalog-integrity", "catalog", "rebuilt the catalog's indexes from its tables"))
        for finding in report.problems:
            if finding.check not in ("damaged-object", "missing-object") or finding.subject not in bundle_objects:
                continue
            message = f"written from {bundle_path}"
            moved = _folder_moved_aside(store, finding.subject)
            if moved is not None:
                message += f"; the folder in its place, with everything in it, was moved to {moved}"
            elif finding.check == "damaged-object":
                packed = os.path.basename(store.objects.where(finding.subject)) != finding.subject[9:]
                kept = _keep_in_lost_and_found(store, finding.subject)
                if kept is None:  # nowhere to keep the damaged copy: never replace it unseen
                    unrepaired.append(Finding(
                        finding.check, finding.subject, "not replaced: fsck keeps a damaged object's bytes in the "
                        "store folder's lost+found/, which this store does not have; applying the manifest that "
                        "made it again replaces it", finding.path))
                    continue
                message += f"; the damaged {'bytes were copied' if packed else 'file was moved'} to {kept}"
            transaction.add_object(finding.subject, bundle_objects[finding.subject])
            repaired.append(Finding(finding.check, finding.subject, message, finding.path))
        to_reindex = {f.subject for f in report.findings if f.check in REINDEXED}
        if "(no name)" in to_reindex:
            transaction.drop_stray_index_rows()
            repaired.extend(Finding(f.check, f.subject, "removed", f.path)
                            for f in report.problems if f.subject == "(no name)")
        for entry in transaction.catalog.all_entries() if to_reindex else ():
            subject = f"{entry.kind}/{entry.name}"
            info = registry.by_kind(entry.kind)
            if subject not in to_reindex or info is None:
                continue
            identity = _identity_or_none(store, entry.digest)
            if identity is None:
                continue
            spec = identity["spec"]
            columns = column_values(info, spec)
            transaction.reindex(Change(entry._replace(columns=columns), sorted(references_of(info, spec))))
            repaired.extend(
                Finding(f.check, f.subject, "rebuilt from its name and object", f.path)
                for f in report.findings
                if f.subject == subject and f.check in REINDEXED
            )
    return repaired, unrepaired


def _folder_moved_aside(store: Store, digest: str) -> str | None:
    """A folder where the object's file belongs (it may hold anything, so it is never
    deleted) moved whole into ``lost+found/``; where it went, or None when there was none."""
    where = store.objects.where(digest)
    if not os.path.isdir(where) or os.path.islink(where):
        return None
    target = _lost_and_found_place(Path(store.location), digest, ".folder")
    os.rename(where, target)
    return os.path.relpath(target, store.location)


def _lost_and_found_place(store_folder: Path, digest: str, suffix: str = "") -> Path:
    """A free name in the store's ``lost+found/`` for what was kept of ``digest``."""
    folder = store_folder / "lost+found"
    folder.mkdir(exist_ok=True)
    hexdigest = digest.partition(":")[2]
    target = folder / f"{hexdigest}{suffix}"
    number = 1
    while target.exists():
        number += 1
        target = folder / f"{hexdigest}{suffix}.{number}"
    return target


def _identity_or_none(store: Store, digest: str) -> dict | None:
    try:
        return store.identity(digest)
    except StoreError:
        return None


def _keep_in_lost_and_found(store: Store, digest: str) -> str | None:
    """Copy a damaged object's bytes to ``lost+found/`` in a folder store; None elsewhere."""
    folder = Path(store.location)
    if not folder.is_dir():
        return None
    try:
        data = store.objects.read(digest)
    except OSError:
        return None
    target = _lost_and_found_place(folder, digest)
    target.write_bytes(data)
    return os.path.relpath(target, store.location)


__all__ = ["Finding", "FsckReport", "NOTE_CHECKS", "PROBLEM_CHECKS", "fsck", "kept_digests", "references_of"]
