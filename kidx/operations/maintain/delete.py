"""Delete: remove names from the catalog; their revisions and object files stay.

A deleted name's history remains in ``revisions`` (a deletion is recorded as one), and its
object file stays: the revisions keep it, so gc does not remove it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kidx.errors import InvalidInputError, Problem
from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.store.catalog import Entry
from kidx.store.faults import crash_point
from kidx.store.store import Store, utc_now

if TYPE_CHECKING:
    from kidx.query.label_selector import LabelSelector
    from kidx.query.targets import Target


class DeleteResult(NamedTuple):
    deleted: list[tuple[KindInfo, Entry]]  # deleted by this command (or that would be, in a dry run)
    missing: list[str]  # NotFound messages: names that matched nothing, or that another process deleted


def delete_selected(
    store: Store, targets: list[Target], selector: LabelSelector | None, dry_run: bool = False
) -> DeleteResult:
    """Delete what ``targets`` and ``selector`` select, all the names or none."""
    from kidx.query.selection import not_found_message, select

    selection = select(store.catalog(), targets, selector)
    deleted, gone = delete_entries(store, selection.entries, dry_run=dry_run)
    # names deleted by another process meanwhile are not this command's: NotFound, as kubectl
    return DeleteResult(deleted, selection.missing + [not_found_message(info, entry.name) for info, entry in gone])


def targets_from_files(filename: list[str], recursive: bool, registry: KindRegistry) -> list[Target]:
    """The objects the manifests in ``filename`` name (``delete -f``): kind and name only."""
    from kidx.manifests.reader import expand_sources, read_sources
    from kidx.query.targets import add_named

    result = read_sources(expand_sources(filename, recursive))
    if result.problems:
        raise InvalidInputError(result.problems)
    targets: list[Target] = []
    for document in result.documents:
        info = registry.by_kind(document.body.get("kind", ""))
        name = (document.body.get("metadata") or {}).get("name")
        if info is None or not isinstance(name, str):
            raise InvalidInputError([Problem(document.location(), "not a kidx object with a name")])
        add_named(targets, info, name)
    return targets


def delete_entries(
    store: Store, entries: list[tuple[KindInfo, Entry]], dry_run: bool = False
) -> tuple[list[tuple[KindInfo, Entry]], list[tuple[KindInfo, Entry]]]:
    """Delete the selected names; returns (deleted, gone): those this command deleted, and
    those another process deleted between the selection and the write lock."""
    if dry_run or not entries:
        return list(entries), []
    deleted, gone = [], []
    with store.write() as transaction:  # all the names or none
        now = utc_now()
        for info, entry in entries:
            current = transaction.catalog.get(info.kind, entry.name)
            if current is None:
                gone.append((info, entry))
            else:
                transaction.delete(current, now)
                deleted.append((info, current))
    crash_point("after-commit")
    return deleted, gone
