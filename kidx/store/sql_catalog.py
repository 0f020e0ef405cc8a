"""What the SQLite and PostgreSQL catalogs share: their row mapping and the running of their
statements (the statements and the ``Dialect`` are in kidx/store/sql_statements.py).

Both catalogs read the same tables (or views) with the same columns: the current names
(SQLite's ``objects``, PostgreSQL's ``kidx.entries``), ``labels``, ``refs``,
``revisions`` and the spec index (``spec_leaves`` / ``spec_indexed``). So the statements
that write and read them, and the mapping of their rows to ``Entry`` and ``Revision``,
are written once here, in ``SQLCatalog``. What truly differs is a ``Dialect``: the
parameter mark, where the tables live, how a digest is stored (its 32 bytes; the text
``sha256:…`` in an SQLite catalog of schema 1), the end of a prefix range, and how a
list of values is matched (SQLite: ``IN (?, …)`` in chunks under its limit on bound
parameters; PostgreSQL: one array, ``= ANY(%s)``); and a few hooks for where SQLite's
schema 2 keeps rows more compactly (a name's current revision in its names row, each
distinct reference target once: ``_current_revision``, ``_new_revision``,
``_insert_refs``, ``_restored_revisions`` and ``Statements.supersede``).

Each backend keeps only its real differences: connections, transactions and locks,
errors, schema creation and upgrades, the spec index's bookkeeping, and query
compilation (each tuned to its own planner).
"""

from __future__ import annotations

import builtins
import functools
import json
from collections.abc import Callable, Iterable, Sequence

from kidx.errors import StoreError
from kidx.records import TYPE_CHECKING
from kidx.store.catalog import (
    RECENT,
    Catalog,
    CatalogQuery,
    Change,
    Entry,
    Revision,
    decoded_together,
    label_holds,
    scalar_leaves,
)
from kidx.store.sql_statements import (
    ENTRY_COLUMNS,
    ENTRY_COLUMNS_WITHOUT_ANNOTATIONS,
    METADATA_COLUMNS,
    Dialect,
    Statements,
    same,
)

if TYPE_CHECKING:
    from typing import Any


_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def dumps(mapping: dict) -> str:
    """Labels and annotations as the catalogs store them: canonical compact JSON (one
    encoder for every call: json.dumps with options makes a new one each time)."""
    return _ENCODE(mapping)


_loads = json.loads


DIGEST_PREFIX = "sha256:"
RAW_DIGESTS_KEPT = 4096  # raw_digest's latest results kept


@functools.lru_cache(maxsize=RAW_DIGESTS_KEPT)
def raw_digest(digest: str) -> bytes:
    """``sha256:<hex>`` as the 32 bytes stored. A write converts each reference target
    once per row that refers to it (and each row's own digest twice): the latest ones are
    kept, so a target shared by many rows is converted once."""
    if not digest.startswith(DIGEST_PREFIX) or len(digest) != 71:
        raise StoreError(f"not a sha256 digest: {digest!r}")
    return bytes.fromhex(digest[7:])


def digest_of_raw(digest) -> str:
    """``sha256:<hex>`` of 32 stored bytes, from a column that is never NULL."""
    return DIGEST_PREFIX + digest.hex()  # bytes, or a memoryview of them: no copy


def raw_digest_range(hexdigits: str) -> tuple[bytes, bytes]:
    """The lowest and highest 32-byte digests whose hex starts with ``hexdigits``."""
    return bytes.fromhex(hexdigits.ljust(64, "0")), bytes.fromhex(hexdigits.ljust(64, "f"))


def all_of(clauses: builtins.list[str]) -> str:
    """``a AND b AND …`` as a balanced tree: SQLite parses a flat chain one level deeper per
    clause and refuses 1,000 levels, while a selector may well have that many requirements.
    The clauses keep their order, and so do their parameters."""
    if len(clauses) <= 8:
        return " AND ".join(clauses)
    middle = len(clauses) // 2
    return f"({all_of(clauses[:middle])}) AND ({all_of(clauses[middle:])})"


def needs_row_check(query: CatalogQuery) -> bool:
    """Numeric label comparisons (gt, lt) are exact only on the rows, after the SQL."""
    return any(r.operator in ("gt", "lt") for r in query.labels)


def translating(method):
    """A catalog method whose database errors become kidx's (``SQLCatalog.translated``)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        return self.translated(method, self, *args, **kwargs)

    return wrapper


class SQLCatalog(Catalog):
    """The catalog methods both backends run alike. A subclass sets ``dialect`` and
    ``sql`` (its ``Statements``) and provides ``connection`` (``execute``,
    ``executemany``), ``translated`` and the spec index's hooks."""

    dialect: Dialect
    sql: Statements
    connection: Any

    def translated(self, method, *args, **kwargs):
        """Run ``method`` with the database's errors turned into kidx's."""
        return method(*args, **kwargs)

    @property
    def readable(self) -> bool:
        """False while the database holds no catalog yet (it then reads as empty)."""
        return True

    # --- row mapping ---------------------------------------------------------------------

    def entry(self, row) -> Entry:
        """The Entry of a row of ``ENTRY_COLUMNS`` (positional: keywords would cost more on
        every row of every listing)."""
        return Entry(row[1], row[2], self.dialect.digest_text(row[3]), row[4], _loads(row[5]), _loads(row[6]),
                     row[7], row[8], row[0], row[9])

    def entries(self, rows: Sequence) -> builtins.list[Entry]:
        """The Entries of many rows of ``ENTRY_COLUMNS``, their labels and annotations
        decoded together (``decoded_together``); with a damaged value each row is read alone."""
        metadata = decoded_together([text for row in rows for text in (row[5], row[6])])
        if metadata is None:
            return [self.entry(row) for row in rows]
        text, values = self.dialect.digest_text, iter(metadata)
        make = tuple.__new__  # what Entry(…) does, without its Python-level __new__ on every row
        return [make(Entry, (row[1], row[2], text(row[3]), row[4], labels, annotations, row[7], row[8], row[0], row[9]))
                for row, labels, annotations in zip(rows, values, values, strict=True)]

    def _revision(self, row, number: int) -> Revision:
        """The Revision of a row of ``REVISION_COLUMNS``, the ``number``-th of its name."""
        return Revision(row[0], row[1], number, row[2], None if row[3] is None else self.dialect.digest_text(row[3]),
                        row[4], _loads(row[5] or "{}"), _loads(row[6] or "{}"), row[7], row[8])

    def _entry_row(self, object_id: int, entry: Entry, labels_json: str | None, annotations_json: str,
                   columns: str | None) -> tuple:
        return (object_id, entry.kind, entry.name, self.dialect.stored_digest(entry.digest), entry.title,
                labels_json, self._stored_text(annotations_json), entry.created, entry.generation, columns)

    def _stored_text(self, annotations_json: str) -> Any:
        """Annotations as the catalog stores them: their JSON here (see SQLite's)."""
        return annotations_json

    def _labels_json(self) -> Callable[[dict], str | None]:
        """How a write makes the JSON of a row's labels (``dumps``; see the PostgreSQL catalog)."""
        return dumps

    def _stored_columns(self, columns: str | None, ref_rows: Sequence[tuple]) -> str | None:
        """A row's printer-column values as stored, given its reference rows (object id,
        field, stored target): as they are here (see SQLite's)."""
        return columns

    def _revision_row(self, revision: Revision) -> tuple:
        digest = None if revision.digest is None else self.dialect.stored_digest(revision.digest)
        return (revision.kind, revision.name, revision.event, digest, revision.title, dumps(revision.labels),
                self._stored_text(dumps(revision.annotations)), revision.generation, revision.recorded)

    def _current_revision(self, now: str) -> tuple:
        """What a names row records of the revision it is, appended to its columns: nothing
        here (every revision is a row of ``revisions``); see the SQLite catalog."""
        return ()

    def _new_revision(self, row: tuple) -> tuple:
        """A row of ``REVISION_COLUMNS`` as ``insert_revision`` takes it."""
        return row

    def _insert_refs(self, rows: builtins.list[tuple]) -> None:
        """Insert (object_id, field, stored target) rows into the reference index."""
        self.connection.executemany(self.sql.insert_ref, rows)

    def _indexed_columns(self, label_rows: Sequence[tuple], ref_rows: Sequence[tuple]) -> tuple:
        """What a names row keeps itself of its label and reference rows (given), appended to
        its columns: nothing here (they are rows of their own); see the PostgreSQL catalog."""
        return ()

    def _updated_rows(self, updates: builtins.list[tuple]) -> builtins.list[tuple]:
        """Rows for ``update_entry`` (digest, title, labels, annotations, generation, columns,
        what ``_current_revision`` and ``_indexed_columns`` add, id), as the backend's takes them."""
        return updates

    def _insert_index_rows(self, label_rows: builtins.list[tuple], ref_rows: builtins.list[tuple]) -> None:
        """The label and reference rows of a write, unless the names rows keep them."""
        if self.sql.insert_label:
            self._insert_many(self.sql.insert_label, label_rows)
            self._insert_refs(ref_rows)

    def _new_entry_rows(self, changes: Sequence[Change]) -> builtins.list[tuple]:
        """The list ``put_many`` appends the new names rows of ``changes`` to, then hands to
        ``_insert_many``: a plain list here (see the PostgreSQL catalog's, which sends them
        as they come)."""
        return []

    def _insert_many(self, statement: str, rows: builtins.list[tuple]) -> None:
        """Rows for one of the plain INSERT statements (entries, labels, revisions); a
        backend may load them another way (PostgreSQL: COPY)."""
        self.connection.executemany(statement, rows)

    def _index_rows_of(self, object_id: int | None, entry: Entry, references: Iterable[tuple[str, str]],
                       label_rows: builtins.list[tuple], ref_rows: builtins.list[tuple]) -> None:
        stored = self.dialect.stored_digest
        label_rows += [(object_id, key, value) for key, value in entry.labels.items()]
        ref_rows += [(object_id, field_name, stored(target)) for field_name, target in references]

    # --- reads --------------------------------------------------------------------------

    @translating
    def get(self, kind: str, name: str) -> Entry | None:
        if not self.readable:
            return None
        row = self.connection.execute(self.sql.get, (kind, name)).fetchone()
        return self.entry(row) if row else None

    @translating
    def get_many(self, kind: str, names: Iterable[str]) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        if not self.readable:
            return found
        for test, parameters in self.dialect.membership(list(dict.fromkeys(names))):
            for row in self.connection.execute(self.sql.get_many + test, (kind, *parameters)):
                found[row[2]] = self.entry(row)
        return found

    @translating
    def kinds_present(self) -> set[str]:
        if not self.readable:
            return set()
        return {row[0] for row in self.connection.execute(self.sql.kinds)}

    @translating
    def digests_present(self, digests: Iterable[str]) -> set[str]:
        present: set = set()
        if not self.readable:
            return present
        stored, text = self.dialect.stored_digest, self.dialect.digest_text
        wanted = set(digests) if stored is same else {stored(digest) for digest in digests}
        for test, parameters in self.dialect.membership(list(wanted)):
            present.update(row[0] for row in self.connection.execute(self.sql.digests_present + test, parameters))
        return present if text is same else {text(digest) for digest in present}

    @translating
    def referrer_counts(self, digest: str) -> builtins.list[tuple[str, int]]:
        if not self.readable:
            return []
        rows = self.connection.execute(self.sql.referrer_counts, (self.dialect.stored_digest(digest),))
        return [(row[0], row[1]) for row in rows]

    @translating
    def referrer_names(self, digest: str, kind: str, limit: int) -> builtins.list[str]:
        if not self.readable:
            return []
        rows = self.connection.execute(self.sql.referrer_names, (self.dialect.stored_digest(digest), kind, limit))
        return [row[0] for row in rows]

    @translating
    def revisions(self, kind: str, name: str) -> builtins.list[Revision]:
        if not self.readable:
            return []
        rows = self.connection.execute(self.sql.revisions, (kind, name))
        return [self._revision(row, number) for number, row in enumerate(rows, start=1)]

    @translating
    def names_with_history(self, kind: str) -> builtins.list[str]:
        if not self.readable:
            return []
        return [row[0] for row in self.connection.execute(self.sql.names_with_history, (kind,))]

    @translating
    def label_keys(self, prefix: str = "") -> builtins.list[str]:
        if not self.readable:
            return []
        rows = self.connection.execute(self.sql.label_keys, (prefix, prefix + self.dialect.last))
        return [row[0] for row in rows]

    @translating
    def label_values(self, key: str, prefix: str = "") -> builtins.list[str]:
        if not self.readable:
            return []
        rows = self.connection.execute(self.sql.label_values, (key, prefix, prefix + self.dialect.last))
        return [row[0] for row in rows]

    # --- queries: each backend compiles its WHERE clauses, tuned to its planner --------

    def compile(self, query: CatalogQuery) -> tuple[str, builtins.list, bool]:
        """The SELECT for a query, its parameters, and whether rows need checking after."""
        raise NotImplementedError

    @translating
    def list(self, query: CatalogQuery) -> builtins.list[Entry]:
        if not self.readable:
            return []
        sql, parameters, check_rows = self.compile(query)
        entries = self._listed(self.connection.execute(sql, parameters).fetchall(), query)
        if check_rows:
            entries = [e for e in entries if all(label_holds(r, e.labels) for r in query.labels)]
            if query.limit is not None:
                entries = entries[: query.limit]
        return entries

    def _listed(self, rows: Sequence, query: CatalogQuery) -> builtins.list[Entry]:
        """The Entries of a query's rows (``entries``; see the SQLite catalog's)."""
        return self.entries(rows)

    def _sorts_rows(self, query: CatalogQuery) -> bool:
        """Whether the rows of a query in name order are sorted after the SQL, by
        ``_listed``, rather than by it (see the SQLite catalog's)."""
        return False

    def _entry_columns(self, query: CatalogQuery) -> str:
        """The columns a query selects: ``ENTRY_COLUMNS``, annotations only where it reads
        them (see the SQLite catalog's)."""
        return ENTRY_COLUMNS if query.annotations else ENTRY_COLUMNS_WITHOUT_ANNOTATIONS

    def _select(self, query: CatalogQuery, where: builtins.list[str], parameters: builtins.list,
                alias: str = "") -> tuple[str, builtins.list, bool]:
        """The SELECT of entries from the names table (``alias``: its alias, or none) where
        all of ``where`` hold, in the query's order and limit."""
        columns = self._entry_columns(query)
        if not alias:
            columns = columns.replace("e.", "")
        table = f"{self.dialect.entries} {alias}" if alias else self.dialect.entries
        prefix = f"{alias}." if alias else ""
        sql = f"SELECT {columns} FROM {table}"
        if where:
            sql += f" WHERE {all_of(where)}"
        if query.order == RECENT:
            sql += " ORDER BY " + self.dialect.recent_order.format(table=prefix)
        elif not self._sorts_rows(query):
            sql += f" ORDER BY {prefix}kind, {prefix}name" if query.order == "kind,name" else f" ORDER BY {prefix}name"
        check_rows = needs_row_check(query)
        if query.limit is not None and not check_rows:
            sql += f" LIMIT {self.dialect.mark}"
            parameters.append(query.limit)
        return sql, parameters, check_rows

    def _field_clause(self, condition, prefix: str = "") -> tuple[str, builtins.list]:
        """A condition on the name or title of the entries themselves (``prefix``: the
        names table's alias and a dot, or nothing)."""
        column = METADATA_COLUMNS.get(tuple(condition.path))
        if column is None:
            raise StoreError(
                f"the catalog cannot select on {'.'.join(condition.path)} (only metadata.name and metadata.title)")
        operator = "=" if condition.operator == "=" else "<>"
        return f"{column.format(prefix)} {operator} {self.dialect.mark}", [condition.value]

    @staticmethod
    def _referenced_metadata_column(condition, prefix: str = "") -> str:
        """The column of a referenced object's metadata field that a condition names."""
        column = METADATA_COLUMNS.get(tuple(condition.path))
        if column is None:
            raise StoreError(f"the catalog cannot select on {'.'.join(condition.path)} of a referenced object")
        return column.format(prefix)

    # --- maintenance (fsck, gc, export, restore) -----------------------------------------

    @translating
    def all_entries(self) -> builtins.list[Entry]:
        if not self.readable:
            return []
        return self.entries(self.connection.execute(self.sql.all_entries).fetchall())

    @translating
    def all_revisions(self) -> builtins.list[Revision]:
        if not self.readable:
            return []
        numbers: dict[tuple[str, str], int] = {}
        found = []
        for row in self.connection.execute(self.sql.all_revisions):
            key = (row[0], row[1])
            numbers[key] = numbers.get(key, 0) + 1
            found.append(self._revision(row, numbers[key]))
        return found

    @translating
    def index_rows(self):
        """What the label and reference rows say, for fsck (see Catalog.index_rows)."""
        if not self.readable:
            return {}, 0, 0
        execute, text = self.connection.execute, self.dialect.digest_text
        names = {row[0]: (row[1], row[2]) for row in execute(self.sql.id_names)}
        indexed: dict[tuple[str, str], tuple[dict[str, str], set[tuple[str, str]]]] = {
            key: ({}, set()) for key in names.values()}
        stray_labels = stray_references = 0
        for object_id, key, value in execute(self.sql.all_labels):
            owner = names.get(object_id)
            if owner is None:
                stray_labels += 1
            else:
                indexed[owner][0][key] = value
        for object_id, field_name, target in execute(self.sql.all_refs):
            owner = names.get(object_id)
            if owner is None:
                stray_references += 1
            else:
                indexed[owner][1].add((field_name, text(target)))
        return indexed, stray_labels, stray_references

    @translating
    def reindex(self, change: Change) -> None:
        """Rewrite one name's label and reference rows and cached columns (fsck --repair)."""
        entry = change.entry
        label_rows: list[tuple] = []
        ref_rows: list[tuple] = []
        self._index_rows_of(entry.id, entry, change.references, label_rows, ref_rows)
        columns = self._stored_columns(entry.columns, ref_rows)
        if not self.sql.insert_label:  # kept in the names row (PostgreSQL schema 3)
            self._reindex_row(entry.id or 0, self._indexed_columns(label_rows, ref_rows), columns)
            return
        self.connection.execute(self.sql.reindex_labels, (entry.id,))
        self.connection.execute(self.sql.delete_refs, (entry.id,))
        self.connection.executemany(self.sql.insert_label, label_rows)
        self._insert_refs(ref_rows)
        self.connection.execute(self.sql.update_columns, (columns, entry.id))

    def _reindex_row(self, object_id: int, indexed: tuple, columns: str | None) -> None:
        """fsck --repair of a catalog whose names rows keep their labels and references."""
        raise NotImplementedError

    @translating
    def drop_stray_index_rows(self) -> None:
        for statement in (self.sql.stray_labels, self.sql.stray_refs):
            if statement:  # none where a names row keeps them
                self.connection.execute(statement)

    # --- writes (inside begin_write … commit) -------------------------------------------

    def _write_starts(self, changes: Sequence[Change]) -> bool:
        """Before a write's rows (the spec index's upkeep); True: call ``_write_ends`` after."""
        return False

    def _write_ends(self) -> None:
        """After a write's rows, when ``_write_starts`` asked for it."""

    def _restore_starts(self, changes: Sequence[Change]) -> None:
        """Before a restore's rows."""

    def _specs_of(self, changes: Sequence[Change]) -> dict:
        """The spec of every object the changes refer to (None: read it from the objects)
        or carry, by stored digest: what the spec index must hold after the write."""
        stored = self.dialect.stored_digest
        specs: dict = {}
        for change in changes:
            for _, target in change[1]:
                specs.setdefault(stored(target), None)
            if len(change) > 2 and change[2] is not None:
                specs[stored(change[0].digest)] = change[2]
        return specs

    def _index_specs(self, specs: dict) -> None:
        """Index the scalar leaves of objects not indexed yet (keys: stored digests); a None
        spec is read from the objects (skipped when the object is not there: indexed once
        it arrives)."""
        if not specs:
            return
        indexed: set = set()
        for test, parameters in self.dialect.membership(list(specs)):
            indexed.update(row[0] for row in self.connection.execute(self.sql.spec_indexed + test, parameters))
        missing = [digest for digest in specs if digest not in indexed]
        to_read = [digest for digest in missing if specs[digest] is None]
        read = self._object_texts(to_read) if to_read else {}
        leaves: set[tuple] = set()  # (path, value, digest)
        done: list[tuple] = []
        for digest in missing:
            spec = specs[digest]
            if spec is None:
                data = read.get(digest)
                if data is None:
                    continue
                try:
                    identity = json.loads(data)
                except ValueError:  # a damaged object: indexed once it is repaired (fsck names it)
                    continue
                spec = identity.get("spec") if isinstance(identity, dict) else None
                if not isinstance(spec, dict):
                    continue
            leaves.update((path, value, digest) for path, value in scalar_leaves(spec))
            done.append((digest,))
        self.connection.executemany(self.sql.insert_spec_leaf, sorted(leaves))
        self.connection.executemany(self.sql.insert_spec_indexed, done)

    def _object_texts(self, digests: Sequence) -> dict:
        """The stored bytes of the objects with these (stored) digests, by digest; absent
        ones are left out."""
        raise NotImplementedError

    @translating
    def put_many(self, changes: Sequence[Change], now: str) -> None:
        """Create or replace many names at once: a handful of statements, not a few per name.

        New names get ids allocated here, which is safe because writers hold the write lock.
        """
        (highest,) = self.connection.execute(self.sql.highest_id).fetchone()
        marking = self._write_starts(changes)
        stored = self.dialect.stored_digest
        rows: list[tuple] = self._new_entry_rows(changes)
        updates: list[tuple] = []
        label_rows: list[tuple] = []
        ref_rows: list[tuple] = []
        revision_rows: list[tuple] = []
        labels_json_of = self._labels_json()
        for change in changes:
            entry, references = change[0], change[1]
            labels_json, annotations_json = labels_json_of(entry.labels), dumps(entry.annotations)
            digest = stored(entry.digest)
            current = self._current_revision(now)
            if entry.id is None:
                highest += 1
                object_id = highest
            else:
                object_id = entry.id
            first_ref, first_label = len(ref_rows), len(label_rows)
            self._index_rows_of(object_id, entry, references, label_rows, ref_rows)
            columns = self._stored_columns(entry.columns, ref_rows[first_ref:]) if entry.columns else entry.columns
            indexed = self._indexed_columns(label_rows[first_label:], ref_rows[first_ref:])
            if entry.id is None:
                rows.append(self._entry_row(object_id, entry, labels_json, annotations_json, columns) + current
                            + indexed)
            else:
                updates.append((digest, entry.title, labels_json, self._stored_text(annotations_json),
                                entry.generation, columns, *current, *indexed, object_id))
            if not current:
                revision_rows.append(self._new_revision((entry.kind, entry.name, "applied", digest, entry.title,
                                                         labels_json, annotations_json, entry.generation, now)))
        many = self.connection.executemany
        if updates:
            replaced = [(update[-1],) for update in updates]
            if self.sql.supersede is not None:
                many(self.sql.supersede, replaced)
            if self.sql.delete_labels:
                many(self.sql.delete_labels, replaced)
                many(self.sql.delete_refs, replaced)
            many(self.sql.update_entry, self._updated_rows(updates))
        self._insert_many(self.sql.insert_entry, rows)
        self._insert_index_rows(label_rows, ref_rows)
        self._insert_many(self.sql.insert_revision, revision_rows)
        if marking:
            self._write_ends()

    @translating
    def delete(self, entry: Entry, now: str) -> None:
        marking = self._write_starts(())
        execute = self.connection.execute
        if self.sql.supersede is not None:
            execute(self.sql.supersede, (entry.id,))
        if self.sql.delete_labels:
            execute(self.sql.delete_labels, (entry.id,))
            execute(self.sql.delete_refs, (entry.id,))
        execute(self.sql.delete_entry, (entry.id,))
        execute(self.sql.insert_revision, self._new_revision((
            entry.kind, entry.name, "deleted", self.dialect.stored_digest(entry.digest), entry.title,
            dumps(entry.labels), dumps(entry.annotations), entry.generation, now)))
        if marking:
            self._write_ends()

    @translating
    def restore(self, changes: Sequence[Change], revisions: Sequence[Revision]) -> None:
        """Names and revisions exactly as given (a bundle), inside a write."""
        (highest,) = self.connection.execute(self.sql.highest_id).fetchone()
        self._restore_starts(changes)
        rows: list[tuple] = []
        label_rows: list[tuple] = []
        ref_rows: list[tuple] = []
        current, revision_rows = self._restored_revisions(changes, revisions)
        for change, kept in zip(changes, current, strict=True):
            entry = change.entry
            highest += 1
            first_ref, first_label = len(ref_rows), len(label_rows)
            self._index_rows_of(highest, entry, change.references, label_rows, ref_rows)
            columns = self._stored_columns(entry.columns, ref_rows[first_ref:])
            rows.append(self._entry_row(highest, entry, dumps(entry.labels), dumps(entry.annotations), columns) + kept
                        + self._indexed_columns(label_rows[first_label:], ref_rows[first_ref:]))
        self._insert_many(self.sql.insert_entry, rows)
        self._insert_index_rows(label_rows, ref_rows)
        self._insert_many(self.sql.insert_revision, revision_rows)

    def _restored_revisions(self, changes: Sequence[Change],
                            revisions: Sequence[Revision]) -> tuple[builtins.list[tuple], builtins.list[tuple]]:
        """What ``restore`` writes of the revisions: per change what its names row records
        of its current revision (``_current_revision``), and the rows for ``insert_revision``."""
        return [() for _ in changes], [self._revision_row(r) for r in revisions]

    def _revision_id(self) -> int:
        """A new revision id, in a catalog whose names rows keep their current revision."""
        raise NotImplementedError

    def _save_revision_ids(self) -> None:
        raise NotImplementedError

    def _revisions_kept_in_names(self, changes: Sequence[Change],
                                 revisions: Sequence[Revision]) -> tuple[builtins.list[tuple], builtins.list[tuple]]:
        """``_restored_revisions`` of a catalog whose names row keeps its current revision
        (SQLite schema 3, PostgreSQL schema 2): the ids taken in the order given (each
        backend's ``_revision_id``), a name's last revision kept in its names row when it is
        that name's state exactly, every other one a past revision."""
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
