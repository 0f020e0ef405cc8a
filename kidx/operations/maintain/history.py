"""History: every state a name has had, and what changed from one to the next."""

from __future__ import annotations

from typing import NamedTuple

from kidx.errors import NotFoundError
from kidx.kinds.registry import KindInfo
from kidx.query.selection import not_found_message
from kidx.store.catalog import Entry, Revision
from kidx.store.store import Store, manifest_of


class RevisionLine(NamedTuple):
    revision: Revision
    changes: str  # "created", "spec, labels", "deleted", …


def _changes(previous: Revision | None, current: Revision) -> str:
    if current.event == "deleted":
        return "deleted"
    if previous is None:
        return "created"
    if previous.event == "deleted":
        return "re-created"
    changed = [
        field
        for field, before, after in (
            ("spec", previous.digest, current.digest),
            ("title", previous.title, current.title),
            ("labels", previous.labels, current.labels),
            ("annotations", previous.annotations, current.annotations),
        )
        if before != after
    ]
    return ", ".join(changed) or "none"


def history(store: Store, info: KindInfo, name: str) -> list[RevisionLine]:
    revisions = store.catalog().revisions(info.kind, name)
    if not revisions:
        raise NotFoundError(not_found_message(info, name))
    lines, previous = [], None
    for revision in revisions:
        lines.append(RevisionLine(revision, _changes(previous, revision)))
        previous = revision
    return lines


def revision_manifest(store: Store, info: KindInfo, name: str, number: int) -> dict:
    """The manifest as it was at revision ``number`` (a deleted name's last state too)."""
    revisions = {r.revision: r for r in store.catalog().revisions(info.kind, name)}
    if not revisions:
        raise NotFoundError(not_found_message(info, name))
    chosen = revisions.get(number)
    if chosen is None:
        raise NotFoundError(f'revision {number} of {info.resource} "{name}" not found (it has 1 to {max(revisions)})')
    if chosen.digest is None:  # a deletion restored from a bundle that did not record the object
        raise NotFoundError(f'revision {number} of {info.resource} "{name}" records no object')
    # creationTimestamp: when this incarnation was created (a re-create after a delete is new)
    created, previous = "", None
    for key in sorted(r for r in revisions if r <= number):
        if previous is None or previous.event == "deleted":
            created = revisions[key].recorded
        previous = revisions[key]
    entry = Entry(
        kind=info.kind, name=name, digest=chosen.digest, title=chosen.title, labels=chosen.labels,
        annotations=chosen.annotations, created=created, generation=chosen.generation or 0,
    )
    return manifest_of(entry, store.identity(chosen.digest))
