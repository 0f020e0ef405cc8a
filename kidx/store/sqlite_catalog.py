"""The SQLite backend: a folder holding ``catalog.sqlite`` and ``objects/sha256/…`` files.

One SQLite database (WAL) holds, in schema version 2:
- ``objects``: the current digest and metadata of every name, and the revision that state
  is (its id and time): a name's current revision is kept once, in its row;
- ``labels``: one row per label, indexed by (key, value) for selectors;
- ``refs``: a view of one row per reference field (object, field, target digest), kept as
  ``ref_targets`` (each distinct (field, target) once) and ``ref_links`` (object, target
  id), indexed by target for reverse look-ups and by object for updates;
- ``revisions``: a view of every state a name has had, in the order recorded: the earlier
  states (``past_revisions``, appended and never rewritten) and the current one of each
  name (its ``objects`` row), so nothing applied is ever lost (a deletion is a revision
  too);
- ``spec_leaves`` / ``spec_indexed``: the scalar spec fields of the objects references
  point at (workloads, environments, …: few), by digest, so that selection can follow a
  reference without reading object files.
Digests are their 32 bytes (as in the PostgreSQL catalog); a new catalog has 8 KiB pages.

Schema version 1 (kidx before this layout) kept digests as text, every revision as a row of
a ``revisions`` table, and the references in a ``refs`` table; its stores made before the
spec index lacked the two spec tables, and a write by an older kidx could leave that index
behind the revisions (reads then used the objects). Such a catalog is read as it is, with
the SQL of its own version, so every read gives what it gave; the first write upgrades it
to version 2 inside that write's own transaction (``_upgrade``), so an interrupted or failed
upgrade leaves it as it was, and says so once (``kidx.store.notices``) when it commits.
Writers take the database's write lock first (``BEGIN IMMEDIATE``), so two kidx processes
serialise instead of interleaving; a waiting writer gives up cleanly after a timeout.
Queries (``kidx.store.catalog.CatalogQuery``) are compiled to SQL here; the statements and row
mapping this catalog shares with the PostgreSQL one are in ``kidx.store.sql_catalog``.
"""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
import time
from collections.abc import Sequence

from kidx.errors import StoreBusy, StoreError, StoreReadOnly
from kidx.records import TYPE_CHECKING
from kidx.store import notices
from kidx.store.catalog import (
    Catalog,
    CatalogQuery,
    Change,
    ReferenceCondition,
    ReferencedFieldCondition,
    Revision,
    StoreBackend,
    condition_holds,
    field_text,
)
from kidx.store.objects import FileObjectBackend, ObjectDB, path_text
from kidx.store.sql_catalog import (
    Dialect,
    SQLCatalog,
    Statements,
    digest_of_raw,
    label_clause,
    raw_digest,
    raw_digest_range,
    translating,
)

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA_VERSION = "2"
#: versions this kidx reads as they are and upgrades on the first write
OLDER_SCHEMA_VERSIONS = ("1",)
# of a new catalog: rows of about 1 KB waste less of each page than at 4 KiB (at 100,000
# generated runs 1,741 bytes a run against 1,937), but a selection spread over the table
# reads twice the bytes per row found (its SQL for 1,000 rows took 4.4 ms against 3.6,
# timed in one process on a shared, loaded 2-core machine)
PAGE_SIZE = 8192
BUSY_TIMEOUT_S = 60.0
CATALOG_FILE = "catalog.sqlite"
_SQL_VARIABLES = 500  # stay far below SQLite's limit on bound parameters

_SCHEMA = """
CREATE TABLE info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE objects (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    digest BLOB NOT NULL,  -- the digest's 32 bytes
    title TEXT,
    labels TEXT NOT NULL,
    annotations TEXT NOT NULL,
    created TEXT NOT NULL,
    generation INTEGER NOT NULL,
    columns TEXT,  -- printer-column values, see kidx.store.column_cache
    revision INTEGER,  -- the id of the revision this state is; NULL: not a revision of its own
    recorded TEXT,  -- when that revision was recorded
    UNIQUE (kind, name)
);
CREATE INDEX objects_by_digest ON objects (digest);
CREATE TABLE labels (
    object_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (key, value, object_id)
) WITHOUT ROWID;
CREATE INDEX labels_by_object ON labels (object_id);
-- every (field, target) some object has referred to, once: a few hundred, whatever the runs
CREATE TABLE ref_targets (
    id INTEGER PRIMARY KEY,
    field TEXT NOT NULL,
    target BLOB NOT NULL,
    UNIQUE (target, field)
);
CREATE TABLE ref_links (
    object_id INTEGER NOT NULL,
    target_id INTEGER NOT NULL,
    PRIMARY KEY (target_id, object_id)
) WITHOUT ROWID;
CREATE INDEX ref_links_by_object ON ref_links (object_id);
CREATE VIEW refs (object_id, field, target) AS
    SELECT ref_links.object_id, ref_targets.field, ref_targets.target
    FROM ref_links JOIN ref_targets ON ref_targets.id = ref_links.target_id;
-- the states names had before their current one (a name's current revision is its objects row)
CREATE TABLE past_revisions (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    event TEXT NOT NULL,
    digest BLOB,
    title TEXT,
    labels TEXT,
    annotations TEXT,
    generation INTEGER,
    recorded TEXT NOT NULL
);
-- a name's revisions are its rows in id order: numbered when read, so appending costs no look-up
CREATE INDEX past_revisions_by_name ON past_revisions (kind, name, id);
CREATE VIEW revisions (id, kind, name, event, digest, title, labels, annotations, generation, recorded) AS
    SELECT id, kind, name, event, digest, title, labels, annotations, generation, recorded FROM past_revisions
    UNION ALL
    SELECT revision, kind, name, 'applied', digest, title, labels, annotations, generation, recorded
    FROM objects WHERE revision IS NOT NULL;
CREATE TABLE spec_leaves (
    path TEXT NOT NULL,  -- "spec.parameters.seq"
    value TEXT NOT NULL,  -- its text, as field selectors read it
    digest BLOB NOT NULL,
    PRIMARY KEY (path, value, digest)
) WITHOUT ROWID;
CREATE TABLE spec_indexed (digest BLOB PRIMARY KEY) WITHOUT ROWID;
"""
# Schema 1's spec index, added after it (same schema number: older kidx ignored it)
_SPEC_INDEX_SCHEMA_1 = """
CREATE TABLE IF NOT EXISTS spec_leaves (
    path TEXT NOT NULL,
    value TEXT NOT NULL,
    digest TEXT NOT NULL,
    PRIMARY KEY (path, value, digest)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS spec_indexed (digest TEXT PRIMARY KEY) WITHOUT ROWID;
"""
# Schema 1 to 2 (see _upgrade), after the old tables were renamed to *_1 and their indexes
# dropped: every row copied, digests as bytes; a name's last revision moves into its objects
# row when it is exactly the row's state (else the row is no revision of its own, and every
# revision stays a row).
_UPGRADE_1_TO_2 = (
    """INSERT INTO objects (id, kind, name, digest, title, labels, annotations, created, generation, columns)
       SELECT id, kind, name, kidx_raw_digest(digest), title, labels, annotations, created, generation, columns
       FROM objects_1""",
    """INSERT INTO past_revisions (id, kind, name, event, digest, title, labels, annotations, generation, recorded)
       SELECT id, kind, name, event, kidx_raw_digest(digest), title, labels, annotations, generation, recorded
       FROM revisions_1""",
    """UPDATE objects SET revision = (SELECT MAX(r.id) FROM past_revisions r
                                      WHERE r.kind = objects.kind AND r.name = objects.name)""",
    """UPDATE objects SET revision = NULL WHERE NOT EXISTS (
           SELECT 1 FROM past_revisions r WHERE r.id = objects.revision AND r.event = 'applied'
           AND r.digest IS objects.digest AND r.title IS objects.title AND r.labels IS objects.labels
           AND r.annotations IS objects.annotations AND r.generation IS objects.generation)""",
    """UPDATE objects SET recorded = (SELECT r.recorded FROM past_revisions r WHERE r.id = objects.revision)
       WHERE revision IS NOT NULL""",
    "DELETE FROM past_revisions WHERE id IN (SELECT revision FROM objects WHERE revision IS NOT NULL)",
    "INSERT INTO ref_targets (field, target) SELECT DISTINCT field, kidx_raw_digest(target) FROM refs_1",
    """INSERT INTO ref_links (object_id, target_id)
       SELECT r.object_id, t.id FROM refs_1 r JOIN ref_targets t
       ON t.target = kidx_raw_digest(r.target) AND t.field = r.field ON CONFLICT DO NOTHING""",
)
_OLD_TABLES = ("objects", "revisions", "refs")
_OLD_INDEXES = ("objects_by_digest", "refs_by_object", "revisions_by_name")
_SPEC_INDEX_MARK = "spec_index_revision"
# info key (schema 2): the id of the last revision recorded (the current ones are objects rows)
_LAST_REVISION = "last_revision"
UPGRADED = "upgraded the store's catalog ({location}) to schema version {version}"


# digests are their 32 bytes (schema 1: their text); lists of values are bound in chunks
# under the variable limit
DIALECT = Dialect(mark="?", schema="", entries="objects", last="\uffff", in_list_limit=_SQL_VARIABLES,
                  stored_digest=raw_digest, digest_text=digest_of_raw)
DIALECT_1 = Dialect(mark="?", schema="", entries="objects", last="\uffff", in_list_limit=_SQL_VARIABLES)


class _Statements(Statements):
    """Schema 2's writes: the current revision in its names row, references by target id."""

    def __init__(self, dialect: Dialect):
        super().__init__(dialect)
        entry_columns = "id, kind, name, digest, title, labels, annotations, created, generation, columns"
        self.insert_entry = f"INSERT INTO objects ({entry_columns}, revision, recorded) VALUES ({dialect.marks(12)})"
        self.update_entry = ("UPDATE objects SET digest=?, title=?, labels=?, annotations=?, generation=?, columns=?, "
                             "revision=?, recorded=? WHERE id=?")
        past = "id, kind, name, event, digest, title, labels, annotations, generation, recorded"
        self.supersede = (f"INSERT INTO past_revisions ({past}) SELECT revision, kind, name, 'applied', digest, "
                          "title, labels, annotations, generation, recorded FROM objects WHERE id=? "
                          "AND revision IS NOT NULL")
        self.insert_revision = f"INSERT INTO past_revisions ({past}) VALUES ({dialect.marks(10)})"
        self.insert_ref = "INSERT INTO ref_links (object_id, target_id) VALUES (?, ?) ON CONFLICT DO NOTHING"
        self.delete_refs = "DELETE FROM ref_links WHERE object_id=?"
        self.stray_refs = "DELETE FROM ref_links WHERE NOT EXISTS (SELECT 1 FROM objects e WHERE e.id = object_id)"


STATEMENTS = _Statements(DIALECT)
STATEMENTS_1 = Statements(DIALECT_1)


def _raw_or_none(digest: str | None) -> bytes | None:
    """SQL's ``kidx_raw_digest``: a text digest as its bytes; NULL for NULL and for text
    that is no digest (it matches nothing)."""
    try:
        return raw_digest(digest) if isinstance(digest, str) else None
    except (StoreError, ValueError):
        return None


def _is_lock(exc: sqlite3.Error | ValueError) -> bool:
    text = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def store_error(exc: sqlite3.Error | ValueError, where: str | None = None) -> StoreError:
    """kidx's own error for a SQLite one, one message per cause: nothing above the store
    sees sqlite3, and no raw bytes from a damaged file reach the terminal."""
    text = str(exc)
    catalog = f"the store's catalog{f' {where}' if where else ''}"
    if _is_lock(exc):
        return StoreBusy(f"the store's catalog cannot be used: {exc} (is another kidx writing? try again)")
    if isinstance(exc, ValueError) or "malformed" in text or "not a database" in text or "decode" in text:
        # "Could not decode to UTF-8 column … with text '…'" quotes the damaged bytes
        reason = "a text value is not UTF-8" if "decode" in text.lower() and "utf-8" in text.lower() else (
            "a stored value is not JSON" if isinstance(exc, ValueError) else text)
        return StoreError(f"{catalog} is damaged ({reason}); `kidx fsck` tells what is wrong")
    if "readonly" in text or "read-only" in text:
        return StoreReadOnly(f"{catalog} is read-only ({text}): nothing was changed; reading it still works")
    if "disk is full" in text:
        return StoreError(f"{catalog} cannot be written: the disk is full; nothing was changed")
    return StoreError(f"the store's catalog cannot be used: {exc}")


# --- query compilation ------------------------------------------------------------------


def _label_clause(requirement, column: str = "id") -> tuple[str, list] | None:
    """A label requirement as ``column [NOT] IN`` the ids the (key, value) index finds."""

    def has_label(key: str, values: list | None, negation: str) -> tuple[str, list]:
        if values is None:
            return f"{column} {negation}IN (SELECT object_id FROM labels WHERE key=?)", [key]
        return (
            f"{column} {negation}IN (SELECT object_id FROM labels WHERE key=? "
            f"AND value IN ({DIALECT.marks(len(values))}))",
            [key, *values],
        )

    return label_clause(requirement, has_label, "0")


class SQLiteCatalog(SQLCatalog):
    dialect = DIALECT
    sql: Statements = STATEMENTS
    version = SCHEMA_VERSION  # of the catalog opened (an older one reads with its own SQL)

    def __init__(self, path: Path | str | None, objects: ObjectDB | None = None, write: bool = True):
        """Open the catalog at ``path``; None gives an empty, in-memory one (no store yet).

        ``objects`` is the object database of the same store, read when a query needs a
        referenced object's fields that the catalog does not index. Opened for writing,
        a catalog of an older schema version is upgraded by the first write (``begin_write``).
        Opened for reading (``write=False``), the file is opened read-only: reading never
        writes, not even the schema into an empty file that a crash during the very first
        write left.
        """
        self.path = path
        self.objects = objects
        self.location = None if path is None else str(path)
        self._writing = False
        self._upgraded_from: str | None = None  # in the write in progress
        self._next_revision: int | None = None  # while a write takes revision ids
        self.has_schema = True
        if path is not None and not write:
            self.connection = _connect_read_only(path)
            version = self._retrying(self._schema_version)
            if version is not None:
                self._use_version(version)
                return
            self.connection.close()  # an empty or schema-less file reads as an empty store
            path = None
        if path is None:
            self.has_schema = False
        target = ":memory:" if path is None else str(path)
        self.connection = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        if path is not None:
            # before anything is written: a page size is fixed once the file has its first page
            self.connection.execute(f"PRAGMA page_size={PAGE_SIZE}")
            self._retrying(lambda: self.connection.execute("PRAGMA journal_mode=WAL").fetchall())
            self.connection.execute("PRAGMA synchronous=FULL")
        self._retrying(self._ensure_schema)

    def _use_version(self, version: str) -> None:
        """Read (and write) with the SQL of the catalog's schema version."""
        self.version = version
        self.dialect, self.sql = (DIALECT, STATEMENTS) if version == SCHEMA_VERSION else (DIALECT_1, STATEMENTS_1)
        # digests given as text (JSON lists of them, the upgrade's copies) as they are stored
        self.connection.create_function("kidx_raw_digest", 1, _raw_or_none, deterministic=True)

    def _retrying(self, action):
        """Run ``action``, waiting out locks SQLite reports at once instead of waiting for.

        Switching a new database to WAL needs an exclusive lock, and SQLite does not call
        its busy handler for it: two processes creating one store at the same moment
        would otherwise see "database is locked".
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        delay = 0.005
        while True:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not _is_lock(exc) or time.monotonic() > deadline:
                    raise
                if self.connection.in_transaction:
                    self.connection.execute("ROLLBACK")
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _schema_version(self) -> str | None:
        """The catalog's schema version (None: an empty database, no schema yet); refuses a
        newer catalog, and one whose version cannot be read."""
        try:
            row = self.connection.execute("SELECT value FROM info WHERE key='schema'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            row = None
        if row is None:
            # the schema and its version are written in one transaction: one without the
            # other is damage, not a store still being created
            if self.connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                return None
            raise StoreError(f"the store's catalog {self.location} is damaged (its schema version is missing); "
                             "`kidx fsck` tells what is wrong")
        if row[0] != SCHEMA_VERSION and row[0] not in OLDER_SCHEMA_VERSIONS:
            # a newer kidx may store things this one would misread or overwrite
            raise StoreError(
                f"the store's catalog {self.location} has schema version {row[0]!r}, but this kidx knows "
                f"only versions up to {SCHEMA_VERSION!r}: a newer kidx wrote it; use that one (nothing was changed)"
            )
        return row[0]

    def _ensure_schema(self) -> None:
        version = self._schema_version()
        if version is None:
            # one transaction, the schema created only if nobody else did in the meantime:
            # two processes creating the store at once both succeed
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                if self._schema_version() is None:
                    for statement in _SCHEMA.split(";\n"):
                        self.connection.execute(statement)
                    self.connection.execute("INSERT INTO info (key, value) VALUES ('schema', ?), (?, '0')",
                                            (SCHEMA_VERSION, _LAST_REVISION))
                self.connection.execute("COMMIT")
            except BaseException:
                if self.connection.in_transaction:
                    self.connection.execute("ROLLBACK")
                raise
            version = self._schema_version()
        self._use_version(version or SCHEMA_VERSION)

    def _has_table(self, name: str) -> bool:
        return self.connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)
        ).fetchone() is not None

    def _spec_index_fresh(self) -> bool:
        """The index exists and every revision so far was written by code that keeps it."""
        if not self._has_table("spec_indexed"):
            return False
        mark = self.connection.execute("SELECT value FROM info WHERE key=?", (_SPEC_INDEX_MARK,)).fetchone()
        return mark is not None and mark[0] == str(self._last_revision())

    def _last_revision(self) -> int:
        """The id of the last revision recorded."""
        if self.version != SCHEMA_VERSION:
            return self.connection.execute("SELECT COALESCE(MAX(id), 0) FROM revisions").fetchone()[0]
        return int(self.connection.execute("SELECT value FROM info WHERE key=?", (_LAST_REVISION,)).fetchone()[0])

    def _revision_id(self) -> int:
        """A new revision id (inside a write; ``_save_revision_ids`` records those taken)."""
        taken = self._last_revision() + 1 if self._next_revision is None else self._next_revision
        self._next_revision = taken + 1
        return taken

    def _save_revision_ids(self) -> None:
        if self._next_revision is not None:
            self.connection.execute("UPDATE info SET value=? WHERE key=?",
                                    (str(self._next_revision - 1), _LAST_REVISION))
            self._next_revision = None

    # --- the upgrade from an older schema (inside the first write's transaction) -------

    def _upgrade(self) -> None:
        """Rewrite a schema 1 catalog as schema 2, inside the write's transaction: every
        name, label, reference, revision and spec index row is kept (see _UPGRADE_1_TO_2);
        a failure or an interruption rolls it all back with the write."""
        execute = self.connection.execute
        if not self._has_table("spec_indexed"):
            for statement in _SPEC_INDEX_SCHEMA_1.strip().split(";\n"):
                execute(statement)
        for index in _OLD_INDEXES:
            execute(f"DROP INDEX IF EXISTS {index}")
        for table in (*_OLD_TABLES, "spec_leaves", "spec_indexed"):
            execute(f"ALTER TABLE {table} RENAME TO {table}_1")
        for statement in _SCHEMA.split(";\n"):  # all but what schema 1 has alike
            if not statement.lstrip().startswith(("CREATE TABLE info", "CREATE TABLE labels", "CREATE INDEX labels_")):
                execute(statement)
        (last,) = execute("SELECT COALESCE(MAX(id), 0) FROM revisions_1").fetchone()
        for statement in _UPGRADE_1_TO_2:
            execute(statement)
        execute("INSERT INTO spec_leaves (path, value, digest) "
                "SELECT path, value, kidx_raw_digest(digest) FROM spec_leaves_1")
        execute("INSERT INTO spec_indexed (digest) SELECT kidx_raw_digest(digest) FROM spec_indexed_1")
        for table in (*_OLD_TABLES, "spec_leaves", "spec_indexed"):
            execute(f"DROP TABLE {table}_1")
        execute("UPDATE info SET value=? WHERE key='schema'", (SCHEMA_VERSION,))
        execute("INSERT OR REPLACE INTO info (key, value) VALUES (?, ?)", (_LAST_REVISION, str(last)))
        self._use_version(SCHEMA_VERSION)
        # a spec index that was missing or behind is filled from the objects now
        self._catch_up_spec_index()
        self._mark_spec_index()

    def translated(self, method, *args, **kwargs):
        try:
            return method(*args, **kwargs)
        except (sqlite3.Error, json.JSONDecodeError) as exc:
            raise store_error(exc, self.location) from None

    def _write_starts(self, changes: Sequence[Change]) -> bool:
        """Bring the spec index up to date with the objects this write refers to or
        carries; a catalog made before the index has no index to keep."""
        if not self._has_table("spec_indexed"):
            return False
        self._catch_up_spec_index()
        self._index_specs(self._specs_of(changes))
        return True

    def _write_ends(self) -> None:
        self._save_revision_ids()
        self._mark_spec_index()

    def _object_texts(self, digests: Sequence) -> dict:
        if self.objects is None:
            return {}
        texts = {digest_of_raw(digest): digest for digest in digests}
        return {texts[text]: data for text, data in self.objects.read_many(list(texts)).items()}

    def _catch_up_spec_index(self) -> None:
        """Before a write: when revisions were added by code that did not keep the index
        (or it is new), index every reference target it lacks."""
        if self._spec_index_fresh():
            return
        targets = [
            row[0] for row in self.connection.execute(
                "SELECT DISTINCT target FROM ref_targets WHERE target NOT IN (SELECT digest FROM spec_indexed)"
            )
        ]
        self._index_specs(dict.fromkeys(targets))

    def _mark_spec_index(self) -> None:
        self.connection.execute(
            "INSERT OR REPLACE INTO info (key, value) VALUES (?, ?)", (_SPEC_INDEX_MARK, str(self._last_revision()))
        )

    # --- schema 2's revisions and references (hooks of SQLCatalog's writes) -------------

    def _current_revision(self, now: str) -> tuple:
        """A names row is its name's current revision: (its id, when)."""
        return (self._revision_id(), now)

    def _new_revision(self, row: tuple) -> tuple:
        return (self._revision_id(), *row)

    def _restored_revisions(self, changes: Sequence[Change],
                            revisions: Sequence[Revision]) -> tuple[builtins.list[tuple], builtins.list[tuple]]:
        """Revision ids in the order given; a current name's last revision, when it is its
        state exactly, is kept in its names row, every other one as a past revision."""
        ids = [self._revision_id() for _ in revisions]
        last: dict[tuple[str, str], int] = {}
        for number, revision in enumerate(revisions):
            last[(revision.kind, revision.name)] = number
        current: list[tuple] = []
        kept: set[int] = set()
        for change in changes:
            entry = change.entry
            at = last.get((entry.kind, entry.name))
            latest = None if at is None else revisions[at]
            if latest is not None and at is not None and latest.event == "applied" and (
                    latest.digest, latest.title, latest.labels, latest.annotations, latest.generation) == (
                    entry.digest, entry.title, entry.labels, entry.annotations, entry.generation):
                current.append((ids[at], latest.recorded))
                kept.add(at)
            else:
                current.append((None, None))
        self._save_revision_ids()
        return current, [(ids[position], *self._revision_row(revision))
                         for position, revision in enumerate(revisions) if position not in kept]

    def _insert_refs(self, rows: builtins.list[tuple]) -> None:
        """(object_id, field, target) rows as links to each distinct (field, target) once."""
        if not rows:
            return
        execute = self.connection.execute
        pairs = {(field_name, target) for _, field_name, target in rows}
        ids: dict[tuple, int] = {}
        for field_name, target in pairs:
            found = execute("SELECT id FROM ref_targets WHERE target=? AND field=?", (target, field_name)).fetchone()
            ids[(field_name, target)] = found[0] if found is not None else execute(
                "INSERT INTO ref_targets (field, target) VALUES (?, ?)", (field_name, target)).lastrowid
        self.connection.executemany(self.sql.insert_ref, [(row[0], ids[(row[1], row[2])]) for row in rows])

    @translating
    def close(self) -> None:
        self.connection.close()

    # --- transactions -------------------------------------------------------------------

    @translating
    def begin_write(self) -> None:
        """Take the write lock; after a second of waiting for another writer, say so, then
        wait on (``BUSY_TIMEOUT_S`` in all)."""
        first = min(notices.WAIT_NOTICE_AFTER_S, BUSY_TIMEOUT_S)
        self.connection.execute(f"PRAGMA busy_timeout={int(first * 1000)}")
        try:
            self.connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if not _is_lock(exc) or first >= BUSY_TIMEOUT_S:
                raise
            notices.notify(notices.WAITING)
            self.connection.execute(f"PRAGMA busy_timeout={int((BUSY_TIMEOUT_S - first) * 1000)}")
            self.connection.execute("BEGIN IMMEDIATE")
        finally:
            self.connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        self._writing = True
        self._follow_version()  # another kidx may have upgraded it since it was opened
        if self.version != SCHEMA_VERSION:
            self._upgraded_from = self.version
            self._upgrade()

    @translating
    def begin_read(self) -> None:
        self.connection.execute("BEGIN")
        self._follow_version()  # the snapshot's own version (the first read starts it)

    def _follow_version(self) -> None:
        """Speak the SQL of the schema version the database has now: another process may
        have upgraded it since this connection was opened."""
        if self.has_schema:
            version = self._schema_version()
            if version is not None and version != self.version:
                self._use_version(version)

    @translating
    def commit(self) -> None:
        self.connection.execute("COMMIT")
        upgraded = self._upgraded_from is not None
        if upgraded:
            self._upgraded_from = None
            notices.notify(UPGRADED.format(location=self.location, version=SCHEMA_VERSION))
        if self._writing:
            self._writing = False
            try:
                if upgraded:
                    self._compact()
                self._checkpoint()
            except (sqlite3.Error, KeyboardInterrupt):
                # Committed is done: housekeeping that fails (a full disk) or is interrupted
                # (Ctrl-C) must not turn the command's success into a reported failure.
                pass

    def _compact(self) -> None:
        """Give back the pages the old schema's tables held (an upgrade writes the new tables
        beside them), if nobody is in the way: VACUUM is its own transaction, all or nothing."""
        self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        self.connection.execute("PRAGMA busy_timeout=0")
        try:
            self.connection.execute("VACUUM")
        finally:
            self.connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")

    def _checkpoint(self) -> None:
        """Fold the write-ahead log into the database and empty it, if nobody is in the way.

        Otherwise the next process to open the catalog re-reads the whole log (37 MB after a
        10,000-run apply, 15 ms on every later command). With the busy timeout at zero
        SQLite does not wait: a reader in a transaction or another writer just leave the
        log as it is, for a later write to empty.
        """
        self.connection.execute("PRAGMA busy_timeout=0")
        try:
            self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            self.connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")

    @translating
    def rollback(self) -> None:
        self._writing = False
        self._next_revision = None
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")
        if self._upgraded_from is not None:  # the upgrade is undone with the write
            self._use_version(self._upgraded_from)
            self._upgraded_from = None

    # --- reads --------------------------------------------------------------------------

    def compile(self, query: CatalogQuery) -> tuple[str, builtins.list, bool]:
        """The SELECT for a query, its parameters, and whether rows need checking after."""
        where: list[str] = []
        parameters: list = []
        narrowed = False  # a condition answered by an index other than (kind, name)

        def add(clause: tuple[str, list] | None, narrowing: bool = False) -> None:
            nonlocal narrowed
            if clause is not None:
                where.append(clause[0])
                parameters.extend(clause[1])
                narrowed = narrowed or narrowing

        if query.names is not None:
            add(("name IN (SELECT value FROM json_each(?))", [json.dumps(list(query.names))]), True)
        if query.name_prefix is not None:
            add(("name >= ? AND name < ?", [query.name_prefix, query.name_prefix + "\uffff"]))
        if query.digests is not None:
            add((f"digest IN ({self._digest_list()})", [json.dumps(list(query.digests))]), True)
        if query.digest_prefix is not None:
            add(("digest BETWEEN ? AND ?", self._digest_range(query.digest_prefix)), True)
        for requirement in query.labels:
            clause = _label_clause(requirement)
            add(clause, clause is not None and " NOT IN " not in clause[0])
        for condition in query.fields:
            add(self._field_clause(condition))
        for reference in query.references:
            add(self._reference_clause(reference), True)
        for through in query.referenced_fields:
            clause = self._referenced_field_clause(through)
            add(clause, " NOT IN " not in clause[0])
        if query.kind is not None:
            # With a narrowing clause (id IN …), start from its index and sort the few rows
            # found; "+kind" stops SQLite from walking every row of the kind in name order.
            where.insert(0, "+kind=?" if narrowed else "kind=?")
            parameters.insert(0, query.kind)
        return self._select(query, where, parameters)

    def _digest_list(self) -> str:
        """SQL for the digests of a JSON list of ``sha256:…`` texts, as the catalog stores them."""
        return "SELECT kidx_raw_digest(value) FROM json_each(?)" if self.version == SCHEMA_VERSION else (
            "SELECT value FROM json_each(?)")

    def _digest_range(self, hexdigits: str) -> builtins.list:
        """The lowest and highest stored digest whose hex starts with ``hexdigits``."""
        if self.version == SCHEMA_VERSION:
            return list(raw_digest_range(hexdigits))
        low = "sha256:" + hexdigits
        return [low, low + "\uffff"]

    def _reference_clause(self, condition: ReferenceCondition) -> tuple[str, builtins.list]:
        """Answered from the target index of ``refs``."""
        field_sql, field_parameters = ("", []) if condition.field is None else (" AND field=?", [condition.field])
        if condition.digest_prefix is not None:
            return (
                f"id IN (SELECT object_id FROM refs WHERE target BETWEEN ? AND ?{field_sql})",
                [*self._digest_range(condition.digest_prefix), *field_parameters],
            )
        if condition.target_kind is not None and any(r.operator in ("gt", "lt") for r in condition.target_labels):
            # numeric label comparisons are exact only on the rows: find the targets first
            targets = self.list(CatalogQuery(kind=condition.target_kind, labels=condition.target_labels))
            condition = ReferenceCondition(digests=tuple({e.digest for e in targets}), field=condition.field)
        if condition.target_kind is not None:
            inner, parameters = ["t.kind=?"], [condition.target_kind]
            for requirement in condition.target_labels:
                clause = _label_clause(requirement, "t.id")
                if clause is not None:
                    inner.append(clause[0])
                    parameters.extend(clause[1])
            return (
                "id IN (SELECT object_id FROM refs WHERE target IN "
                f"(SELECT t.digest FROM objects t WHERE {' AND '.join(inner)}){field_sql})",
                [*parameters, *field_parameters],
            )
        if not condition.digests:
            return "0", []  # refers to nothing that exists: matches no object
        stored = self.dialect.stored_digest
        return (
            f"id IN (SELECT object_id FROM refs WHERE target IN ({DIALECT.marks(len(condition.digests))}){field_sql})",
            [*(stored(digest) for digest in condition.digests), *field_parameters],
        )

    def _referenced_field_clause(self, condition: ReferencedFieldCondition) -> tuple[str, builtins.list]:
        """Objects whose ``field`` points at a target where the condition holds.

        The targets are found first (through the objects table for metadata, the
        ``(path, value)`` key of ``spec_leaves`` for spec fields), then the referrers
        through the ``(target, …)`` key of ``refs``. Conditions that an absent field
        satisfies (``!= v``, ``= ''``) are the complement of the targets where they fail.
        Either way the targets are those where the field is non-empty (when the value is
        "") or equals the value."""
        absent_holds = condition_holds(condition, "")
        negation = "NOT " if absent_holds else ""
        value_test, values = ("!= ''", []) if condition.value == "" else ("= ?", [condition.value])
        if condition.path[:1] == ("metadata",):
            column = self._referenced_metadata_column(condition)
            targets, parameters = f"SELECT digest FROM objects WHERE kind=? AND {column} {value_test}", [
                condition.target_kind, *values]
        elif self._spec_index_fresh():
            targets, parameters = f"SELECT digest FROM spec_leaves WHERE path=? AND value {value_test}", [
                ".".join(condition.path), *values]
        else:  # no index yet (a store not written since it was made by older kidx): read the targets
            targets, parameters = self._digest_list(), [
                json.dumps(sorted(self._spec_targets_where(condition, want=not absent_holds)))]
        return (
            f"id {negation}IN (SELECT object_id FROM refs WHERE field=? AND target IN ({targets}))",
            [condition.field, *parameters],
        )

    def _spec_targets_where(self, condition: ReferencedFieldCondition, want: bool) -> set[str]:
        """Digests referenced through ``condition.field`` whose object satisfies the spec
        condition (``want``) or fails it (not ``want``), reading the objects."""
        as_text = self.dialect.digest_text
        targets = [
            as_text(row[0])
            for row in self.connection.execute("SELECT DISTINCT target FROM refs WHERE field=?", (condition.field,))
        ]
        if not targets or self.objects is None:
            return set()
        identities = self.objects.read_many(targets)
        found = set()
        for digest in targets:
            data = identities.get(digest)
            text = field_text(json.loads(data), condition.path) if data is not None else ""
            # a mapping or list reads as absent, as in the index of scalar leaves
            if condition_holds(condition, "" if text is None else text) == want:
                found.add(digest)
        return found

    # --- maintenance (fsck, gc, export, restore) -----------------------------------------

    def integrity_problems(self) -> builtins.list[str]:
        if self.path is None:
            return []
        try:
            rows = [row[0] for row in self.connection.execute("PRAGMA integrity_check")]
        except sqlite3.Error as exc:
            return [f"cannot be checked: {exc}"]
        return [] if rows == ["ok"] else rows

    @translating
    def rebuild_indexes(self) -> None:
        self.connection.execute("REINDEX")


def _connect_read_only(path: Path | str) -> sqlite3.Connection:
    """A read-only connection. In a folder nobody may write, SQLite cannot create the WAL's
    shared-memory file that readers need; there nobody can be writing either, so the file
    is read as immutable."""
    uri = "file:" + str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return connection
    except sqlite3.OperationalError:
        if os.access(os.path.dirname(os.fspath(path)) or ".", os.W_OK):
            raise
    connection.close()
    return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)


def _has_files(folder: str) -> bool:
    try:
        with os.scandir(folder) as fan_out:
            for entry in fan_out:
                if entry.is_dir() and any(os.scandir(entry.path)):
                    return True
    except OSError:
        pass
    return False


def _read_only_reason(root: str) -> str | None:
    """Why nothing in the store folder can be written, or None when it can."""
    paths = [root, os.path.join(root, CATALOG_FILE), os.path.join(root, "objects", "sha256")]
    if all(not os.path.exists(path) or os.access(path, os.W_OK) for path in paths):
        return None
    try:
        if os.statvfs(root).f_flag & os.ST_RDONLY:
            return "a read-only file system"
    except OSError:
        pass
    return "no permission to write"


class SQLiteBackend(StoreBackend):
    """A store folder: ``catalog.sqlite`` beside ``objects/sha256/``."""

    def __init__(self, root: Path | str):
        # strings and os calls: opening a store for reading should not import pathlib
        self.location = path_text(root)
        self._objects_folder = path_text(os.path.join(self.location, "objects", "sha256"))
        self._catalog_file = path_text(os.path.join(self.location, CATALOG_FILE))
        self.objects = ObjectDB(FileObjectBackend(self._objects_folder))

    @property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self.location)

    @property
    def catalog_path(self) -> Path:
        from pathlib import Path

        return Path(self._catalog_file)

    def exists(self) -> bool:
        return os.path.exists(self._catalog_file)

    def lost_catalog(self, catalog: Catalog) -> str | None:
        if getattr(catalog, "has_schema", True) or not _has_files(self._objects_folder):
            return None
        state = "is empty" if os.path.exists(self._catalog_file) else "is missing"
        return (
            f"the store at {self.location} has object files but its catalog ({CATALOG_FILE}) {state}, so its "
            "names, labels and history cannot be read (nothing was changed); run `kidx fsck --repair` to "
            "rebuild what can be rebuilt: names and history come back only from a bundle made by `kidx export`"
        )

    def _check_folder(self) -> None:
        """A store path that is (or lies under) a file is a mistake, not an empty store."""
        path = self.location
        while True:  # the folder, then each parent, as Path.parents gives them
            if os.path.exists(path):
                if not os.path.isdir(path):
                    raise StoreError(f"cannot open the store at {self.location}: {path} is a file, not a folder")
                return
            parent = os.path.dirname(path)
            if not parent or parent == path:
                return
            path = parent

    def _check_catalog_files(self) -> None:
        """The catalog and its WAL files are regular files where they exist: SQLite's
        open of a FIFO in their place would wait for a writer for ever, and a device or a
        folder is no catalog. Asked by stat, which never waits."""
        import stat

        for path in (self._catalog_file, self._catalog_file + "-wal", self._catalog_file + "-shm"):
            try:
                mode = os.stat(path).st_mode
            except OSError:
                continue  # absent (or a dangling link): SQLite says what it finds
            if not stat.S_ISREG(mode):
                from kidx.manifests.reader import file_type

                raise StoreError(f"cannot open the store at {self.location}: {path} is {file_type(mode)}, not a "
                                 "catalog file (nothing was read or changed)")

    def check_writable(self) -> None:
        self._check_folder()
        self._check_catalog_files()
        if os.path.exists(self.location):
            reason = _read_only_reason(self.location)
            if reason is not None:
                raise StoreReadOnly(f"the store at {self.location} is read-only ({reason}): nothing can be written "
                                    "to it")
            if os.path.lexists(self._catalog_file):
                self.open_catalog(False).close()  # a catalog that is no database, or no file, is said now
            return
        parent = os.path.dirname(os.path.abspath(self.location))
        while not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if not os.access(parent, os.W_OK | os.X_OK):
            raise StoreReadOnly(f"cannot create the store at {self.location}: no permission to write in {parent}")

    def open_catalog(self, write: bool) -> SQLiteCatalog:
        self._check_folder()
        self._check_catalog_files()
        try:
            if write:
                reason = _read_only_reason(self.location) if os.path.exists(self.location) else None
                if reason is not None:
                    raise StoreReadOnly(
                        f"the store at {self.location} is read-only ({reason}): nothing was changed; "
                        "reading it still works"
                    )
                os.makedirs(self.location, exist_ok=True)
                return SQLiteCatalog(self._catalog_file, self.objects, write=True)
            found = os.path.exists(self._catalog_file)
            return SQLiteCatalog(self._catalog_file if found else None, self.objects, write=False)
        except OSError as exc:
            raise StoreError(f"cannot open the store at {self.location}: {exc.strerror or exc}") from None
        except sqlite3.Error as exc:
            error = store_error(exc, self._catalog_file)
            if type(error) is not StoreError or "cannot be used" not in str(error):
                raise error from None  # busy, damaged, read-only, full: their own messages
            raise StoreError(f"cannot open the store at {self.location}: {exc}") from None
