"""How the SQLite catalog opens its file: the page cache every connection keeps, and a
read-only connection that also reads a store in a folder nobody may write, or one that a
writer killed mid-write left to be rolled back."""

from __future__ import annotations

import os
import sqlite3

from kidx.errors import StoreError
from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

# A connection's page cache (SQLite's default is 2,000 KiB), filled only as pages are read:
# a bulk write touches many pages, and a reader that makes many selections (compare's
# history: hundreds of them) reuses the index pages it has read.
CACHE_KIB = 65_536

#: SQLite's result code for a read-only connection asked to write; its extended codes say
#: why, among them a hot rollback journal or a WAL that only a writer may recover, which a
#: writer killed mid-write leaves behind
SQLITE_READONLY = 8


def connect_read_only(path: Path | str, busy_timeout_s: float) -> sqlite3.Connection:
    """A read-only connection. In a folder nobody may write, SQLite cannot create the WAL's
    shared-memory file that readers need; there nobody can be writing either, so the file
    is read as immutable, unless a writer stopped mid-write left its journal or WAL there:
    read as immutable, the file would lack what that WAL committed or hold half of what
    the journal undoes, so it is refused (``_unfinished_write``). A file a killed writer
    left with a hot journal (or a WAL only a writer may recover) where the folder may be
    written is first rolled back to its committed state (``_recover``)."""
    uri = "file:" + str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    connection = sqlite3.connect(uri, uri=True, timeout=busy_timeout_s, isolation_level=None)
    try:
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.OperationalError as exc:
        connection.close()
        if not os.access(os.path.dirname(os.fspath(path)) or ".", os.W_OK):
            _refuse_unfinished_write(path)
            connection = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)
        elif getattr(exc, "sqlite_errorcode", 0) & 0xFF == SQLITE_READONLY:
            _recover(uri, busy_timeout_s)
            connection = sqlite3.connect(uri, uri=True, timeout=busy_timeout_s, isolation_level=None)
            connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        else:
            raise
    connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    return connection


def _refuse_unfinished_write(path: Path | str) -> None:
    """Raise when the file has a non-empty WAL or rollback journal beside it. kidx empties
    its WAL when a write ends, so one that holds frames, like any journal, is a write that
    did not end; only a connection that may write the folder can settle it."""
    for suffix in ("-wal", "-journal"):
        leftover = f"{os.fspath(path)}{suffix}"
        try:
            if os.path.getsize(leftover) == 0:
                continue
        except OSError:
            continue
        raise StoreError(f"{leftover}: a write to this store did not finish (its writer was stopped), and this "
                         f"user may not write the folder {os.path.dirname(leftover) or '.'}, where it must be "
                         "settled before the store can be read whole; run any kidx command on the store once as a "
                         "user who may write that folder")


def _recover(read_only_uri: str, busy_timeout_s: float) -> None:
    """Let SQLite roll back what a killed writer left half done (a hot journal, a WAL to
    recover), which only a connection that may write can do: the file opened for writing,
    never created, read once and closed. The committed state is what it leaves."""
    connection = sqlite3.connect(read_only_uri.replace("?mode=ro", "?mode=rw"), uri=True, timeout=busy_timeout_s,
                                 isolation_level=None)
    try:
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    finally:
        connection.close()
