"""The SQLite backend: a folder holding ``catalog.sqlite`` and ``objects/sha256/…`` files.

One SQLite database (WAL) holds, in schema version 3:
- ``objects``: the current digest and metadata of every name, and the revision that state
  is (its id and time): a name's current revision is kept once, in its row;
- ``labels``: one row per label, keyed by (key, value, object) for selectors (a name's
  rows are found through its own labels: no second index by object);
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
Schema 3 packs a row's printer-column references, long annotations and the time of a
revision recorded at creation (``kidx.store.sqlite_schema``); reads unpack them.

Schema versions 1 and 2 are read as they are and upgraded by the first write
(``kidx.store.sqlite_schema_1``, ``kidx.store.sqlite_schema.upgrade_2_to_3``).
Writers take the database's write lock first (``BEGIN IMMEDIATE``), so two kidx processes
serialise instead of interleaving; a waiting writer gives up cleanly after a timeout.
Queries (``kidx.store.catalog.CatalogQuery``) are compiled to SQL here; the statements and row
mapping this catalog shares with the PostgreSQL one are in ``kidx.store.sql_catalog``.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import time
from collections.abc import Sequence
from operator import itemgetter

from kidx.errors import StoreBusy, StoreError, StoreReadOnly
from kidx.records import TYPE_CHECKING
from kidx.store import notices
from kidx.store.catalog import (
    CatalogQuery,
    Change,
    Entry,
    ReferenceCondition,
    ReferencedFieldCondition,
    Revision,
    condition_holds,
    field_text,
)
from kidx.store.catalog_packing import DICTIONARY_SAMPLE, PackedValueError
from kidx.store.objects import ObjectDB
from kidx.store.sql_catalog import (
    SQLCatalog,
    Statements,
    digest_of_raw,
    dumps,
    needs_row_check,
    raw_digest,
    raw_digest_range,
    translating,
)
from kidx.store.sqlite_connections import CACHE_KIB, connect_read_only
from kidx.store.sqlite_packed_rows import SQL_FUNCTIONS, PackedRows
from kidx.store.sqlite_schema import (
    DIALECT,
    DIGEST_KEY,
    DIGEST_KEY_BYTES,
    LAST_REVISION,
    SCHEMA,
    SQL_VARIABLES,
    STATEMENTS,
    upgrade_2_to_3,
)

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA_VERSION = "3"
SCHEMA_1_VERSION = "1"  # read with SQL of its own (kidx.store.sqlite_schema_1), imported only for such a catalog
#: versions this kidx reads as they are and upgrades on the first write
OLDER_SCHEMA_VERSIONS = (SCHEMA_1_VERSION, "2")
# a schema 2 catalog reads with schema 3's SQL (it has the same tables and views, and no
# packed values); only schema 1 has SQL of its own
_OWN_SQL = (SCHEMA_VERSION, "2")
# of a new catalog: rows of about 1 KB waste less of each page than at 4 KiB (at 100,000
# generated runs 1,741 bytes a run against 1,937), but a selection spread over the table
# reads twice the bytes per row found (its SQL for 1,000 rows took 4.4 ms against 3.6,
# timed in one process on a shared, loaded 2-core machine)
PAGE_SIZE = 8192
BUSY_TIMEOUT_S = 60.0
CATALOG_FILE = "catalog.sqlite"

_SPEC_INDEX_MARK = "spec_index_revision"
UPGRADED = "upgraded the store's catalog ({location}) to schema version {version}"


_NAME = itemgetter(2)  # of a row of ENTRY_COLUMNS


def _schema_1():
    """Schema 1's dialect, statements and upgrade: a catalog of another version never needs them."""
    from kidx.store import sqlite_schema_1

    return sqlite_schema_1


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
    if isinstance(exc, PackedValueError):
        return StoreError(f"{catalog} is damaged (a packed value cannot be read); `kidx fsck` tells what is wrong")
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


def _label_clauses(requirements, column: str = "id") -> list[tuple[str, list]]:
    """Label requirements as SQL (kidx.store.sqlite_label_clauses, imported for a query that has some)."""
    if not requirements:
        return []
    from kidx.store.sqlite_label_clauses import label_clauses

    return label_clauses(requirements, column)


class SQLiteCatalog(PackedRows, SQLCatalog):
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
        self._target_ids: dict[tuple[str, bytes], int] = {}  # PackedRows' caches
        self._target_digests: dict[str, str] = {}
        self._replacements: dict[tuple, tuple] = {}
        self._dictionaries: dict[int, bytes] = {}
        self.has_schema = True
        if path is not None and not write:
            self.connection = connect_read_only(path, BUSY_TIMEOUT_S)
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
            self.connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        self._retrying(self._ensure_schema)

    def _use_version(self, version: str) -> None:
        """Read (and write) with the SQL of the catalog's schema version."""
        self.version = version
        self.dialect, self.sql = ((DIALECT, STATEMENTS) if version in _OWN_SQL
                                  else (_schema_1().DIALECT_1, _schema_1().STATEMENTS_1))
        # digests given as text (JSON lists of them, the upgrade's copies) as they are stored
        self.connection.create_function("kidx_raw_digest", 1, _raw_or_none, deterministic=True)
        for name, arguments, function in SQL_FUNCTIONS:  # the upgrade's packing
            self.connection.create_function(name, arguments, function, deterministic=True)

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
        # the schema and its version are written in one transaction, so once any table is
        # seen the version is there to read: asked the other way round, a store another
        # process created between the two reads would look damaged
        if self.connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
            return None
        try:
            row = self.connection.execute("SELECT value FROM info WHERE key='schema'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            row = None
        if row is None:  # tables without a version: damage, not a store still being created
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
                    for statement in SCHEMA.split(";\n"):
                        self.connection.execute(statement)
                    self.connection.execute("INSERT INTO info (key, value) VALUES ('schema', ?), (?, '0')",
                                            (SCHEMA_VERSION, LAST_REVISION))
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
        if self.version not in _OWN_SQL:
            return _schema_1().last_revision(self.connection.execute)
        return int(self.connection.execute("SELECT value FROM info WHERE key=?", (LAST_REVISION,)).fetchone()[0])

    def _revision_id(self) -> int:
        """A new revision id (inside a write; ``_save_revision_ids`` records those taken)."""
        taken = self._last_revision() + 1 if self._next_revision is None else self._next_revision
        self._next_revision = taken + 1
        return taken

    def _save_revision_ids(self) -> None:
        if self._next_revision is not None:
            self.connection.execute("UPDATE info SET value=? WHERE key=?",
                                    (str(self._next_revision - 1), LAST_REVISION))
            self._next_revision = None

    # --- the upgrade from an older schema (inside the first write's transaction) -------

    def _upgrade(self) -> None:
        """Rewrite a schema 1 or 2 catalog as schema 3 inside the write's transaction
        (``kidx.store.sqlite_schema_1.upgrade``, then ``sqlite_schema.upgrade_2_to_3``)."""
        if self.version == SCHEMA_1_VERSION:
            _schema_1().upgrade(self.connection.execute, self._has_table("spec_indexed"), "2")
        self.connection.create_function("kidx_pack_text", 1, self._stored_text)
        upgrade_2_to_3(self.connection.execute, SCHEMA_VERSION, self._choose_dictionary)
        self._use_version(SCHEMA_VERSION)
        # a spec index that was missing or behind is filled from the objects now
        self._catch_up_spec_index()
        self._mark_spec_index()

    def translated(self, method, *args, **kwargs):
        try:
            return method(*args, **kwargs)
        except (sqlite3.Error, json.JSONDecodeError, PackedValueError) as exc:
            raise store_error(exc, self.location) from None

    def _write_starts(self, changes: Sequence[Change]) -> bool:
        """Bring the spec index up to date with the objects this write refers to or
        carries; a catalog made before the index has no index to keep. The first write
        with enough long annotations gives the store its dictionary for them."""
        if changes and self.version == SCHEMA_VERSION:
            self._choose_dictionary(dumps(change[0].annotations) for change in changes[:DICTIONARY_SAMPLE])
        if not self._has_table("spec_indexed"):
            return False
        self._catch_up_spec_index()
        self._index_specs(self._specs_of(changes))
        return True

    def _restore_starts(self, changes: Sequence[Change]) -> None:
        """A restored store gets its dictionary from the bundle's annotations, as from a first write."""
        self._choose_dictionary(dumps(change.entry.annotations) for change in changes[:DICTIONARY_SAMPLE])

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
        return (self._revision_id(), *row[:6], self._stored_text(row[6]), *row[7:])

    def _restored_revisions(self, changes: Sequence[Change],
                            revisions: Sequence[Revision]) -> tuple[builtins.list[tuple], builtins.list[tuple]]:
        """Revision ids in the order given; a current name's last revision, when it is its
        state exactly, is kept in its names row, every other one as a past revision."""
        return self._revisions_kept_in_names(changes, revisions)

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
        self._forget_packing()
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")
        if self._upgraded_from is not None:  # the upgrade is undone with the write
            self._use_version(self._upgraded_from)
            self._upgraded_from = None

    # --- reads --------------------------------------------------------------------------

    def _sorts_rows(self, query: CatalogQuery) -> bool:
        """The rows of one kind in name order, without a limit, are sorted by their names
        here: SQLite would sort the whole rows through a temporary B-tree (for the 1,000
        runs of a label at 1,000,000 runs, a fifth of the statement's time), and Python's
        order of names is SQLite's (BINARY: UTF-8 keeps the code points' order; one kind
        holds each name once)."""
        return query.kind is not None and query.limit is None and query.order in ("name", "kind,name")

    def _listed(self, rows: Sequence, query: CatalogQuery) -> builtins.list[Entry]:
        if self._sorts_rows(query):
            rows = sorted(rows, key=_NAME)
        return super()._listed(rows, query)

    def _entry_columns(self, query: CatalogQuery) -> str:
        """Labels too only where they are read (``CatalogQuery.read_labels``) or the rows
        are checked against label conditions: each entry's other labels read as {}."""
        columns = super()._entry_columns(query)
        if query.read_labels or needs_row_check(query):
            return columns
        return columns.replace("e.labels", "'{}'")

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
        keyed = self.version == SCHEMA_VERSION  # objects_by_digest holds DIGEST_KEY
        if query.digests is not None:
            listed = json.dumps(list(query.digests))
            add((f"digest IN ({self._digest_list()})", [listed]) if not keyed else (
                f"{DIGEST_KEY} IN (SELECT substr(kidx_raw_digest(value), 1, {DIGEST_KEY_BYTES}) FROM json_each(?)) "
                f"AND digest IN ({self._digest_list()})", [listed, listed]), True)
        if query.digest_prefix is not None:
            low, high = self._digest_range(query.digest_prefix)
            add(("digest BETWEEN ? AND ?", [low, high]) if not keyed else (
                f"{DIGEST_KEY} BETWEEN ? AND ? AND digest BETWEEN ? AND ?",
                [low[:DIGEST_KEY_BYTES], high[:DIGEST_KEY_BYTES], low, high]), True)
        for clause in _label_clauses(query.labels):
            add(clause, " NOT IN " not in clause[0])
        for condition in query.fields:
            add(self._field_clause(condition))
        linked = self._linked_references_clause(query)
        if linked is not None:
            add(linked, True)
        for position, reference in enumerate(() if linked else query.references):
            add(self._reference_clause(reference, correlated=position > 0), True)
        for through in query.referenced_fields:
            clause = self._referenced_field_clause(through)
            add(clause, " NOT IN " not in clause[0])
        if query.kind is not None:
            # With a narrowing clause (id IN …), start from its index and sort the few rows
            # found; "+kind" stops SQLite from walking every row of the kind in name order.
            where.insert(0, "+kind=?" if narrowed else "kind=?")
            parameters.insert(0, query.kind)
        return self._select(query, where, parameters)

    @translating
    def digests_present(self, digests) -> set[str]:
        if self.version != SCHEMA_VERSION:
            return super().digests_present(digests)
        present: set[str] = set()
        wanted = list({raw_digest(digest) for digest in digests})
        for start in range(0, len(wanted), SQL_VARIABLES // 2):
            chunk = wanted[start : start + SQL_VARIABLES // 2]
            marks = DIALECT.marks(len(chunk))
            present.update(digest_of_raw(row[0]) for row in self.connection.execute(
                f"SELECT DISTINCT digest FROM objects WHERE {DIGEST_KEY} IN ({marks}) AND digest IN ({marks})",
                [*(digest[:DIGEST_KEY_BYTES] for digest in chunk), *chunk]))
        return present

    def _digest_list(self) -> str:
        """SQL for the digests of a JSON list of ``sha256:…`` texts, as the catalog stores them."""
        if self.version in _OWN_SQL:
            return "SELECT kidx_raw_digest(value) FROM json_each(?)"
        return _schema_1().DIGEST_LIST

    def _digest_range(self, hexdigits: str) -> builtins.list:
        """The lowest and highest stored digest whose hex starts with ``hexdigits``."""
        if self.version in _OWN_SQL:
            return list(raw_digest_range(hexdigits))
        return _schema_1().digest_range(hexdigits)

    def _linked_references_clause(self, query: CatalogQuery) -> tuple[str, builtins.list] | None:
        """Several conditions on digests, intersected inside the reference index
        (kidx.store.sqlite_references); None where another form is needed (schema 1, a
        prefix, a target kind, no digests)."""
        conditions = query.references
        if not conditions:
            return None
        from kidx.store.sqlite_references import linked_references_clause, target_ids_sql, walks_recent

        recent = walks_recent(query) and self.version in _OWN_SQL
        if not recent and (len(conditions) < 2 or self.version not in _OWN_SQL or any(
                c.digest_prefix is not None or c.target_kind is not None or not c.digests for c in conditions)):
            return None
        target_ids = [[row[0] for row in self.connection.execute(*target_ids_sql(
            condition, self.dialect.stored_digest, DIALECT.marks))] for condition in conditions]
        return linked_references_clause(target_ids, DIALECT.marks, query if recent else None)

    def _reference_clause(self, condition: ReferenceCondition, correlated: bool = False) -> tuple[str, builtins.list]:
        """Answered from the target index of ``refs``. ``correlated`` (a condition after the
        first): a condition on digests is checked on each row the others find, through the
        references by object, rather than by listing every object that refers to one of
        them (an environment's runs are an eighth of the store)."""
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
            for clause in _label_clauses(condition.target_labels, "t.id"):
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
        if correlated:
            # schema 2: each target's (target, object) key answers it directly; schema 1: its refs by object
            links = ("ref_links r WHERE r.object_id={entries}.id AND r.target_id IN (SELECT id FROM ref_targets "
                     "WHERE target IN ({marks}){field})" if self.version in _OWN_SQL
                     else "refs r WHERE r.object_id={entries}.id AND r.target IN ({marks}){field}")
            return (
                "EXISTS (SELECT 1 FROM " + links.format(entries=self.dialect.entries, field=field_sql,
                                                        marks=DIALECT.marks(len(condition.digests))) + ")",
                [*(stored(digest) for digest in condition.digests), *field_parameters],
            )
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
