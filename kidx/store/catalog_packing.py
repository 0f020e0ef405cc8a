"""How a SQL catalog packs what an index already holds, and unpacks it when read: a
printer column's references as the ids of their targets, and long texts (annotations)
deflated with a preset dictionary of the store's own texts. Both backends pack so: the
SQLite catalog from schema 3 (``kidx.store.sqlite_schema`` lists what is packed; its
hooks into ``SQLCatalog``, ``kidx.store.sqlite_packed_rows``), the PostgreSQL catalog
from schema 2 (``kidx.store.postgres_rows``)."""

from __future__ import annotations

import itertools
import re
import zlib
from collections.abc import Callable, Iterable
from functools import cache


class PackedValueError(ValueError):
    """A packed value that cannot be unpacked: the catalog is damaged."""


MARK = "\x01"
PACK_FROM = 64  # bytes of text below which deflating is not tried


@cache  # compiled on first use: a read packs nothing
def _reference_value() -> re.Pattern:
    return re.compile(r'(?<=[\[,])"sha256:([0-9a-f]{64})"(?=[,\]])')


def pack_columns(columns: str | None, target_ids: dict[str, int]) -> str | None:
    """``columns`` with each value that is one of ``target_ids``' digests (hex, no prefix)
    as its id between two MARKs. Only whole array elements match: in compact JSON a ``"``
    after ``[`` or ``,`` opens a value."""
    if not columns or not target_ids or "sha256:" not in columns:
        return columns

    def packed(match: re.Match) -> str:
        target_id = target_ids.get(match.group(1))
        return match.group(0) if target_id is None else f"{MARK}{target_id}{MARK}"

    return _reference_value().sub(packed, columns)


def pack_reference_values(columns: str | None, target_ids: dict[str, int]) -> str | None:
    """``pack_columns`` of a row's printer columns as ``column_values`` writes them (a
    compact JSON array after the fingerprint), given its own references' ids: what a write
    calls once per row. There a ``"`` right after ``[`` or ``,`` opens an element (inside
    a string every ``"`` is escaped) and a digest holds no quote, so replacing
    ``["sha256:<hex>"`` and ``,"sha256:<hex>"`` finds exactly the elements the regular
    expression does, without its scan and a call per match."""
    return pack_replacing(columns, reference_replacements(target_ids))


def reference_replacements(target_ids: dict[str, int]) -> tuple[tuple[str, str, str, str, str], ...]:
    """What ``pack_reference_values`` replaces for these ids, in their order: (the quoted
    digest, each of its two ways to open an element, and each one's packed form). A write
    makes them once per set of references that rows share (``pack_replacing``)."""
    made = []
    for hexdigits, target_id in target_ids.items():
        value = f'"sha256:{hexdigits}"'
        packed = f"{MARK}{target_id}{MARK}"
        made.append((value, "[" + value, "[" + packed, "," + value, "," + packed))
    return tuple(made)


def pack_replacing(columns: str | None, replacements: tuple[tuple[str, str, str, str, str], ...]) -> str | None:
    """``pack_reference_values`` with its replacements made (``reference_replacements``)."""
    if not columns or not replacements or "sha256:" not in columns:
        return columns
    for value, opened, opened_packed, continued, continued_packed in replacements:
        if value in columns:
            columns = columns.replace(opened, opened_packed).replace(continued, continued_packed)
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
