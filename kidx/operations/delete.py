"""Delete: remove names from the catalog; their revisions and object files stay.

A deleted name's history remains in ``revisions`` (a deletion is recorded as one), and its
object file stays until a garbage collector removes unreferenced objects.
"""

from __future__ import annotations

from kidx.kinds.registry import KindInfo
from kidx.store.catalog import Entry
from kidx.store.store import Store, utc_now


def delete_entries(store: Store, entries: list[tuple[KindInfo, Entry]], dry_run: bool = False) -> None:
    if dry_run or not entries:
        return
    with store.write() as transaction:  # all the names or none
        now = utc_now()
        for info, entry in entries:
            current = transaction.catalog.get(info.kind, entry.name)
            if current is not None:  # another process may have deleted it meanwhile
                transaction.delete(current, now)
