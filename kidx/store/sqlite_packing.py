"""How schema 3 of the SQLite catalog packs what an index already holds, and unpacks it
when read (``kidx.store.sqlite_schema`` lists what is packed): the functions, and
``PackedRows``, the SQLite catalog's hooks into ``SQLCatalog``'s writes and reads."""

from __future__ import annotations

import builtins
import itertools
import re
import zlib
from collections.abc import Callable, Iterable, Sequence

from kidx.store.catalog import Revision
from kidx.store.sql_catalog import SQLCatalog, digest_of_raw


class PackedValueError(ValueError):
    """A packed value that cannot be unpacked: the catalog is damaged."""


MARK = "\x01"
PACK_FROM = 64  # bytes of text below which deflating is not tried
_REFERENCE_VALUE = re.compile(r'(?<=[\[,])"sha256:([0-9a-f]{64})"(?=[,\]])')


def pack_columns(columns: str | None, target_ids: dict[str, int]) -> str | None:
    """``columns`` with each value that is one of ``target_ids``' digests (hex, no prefix)
    as its id between two MARKs. Only whole array elements match: in compact JSON a ``"``
    after ``[`` or ``,`` opens a value."""
    if not columns or not target_ids or "sha256:" not in columns:
        return columns

    def packed(match: re.Match) -> str:
        target_id = target_ids.get(match.group(1))
        return match.group(0) if target_id is None else f"{MARK}{target_id}{MARK}"

    return _REFERENCE_VALUE.sub(packed, columns)


def pack_reference_values(columns: str | None, target_ids: dict[str, int]) -> str | None:
    """``pack_columns`` of a row's printer columns as ``column_values`` writes them (a
    compact JSON array after the fingerprint), given its own references' ids: what a write
    calls once per row. There a ``"`` right after ``[`` or ``,`` opens an element (inside
    a string every ``"`` is escaped) and a digest holds no quote, so replacing
    ``["sha256:<hex>"`` and ``,"sha256:<hex>"`` finds exactly the elements the regular
    expression does, without its scan and a call per match."""
    if not columns or not target_ids or "sha256:" not in columns:
        return columns
    for hexdigits, target_id in target_ids.items():
        value = f'"sha256:{hexdigits}"'
        if value in columns:
            packed = f"{MARK}{target_id}{MARK}"
            columns = columns.replace("[" + value, "[" + packed).replace("," + value, "," + packed)
    return columns


def marked_ids(columns: str) -> list[str]:
    """The ids a packed ``columns`` marks (text, as written)."""
    return columns.split(MARK)[1::2]


def unpack_columns(columns: str, digests: dict[str, str]) -> str:
    """``columns`` as it was given, from its ids' digests (``sha256:…`` by id as text)."""
    parts = columns.split(MARK)
    for position in range(1, len(parts), 2):
        digest = digests.get(parts[position])
        if digest is None:
            raise PackedValueError(f"a printer-column value names reference target {parts[position]!r}, "
                                   "which is not there")
        parts[position] = f'"{digest}"'
    return "".join(parts)


DICTIONARY_BYTES = 4096  # of the texts a store's first write gives, as a preset dictionary
DICTIONARY_TEXTS = 32  # the fewest long texts (PACK_FROM) a dictionary is made of
DICTIONARY_SAMPLE = 4096  # names of a write whose annotations are looked at for it


def make_dictionary(texts: Iterable[str]) -> bytes | None:
    """A preset dictionary for deflating texts like these: the last DICTIONARY_BYTES of the
    first long ones (deflate finds repeats within 32 KiB; the dictionary's end is nearest);
    None from fewer than DICTIONARY_TEXTS long texts."""
    long = list(itertools.islice((text.encode() for text in texts if len(text) >= PACK_FROM), DICTIONARY_TEXTS * 2))
    if len(long) < DICTIONARY_TEXTS:
        return None
    return b"".join(long)[-DICTIONARY_BYTES:]


class TextPacker:
    """Deflates texts with dictionary ``dictionary_id`` (0: none). A packed text is a BLOB:
    one byte, the dictionary's id, then raw deflate."""

    def __init__(self, dictionary_id: int = 0, dictionary: bytes | None = None):
        self.tag = bytes([dictionary_id])
        # primed once: copying it costs less than setting the dictionary for every text
        self._primed = (None if dictionary is None else
                        zlib.compressobj(9, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, dictionary))

    def pack(self, text: str | None) -> str | bytes | None:
        """JSON text as stored: deflated where that is shorter."""
        if text is None or len(text) < PACK_FROM:
            return text
        raw = text.encode()
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15) if self._primed is None else self._primed.copy()
        packed = self.tag + compressor.compress(raw) + compressor.flush()
        return packed if len(packed) < len(raw) else text


def unpack_text(value, dictionary: Callable[[int], bytes | None]):
    """Stored JSON text as it was given (a BLOB is packed: ``TextPacker``); ``dictionary``
    gives the dictionary of an id."""
    if not isinstance(value, bytes):
        return value
    try:
        if not value:
            raise ValueError("an empty value")
        if value[0] == 0:
            return zlib.decompress(value[1:], -15).decode()
        preset = dictionary(value[0])
        if preset is None:
            raise ValueError(f"no dictionary {value[0]}")
        decompressor = zlib.decompressobj(-15, zdict=preset)
        text = decompressor.decompress(value[1:])
        if not decompressor.eof:
            raise ValueError("it is cut short")
        return text.decode()
    except (zlib.error, ValueError) as exc:
        raise PackedValueError(f"a packed value cannot be read ({exc})") from None


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



class PackedRows(SQLCatalog):
    """The SQLite catalog's packing of rows (schema 3): ``_target_ids`` and
    ``_target_digests`` are its caches of ``ref_targets``, emptied when a write rolls back."""

    _target_ids: dict[tuple[str, bytes], int]
    _target_digests: dict[str, str]
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
        target_id = self._target_id
        self.connection.executemany(self.sql.insert_ref, [(row[0], target_id(row[1], row[2])) for row in rows])

    # --- schema 3's packed values (hooks of SQLCatalog's writes and reads) -----------

    def _stored_text(self, annotations_json: str):
        return self._text_packer().pack(annotations_json)

    def _stored_columns(self, columns: str | None, ref_rows) -> str | None:
        if not columns or not ref_rows:
            return columns
        target_id = self._target_id
        return pack_reference_values(columns, {target.hex(): target_id(field_name, target)
                                               for _, field_name, target in ref_rows})

    def _insert_many(self, statement: str, rows: builtins.list[tuple]) -> None:
        if statement is self.sql.insert_entry:  # a revision recorded at creation: its time is `created`
            rows = [row if row[11] != row[7] else (*row[:11], None) for row in rows]
        self.connection.executemany(statement, rows)

    def _unpacked(self, rows: Sequence) -> Sequence:
        """Rows of ENTRY_COLUMNS as they were given: columns' references and annotations unpacked."""
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

    def _revision(self, row, number: int) -> Revision:
        if type(row[6]) is bytes:
            row = (*row[:6], unpack_text(row[6], self._dictionary), *row[7:])
        return super()._revision(row, number)

