"""The SQLite backend: a folder holding ``catalog.sqlite`` and ``objects/sha256/…`` files.

One SQLite database (WAL) holds:
- ``objects``: the current digest and metadata of every name;
- ``labels``: one row per label, indexed by (key, value) for selectors;
- ``refs``: one row per reference field, indexed by target digest for reverse look-ups;
- ``revisions``: every state a name has had, appended and never rewritten, so nothing
  applied is ever lost (a deletion is a revision too);
- ``spec_leaves`` / ``spec_indexed``: the scalar spec fields of the objects references
  point at (workloads, environments, …: few), by digest, so that selection can follow a
  reference without reading object files. Stores made before these tables existed get
  them (filled from the objects) on their first write; until then, and whenever the
  index is behind the revisions (a write by an older kidx), reads use the objects.
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
    StoreBackend,
    condition_holds,
    field_text,
)
from kidx.store.objects import FileObjectBackend, ObjectDB, path_text
from kidx.store.sql_catalog import Dialect, SQLCatalog, Statements, label_clause, translating

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA_VERSION = "1"
BUSY_TIMEOUT_S = 60.0
CATALOG_FILE = "catalog.sqlite"
_SQL_VARIABLES = 500  # stay far below SQLite's limit on bound parameters

_SCHEMA = """
CREATE TABLE IF NOT EXISTS info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    title TEXT,
    labels TEXT NOT NULL,
    annotations TEXT NOT NULL,
    created TEXT NOT NULL,
    generation INTEGER NOT NULL,
    columns TEXT,  -- printer-column values, see kidx.store.column_cache
    UNIQUE (kind, name)
);
CREATE INDEX IF NOT EXISTS objects_by_digest ON objects (digest);
CREATE TABLE IF NOT EXISTS labels (
    object_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (key, value, object_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS labels_by_object ON labels (object_id);
CREATE TABLE IF NOT EXISTS refs (
    object_id INTEGER NOT NULL,
    field TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (target, object_id, field)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS refs_by_object ON refs (object_id);
CREATE TABLE IF NOT EXISTS revisions (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    event TEXT NOT NULL,
    digest TEXT,
    title TEXT,
    labels TEXT,
    annotations TEXT,
    generation INTEGER,
    recorded TEXT NOT NULL
);
-- a name's revisions are its rows in id order: numbered when read, so appending costs no look-up
CREATE INDEX IF NOT EXISTS revisions_by_name ON revisions (kind, name, id);
"""
# Added after schema 1 (same schema number: older kidx ignores them, see the docstring).
_SPEC_INDEX_SCHEMA = """
CREATE TABLE IF NOT EXISTS spec_leaves (
    path TEXT NOT NULL,  -- "spec.parameters.seq"
    value TEXT NOT NULL,  -- its text, as field selectors read it
    digest TEXT NOT NULL,
    PRIMARY KEY (path, value, digest)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS spec_indexed (digest TEXT PRIMARY KEY) WITHOUT ROWID;
"""
# info key: the last revision id the spec index is known to be complete for
_SPEC_INDEX_MARK = "spec_index_revision"


# digests are their text; lists of values are bound in chunks under the variable limit
DIALECT = Dialect(mark="?", schema="", entries="objects", last="\uffff", in_list_limit=_SQL_VARIABLES)


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
    sql = Statements(DIALECT)

    def __init__(self, path: Path | str | None, objects: ObjectDB | None = None, write: bool = True):
        """Open the catalog at ``path``; None gives an empty, in-memory one (no store yet).

        ``objects`` is the object database of the same store, read when a query needs a
        referenced object's fields that the catalog does not index. Opened for writing,
        a catalog made before the spec index gets its tables (filled on the first write).
        Opened for reading (``write=False``), the file is opened read-only: reading never
        writes, not even the schema into an empty file that a crash during the very first
        write left.
        """
        self.path = path
        self.objects = objects
        self.location = None if path is None else str(path)
        self._writing = False
        self.has_schema = True
        if path is not None and not write:
            self.connection = _connect_read_only(path)
            if self._retrying(self._schema_version) is not None:
                return
            self.connection.close()  # an empty or schema-less file reads as an empty store
            path = None
        if path is None:
            self.has_schema = False
        target = ":memory:" if path is None else str(path)
        self.connection = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        if path is not None:
            self._retrying(lambda: self.connection.execute("PRAGMA journal_mode=WAL").fetchall())
            self.connection.execute("PRAGMA synchronous=FULL")
        self._retrying(self._ensure_schema)
        if write:
            self._retrying(self._ensure_spec_index)

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
        if row[0] != SCHEMA_VERSION:
            # a newer kidx may store things this one would misread or overwrite
            raise StoreError(
                f"the store's catalog {self.location} has schema version {row[0]!r}, but this kidx knows "
                f"only version {SCHEMA_VERSION!r}: a newer kidx wrote it; use that one (nothing was changed)"
            )
        return row[0]

    def _ensure_schema(self) -> None:
        if self._schema_version() is not None:
            return
        # one script, one transaction: two processes creating the store at once both succeed
        self.connection.executescript(
            "BEGIN IMMEDIATE;"
            + _SCHEMA
            + f"INSERT OR IGNORE INTO info (key, value) VALUES ('schema', '{SCHEMA_VERSION}');"
            + "COMMIT;"
        )

    def _has_table(self, name: str) -> bool:
        return self.connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)
        ).fetchone() is not None

    def _ensure_spec_index(self) -> None:
        if not self._has_table("spec_indexed"):
            self.connection.executescript("BEGIN IMMEDIATE;" + _SPEC_INDEX_SCHEMA + "COMMIT;")

    def _spec_index_fresh(self) -> bool:
        """The index exists and every revision so far was written by code that keeps it."""
        if not self._has_table("spec_indexed"):
            return False
        mark = self.connection.execute("SELECT value FROM info WHERE key=?", (_SPEC_INDEX_MARK,)).fetchone()
        (last,) = self.connection.execute("SELECT COALESCE(MAX(id), 0) FROM revisions").fetchone()
        return mark is not None and mark[0] == str(last)

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
        self._mark_spec_index()

    def _object_texts(self, digests: Sequence) -> dict:
        return self.objects.read_many(digests) if self.objects is not None else {}

    def _catch_up_spec_index(self) -> None:
        """Before a write: when revisions were added by code that did not keep the index
        (or it is new), index every reference target it lacks."""
        if self._spec_index_fresh():
            return
        targets = [
            row[0] for row in self.connection.execute(
                "SELECT DISTINCT target FROM refs WHERE target NOT IN (SELECT digest FROM spec_indexed)"
            )
        ]
        self._index_specs(dict.fromkeys(targets))

    def _mark_spec_index(self) -> None:
        (last,) = self.connection.execute("SELECT COALESCE(MAX(id), 0) FROM revisions").fetchone()
        self.connection.execute(
            "INSERT OR REPLACE INTO info (key, value) VALUES (?, ?)", (_SPEC_INDEX_MARK, str(last))
        )

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

    @translating
    def begin_read(self) -> None:
        self.connection.execute("BEGIN")

    @translating
    def commit(self) -> None:
        self.connection.execute("COMMIT")
        if self._writing:
            self._writing = False
            try:
                self._checkpoint()
            except (sqlite3.Error, KeyboardInterrupt):
                # Committed is done: housekeeping that fails (a full disk) or is interrupted
                # (Ctrl-C) must not turn the command's success into a reported failure.
                pass

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
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")

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
            add(("digest IN (SELECT value FROM json_each(?))", [json.dumps(list(query.digests))]), True)
        if query.digest_prefix is not None:
            low = "sha256:" + query.digest_prefix
            add(("digest >= ? AND digest < ?", [low, low + "\uffff"]), True)
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

    def _reference_clause(self, condition: ReferenceCondition) -> tuple[str, builtins.list]:
        """Answered from the (target, object_id) primary key of ``refs``."""
        field_sql, field_parameters = ("", []) if condition.field is None else (" AND field=?", [condition.field])
        if condition.digest_prefix is not None:
            low = "sha256:" + condition.digest_prefix
            return (
                f"id IN (SELECT object_id FROM refs WHERE target >= ? AND target < ?{field_sql})",
                [low, low + "\uffff", *field_parameters],
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
        return (
            f"id IN (SELECT object_id FROM refs WHERE target IN ({DIALECT.marks(len(condition.digests))}){field_sql})",
            [*condition.digests, *field_parameters],
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
            targets, parameters = "SELECT value FROM json_each(?)", [
                json.dumps(sorted(self._spec_targets_where(condition, want=not absent_holds)))]
        return (
            f"id {negation}IN (SELECT object_id FROM refs WHERE field=? AND target IN ({targets}))",
            [condition.field, *parameters],
        )

    def _spec_targets_where(self, condition: ReferencedFieldCondition, want: bool) -> set[str]:
        """Digests referenced through ``condition.field`` whose object satisfies the spec
        condition (``want``) or fails it (not ``want``), reading the objects."""
        targets = [
            row[0]
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

    def open_catalog(self, write: bool) -> SQLiteCatalog:
        self._check_folder()
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
