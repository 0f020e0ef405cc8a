"""The catalog: which object each (kind, name) currently is, with its metadata.

One SQLite database (WAL) holds:
- ``objects``: the current digest and metadata of every name;
- ``labels``: one row per label, indexed by (key, value) for selectors;
- ``refs``: one row per reference field, indexed by target digest for reverse look-ups;
- ``revisions``: every state a name has had, appended and never rewritten, so nothing
  applied is ever lost (a deletion is a revision too).
Writers take the database's write lock first (``BEGIN IMMEDIATE``), so two kidx processes
serialise instead of interleaving; a waiting writer gives up cleanly after a timeout.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple
from pathlib import Path

from kidx.store.faults import crash_point

SCHEMA_VERSION = "1"
BUSY_TIMEOUT_S = 60.0
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


class Entry(NamedTuple):
    """A name's current state in the catalog."""

    kind: str
    name: str
    digest: str
    title: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    created: str
    generation: int
    id: int | None = None
    columns: str | None = None  # cached printer-column values (kidx.store.column_cache)

    def same_metadata(self, title, labels, annotations) -> bool:
        return self.title == title and self.labels == labels and self.annotations == annotations


class Revision(NamedTuple):
    kind: str
    name: str
    revision: int
    event: str  # "applied" or "deleted"
    digest: str | None
    title: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    generation: int | None
    recorded: str = ""


def _dumps(mapping: dict) -> str:
    return json.dumps(mapping, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_INSERT_REVISION = (
    "INSERT INTO revisions (kind, name, event, digest, title, labels, annotations, generation, recorded) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_ENTRY_COLUMNS = "id, kind, name, digest, title, labels, annotations, created, generation, columns"


def _entry(row) -> Entry:
    return Entry(
        kind=row[1], name=row[2], digest=row[3], title=row[4], labels=json.loads(row[5]),
        annotations=json.loads(row[6]), created=row[7], generation=row[8], id=row[0], columns=row[9],
    )


def _chunks(items: Sequence, size: int = _SQL_VARIABLES) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Catalog:
    def __init__(self, path: Path | None):
        """Open the catalog at ``path``; None gives an empty, in-memory one (no store yet)."""
        target = ":memory:" if path is None else str(path)
        self.connection = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        self._writing = False
        if path is not None:
            self._retrying(lambda: self.connection.execute("PRAGMA journal_mode=WAL").fetchall())
            self.connection.execute("PRAGMA synchronous=FULL")
        self._retrying(self._ensure_schema)

    def _retrying(self, action) -> None:
        """Run ``action``, waiting out locks SQLite reports at once instead of waiting for.

        Switching a new database to WAL needs an exclusive lock, and SQLite does not call
        its busy handler for it: two processes creating one store at the same moment
        would otherwise see "database is locked".
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        delay = 0.005
        while True:
            try:
                action()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                    raise
                if self.connection.in_transaction:
                    self.connection.execute("ROLLBACK")
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _ensure_schema(self) -> None:
        try:
            row = self.connection.execute("SELECT value FROM info WHERE key='schema'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            row = None
        if row is not None:
            return
        # one script, one transaction: two processes creating the store at once both succeed
        self.connection.executescript(
            "BEGIN IMMEDIATE;"
            + _SCHEMA
            + f"INSERT OR IGNORE INTO info (key, value) VALUES ('schema', '{SCHEMA_VERSION}');"
            + "COMMIT;"
        )

    def close(self) -> None:
        self.connection.close()

    # --- transactions -------------------------------------------------------------------

    def begin_write(self) -> None:
        self.connection.execute("BEGIN IMMEDIATE")
        self._writing = True

    def begin_read(self) -> None:
        self.connection.execute("BEGIN")

    def commit(self) -> None:
        if self._writing:
            crash_point("catalog")
        self.connection.execute("COMMIT")
        if self._writing:
            crash_point("commit")
            # Fold the write-ahead log into the database and empty it now: otherwise the
            # next process to open the catalog re-reads the whole log (37 MB after a
            # 10,000-run apply, 15 ms on every later command). Busy readers just make this
            # a partial checkpoint; it never fails the command.
            self._writing = False
            self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def rollback(self) -> None:
        self._writing = False
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")

    # --- reads --------------------------------------------------------------------------

    def get(self, kind: str, name: str) -> Entry | None:
        row = self.connection.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM objects WHERE kind=? AND name=?", (kind, name)
        ).fetchone()
        return _entry(row) if row else None

    def get_many(self, kind: str, names: Iterable[str]) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        for chunk in _chunks(list(dict.fromkeys(names))):
            marks = ",".join("?" * len(chunk))
            for row in self.connection.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM objects WHERE kind=? AND name IN ({marks})", (kind, *chunk)
            ):
                found[row[2]] = _entry(row)
        return found

    def list(self, kind: str, clauses: Sequence[tuple[str, Sequence]] = ()) -> list[Entry]:
        """Entries of one kind, sorted by name, filtered by SQL clauses.

        Each clause is ``(sql, parameters)`` over ``objects.id``, as produced by
        ``kidx.query.label_sql`` (answered from the (key, value) index of ``labels``) and
        ``kidx.query.references`` (from the (target, object_id) key of ``refs``).
        """
        # With a narrowing clause (id IN …), start from its index and sort the few rows
        # found; "+kind" stops SQLite from walking every row of the kind in name order.
        narrowed = any(" NOT IN " not in sql and sql.startswith("id IN") for sql, _ in clauses)
        where = ["+kind=?" if narrowed else "kind=?"]
        parameters: list = [kind]
        for sql, values in clauses:
            where.append(sql)
            parameters.extend(values)
        query = f"SELECT {_ENTRY_COLUMNS} FROM objects WHERE {' AND '.join(where)} ORDER BY name"
        return [_entry(row) for row in self.connection.execute(query, parameters)]

    def with_name_prefix(self, kind: str, prefix: str) -> list[Entry]:
        return [
            _entry(row)
            for row in self.connection.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM objects WHERE kind=? AND name >= ? AND name < ? ORDER BY name",
                (kind, prefix, prefix + "\uffff"),
            )
        ]

    def kinds_present(self) -> set[str]:
        return {row[0] for row in self.connection.execute("SELECT DISTINCT kind FROM objects")}

    def by_digest(self, digest: str) -> list[Entry]:
        return [
            _entry(row)
            for row in self.connection.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM objects WHERE digest=? ORDER BY kind, name", (digest,)
            )
        ]

    def by_digest_prefix(self, prefix: str, kind: str | None = None) -> list[Entry]:
        """Current objects whose digest starts with ``sha256:<prefix>`` (index range scan)."""
        low = "sha256:" + prefix
        high = low + "\uffff"
        query = f"SELECT {_ENTRY_COLUMNS} FROM objects WHERE digest >= ? AND digest < ?"
        parameters: list = [low, high]
        if kind is not None:
            query += " AND kind=?"
            parameters.append(kind)
        return [_entry(row) for row in self.connection.execute(query + " ORDER BY kind, name", parameters)]

    def digests_present(self, digests: Iterable[str]) -> set[str]:
        present: set[str] = set()
        for chunk in _chunks(list(set(digests))):
            marks = ",".join("?" * len(chunk))
            present.update(
                row[0]
                for row in self.connection.execute(
                    f"SELECT DISTINCT digest FROM objects WHERE digest IN ({marks})", chunk
                )
            )
        return present

    def referrer_counts(self, digest: str) -> list[tuple[str, int]]:
        """(kind, count) of current objects referring to ``digest``, by kind."""
        return list(
            self.connection.execute(
                "SELECT o.kind, COUNT(DISTINCT o.id) FROM refs r JOIN objects o ON o.id = r.object_id "
                "WHERE r.target=? GROUP BY o.kind ORDER BY o.kind",
                (digest,),
            )
        )

    def referrer_names(self, digest: str, kind: str, limit: int) -> list[str]:
        return [
            row[0]
            for row in self.connection.execute(
                "SELECT DISTINCT o.name FROM refs r JOIN objects o ON o.id = r.object_id "
                "WHERE r.target=? AND o.kind=? ORDER BY o.name LIMIT ?",
                (digest, kind, limit),
            )
        ]

    def revisions(self, kind: str, name: str) -> list[Revision]:
        return [
            Revision(
                kind=row[0], name=row[1], revision=number, event=row[3], digest=row[4], title=row[5],
                labels=json.loads(row[6] or "{}"), annotations=json.loads(row[7] or "{}"),
                generation=row[8], recorded=row[9],
            )
            for number, row in enumerate(
                self.connection.execute(
                    "SELECT kind, name, id, event, digest, title, labels, annotations, generation, recorded "
                    "FROM revisions WHERE kind=? AND name=? ORDER BY id",
                    (kind, name),
                ),
                start=1,
            )
        ]

    # --- maintenance reads (fsck, gc, export) --------------------------------------------

    def all_entries(self) -> Iterator[Entry]:
        """Every current name, by kind and name."""
        for row in self.connection.execute(f"SELECT {_ENTRY_COLUMNS} FROM objects ORDER BY kind, name"):
            yield _entry(row)

    def all_revisions(self) -> Iterator[Revision]:
        """Every revision of every name, in the order recorded, numbered per name."""
        numbers: dict[tuple[str, str], int] = {}
        for row in self.connection.execute(
            "SELECT kind, name, id, event, digest, title, labels, annotations, generation, recorded "
            "FROM revisions ORDER BY id"
        ):
            key = (row[0], row[1])
            numbers[key] = numbers.get(key, 0) + 1
            yield Revision(
                kind=row[0], name=row[1], revision=numbers[key], event=row[3], digest=row[4], title=row[5],
                labels=json.loads(row[6] or "{}"), annotations=json.loads(row[7] or "{}"),
                generation=row[8], recorded=row[9],
            )

    def index_rows(self) -> tuple[dict[tuple[str, str], tuple[dict, set]], int, int]:
        """What the label and reference indexes hold: per current name, its indexed labels
        and (field, target) pairs; then the number of label and reference rows that belong
        to no name."""
        names = {row[0]: (row[1], row[2]) for row in self.connection.execute("SELECT id, kind, name FROM objects")}
        indexed: dict[tuple[str, str], tuple[dict, set]] = {key: ({}, set()) for key in names.values()}
        stray_labels = stray_references = 0
        for object_id, key, value in self.connection.execute("SELECT object_id, key, value FROM labels"):
            owner = names.get(object_id)
            if owner is None:
                stray_labels += 1
            else:
                indexed[owner][0][key] = value
        for object_id, field_name, target in self.connection.execute("SELECT object_id, field, target FROM refs"):
            owner = names.get(object_id)
            if owner is None:
                stray_references += 1
            else:
                indexed[owner][1].add((field_name, target))
        return indexed, stray_labels, stray_references

    def integrity_problems(self) -> list[str]:
        """What the database's own consistency check finds (nothing when it is sound)."""
        try:
            rows = [row[0] for row in self.connection.execute("PRAGMA integrity_check")]
        except sqlite3.DatabaseError as exc:
            return [f"cannot be checked: {exc}"]
        return [] if rows == ["ok"] else rows

    def rebuild_indexes(self) -> None:
        """Rebuild the database's own indexes from its tables (repair)."""
        self.connection.execute("REINDEX")

    # --- writes (inside begin_write … commit) -------------------------------------------

    def put(self, entry: Entry, references: Iterable[tuple[str, str]], now: str) -> None:
        """Create or replace one name's current state and append it as a revision."""
        self.put_many([(entry, list(references))], now)

    def put_many(self, changes: Sequence[tuple[Entry, Sequence[tuple[str, str]]]], now: str) -> None:
        """Create or replace many names at once: a handful of statements, not a few per name.

        New names get ids allocated here, which is safe because writers hold the write lock.
        """
        (highest,) = self.connection.execute("SELECT COALESCE(MAX(id), 0) FROM objects").fetchone()
        rows, updates, label_rows, ref_rows, revision_rows = [], [], [], [], []
        for entry, references in changes:
            labels_json, annotations_json = _dumps(entry.labels), _dumps(entry.annotations)
            if entry.id is None:
                highest += 1
                object_id = highest
                rows.append((object_id, entry.kind, entry.name, entry.digest, entry.title, labels_json,
                             annotations_json, entry.created, entry.generation, entry.columns))
            else:
                object_id = entry.id
                updates.append((entry.digest, entry.title, labels_json, annotations_json, entry.generation,
                                entry.columns, object_id))
            label_rows.extend((object_id, key, value) for key, value in entry.labels.items())
            ref_rows.extend((object_id, field_name, target) for field_name, target in references)
            revision_rows.append((entry.kind, entry.name, "applied", entry.digest, entry.title,
                                  labels_json, annotations_json, entry.generation, now))
        execute_many = self.connection.executemany
        if updates:
            execute_many("DELETE FROM labels WHERE object_id=?", [(u[-1],) for u in updates])
            execute_many("DELETE FROM refs WHERE object_id=?", [(u[-1],) for u in updates])
            execute_many(
                "UPDATE objects SET digest=?, title=?, labels=?, annotations=?, generation=?, columns=? WHERE id=?",
                updates,
            )
        execute_many(
            "INSERT INTO objects (id, kind, name, digest, title, labels, annotations, created, generation, columns) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        execute_many("INSERT INTO labels (object_id, key, value) VALUES (?, ?, ?)", label_rows)
        execute_many("INSERT OR IGNORE INTO refs (object_id, field, target) VALUES (?, ?, ?)", ref_rows)
        execute_many(_INSERT_REVISION, revision_rows)

    def reindex(self, entry: Entry, references: Iterable[tuple[str, str]]) -> None:
        """Rewrite one name's label and reference rows and cached columns from ``entry``
        (repair: no revision is recorded, nothing the user applied changes)."""
        self.connection.execute("DELETE FROM labels WHERE object_id=?", (entry.id,))
        self.connection.execute("DELETE FROM refs WHERE object_id=?", (entry.id,))
        self.connection.executemany(
            "INSERT INTO labels (object_id, key, value) VALUES (?, ?, ?)",
            [(entry.id, key, value) for key, value in entry.labels.items()],
        )
        self.connection.executemany(
            "INSERT OR IGNORE INTO refs (object_id, field, target) VALUES (?, ?, ?)",
            [(entry.id, field_name, target) for field_name, target in references],
        )
        self.connection.execute("UPDATE objects SET columns=? WHERE id=?", (entry.columns, entry.id))

    def drop_stray_index_rows(self) -> None:
        """Remove label and reference rows that belong to no name (repair)."""
        self.connection.execute("DELETE FROM labels WHERE object_id NOT IN (SELECT id FROM objects)")
        self.connection.execute("DELETE FROM refs WHERE object_id NOT IN (SELECT id FROM objects)")

    def restore(
        self, entries: Sequence[tuple[Entry, Sequence[tuple[str, str]]]], revisions: Sequence[Revision]
    ) -> None:
        """Insert names and revisions exactly as given (from a bundle): recorded times,
        generations and creation times are kept, not decided here."""
        (highest,) = self.connection.execute("SELECT COALESCE(MAX(id), 0) FROM objects").fetchone()
        rows, label_rows, ref_rows = [], [], []
        for entry, references in entries:
            highest += 1
            rows.append((highest, entry.kind, entry.name, entry.digest, entry.title, _dumps(entry.labels),
                         _dumps(entry.annotations), entry.created, entry.generation, entry.columns))
            label_rows.extend((highest, key, value) for key, value in entry.labels.items())
            ref_rows.extend((highest, field_name, target) for field_name, target in references)
        self.connection.executemany(
            "INSERT INTO objects (id, kind, name, digest, title, labels, annotations, created, generation, columns) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        self.connection.executemany("INSERT INTO labels (object_id, key, value) VALUES (?, ?, ?)", label_rows)
        self.connection.executemany("INSERT OR IGNORE INTO refs (object_id, field, target) VALUES (?, ?, ?)", ref_rows)
        self.connection.executemany(
            _INSERT_REVISION,
            [(r.kind, r.name, r.event, r.digest, r.title, _dumps(r.labels), _dumps(r.annotations), r.generation,
              r.recorded) for r in revisions],
        )

    def _record_revision(self, kind, name, event, digest, title, labels, annotations, generation, now) -> None:
        self.connection.execute(
            _INSERT_REVISION, (kind, name, event, digest, title, labels, annotations, generation, now)
        )

    def delete(self, entry: Entry, now: str) -> None:
        self.connection.execute("DELETE FROM labels WHERE object_id=?", (entry.id,))
        self.connection.execute("DELETE FROM refs WHERE object_id=?", (entry.id,))
        self.connection.execute("DELETE FROM objects WHERE id=?", (entry.id,))
        self._record_revision(entry.kind, entry.name, "deleted", entry.digest, entry.title,
                              _dumps(entry.labels), _dumps(entry.annotations), entry.generation, now)
