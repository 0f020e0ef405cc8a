"""How the SQLite catalog opens its file: the page cache every connection keeps, and a
read-only connection that also reads a store in a folder nobody may write."""

from __future__ import annotations

import os
import sqlite3

from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

# A connection's page cache (SQLite's default is 2,000 KiB), filled only as pages are read:
# a bulk write touches many pages, and a reader that makes many selections (compare's
# history: hundreds of them) reuses the index pages it has read.
CACHE_KIB = 65_536


def connect_read_only(path: Path | str, busy_timeout_s: float) -> sqlite3.Connection:
    """A read-only connection. In a folder nobody may write, SQLite cannot create the WAL's
    shared-memory file that readers need; there nobody can be writing either, so the file
    is read as immutable."""
    uri = "file:" + str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    connection = sqlite3.connect(uri, uri=True, timeout=busy_timeout_s, isolation_level=None)
    try:
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.OperationalError:
        if os.access(os.path.dirname(os.fspath(path)) or ".", os.W_OK):
            raise
        connection.close()
        connection = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)
    connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    return connection
