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
Objects go first: every object a copied revision names, and every object the selected
objects refer to (with the names of the protocols, workloads, … they refer to, which
travel with them), each re-hashed on the way. Then one write on the destination records
all names and revisions, all or nothing: a transfer interrupted at any point leaves both
stores consistent (at most some objects nothing names yet), and running it again
completes it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from kidx.errors import KidxError, StoreError
from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.query.targets import Target
from kidx.store.catalog import CatalogQuery, Change, Entry, Revision
from kidx.store.column_cache import column_values
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
    source_digest: str | None  # None: deleted on that side
    destination_digest: str | None


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
        labels = tuple(label_selector.requirements) if label_selector is not None else ()
        found = [entry.name for entry in catalog.list(CatalogQuery(kind=info.kind, labels=labels))]
        if label_selector is None:
            found = sorted(set(found) | set(catalog.names_with_history(info.kind)))
        selected.extend((info, name) for name in found)
    return selected


def plan_transfer(
    source: Store,
    destination: Store,
    registry: KindRegistry,
    targets: list[Target],
    label_selector=None,
    force: bool = False,
) -> tuple[TransferReport, list[_Plan], set[str]]:
    """Decide everything, reading both stores; nothing is written."""
    report = TransferReport()
    plans: list[_Plan] = []
    needed: set[str] = set()  # digests the destination must hold
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
        needed.update(referenced)
    missing_names = [f'{info.resource} "{name}" not found' for info, name in selected if not history[(info.kind, name)]]
    if missing_names:
        from kidx.errors import NotFoundError

        raise NotFoundError("; ".join(missing_names))
    with destination.reading() as destination_catalog:
        for info, name in selected:
            theirs = history[(info.kind, name)]
            ours = destination_catalog.revisions(info.kind, name)
            plan = _decide(info, name, theirs, ours, force)
            if plan.action == "conflict":
                report.conflicts.append(
                    Conflict(info, name, _digest_now(theirs), _digest_now(ours))
                )
                continue
            report.outcomes.append(NameOutcome(info, name, plan.action))
            if plan.action != "unchanged":
                plans.append(plan)
                needed.update(r.digest for r in plan.replay if r.digest)
                if plan.state is not None and plan.state.digest:
                    needed.add(plan.state.digest)
    if report.conflicts and not force:
        raise ConflictError(report.conflicts)
    # earlier revisions may refer to earlier objects: those come too, so that
    # ``history --revision N`` reads the same in both stores
    copied = {r.digest for plan in plans for r in _revisions_of(plan) if r.digest}
    needed.update(_referenced_digests(source, registry, copied - current_digests))
    # objects neither store has (a reference applied with a warning) are not copied
    missing = _missing_objects(destination, needed)
    missing -= _missing_objects(source, missing)
    report.objects_copied = len(missing)
    return report, plans, missing


def _digest_now(revisions: list[Revision]) -> str | None:
    return revisions[-1].digest if revisions and revisions[-1].event != "deleted" else None


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


def copy_objects(source: Store, destination: Store, digests: set[str]) -> int:
    """Copy objects the destination lacks, each re-hashed; returns how many were copied.

    Objects the source does not have either (a reference to an object never stored) are
    skipped: apply allows such references, with a warning.
    """
    if not digests:
        return 0
    contents = source.objects.read_many(sorted(digests))
    for digest, data in contents.items():
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise StoreError(f"object {digest} in {source.location} is corrupt (it does not hash to its name)")
    with destination.write() as transaction:
        for digest in sorted(contents):
            transaction.add_object(digest, contents[digest])
    return len(contents)


def transfer(
    source: Store,
    destination: Store,
    registry: KindRegistry,
    targets: list[Target],
    label_selector=None,
    force: bool = False,
    dry_run: bool = False,
) -> TransferReport:
    report, plans, missing = plan_transfer(source, destination, registry, targets, label_selector, force)
    if dry_run or not (plans or missing):
        return report
    copy_objects(source, destination, missing)  # first, and durable: the names come after
    identities = source.identities({r.digest for plan in plans for r in _revisions_of(plan) if r.digest})
    with destination.write() as transaction:
        _record(transaction, registry, plans, identities)
    return report


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
    return [
        f"{c.info.qualified_name}/{c.name} changed in both stores since they last agreed: "
        f"{source} has {c.source_digest or '(deleted)'}, {destination} has {c.destination_digest or '(deleted)'}"
        for c in conflicts
    ]
