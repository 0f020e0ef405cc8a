"""Objects of a store folder, loose and packed (as git keeps them).

``PackedObjectBackend`` keeps a command's small writes as loose files, exactly as
``FileObjectBackend`` does (``objects/sha256/ab/cdef…``), and its bulk writes as rows of
one SQLite database beside them, ``objects/packed.sqlite`` (table ``objects``: the
digest's 32 bytes -> the exact canonical bytes). A file per object costs a file-system
block and an inode each, and creating the files is the largest single cost of a bulk
``apply``; one database of rows costs neither.

The rule: a command's object writes are held in memory until ``flush()``, or until
``PACK_THRESHOLD`` of them are held. At ``flush()``, fewer than that go out as loose
files (then one syncfs makes them durable); once that many are held, they and every
later write of the command go into one transaction of the pack (WAL,
``synchronous=FULL``), committed by ``flush()``. The store flushes before the catalog
commits, so the order is the same as with files: objects durable first, then the names
that point at them. A crash or an error before that leaves the pack as it was (SQLite
rolls the transaction back); ``discard()`` forgets what a failed write held.

Reads look at what is held, then the pack, then the loose files. A store without a pack
never opens one: the loose file is read first, and the pack is looked for only when the
file is not there. Opening a store for reading never creates the pack.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator

from kidx.store.objects import PRESENT, REPLACED, WRITTEN, FileObjectBackend, Leftover, ObjectBackend, path_text
from kidx.store.sqlite_connections import connect_read_only

#: held objects that make a command's writes go to the pack instead of loose files
PACK_THRESHOLD = 256
PACK_FILE = "packed.sqlite"
_CHUNK = 500  # digests per IN (…): under SQLite's limit on bound parameters


class PackedObjectBackend(ObjectBackend):
    """Loose files under ``loose``'s root, packed rows in ``pack_path``."""

    def __init__(self, loose: FileObjectBackend, pack_path: str, busy_timeout_s: float):
        self.loose = loose
        self.location = loose.location
        self.pack_path = path_text(pack_path)
        self._timeout = busy_timeout_s
        self._held: dict[str, bytes] = {}  # written, not yet in the pack nor a file
        self._replacing: set[str] = set()  # held replacements of damaged packed objects
        self._db: sqlite3.Connection | None = None
        self._read_only = True  # what self._db was opened for
        self._packing = False  # a pack transaction is open (this command's bulk write)
        self._looked = False  # whether this write has looked for the pack
        self._loose_written = False

    # --- the pack database -----------------------------------------------------------

    def _error(self, exc: sqlite3.Error):
        from kidx.errors import StoreBusy, StoreError, StoreReadOnly

        text = str(exc)
        if "locked" in text or "busy" in text:
            return StoreBusy(f"the store's object pack {self.pack_path} cannot be used: {exc} "
                             "(is another kidx writing? try again)")
        if "readonly" in text or "read-only" in text:
            return StoreReadOnly(f"the store's object pack {self.pack_path} is read-only ({text}): nothing was "
                                 "changed; reading it still works")
        return StoreError(f"the store's object pack {self.pack_path} cannot be used: {exc} "
                          "(`kidx fsck` tells what is wrong)")

    def _no_pack(self) -> bool:
        """False when there is no pack, True for a file; an error for anything else (a FIFO
        in its place would make SQLite wait for ever, a folder is no pack)."""
        import stat

        try:
            mode = os.stat(self.pack_path).st_mode
        except FileNotFoundError:
            return True
        if not stat.S_ISREG(mode):
            from kidx.errors import StoreError
            from kidx.manifests.reader import file_type

            raise StoreError(f"the store's object pack {self.pack_path} is {file_type(mode)}, not a file "
                             "(nothing was read or changed)")
        return False

    def _reader(self) -> sqlite3.Connection | None:
        """The pack, opened when it exists (never created here)."""
        if self._db is None:
            if self._no_pack():
                return None
            try:
                db = connect_read_only(self.pack_path, self._timeout)
                if db.execute("SELECT 1 FROM sqlite_master WHERE name='objects'").fetchone() is None:
                    db.close()  # a pack whose creation a crash cut short holds nothing
                    return None
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            self._db, self._read_only = db, True
        return self._db

    def _pack(self) -> sqlite3.Connection | None:
        """The pack for this write's look-ups, looked for once per write."""
        if self._db is None and not self._looked:
            self._looked = True
            return self._reader()
        return self._db

    def _writer(self) -> sqlite3.Connection:
        """The pack opened for writing, created if need be."""
        if self._db is not None and not self._read_only:
            return self._db
        if self._db is not None:
            self._db.close()
            self._db = None
        self._no_pack()
        try:
            os.makedirs(os.path.dirname(self.pack_path), exist_ok=True)
            db = sqlite3.connect(self.pack_path, timeout=self._timeout, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=WAL").fetchall()
                db.execute("PRAGMA synchronous=FULL")
                db.execute("CREATE TABLE IF NOT EXISTS objects (digest BLOB PRIMARY KEY, data BLOB NOT NULL)")
            except BaseException:
                db.close()
                raise
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        self._db, self._read_only, self._looked = db, False, True
        return db

    def _row(self, db: sqlite3.Connection, sql: str, hexdigest: str):
        try:
            return db.execute(sql, (bytes.fromhex(hexdigest),)).fetchone()
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def _packed(self, hexdigest: str) -> bytes | None:
        db = self._pack()
        if db is None:
            return None
        row = self._row(db, "SELECT data FROM objects WHERE digest=?", hexdigest)
        return None if row is None else row[0]

    def _spill(self) -> None:
        """Move what is held into the pack's open transaction (opened now if need be)."""
        db = self._writer()
        try:
            if not self._packing:
                db.execute("BEGIN IMMEDIATE")
                self._packing = True
            db.executemany("INSERT OR REPLACE INTO objects (digest, data) VALUES (?, ?)",
                           [(bytes.fromhex(hexdigest), data) for hexdigest, data in self._held.items()])
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        self._held.clear()
        self._replacing.clear()

    # --- the backend -------------------------------------------------------------------

    @property
    def root(self):
        """The loose files' folder (``objects/sha256``)."""
        return self.loose.root

    def write(self, hexdigest: str, data: bytes) -> str:
        if hexdigest in self._held:
            return PRESENT
        return self._write(hexdigest, data, self._packed(hexdigest))

    def write_many(self, objects: dict[str, bytes]) -> dict[str, str]:
        """``write`` of each, in order, the pack asked for _CHUNK of them in one query rather
        than one query each: what it holds of those not held cannot change meanwhile but by
        these writes, each of its own digest (one held now and spilled meanwhile is asked
        for alone, as ``write`` would)."""
        asked = [hexdigest for hexdigest in objects if hexdigest not in self._held]
        db = self._pack() if asked else None
        stored = self._packed_many(db, asked) if db is not None else {}
        looked_up = set(asked)
        done: dict[str, str] = {}
        for hexdigest, data in objects.items():
            if hexdigest in self._held:
                done[hexdigest] = PRESENT
            else:
                found = stored.get(hexdigest) if hexdigest in looked_up else self._packed(hexdigest)
                done[hexdigest] = self._write(hexdigest, data, found)
        return done

    def _write(self, hexdigest: str, data: bytes, stored: bytes | None) -> str:
        """``write``, given what the pack holds under the digest (None: nothing)."""
        if stored is not None:
            if stored == data or _hashes_to(stored, hexdigest):
                return PRESENT
            self._replacing.add(hexdigest)  # damaged in the pack: replaced there
            self._hold(hexdigest, data)
            return REPLACED
        if os.path.lexists(self.loose.where(hexdigest)):
            outcome = self.loose.ensure_many({hexdigest: data})[hexdigest]  # checked, replaced if damaged
            self._loose_written = self._loose_written or outcome != PRESENT
            return outcome
        self._hold(hexdigest, data)
        return WRITTEN

    def _hold(self, hexdigest: str, data: bytes) -> None:
        self._held[hexdigest] = data
        if len(self._held) >= PACK_THRESHOLD:
            self._spill()

    def ensure_many(self, objects: dict[str, bytes]) -> dict[str, str]:
        return {hexdigest: self.write(hexdigest, data) for hexdigest, data in objects.items()}

    def flush(self) -> None:
        """Make every object written so far durable: the pack's transaction committed, or
        the few held objects written as loose files and synced."""
        self._looked = False
        if self._replacing:
            self._spill()  # a damaged packed object is replaced in the pack, never shadowed
        if self._packing:
            self._spill()
            db = self._writer()
            try:
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            finally:
                self._packing = False
            self._checkpoint(db)
        for hexdigest, data in list(self._held.items()):
            self.loose.write(hexdigest, data)
            self._loose_written = True
            del self._held[hexdigest]
        if self._loose_written:
            self._loose_written = False
            self.loose.flush()

    def _checkpoint(self, db: sqlite3.Connection) -> None:
        """Fold the pack's log into it if nobody is in the way (as the catalog does), so a
        store copied or made read-only later reads whole without it."""
        try:
            db.execute("PRAGMA busy_timeout=0")
            try:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            finally:
                db.execute(f"PRAGMA busy_timeout={int(self._timeout * 1000)}")
        except (sqlite3.Error, KeyboardInterrupt):
            pass  # committed is done: housekeeping must not turn it into a failure

    def discard(self) -> None:
        """Forget what a failed write held, and roll its pack transaction back."""
        self._held.clear()
        self._replacing.clear()
        self._looked = False
        if self._packing:
            self._packing = False
            try:
                if self._db is not None and self._db.in_transaction:
                    self._db.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def read(self, hexdigest: str) -> bytes:
        held = self._held.get(hexdigest)
        if held is not None:
            return held
        if self._db is not None:
            row = self._row(self._db, "SELECT data FROM objects WHERE digest=?", hexdigest)
            if row is not None:
                return row[0]
            return self.loose.read(hexdigest)
        try:
            return self.loose.read(hexdigest)
        except FileNotFoundError:
            db = self._reader()  # a store without a pack opens none until a file is missing
            row = None if db is None else self._row(db, "SELECT data FROM objects WHERE digest=?", hexdigest)
            if row is None:
                raise
            return row[0]

    def read_many(self, hexdigests: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(hexdigests))
        found = {hexdigest: self._held[hexdigest] for hexdigest in wanted if hexdigest in self._held}
        rest = [hexdigest for hexdigest in wanted if hexdigest not in found]
        if self._db is not None:
            found.update(self._packed_many(self._db, rest))
            rest = [hexdigest for hexdigest in rest if hexdigest not in found]
        found.update(self.loose.read_many(rest))
        rest = [hexdigest for hexdigest in rest if hexdigest not in found]
        if rest and self._db is None:
            db = self._reader()
            if db is not None:
                found.update(self._packed_many(db, rest))
        return found

    def _packed_many(self, db: sqlite3.Connection, hexdigests: list[str], column: str = "data") -> dict:
        found = {}
        try:
            for start in range(0, len(hexdigests), _CHUNK):
                chunk = [bytes.fromhex(hexdigest) for hexdigest in hexdigests[start:start + _CHUNK]]
                marks = ",".join("?" * len(chunk))
                for digest, value in db.execute(f"SELECT digest, {column} FROM objects WHERE digest IN ({marks})",
                                                chunk):
                    found[digest.hex()] = value
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        return found

    def exists(self, hexdigest: str) -> bool:
        if hexdigest in self._held:
            return True
        if self._db is not None:  # the pack first where it is open, else the files first
            return self._in_pack(hexdigest) or self.loose.exists(hexdigest)
        return self.loose.exists(hexdigest) or self._in_pack(hexdigest)

    def _in_pack(self, hexdigest: str) -> bool:
        db = self._reader()
        return db is not None and self._row(db, "SELECT 1 FROM objects WHERE digest=?", hexdigest) is not None

    def missing(self, hexdigests: Iterable[str]) -> set[str]:
        rest = [hexdigest for hexdigest in dict.fromkeys(hexdigests) if hexdigest not in self._held]
        db = self._reader()
        if db is not None and rest:
            packed = self._packed_many(db, rest, "1")
            rest = [hexdigest for hexdigest in rest if hexdigest not in packed]
        return {hexdigest for hexdigest in rest if not self.loose.exists(hexdigest)}

    def hexdigests(self) -> Iterator[str]:
        """Held, packed and loose objects, sorted, each once."""
        import heapq  # here: only fsck, gc and export list every object
        sources = [iter(sorted(self._held)), self.loose.hexdigests()]
        db = self._reader()
        if db is not None:
            sources.append(self._packed_digests(db))
        last = None
        for hexdigest in heapq.merge(*sources):
            if hexdigest != last:
                yield hexdigest
                last = hexdigest

    def _packed_digests(self, db: sqlite3.Connection) -> Iterator[str]:
        try:
            for (digest,) in db.cursor().execute("SELECT digest FROM objects ORDER BY digest"):
                yield digest.hex()
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def remove(self, hexdigest: str) -> None:
        """gc: from the pack (committed at once unless a bulk write is open: a removal
        lost to a crash leaves only an object nothing keeps) and from the loose files."""
        self._held.pop(hexdigest, None)
        self._replacing.discard(hexdigest)
        if self._in_pack(hexdigest):
            db = self._writer()
            try:
                if self._packing:
                    db.execute("DELETE FROM objects WHERE digest=?", (bytes.fromhex(hexdigest),))
                else:
                    # not synced one by one: a removal a power cut undoes only leaves an unused object
                    db.execute("PRAGMA synchronous=NORMAL")
                    try:
                        db.execute("DELETE FROM objects WHERE digest=?", (bytes.fromhex(hexdigest),))
                    finally:
                        db.execute("PRAGMA synchronous=FULL")
            except sqlite3.Error as exc:
                raise self._error(exc) from None
        self.loose.remove(hexdigest)

    def where(self, hexdigest: str) -> str:
        """The pack for a packed object (or one on its way there), else its file."""
        if hexdigest in self._held:
            return self.pack_path if self._packing or hexdigest in self._replacing else self.loose.where(hexdigest)
        return self.pack_path if self._in_pack(hexdigest) else self.loose.where(hexdigest)

    def size(self, hexdigest: str) -> int | None:
        held = self._held.get(hexdigest)
        if held is not None:
            return len(held)
        db = self._reader()
        row = None if db is None else self._row(db, "SELECT length(data) FROM objects WHERE digest=?", hexdigest)
        return row[0] if row is not None else self.loose.size(hexdigest)

    def leftovers(self) -> Iterator[Leftover]:
        return self.loose.leftovers()

    def close(self) -> None:
        self.discard()
        if self._db is not None:
            self._db.close()
            self._db = None


def _hashes_to(data: bytes, hexdigest: str) -> bool:
    import hashlib

    return hashlib.sha256(data).hexdigest() == hexdigest
