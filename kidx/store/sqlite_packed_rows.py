"""The SQLite catalog's packing of rows from schema 3 (``kidx.store.sqlite_schema`` lists
what is packed): ``PackedRows``, its hooks into ``SQLCatalog``'s writes and reads, and the
SQL function its upgrade packs with. How a value is packed is
``kidx.store.catalog_packing``'s, shared with the PostgreSQL catalog."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence

from kidx.store.catalog import Revision
from kidx.store.catalog_packing import (
    MARK,
    TextPacker,
    make_dictionary,
    marked_ids,
    pack_columns,
    pack_replacing,
    reference_replacements,
    unpack_columns,
    unpack_text,
)
from kidx.store.sql_catalog import SQLCatalog, digest_of_raw


def _packed_columns_sql(columns: str | None, targets: str | None) -> str | None:
    """SQL's ``kidx_pack_columns(columns, 'id:HEX,…')`` for the upgrade."""
    if not targets:
        return columns
    ids = {}
    for pair in targets.split(","):
        target_id, _, hexdigits = pair.partition(":")
        ids[hexdigits.lower()] = int(target_id)
    return pack_columns(columns, ids)


SQL_FUNCTIONS: tuple[tuple[str, int, Callable], ...] = (("kidx_pack_columns", 2, _packed_columns_sql),)
# between the rows' printer columns unpacked together: a control character, which compact JSON
# always escapes and packing never writes (PackedRows._unpacked_together)
ROW_BREAK = "\x02"



class PackedRows(SQLCatalog):
    """The SQLite catalog's packing of rows (schema 3): ``_target_ids`` and
    ``_target_digests`` are its caches of ``ref_targets``, emptied when a write rolls back."""

    _target_ids: dict[tuple[str, bytes], int]
    _target_digests: dict[str, str]
    # a row's references (field, target) -> the replacements packing its printer columns
    _replacements: dict[tuple, tuple]
    _packer: TextPacker | None = None  # of the write in progress (None: not chosen yet)
    _dictionaries: dict[int, bytes]

    def _text_packer(self) -> TextPacker:
        if self._packer is None:
            row = self.connection.execute(
                "SELECT id, dictionary FROM text_dictionaries ORDER BY id DESC LIMIT 1").fetchone()
            self._packer = TextPacker() if row is None else TextPacker(row[0], row[1])
        return self._packer

    def _choose_dictionary(self, texts: Iterable[str]) -> None:
        """Inside a write: make the store's dictionary from these texts, if it has none yet
        and they are enough (``make_dictionary``)."""
        if self.connection.execute("SELECT 1 FROM text_dictionaries LIMIT 1").fetchone() is not None:
            return
        dictionary = make_dictionary(texts)
        if dictionary is not None:
            self.connection.execute("INSERT INTO text_dictionaries (id, dictionary) VALUES (1, ?)", (dictionary,))
            self._packer = TextPacker(1, dictionary)

    def _dictionary(self, dictionary_id: int) -> bytes | None:
        found = self._dictionaries.get(dictionary_id)
        if found is None:
            row = self.connection.execute("SELECT dictionary FROM text_dictionaries WHERE id=?",
                                          (dictionary_id,)).fetchone()
            if row is not None and isinstance(row[0], bytes):
                found = self._dictionaries[dictionary_id] = row[0]
        return found

    def _forget_packing(self) -> None:
        """After a rollback: ids and dictionaries it took may be taken again by another write."""
        self._target_ids.clear()
        self._replacements.clear()
        self._target_digests.clear()
        self._dictionaries.clear()
        self._packer = None

    def _target_id(self, field_name: str, target: bytes) -> int:
        """The ``ref_targets`` id of (field, target), added when new (inside a write)."""
        key = (field_name, target)
        found = self._target_ids.get(key)
        if found is None:
            execute = self.connection.execute
            row = execute("SELECT id FROM ref_targets WHERE target=? AND field=?", (target, field_name)).fetchone()
            found = row[0] if row is not None else execute(
                "INSERT INTO ref_targets (field, target) VALUES (?, ?)", (field_name, target)).lastrowid
            self._target_ids[key] = found
        return found

    def _insert_refs(self, rows: builtins.list[tuple]) -> None:
        """(object_id, field, target) rows as links to each distinct (field, target) once."""
        if not rows:
            return
        known = self._target_ids
        try:  # a write's printer columns have mostly learnt them (_stored_columns)
            links = [(row[0], known[row[1], row[2]]) for row in rows]
        except KeyError:  # some are not known yet: each added when new, in the rows' order
            target_id = self._target_id
            links = [(row[0], target_id(row[1], row[2])) for row in rows]
        self.connection.executemany(self.sql.insert_ref, links)

    # --- schema 3's packed values (hooks of SQLCatalog's writes and reads) -----------

    def _stored_text(self, annotations_json: str):
        return self._text_packer().pack(annotations_json)

    def _stored_columns(self, columns: str | None, ref_rows) -> str | None:
        if not columns or not ref_rows:
            return columns
        key = tuple([(row[1], row[2]) for row in ref_rows])
        replacements = self._replacements.get(key)
        if replacements is None:  # the first row with these references: their ids, added when new
            target_id = self._target_id
            replacements = self._replacements[key] = reference_replacements(
                {target.hex(): target_id(field_name, target) for _, field_name, target in ref_rows})
        return pack_replacing(columns, replacements)

    def _insert_many(self, statement: str, rows: builtins.list[tuple]) -> None:
        if statement is self.sql.insert_entry:  # a revision recorded at creation: its time is `created`
            rows = [row if row[11] != row[7] else (*row[:11], None) for row in rows]
        self.connection.executemany(statement, rows)

    def _unpacked(self, rows: Sequence, references: bool = True) -> Sequence:
        """Rows of ENTRY_COLUMNS as they were given: columns' references and annotations
        unpacked. The columns of all the rows are unpacked together (``_unpacked_together``);
        a value that way cannot unpack is unpacked row by row, which names it. Without
        ``references`` (``CatalogQuery.column_references``), the columns' reference values
        are null: their targets are still looked up (a damaged value is an error, whatever
        reads it), but no digest is written out, and none decoded."""
        columns = self._unpacked_together(rows, references)
        if columns is None:
            return self._unpacked_each(rows)
        packed_text = [type(row[6]) is bytes for row in rows]
        if columns is rows and not any(packed_text):
            return rows
        dictionary = self._dictionary
        return [(*row[:6], unpack_text(row[6], dictionary) if packed else row[6], row[7], row[8],
                 row[9] if columns is rows or row[9] is None else text)
                for row, text, packed in zip(rows, columns, packed_text, strict=True)]

    def _unpacked_together(self, rows: Sequence, references: bool = True) -> Sequence | None:
        """Each row's printer columns unpacked (``rows`` itself where none is packed), as one
        text: the rows' columns joined by a control character that compact JSON never holds
        unescaped, split at the MARKs, each id replaced and split back, rather than a split,
        a loop and a join per row. None where that cannot be done exactly (a value with a
        stray MARK or that separator, an id that is not there)."""
        joined = ROW_BREAK.join([row[9] or "" for row in rows])
        if MARK not in joined:
            return rows
        parts = joined.split(MARK)
        ids = parts[1::2]
        wanted = set(ids)
        self._learn_targets(wanted)  # each id is looked up even where its digest is not read: damage is found
        digests = self._target_digests
        if not wanted.issubset(digests):
            return None
        if references:
            quoted = {target_id: f'"{digests[target_id]}"' for target_id in wanted}
            parts[1::2] = map(quoted.__getitem__, ids)
        else:
            parts[1::2] = ["null"] * len(ids)
        columns = "".join(parts).split(ROW_BREAK)
        return columns if len(columns) == len(rows) else None

    def _unpacked_each(self, rows: Sequence) -> Sequence:
        """``_unpacked``, one row at a time."""
        mark = MARK
        wanted: set[str] = set()
        packed = False
        for row in rows:
            columns = row[9]
            if columns is not None and mark in columns:
                wanted.update(marked_ids(columns))
                packed = True
            elif type(row[6]) is bytes:
                packed = True
        if not packed:
            return rows
        self._learn_targets(wanted)
        digests, dictionary = self._target_digests, self._dictionary
        return [(*row[:6], unpack_text(row[6], dictionary), row[7], row[8],
                 unpack_columns(row[9], digests) if row[9] is not None and mark in row[9] else row[9])
                for row in rows]

    def _learn_targets(self, ids: set[str]) -> None:
        """Keep the digests of these ``ref_targets`` ids (text) in ``_target_digests``."""
        missing = [int(target_id) for target_id in ids if target_id not in self._target_digests
                   and target_id.isdigit()]
        for test, parameters in self.dialect.membership(missing):
            for target_id, target in self.connection.execute("SELECT id, target FROM ref_targets WHERE id" + test,
                                                             parameters):
                self._target_digests[str(target_id)] = digest_of_raw(target)

    def entry(self, row):
        return super().entry(self._unpacked([row])[0])

    def entries(self, rows: Sequence):
        return super().entries(self._unpacked(rows))

    def _listed(self, rows: Sequence, query):
        return super().entries(self._unpacked(rows, query.column_references))

    def _revision(self, row, number: int) -> Revision:
        if type(row[6]) is bytes:
            row = (*row[:6], unpack_text(row[6], self._dictionary), *row[7:])
        return super()._revision(row, number)

