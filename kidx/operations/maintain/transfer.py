"""Push and pull: copy objects, names and their revisions from one store to another.

For every selected name the two stores' revision lists are compared:
- the same: unchanged;
- the destination's is a beginning of the source's: the missing revisions are replayed
  onto the destination exactly (event, digest, metadata, generation, time recorded), so
  both stores end with the same history;
- otherwise the histories diverged (each store recorded something of its own, such as
  the same seed applied to both, or an earlier ``--force``). They last agreed at the
  latest source revision whose state (event, digest, title, labels, annotations) the
  destination also had. Changed since only in the destination, or ending in the same
  state: unchanged. Changed only in the source: its current state becomes one new
  revision in the destination. Changed in both: a conflict, reported with both current
  digests; with ``force`` the destination gets the source's current state as a new
  revision, recorded now (its own revisions stay: nothing applied is lost).
What is copied: every object a copied revision names, and every object the selected
objects refer to (with the names of the protocols, workloads, … they refer to, which
travel with them), each re-hashed on the way. The source is read in one snapshot; the
destination's side is decided (again, after a first look) while holding its write lock,
and the objects and then the names and revisions are written in that one write, all or
nothing. So no other writer can come between the decision and the write: a concurrent
apply's change is seen (a conflict, never overwritten), a second push of the same
source finds the names copied already, and a gc cannot remove an object a name being
committed needs. A revision whose object neither store holds (a damaged source) is an
error naming it. A transfer interrupted at any point leaves both stores as they were,
and running it again completes it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from kidx.errors import KidxError, StoreError
from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.query.label_selector import resolved
from kidx.query.targets import Target
from kidx.store.catalog import CatalogQuery, Change, Entry, Revision
from kidx.store.column_cache import column_values
from kidx.store.faults import crash_point
from kidx.store.store import Store, utc_now


class ConflictError(KidxError):
    """Names changed on both sides; nothing was written."""

    def __init__(self, conflicts: list[Conflict]):
        super().__init__(f"{len(conflicts)} conflicts")
        self.conflicts = conflicts


@dataclass(slots=True)
class Conflict:
    info: KindInfo
    name: str
    source: Revision | None  # each side's current state; None: deleted (or never there)
    destination: Revision | None

    @property
    def source_digest(self) -> str | None:
        return self.source.digest if self.source is not None else None

    @property
    def destination_digest(self) -> str | None:
        return self.destination.digest if self.destination is not None else None


@dataclass(slots=True)
class NameOutcome:
    info: KindInfo
    name: str
    action: str  # created | configured | deleted | unchanged | forced


@dataclass(slots=True)
class TransferReport:
    outcomes: list[NameOutcome] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    objects_copied: int = 0

    def count(self, action: str) -> int:
        return sum(1 for outcome in self.outcomes if outcome.action == action)


def _state(revision: Revision) -> tuple:
    """What a revision says, wherever it is stored (its number and store-local ids aside)."""
    return (revision.event, revision.digest, revision.title, _key(revision.labels), _key(revision.annotations),
            revision.generation, revision.recorded)


def _current(revisions: list[Revision]) -> tuple | None:
    """The state the name is in after its revisions: None when deleted or never there."""
    if not revisions or revisions[-1].event == "deleted":
        return None
    last = revisions[-1]
    return (last.digest, last.title, _key(last.labels), _key(last.annotations))


def _key(mapping: dict) -> tuple:
    return tuple(sorted(mapping.items()))


@dataclass(slots=True)
class _Plan:
    info: KindInfo
    name: str
    action: str
    replay: list[Revision]  # revisions to append, oldest first (fast-forward)
    state: Revision | None = None  # diverged histories: the source's last revision, applied as one new one
    recorded: str | None = None  # its time in the destination (None: now)


def _names(catalog, targets: list[Target], label_selector) -> list[tuple[KindInfo, str]]:
    """The names a transfer is about, in the source: current ones and, when every name of
    a kind is wanted, those that only have history (deleted since)."""
    selected: list[tuple[KindInfo, str]] = []
    for target in targets:
        info = target.info
        if target.names is not None:
            selected.extend((info, name) for name in target.names if (info, name) not in selected)
            continue
        labels = resolved(label_selector.requirements, catalog.label_values) if label_selector is not None else ()
        found = [entry.name for entry in catalog.list(CatalogQuery(kind=info.kind, labels=labels))]
        if label_selector is None:
            found = sorted(set(found) | set(catalog.names_with_history(info.kind)))
        selected.extend((info, name) for name in found)
    return selected


@dataclass(slots=True)
class _Source:
    """What the source says about the selection, read in one snapshot."""

    selected: list[tuple[KindInfo, str]]
    history: dict[tuple[str, str], list[Revision]]
    current_digests: set[str]  # the objects the selected names point at now
    referenced: set[str]  # the objects those refer to


def _read_source(source: Store, registry: KindRegistry, targets: list[Target], label_selector) -> _Source:
    with source.reading() as source_catalog:
        selected = _names(source_catalog, targets, label_selector)
        wanted_names = {(info.kind, name) for info, name in selected}
        history = {(info.kind, name): source_catalog.revisions(info.kind, name) for info, name in selected}
        # the objects the selected ones refer to travel with them, and so do their names
        current_digests = {revisions[-1].digest for revisions in history.values()
                           if revisions and revisions[-1].event != "deleted" and revisions[-1].digest is not None}
        referenced = _referenced_digests(source, registry, current_digests)
        for entries in source_catalog.by_digests(referenced).values():
            for entry in entries:
                if (entry.kind, entry.name) not in wanted_names:
                    info = registry.resolve(entry.kind)
                    wanted_names.add((entry.kind, entry.name))
                    selected.append((info, entry.name))
                    history[(entry.kind, entry.name)] = source_catalog.revisions(entry.kind, entry.name)
    missing_names = [f'{info.resource} "{name}" not found' for info, name in selected if not history[(info.kind, name)]]
    if missing_names:
        from kidx.errors import NotFoundError

        raise NotFoundError("; ".join(missing_names))
    return _Source(selected, history, current_digests, referenced)


def _plan(
    read: _Source, source: Store, destination: Store, destination_catalog, registry: KindRegistry, force: bool
) -> tuple[TransferReport, list[_Plan], set[str]]:
    """Decide everything from the source's snapshot and the destination as
    ``destination_catalog`` sees it; nothing is written. Returns the report, the names'
    plans and the objects to copy."""
    report = TransferReport()
    plans: list[_Plan] = []
    needed: set[str] = set(read.referenced)  # digests the destination must hold
    for info, name in read.selected:
        theirs = read.history[(info.kind, name)]
        ours = destination_catalog.revisions(info.kind, name)
        plan = _decide(info, name, theirs, ours, force)
        if plan.action == "conflict":
            report.conflicts.append(Conflict(info, name, _last(theirs), _last(ours)))
            continue
        report.outcomes.append(NameOutcome(info, name, plan.action))
        if plan.action != "unchanged":
            plans.append(plan)
    if report.conflicts and not force:
        raise ConflictError(report.conflicts)
    # the objects the copied revisions name: each must be in one of the stores
    own = {r.digest for plan in plans for r in _revisions_of(plan) if r.digest}
    needed |= own
    # earlier revisions may refer to earlier objects: those come too, so that
    # ``history --revision N`` reads the same in both stores
    needed.update(_referenced_digests(source, registry, own - read.current_digests))
    missing = _missing_objects(destination, needed)
    lost = _missing_objects(source, missing)
    _refuse_lost_objects(source, plans, own & lost)
    # objects neither store has (a reference applied with a warning) are not copied
    missing -= lost
    report.objects_copied = len(missing)
    return report, plans, missing


def _refuse_lost_objects(source: Store, plans: list[_Plan], lost: set[str]) -> None:
    """A revision to copy whose object neither store holds: the source is damaged."""
    if not lost:
        return
    for plan in plans:
        for revision in _revisions_of(plan):
            if revision.digest in lost:
                raise StoreError(
                    f'{plan.info.resource} "{plan.name}" (revision {revision.revision}) names object '
                    f"{revision.digest}, which is missing: {source.objects.where(revision.digest)}; nothing was "
                    f"copied (run 'kidx fsck --store {source.location}' to see what else is damaged)"
                )


def _last(revisions: list[Revision]) -> Revision | None:
    """The name's current state (None when deleted or never there)."""
    return revisions[-1] if revisions and revisions[-1].event != "deleted" else None


def _decide(info: KindInfo, name: str, theirs: list[Revision], ours: list[Revision], force: bool) -> _Plan:
    their_states, our_states = [_state(r) for r in theirs], [_state(r) for r in ours]
    if their_states == our_states:
        return _Plan(info, name, "unchanged", [])
    if their_states[: len(our_states)] == our_states:
        replay = theirs[len(ours):]
        if replay[-1].event == "deleted":
            action = "deleted"
        elif _current(ours) is None:
            action = "created"
        else:
            action = "configured"
        return _Plan(info, name, action, replay)
    # The histories diverged (each store recorded something of its own). They last agreed
    # at the latest revision of the source whose state the destination also had.
    agreed = _last_agreement(theirs, ours)
    source_changed = agreed is None or agreed[0] < len(theirs) - 1
    destination_changed = agreed is None or agreed[1] < len(ours) - 1
    if not source_changed or _current(theirs) == _current(ours):
        return _Plan(info, name, "unchanged", [])  # the destination is newer, or they agree now
    if destination_changed and not force:
        return _Plan(info, name, "conflict", [])
    last = theirs[-1]
    if last.event == "deleted":
        action = "deleted"
    elif destination_changed:
        action = "forced"
    else:
        action = "created" if _current(ours) is None else "configured"
    # one new revision with the source's state; forced ones are recorded now
    return _Plan(info, name, action, [], last, None if action == "forced" else last.recorded)


def _last_agreement(theirs: list[Revision], ours: list[Revision]) -> tuple[int, int] | None:
    """(i, j): the latest source revision i whose state the destination's revision j also
    had (the latest such j); None when they never agreed."""
    positions: dict[tuple | None, int] = {}
    for position, revision in enumerate(ours):
        positions[_state_of(revision)] = position
    for position in range(len(theirs) - 1, -1, -1):
        found = positions.get(_state_of(theirs[position]))
        if found is not None:
            return position, found
    return None


def _state_of(revision: Revision) -> tuple | None:
    """What a revision leaves the name as: None when deleted."""
    return _current([revision])


def _referenced_digests(store: Store, registry: KindRegistry, digests: Iterable[str]) -> set[str]:
    """Digests that the objects ``digests`` refer to (their reference fields)."""
    found: set[str] = set()
    for identity in store.identities(digests).values():
        info = registry.by_kind(identity.get("kind", ""))
        if info is None:
            continue
        spec = identity.get("spec") or {}
        for reference in info.references:
            target = spec.get(reference.field)
            if isinstance(target, str):
                found.add(target)
    return found


def _missing_objects(store: Store, digests: set[str]) -> set[str]:
    return store.objects.missing(digests) if digests else set()


def _copy_objects(source: Store, transaction, digests: set[str]) -> None:
    """Copy objects the destination lacks into its write, each re-hashed."""
    if not digests:
        return
    contents = source.objects.read_many(sorted(digests))
    for digest, data in contents.items():
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise StoreError(f"object {digest} in {source.location} is corrupt (it does not hash to its name)")
    for digest in sorted(contents):
        transaction.add_object(digest, contents[digest])


def transfer(
    source: Store,
    destination: Store,
    registry: KindRegistry,
    targets: list[Target],
    label_selector=None,
    force: bool = False,
    dry_run: bool = False,
) -> TransferReport:
    """Copy the selection. The destination's part is decided again under its write lock,
    and the objects and the names are written in that one transaction: no other writer
    (an apply, a gc, another push) can change the destination between the decision and
    the write, and no name is committed without its object."""
    read = _read_source(source, registry, targets, label_selector)
    with destination.reading() as destination_catalog:  # a first look, without the lock
        report, plans, missing = _plan(read, source, destination, destination_catalog, registry, force)
    if dry_run or not (plans or missing):
        return report
    with destination.write() as transaction:
        report, plans, missing = _plan(read, source, destination, transaction.catalog, registry, force)
        crash_point("planned")
        _copy_objects(source, transaction, missing)  # in this write, made durable before its commit
        _record(transaction, registry, plans, _identities(source, destination, plans))
    crash_point("after-commit")
    return report


def _identities(source: Store, destination: Store, plans: list[_Plan]) -> dict[str, dict]:
    """The objects the copied revisions name, from the source, or from the destination
    when only it has them."""
    wanted = {r.digest for plan in plans for r in _revisions_of(plan) if r.digest}
    found = source.identities(wanted)
    if len(found) < len(wanted):
        found.update(destination.identities(wanted - found.keys()))
    return found


def _revisions_of(plan: _Plan) -> list[Revision]:
    return plan.replay + ([plan.state] if plan.state is not None else [])


def _record(transaction, registry: KindRegistry, plans: list[_Plan], identities: dict[str, dict]) -> None:
    """Append the planned revisions, in rounds: the k-th revision of every name, grouped by
    what and when, so a large first push is a few bulk statements."""
    referenced_kinds = frozenset(reference.target_kind for info in registry.kinds for reference in info.references)
    catalog = transaction.catalog
    now = utc_now()
    steps: list[list[tuple[_Plan, Revision, str]]] = []
    for plan in plans:
        if plan.state is not None:
            if not steps:
                steps.append([])
            steps[0].append((plan, plan.state, plan.recorded or now))
            continue
        for position, revision in enumerate(plan.replay):
            while len(steps) <= position:
                steps.append([])
            steps[position].append((plan, revision, revision.recorded))
    for step in steps:
        groups: dict[tuple[str, str], list[tuple[_Plan, Revision]]] = {}
        for plan, revision, recorded in step:
            groups.setdefault((revision.event, recorded), []).append((plan, revision))
        for (event, recorded), members in groups.items():
            current: dict[tuple[str, str], Entry] = {}
            by_kind: dict[str, list[str]] = {}
            for plan, _ in members:
                by_kind.setdefault(plan.info.kind, []).append(plan.name)
            for kind, kind_names in by_kind.items():
                for name, entry in catalog.get_many(kind, kind_names).items():
                    current[(kind, name)] = entry
            if event == "deleted":
                for plan, _ in members:
                    entry = current.get((plan.info.kind, plan.name))
                    if entry is not None:
                        transaction.delete(entry, recorded)
                continue
            changes = []
            for plan, revision in members:
                previous = current.get((plan.info.kind, plan.name))
                digest, generation = revision.digest, revision.generation
                if digest is None or generation is None:  # an applied revision records both
                    raise StoreError(f'a revision of {plan.info.resource} "{plan.name}" records no object')
                spec = identities[digest]["spec"]
                if plan.state is not None:
                    generation = previous.generation + 1 if previous else 1
                entry = Entry(
                    kind=plan.info.kind, name=plan.name, digest=digest, title=revision.title,
                    labels=dict(revision.labels), annotations=dict(revision.annotations),
                    created=previous.created if previous else recorded, generation=generation,
                    id=previous.id if previous else None, columns=column_values(plan.info, spec),
                )
                references = [
                    (reference.field, spec[reference.field])
                    for reference in plan.info.references
                    if isinstance(spec.get(reference.field), str)
                ]
                changes.append(Change(entry, references, spec if plan.info.kind in referenced_kinds else None))
            transaction.put(changes, recorded)


def conflict_lines(conflicts: list[Conflict], source: str, destination: str) -> list[str]:
    """One line per conflict: what each store has. When both hold the same object, what
    differs is metadata, and the line says which."""
    lines = []
    for c in conflicts:
        head = f"{c.info.qualified_name}/{c.name} changed in both stores since they last agreed: "
        if c.source is not None and c.destination is not None and c.source_digest == c.destination_digest:
            differences = "; ".join(_metadata_differences(c.source, c.destination, source, destination))
            lines.append(f"{head}both have {c.source_digest}, but {differences}")
        else:
            lines.append(f"{head}{source} has {c.source_digest or '(deleted)'}, "
                         f"{destination} has {c.destination_digest or '(deleted)'}")
    return lines


def _metadata_differences(ours: Revision, theirs: Revision, here: str, there: str) -> list[str]:
    """What differs between two states of one object: title, each label, each annotation."""
    def shown(value: str | None) -> str:
        return "(none)" if value is None else repr(value)

    found = []
    if ours.title != theirs.title:
        found.append(f"the title is {shown(ours.title)} in {here}, {shown(theirs.title)} in {there}")
    for what, mine, yours in (("label", ours.labels, theirs.labels), ("annotation", ours.annotations,
                                                                       theirs.annotations)):
        for key in sorted(set(mine) | set(yours)):
            if mine.get(key) != yours.get(key):
                found.append(f"{what} {key} is {shown(mine.get(key))} in {here}, {shown(yours.get(key))} in {there}")
    return found
