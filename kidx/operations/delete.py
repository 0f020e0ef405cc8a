"""Delete: remove names from the catalog; their revisions and object files stay.

A deleted name's history remains in ``revisions`` (a deletion is recorded as one), and its
object file stays: the revisions keep it, so gc does not remove it.
"""

from __future__ import annotations

from kidx.kinds.registry import KindInfo
from kidx.store.catalog import Entry
from kidx.store.faults import crash_point
from kidx.store.store import Store, utc_now


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
