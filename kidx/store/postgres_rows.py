"""How the PostgreSQL catalog writes and reads the rows of its schema version
(``kidx.store.postgres_schema``): version 1's SQL for a store not upgraded yet (reads
only: the first write upgrades it), version 2's revision ids, reference target ids, packed
printer columns and annotations (packed as the SQLite catalog packs them: ``kidx.store.catalog_packing``)
and bulk loads. ``PostgresCatalog`` takes ``PostgresRows`` as a base class."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence

from kidx.store.catalog import CatalogQuery, Change, ReferenceCondition, Revision
from kidx.store.catalog_packing import (
    DICTIONARY_SAMPLE,
    MARK,
    PackedValueError,
    TextPacker,
    make_dictionary,
    marked_ids,
    pack_replacing,
    reference_replacements,
    unpack_columns,
    unpack_text,
)
from kidx.store.label_conditions import label_clauses
from kidx.store.postgres_loader import CHUNK, RowStream
from kidx.store.postgres_queries import PostgresQueries, digest_range, raw
from kidx.store.postgres_schema import LABEL_ID_VERSIONS, Statements3
from kidx.store.sql_catalog import digest_of_raw, dumps, translating
from kidx.store.sql_statements import Dialect, Statements
from kidx.store.sqlite_references import walks_recent


def _no_json(labels: dict) -> None:
    """No labels' JSON (``PostgresRows._labels_json``)."""
    return None


def array_text(ids: Sequence[int]) -> str:
    """An integer array as COPY's text form reads it, ``{1,2,3}``: what a bulk write
    hands COPY (psycopg's own dumping of a list runs in Python, element by element)."""
    return "{" + ",".join(map(str, ids)) + "}"


COPY_FROM = 64  # rows from which a bulk write uses COPY instead of INSERTs
# rows loaded into a table by one write from which the write refreshes the planner's
# statistics of that table before it commits (ANALYZE): a bulk load that multiplies a
# table would otherwise be planned with the sizes autovacuum saw last, and a reference
# selection started from the wrong end (every run of a kind, not the rarest target's links)
ANALYZE_FROM = 10_000

# digests are their 32 bytes; lists of values are bound as one array (``= ANY(%s)``)
DIALECT = Dialect(mark="%s", schema="kidx.", entries="kidx.entries", last="\U0010ffff",
                  stored_digest=raw, digest_text=digest_of_raw, recent_order="{table}id + 0 DESC")
STATEMENTS_1 = Statements(DIALECT)  # a version 1 catalog's reads (its tables, or version 2's views)
STATEMENTS = Statements3(DIALECT)
# the series (sets of references) holding one of some ref_targets ids (the GIN key of series)
SERIES_WITH = "SELECT s.id FROM kidx.series s WHERE s.target_ids && %s::integer[]"
# describe's reverse look-up (version 3), given the target's ref_targets ids: the names of
# those series, through the (series_id, id) key
REFERRER_COUNTS = (f"SELECT e.kind, count(*) FROM kidx.entries e WHERE e.series_id IN ({SERIES_WITH}) "
                   "GROUP BY e.kind ORDER BY e.kind")
REFERRER_NAMES = (f"SELECT e.name FROM kidx.entries e WHERE e.series_id IN ({SERIES_WITH}) AND e.kind = %s "
                  "ORDER BY e.name LIMIT %s")


def copy_target(statement: str) -> tuple[str, str]:
    """The table and columns of an ``INSERT INTO table (columns) VALUES …`` statement."""
    table, _, columns = statement.removeprefix("INSERT INTO ").partition(" (")
    return table, columns.partition(")")[0]


def stored_entry(row: tuple) -> tuple:
    """A names row's columns up to its series (``insert_entry``'s parameters): no labels'
    JSON (index 5), no second copy of the time it was created."""
    return (*row[:5], *row[6:11], None if row[11] == row[7] else row[11])


def copied_entry(row: tuple) -> tuple:
    """A names row as COPY takes it (``stored_entry``), its label ids as an array's text."""
    return (*stored_entry(row), row[12], array_text(row[13]))


class StreamedRows(builtins.list):
    """The new names rows of a write, each ``CHUNK`` appended handed to a COPY that runs
    behind the write (``Connection.stream``) in the form ``form`` gives, and let go: a list
    that holds only those not sent yet. ``close`` sends the rest and ends the COPY (a new
    one is started for rows that come after the write's loads were waited for)."""

    def __init__(self, connection, table: str, columns: str, form: Callable[[tuple], tuple]):
        super().__init__()
        self.connection, self.table, self.columns, self.form = connection, table, columns, form
        self.stream: RowStream | None = None
        self.sent = 0

    def append(self, row: tuple) -> None:
        super().append(row)
        if len(self) >= CHUNK:
            self.send()

    def send(self) -> None:
        if self:
            if self.stream is None or self.stream.closed:
                self.stream = self.connection.stream(self.table, self.columns)
            form = self.form
            self.stream.put([form(row) for row in self])
            self.sent += len(self)
            self.clear()

    def close(self) -> None:
        self.send()
        if self.stream is not None:
            self.stream.close()


class PostgresRows(PostgresQueries):
    """The catalog's row hooks (``SQLCatalog``'s) for the version its connection has."""

    dialect = DIALECT
    _next_revision: int | None = None  # while a write takes revision ids
    _last_revision: int | None = None  # the last one taken before the write, read as it starts (_prepare_write)
    _target_ids: dict[tuple[str, bytes], int]  # ref_targets' ids and digests seen (emptied by a rollback)
    _label_ids: dict[tuple[str, str], int]  # label_values' ids seen (emptied by a rollback)
    _label_pairs: dict[int, tuple[str, str]]  # the other way round, as read
    _series_ids: dict[tuple[int, ...], int]  # series' ids seen (emptied by a rollback)
    # a row's references ((field, digest) pairs) -> the replacements packing its printer columns, its series' id
    _replacements: dict[tuple, tuple]
    _row_series: dict[tuple, int]
    _digests_of_targets: dict[str, str]
    _packer: TextPacker | None = None  # of the write in progress (None: not chosen yet)
    _dictionaries: dict[int, bytes]
    _rows_loaded: dict[str, int]  # table -> rows this write loaded by COPY (kidx.store.postgres_rows.ANALYZE_FROM)

    @property
    def sql(self) -> Statements:  # type: ignore[override]
        return STATEMENTS if self.connection.version in LABEL_ID_VERSIONS else STATEMENTS_1

    # --- label selections (version 3: the row's label ids) -------------------------------

    def _label_conditions(self, requirements, alias: str) -> builtins.list[tuple[str, builtins.list]]:
        """Version 3: label requirements as tests of the row's ``label_ids`` (its GIN key)
        against the ids of the (key, value) pairs they name: found first for a requirement's
        own test, in the same statement past ``SET_FORM_AFTER`` of them (the set form)."""
        if self.connection.version not in LABEL_ID_VERSIONS:
            return super()._label_conditions(requirements, alias)
        column = f"{alias}.label_ids"

        def has_label(key: str, values: builtins.list | None, negation: str) -> tuple[str, builtins.list]:
            # the ids found first, so that the planner sees them (its statistics of the key's
            # elements: a value of a thousand runs is planned as that, not as a parameter's
            # default share of the table, which it read with parallel workers)
            if values is None:
                found = self.connection.execute("SELECT id FROM kidx.label_values WHERE key = %s ORDER BY id", (key,))
            else:
                found = self.connection.execute(
                    "SELECT id FROM kidx.label_values WHERE key = %s AND value = ANY(%s) ORDER BY id", (key, values))
            return f"{negation}({column} && %s::integer[])", [[row[0] for row in found]]

        def rows(pairs: builtins.list, keys: builtins.list) -> tuple[str, builtins.list]:
            parts, parameters = [], []
            if pairs:
                parts.append("SELECT o.id AS object_id FROM unnest(%s::text[], %s::text[]) AS p(k, v) "
                             "JOIN kidx.label_values lv ON lv.key = p.k AND lv.value = p.v "
                             "JOIN kidx.entries o ON o.label_ids @> ARRAY[lv.id]")
                parameters += [[key for key, _ in pairs], [value for _, value in pairs]]
            if keys:
                parts.append("SELECT o.id AS object_id FROM unnest(%s::text[]) AS p(k) JOIN kidx.label_values lv "
                             "ON lv.key = p.k JOIN kidx.entries o ON o.label_ids @> ARRAY[lv.id]")
                parameters.append(keys)
            return " UNION ALL ".join(parts), parameters

        return label_clauses(requirements, has_label, "false", rows, f"{alias}.id")

    # --- reference selections (version 3: by the series holding the target ids) -----------

    def _references_clauses(self, conditions,
                            query: CatalogQuery | None = None) -> builtins.list[tuple[str, builtins.list]]:
        """Every condition as one test on the series table (a few thousand rows, keyed by
        target id): the names whose series holds one of each condition's target ids, found
        through the names' (series_id, id) key. Newest first with a limit (compare's and
        series' history window, ``walks_recent``): each such series' newest rows are read
        from that key in order, at most the limit of each, so that a look-up reads about
        as many rows as it returns, however long the series."""
        if self.connection.version not in LABEL_ID_VERSIONS or not conditions:
            return super()._references_clauses(conditions, query)
        ids = [self._target_ids_for(condition) for condition in conditions]
        if not all(ids):
            return [("false", [])]  # a target nothing refers to: nothing meets every condition
        # the conditions of one target id each as one "holds them all" (the planner reads the
        # GIN key for it: several "holds one of" tests it estimated as a scan of the series)
        single = sorted({found[0] for found in ids if len(found) == 1})
        several = [found for found in ids if len(found) > 1]
        tests = " AND ".join(["s.target_ids @> %s::integer[]"] * bool(single)
                             + ["s.target_ids && %s::integer[]"] * len(several))
        parameters = [single] * bool(single) + several
        if query is not None and walks_recent(query):
            return [(f"e.id IN (SELECT w.id FROM kidx.series s CROSS JOIN LATERAL (SELECT o.id FROM kidx.entries o "
                     f"WHERE o.series_id = s.id AND o.kind = %s ORDER BY o.id DESC LIMIT %s) w WHERE {tests} "
                     "ORDER BY w.id DESC LIMIT %s)", [query.kind, query.limit, *parameters, query.limit])]
        return [(f"e.series_id IN (SELECT s.id FROM kidx.series s WHERE {tests})", parameters)]

    def _target_ids_for(self, condition: ReferenceCondition) -> builtins.list[int]:
        """The ``ref_targets`` ids a condition names (its digests, its target kind's, or
        those in its digest prefix's range), in one look-up; [] for none."""
        parameters: builtins.list[object]
        if condition.digest_prefix is not None:
            where, parameters = ["target BETWEEN %s AND %s"], list(digest_range(condition.digest_prefix))
        else:
            digests = (self._target_digests(condition) if condition.target_kind is not None
                       else [raw(digest) for digest in condition.digests])
            if not digests:
                return []
            where, parameters = ["target = ANY(%s)"], [digests]
        if condition.field is not None:
            where.append("field = %s")
            parameters.append(condition.field)
        return [row[0] for row in self.connection.execute(
            f"SELECT id FROM kidx.ref_targets WHERE {' AND '.join(where)} ORDER BY id", parameters)]

    def _reference_clause(self, condition: ReferenceCondition) -> tuple[str, builtins.list]:
        """Version 3: one condition as its series (see ``_references_clauses``)."""
        if self.connection.version not in LABEL_ID_VERSIONS:
            return super()._reference_clause(condition)
        return self._references_clauses((condition,))[0]

    def _referenced_field_clause(self, condition) -> tuple[str, builtins.list]:
        """Version 3: the names whose series holds a (field, target) where the condition holds
        (see ``PostgresQueries._referenced_field_clause``)."""
        if self.connection.version not in LABEL_ID_VERSIONS:
            return super()._referenced_field_clause(condition)
        sql, parameters = super()._referenced_field_clause(condition)
        # "[NOT ]EXISTS (SELECT 1 FROM kidx.refs r WHERE r.object_id = e.id AND r.field = %s AND r.target IN (…))"
        negation, _, rest = sql.partition("EXISTS (SELECT 1 FROM kidx.refs r WHERE r.object_id = e.id ")
        targets = rest.removeprefix("AND r.field = %s AND r.target IN (").removesuffix("))")
        return (f"{negation}EXISTS (SELECT 1 FROM kidx.series s WHERE s.id = e.series_id AND s.target_ids && "
                f"ARRAY(SELECT rt.id FROM kidx.ref_targets rt WHERE rt.field = %s AND rt.target IN ({targets})))",
                parameters)

    def _ids_of_target(self, digest: str) -> builtins.list[int]:
        """The ``ref_targets`` ids of a digest (one per field it is referred to by)."""
        return [row[0] for row in self.connection.execute(
            "SELECT id FROM kidx.ref_targets WHERE target = %s ORDER BY id", (raw(digest),))]

    @translating
    def referrer_counts(self, digest: str) -> builtins.list[tuple[str, int]]:
        """describe's *Referenced By*: by the target's ids, found first (see ``_reference_clause``)."""
        if not self.readable or self.connection.version not in LABEL_ID_VERSIONS:
            return super().referrer_counts(digest)
        ids = self._ids_of_target(digest)
        if not ids:
            return []
        rows = self.connection.execute(REFERRER_COUNTS, (ids,))
        return [(row[0], row[1]) for row in rows]

    @translating
    def referrer_names(self, digest: str, kind: str, limit: int) -> builtins.list[str]:
        if not self.readable or self.connection.version not in LABEL_ID_VERSIONS:
            return super().referrer_names(digest, kind, limit)
        ids = self._ids_of_target(digest)
        if not ids:
            return []
        rows = self.connection.execute(REFERRER_NAMES, (ids, kind, limit))
        return [row[0] for row in rows]

    # --- revision ids (version 2: the current revision is the names row) ----------------

    def _revision_id(self) -> int:
        """A new revision id (inside a write; ``_save_revision_ids`` records those taken)."""
        if self._next_revision is None:
            last = self._last_revision
            if last is None:
                (last,) = self.connection.execute(STATEMENTS.revision_ids).fetchone()
            self._next_revision = int(last) + 1
        taken = self._next_revision
        self._next_revision = taken + 1
        return taken

    def _save_revision_ids(self) -> None:
        self._last_revision = None
        if self._next_revision is not None:
            self.connection.execute(STATEMENTS.save_revision_ids, (str(self._next_revision - 1),))
            self._next_revision = None

    def _forget_write(self) -> None:
        """After a rollback: ids it took may be taken again by another write."""
        self._next_revision = self._last_revision = None
        self._target_ids.clear()
        self._replacements.clear()
        self._row_series.clear()
        self._label_ids.clear()
        self._label_pairs.clear()
        self._series_ids.clear()
        self._digests_of_targets.clear()
        self._dictionaries.clear()
        self._packer = None
        self._rows_loaded.clear()

    def _current_revision(self, now: str) -> tuple:
        """A names row is its name's current revision: (its id, when)."""
        return (self._revision_id(), now)

    def _new_revision(self, row: tuple) -> tuple:
        return (self._revision_id(), *row[:6], self._stored_text(row[6]), *row[7:])

    def _write_ends(self) -> None:
        self._save_revision_ids()

    def _prepare_write(self, changes: Sequence[Change]) -> None:
        """Before a write's rows: the store's dictionary for annotations (made by the first
        write that has enough long ones), the last revision id, and the ids of every label,
        reference target and reference set it writes (two queries each; the new ones' rows
        loaded behind the write, so the queries come first)."""
        if self._packer is None or self._packer.tag == b"\0":  # no dictionary yet: this write may make it
            row = self.connection.execute(
                "SELECT id, dictionary FROM kidx.text_dictionaries WHERE id = 1").fetchone()  # 2: objects' (schema 4)
            if row is not None:
                self._packer = TextPacker(row[0], bytes(row[1]))
            else:
                dictionary = make_dictionary(dumps(change[0].annotations) for change in changes[:DICTIONARY_SAMPLE])
                if dictionary is not None:
                    self.connection.execute(
                        "INSERT INTO kidx.text_dictionaries (id, dictionary) VALUES (1, %s)", (dictionary,))
                self._packer = TextPacker() if dictionary is None else TextPacker(1, dictionary)
        if changes and self._next_revision is None and self._last_revision is None:
            (last,) = self.connection.execute(STATEMENTS.revision_ids).fetchone()
            self._last_revision = int(last)
        reference_sets = {tuple(change[1]) for change in changes if change[1]}  # rows share a few thousand
        targets = self._target_ids_of({(field_name, raw(target)) for references in reference_sets
                                       for field_name, target in references})
        self._label_ids_of({pair for change in changes for pair in change[0].labels.items()})
        self._series_ids_of({tuple(sorted({targets[(field_name, raw(target))] for field_name, target in references}))
                             for references in reference_sets})

    # --- annotations: JSON text's UTF-8, or deflated --------------------------------------

    def _stored_text(self, annotations_json: str):
        """Annotations as version 2 stores them (bytes; the packer of the write)."""
        packed = (self._packer or TextPacker()).pack(annotations_json)
        return packed.encode() if isinstance(packed, str) else packed

    def _dictionary(self, dictionary_id: int) -> bytes | None:
        found = self._dictionaries.get(dictionary_id)
        if found is None:
            row = self.connection.execute("SELECT dictionary FROM kidx.text_dictionaries WHERE id = %s",
                                          (dictionary_id,)).fetchone()
            if row is not None:
                found = self._dictionaries[dictionary_id] = bytes(row[0])
        return found

    def _annotations_text(self, value):
        """Stored annotations as their JSON text (text as it is: version 1)."""
        if isinstance(value, str) or value is None:
            return value
        value = bytes(value)
        return value.decode() if value[:1] == b"{" else unpack_text(value, self._dictionary)

    def _revision(self, row, number: int) -> Revision:
        if row[6] is not None and not isinstance(row[6], str):
            row = (*row[:6], self._annotations_text(row[6]), *row[7:])
        return super()._revision(row, number)

    def _restored_revisions(self, changes: Sequence[Change],
                            revisions: Sequence[Revision]) -> tuple[builtins.list[tuple], builtins.list[tuple]]:
        """Revision ids in the order given; a current name's last revision, when it is its
        state exactly, is kept in its names row, every other one as a past revision."""
        return self._revisions_kept_in_names(changes, revisions)

    # --- bulk loads and reference target ids ---------------------------------------------

    def _new_entry_rows(self, changes: Sequence[Change]) -> builtins.list[tuple]:
        """A write of many new names and nothing else (no update to go first): its names
        rows sent to COPY as ``put_many`` makes them (``StreamedRows``), so that the server
        stores the first while kidx makes the rest."""
        if (self.connection.version not in LABEL_ID_VERSIONS or len(changes) < COPY_FROM
                or any(change[0].id is not None for change in changes)):
            return []
        table, columns = copy_target(STATEMENTS.insert_entry)
        return StreamedRows(self.connection, table, columns, copied_entry)

    def _insert_many(self, statement: str, rows: builtins.list[tuple]) -> None:
        """Many rows by COPY (the statement's table and columns), a few by INSERT. A names
        row recorded when its name was created keeps no second copy of that time."""
        if isinstance(rows, StreamedRows):  # sent as they came
            rows.close()
            self._loaded(rows.table, rows.sent)
            return
        if statement is STATEMENTS.insert_entry and len(rows) >= COPY_FROM:
            rows = [copied_entry(row) for row in rows]
        elif statement is STATEMENTS.insert_entry:
            rows = [(*stored_entry(row), *row[12:]) for row in rows]
        if len(rows) < COPY_FROM:
            self.connection.executemany(statement, rows)
            return
        table, columns = copy_target(statement)
        self.connection.copy(table, columns, rows)
        self._loaded(table, len(rows))

    def _loaded(self, table: str, rows: int) -> None:
        self._rows_loaded[table] = self._rows_loaded.get(table, 0) + rows

    def _refresh_statistics(self) -> None:
        """ANALYZE, in the write's transaction, the tables it loaded ANALYZE_FROM rows into."""
        tables = sorted(table for table, rows in self._rows_loaded.items() if rows >= ANALYZE_FROM)
        self._rows_loaded.clear()
        if tables:
            self.connection.execute(f"ANALYZE {', '.join(tables)}")

    def _target_ids_of(self, pairs: set[tuple[str, bytes]]) -> dict[tuple[str, bytes], int]:
        """The ``ref_targets`` id of each (field, target), those not there yet added (inside
        a write, under the writers' lock: two queries at most, whatever the rows)."""
        known = self._target_ids
        wanted = [pair for pair in pairs if pair not in known]
        if wanted:
            execute = self.connection.execute
            for target_id, field_name, target in execute(
                    "SELECT id, field, target FROM kidx.ref_targets WHERE target = ANY(%s)",
                    (list({target for _, target in wanted}),)):
                known[(field_name, bytes(target))] = target_id
            new = sorted(pair for pair in wanted if pair not in known)
            if new:
                (highest,) = execute("SELECT COALESCE(MAX(id), 0) FROM kidx.ref_targets").fetchone()
                rows = [(highest + number, field_name, target) for number, (field_name, target) in enumerate(new, 1)]
                self.connection.executemany("INSERT INTO kidx.ref_targets (id, field, target) VALUES (%s, %s, %s)",
                                            rows)
                known.update(((field_name, target), target_id) for target_id, field_name, target in rows)
        return known

    def _label_ids_of(self, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """The ``label_values`` id of each (key, value), those not there yet added (as
        ``_target_ids_of`` does)."""
        known = self._label_ids
        wanted = [pair for pair in pairs if pair not in known]
        if wanted:
            execute = self.connection.execute
            for label_id, key, value in execute(
                    "SELECT v.id, v.key, v.value FROM unnest(%s::text[], %s::text[]) AS p(k, v) "
                    "JOIN kidx.label_values v ON v.key = p.k AND v.value = p.v",
                    ([key for key, _ in wanted], [value for _, value in wanted])):
                known[(key, value)] = label_id
            new = sorted(pair for pair in wanted if pair not in known)
            if new:
                (highest,) = execute("SELECT COALESCE(MAX(id), 0) FROM kidx.label_values").fetchone()
                rows = [(highest + number, key, value) for number, (key, value) in enumerate(new, 1)]
                self._load("kidx.label_values", "id, key, value", rows)
                known.update(((key, value), label_id) for label_id, key, value in rows)
        return known

    def _series_ids_of(self, sets: set[tuple[int, ...]]) -> dict[tuple[int, ...], int]:
        """The ``series`` id of each set of ref_targets ids (ascending), those not there yet added."""
        known = self._series_ids
        wanted = [ids for ids in sets if ids not in known]
        if wanted:
            execute = self.connection.execute
            for series_id, target_ids in execute(
                    "SELECT s.id, s.target_ids FROM unnest(%s::text[]) AS w(ids) "
                    "JOIN kidx.series s ON s.target_ids = w.ids::integer[]",
                    (["{" + ",".join(map(str, ids)) + "}" for ids in wanted],)):
                known[tuple(target_ids)] = series_id
            new = sorted(ids for ids in wanted if ids not in known)
            if new:
                (highest,) = execute("SELECT COALESCE(MAX(id), 0) FROM kidx.series").fetchone()
                rows = [(highest + number, ids) for number, ids in enumerate(new, 1)]
                self._load("kidx.series", "id, target_ids", [(series_id, list(ids)) for series_id, ids in rows]
                           if len(rows) < COPY_FROM else [(series_id, array_text(ids)) for series_id, ids in rows])
                known.update((ids, series_id) for series_id, ids in rows)
        return known

    def _load(self, table: str, columns: str, rows: builtins.list[tuple]) -> None:
        """Rows into a table: by COPY from ``COPY_FROM`` rows, else INSERTs."""
        if len(rows) < COPY_FROM:
            marks = ", ".join("%s" for _ in columns.split(","))
            self.connection.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)
        else:
            self.connection.copy(table, columns, rows)
            self._loaded(table, len(rows))

    def _index_rows_of(self, object_id: int | None, entry, references, label_rows: builtins.list,
                       ref_rows: builtins.list) -> None:
        """Version 3 keeps no label or reference rows, only what a names row holds of them
        (``_indexed_columns``, ``_stored_columns``): as its "rows", one each at most, its
        labels (a mapping) and its references as given (a tuple of (field, digest) pairs,
        a key of what was found for them: rows share a few thousand sets of references)."""
        if entry.labels:
            label_rows.append(entry.labels)
        if references:
            ref_rows.append(tuple(references))

    def _indexed_columns(self, label_rows: Sequence, ref_rows: Sequence) -> tuple:
        """Version 3: a names row's series id (None: no references) and label ids, from its
        labels and references (``_index_rows_of``)."""
        label_ids = []
        if label_rows:
            labels, pairs = self._label_ids, label_rows[0].items()
            try:
                label_ids = sorted([labels[pair] for pair in pairs])
            except KeyError:  # not learnt first (fsck --repair)
                labels = self._label_ids_of(set(pairs))
                label_ids = sorted([labels[pair] for pair in pairs])
        series_id = None
        if ref_rows:
            series_id = self._row_series.get(ref_rows[0])
            if series_id is None:  # the first row with these references
                found = [(field_name, raw(target)) for field_name, target in ref_rows[0]]
                targets = self._known_targets(found)
                key = tuple(sorted({targets[pair] for pair in found}))
                series = self._series_ids if key in self._series_ids else self._series_ids_of({key})
                series_id = self._row_series[ref_rows[0]] = series[key]
        return (series_id, label_ids)

    def _labels_json(self) -> Callable[[dict], str | None]:
        """Version 3 keeps a names row's label ids, not their JSON (``_insert_many`` and
        ``_updated_rows`` leave it out, and every revision it writes is a names row's): a
        write does not make it."""
        return _no_json if self.connection.version in LABEL_ID_VERSIONS else dumps

    def _updated_rows(self, updates: builtins.list[tuple]) -> builtins.list[tuple]:
        """Version 3 keeps no labels' JSON (index 2): their ids are among the row's columns."""
        return [(*row[:2], *row[3:]) for row in updates]

    # --- labels: a names row's label ids, read as their (key, value) pairs -----------------

    def compile(self, query: CatalogQuery) -> tuple[str, builtins.list, bool]:
        sql, parameters, check = super().compile(query)
        if self.connection.version in LABEL_ID_VERSIONS:
            sql = sql.replace("e.labels", "e.label_ids", 1)  # the first: among the columns selected
        return sql, parameters, check

    def _labels_column(self, alias: str) -> str:
        return f"{alias}.label_ids" if self.connection.version in LABEL_ID_VERSIONS else f"{alias}.labels"

    def _learn_label_ids(self, ids) -> None:
        """The (key, value) pairs of label ids not read yet (one query)."""
        known = self._label_pairs
        missing = sorted({label_id for label_id in ids if label_id not in known})
        if missing:
            for label_id, key, value in self.connection.execute(
                    "SELECT id, key, value FROM kidx.label_values WHERE id = ANY(%s)", (missing,)):
                known[label_id] = (key, value)
            absent = [label_id for label_id in missing if label_id not in known]
            if absent:
                raise PackedValueError(f"a name's label id {absent[0]} is in no row of kidx.label_values")

    def _labels_text(self, value) -> str:
        """A names row's labels (version 3: its label ids) as their JSON text."""
        if isinstance(value, str):
            return value
        self._learn_label_ids(value)
        pairs = self._label_pairs
        return dumps(dict(pairs[label_id] for label_id in value))

    def _reindex_row(self, object_id: int, indexed: tuple, columns: str | None) -> None:
        self.connection.execute(STATEMENTS.reindex_row, (*indexed, columns, object_id))

    # --- printer columns: a reference digest among them is kept as its target id ---------

    def _known_targets(self, pairs: builtins.list[tuple[str, bytes]]) -> dict[tuple[str, bytes], int]:
        """The ids of the reference targets ``pairs`` (field, digest's bytes): those a write
        learnt first (``_prepare_write``), else looked up (fsck --repair)."""
        known = self._target_ids
        return known if all(pair in known for pair in pairs) else self._target_ids_of(set(pairs))

    def _stored_columns(self, columns: str | None, ref_rows) -> str | None:
        """``columns`` with each of the row's reference digests (``_index_rows_of``) as its
        ``ref_targets`` id between two MARKs (``kidx.store.catalog_packing``: 73 characters
        become a few)."""
        if not columns or not ref_rows:
            return columns
        replacements = self._replacements.get(ref_rows[0])
        if replacements is None:  # the first row with these references
            pairs = [(field_name, raw(target)) for field_name, target in ref_rows[0]]
            ids = self._known_targets(pairs)
            replacements = self._replacements[ref_rows[0]] = reference_replacements(
                {pair[1].hex(): ids[pair] for pair in pairs})
        return pack_replacing(columns, replacements)

    def _unpacked(self, rows: Sequence) -> Sequence:
        """Rows of ENTRY_COLUMNS as they were given: labels and annotations as text, printer
        columns with their digests (one query for the label and target ids not seen yet)."""
        if rows and isinstance(rows[0][5], list):  # version 3: label ids
            self._learn_label_ids({label_id for row in rows for label_id in row[5]})
            pairs = self._label_pairs
            rows = [(*row[:5], dumps(dict(pairs[label_id] for label_id in row[5])), *row[6:]) for row in rows]
        wanted = {target_id for row in rows if row[9] is not None and MARK in row[9]
                  for target_id in marked_ids(row[9])}
        if not wanted:
            if all(isinstance(row[6], str) for row in rows):
                return rows
            text = self._annotations_text
            return [(*row[:6], text(row[6]), *row[7:]) for row in rows]
        known = self._digests_of_targets
        missing = [int(target_id) for target_id in wanted if target_id not in known and target_id.isdigit()]
        if missing:
            for target_id, target in self.connection.execute(
                    "SELECT id, target FROM kidx.ref_targets WHERE id = ANY(%s)", (missing,)):
                known[str(target_id)] = digest_of_raw(target)
        text = self._annotations_text
        return [(*row[:6], text(row[6]), row[7], row[8],
                 row[9] if row[9] is None or MARK not in row[9] else unpack_columns(row[9], known)) for row in rows]

    def entry(self, row):
        return super().entry(self._unpacked([row])[0])

    def entries(self, rows: Sequence):
        return super().entries(self._unpacked(rows))
