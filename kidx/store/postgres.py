"""The PostgreSQL backend: objects and catalog in one database (``--store postgresql://…``).

Everything lives in the schema ``kidx`` of the database the URL names:
- ``objects``: each object's canonical bytes under its digest (32 raw bytes), packed
  (schema 4: deflated with a preset dictionary of the store's own objects,
  ``kidx.store.object_packing``); the bytes are re-hashed before they are packed and sent,
  and again after every read, so bytes that do not hash to their digest are never taken
  for the object (the table's CHECK re-hashes the exact bytes a store written before
  schema 4 holds);
- ``entries``: the current digest and metadata of every name (SQLite's ``objects``);
- ``labels`` and ``refs``: each name's labels and reference fields, kept as ids in its
  ``entries`` row and read through views (``kidx.store.postgres_schema``: schema 3);
- ``revisions``: every state a name has had, appended and never rewritten;
- ``spec_leaves`` / ``spec_indexed``: the scalar spec fields of the objects references
  point at (workloads, environments, …), so selection can follow a reference without
  reading objects (kept from the first write on: no older PostgreSQL store lacks them).
Names, kinds, label keys and values use the "C" collation, so ordering and prefix ranges
are byte order, as in the SQLite catalog, whatever the database's locale.

The schema is created by the first write, inside that write's transaction: a write that
fails leaves the database as it was, and until then the store reads as empty. Objects
are inserted in the same transaction as the names that point at them, so a name is never
committed without its object.

Writers serialise on a transaction-level advisory lock taken before anything is read, so
each command's decisions see every earlier command's result (no lost revision) and two
writers can never deadlock each other; readers never wait (one REPEATABLE READ snapshot).
A writer that has waited a second says so (``kidx.store.notices``).

The statements and row mapping this catalog shares with the SQLite one are in
``kidx.store.sql_catalog``; queries are compiled here.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from kidx.errors import OutcomeUnknown, StoreBusy, StoreError, StoreReadOnly
from kidx.store import interrupts, notices
from kidx.store.catalog import (
    Change,
    Revision,
    StoreBackend,
)
from kidx.store.catalog_packing import PackedValueError
from kidx.store.object_packing import (
    OBJECT_DICTIONARY_ID,
    ObjectPacker,
    Packing,
    make_object_dictionary,
    unpack_object,
)
from kidx.store.objects import PRESENT, REPLACED, WRITTEN, ObjectBackend, ObjectDB
from kidx.store.postgres_loader import Loader, RowStream
from kidx.store.postgres_rows import COPY_FROM, PostgresRows
from kidx.store.postgres_schema import SCHEMA_VERSION, VERSION_1, VERSION_2, VERSION_3, create, upgrade
from kidx.store.postgres_url import INSTALL_HINT, masked, scrubbed
from kidx.store.sql_catalog import translating

__all__ = ["COPY_FROM", "LOCK_KEY", "SCHEMA_VERSION", "PostgresBackend", "backend", "driver"]

LOCK_KEY = 0x6B696478  # "kidx": the one advisory lock a store's writers take
WRITER_WAIT_LIMIT_S = 300
COMMIT_NOTICE_AFTER_S = 3.0
UNKNOWN_OUTCOME = (
    "the write may or may not have been committed. Check with 'kidx get' or 'kidx history' on that store, or run "
    "the command again: what is stored already is reported unchanged"
)
UPGRADED = "upgraded the store's catalog ({location}) to schema version {version}"
KNOWN_VERSIONS = (VERSION_1, VERSION_2, VERSION_3, SCHEMA_VERSION)


def driver():
    """The psycopg module, or a StoreError saying how to install it."""
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            f"a PostgreSQL store needs the psycopg driver, which is not installed: {INSTALL_HINT}"
        ) from None
    # the driver logs what it ignores while closing a broken connection ("error ignored
    # terminating <psycopg.Pipeline [BAD]>"); kidx reports the failure itself
    quiet = logging.getLogger("psycopg")
    if not quiet.handlers:
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
    return psycopg


# --- the connection ---------------------------------------------------------------------


class Connection:
    """One connection to a PostgreSQL store, with kidx's transactions and error wording.

    Every psycopg error becomes a StoreError (StoreBusy for a lock or a serialisation
    conflict), with any password masked: nothing above sees the driver.
    """

    def __init__(self, url: str):
        self.url = url
        self.location = masked(url)
        self._psycopg = driver()
        try:
            self.connection = self._psycopg.connect(
                url, autocommit=True, application_name="kidx", connect_timeout=30
            )
        except self._psycopg.Error as exc:
            raise StoreError(f"cannot connect to the store at {self.location}: {self.message(exc)}") from None
        self.loader = Loader(self.connection)  # a write's COPYs, run behind it
        self.in_transaction = False
        self.writing = False
        self.version: str | None = None
        self.upgraded_from: str | None = None  # in the write in progress
        self.schema_present = self.translating(self._schema_present)

    def message(self, exc: Exception) -> str:
        return scrubbed(" ".join(str(exc).split()), self.url)

    def translating(self, action, *arguments):
        """Run ``action`` with driver errors turned into kidx's."""
        try:
            return action(*arguments)
        except self._psycopg.Error as exc:
            raise self.store_error(exc) from None

    def store_error(self, exc: Exception) -> StoreError:
        errors = self._psycopg.errors
        if isinstance(exc, (errors.SerializationFailure, errors.DeadlockDetected, errors.LockNotAvailable)):
            return StoreBusy(
                f"the store at {self.location} was busy ({self.message(exc)}); nothing was changed, try again"
            )
        if isinstance(exc, errors.QueryCanceled):  # an OperationalError, but the connection is still there
            return StoreError(
                f"the store at {self.location} cancelled the statement ({self.message(exc)}): a statement_timeout "
                "set for this role or database, or an administrator, stopped it; nothing was changed")
        if isinstance(exc, self._psycopg.OperationalError):
            return StoreError(f"lost the connection to the store at {self.location}: {self.message(exc)}")
        return StoreError(f"the store at {self.location} cannot be used: {self.message(exc)}")

    def _schema_present(self) -> bool:
        """Whether the database holds a kidx store; ``version`` is its catalog schema's (None
        without one). A version newer than this kidx knows is refused."""
        # a scan of pg_namespace, not to_regnamespace(): its cache may not yet know of a
        # schema another writer has just committed
        self.version = None
        (namespace,) = self.connection.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'kidx')"
        ).fetchone()
        if not namespace:
            return False
        row = self.connection.execute("SELECT value FROM kidx.info WHERE key='schema'").fetchone()
        if row is None or row[0] not in KNOWN_VERSIONS:
            raise StoreError(
                f"the store at {self.location} has catalog schema version {row[0] if row else 'none'}, but this kidx "
                f"knows only versions up to {SCHEMA_VERSION}: a newer kidx wrote it; use that one (nothing was changed)"
            )
        self.version = row[0]
        return True

    def execute(self, query: str, parameters: Sequence = ()):
        self.loader.settle()
        return self.connection.execute(query, parameters)

    def executemany(self, query: str, rows: Sequence[Sequence]) -> None:
        if rows:
            self.loader.settle()
            with self.connection.cursor() as cursor:
                cursor.executemany(query, rows)

    def copy(self, table: str, columns: str, rows: Sequence[Sequence] | Callable[[Any], Iterable[Sequence]],
             types: Sequence[str] = ()) -> None:
        """Rows (not changed after) into ``table``'s ``columns`` with one COPY, not a statement
        per row (a bulk apply's names, objects, labels, series), run behind the caller
        (``kidx.store.postgres_loader``): the next statement waits for it, and raises its
        error. ``rows`` may be a function of the psycopg connection that gives them; with
        the columns' ``types``, COPY's binary format is used."""
        self.loader.copy(table, columns, rows, types)

    def stream(self, table: str, columns: str) -> RowStream:
        """A COPY that sends rows as they are handed to it, behind the caller (as ``copy``)."""
        return self.loader.stream(table, columns)

    def settle(self) -> None:
        """Wait for the COPYs running behind the caller; raise the first one's error."""
        self.loader.settle()

    def close(self) -> None:
        self.loader.close()
        try:
            self.connection.close()
        except self._psycopg.Error:
            pass

    # --- transactions -------------------------------------------------------------------

    def begin_read(self) -> None:
        self.loader.settle()
        self.connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        self.in_transaction = True
        if self.version != SCHEMA_VERSION:  # an older catalog (or none) may have been upgraded since: look again
            self.schema_present = self._schema_present()

    def begin_write(self) -> None:
        self.loader.settle()
        self.connection.execute("BEGIN")
        self.in_transaction = self.writing = True
        try:
            self._lock()
            if not self.schema_present or self.version != SCHEMA_VERSION:
                # another writer may have made it, or upgraded it, since this connection looked
                self.schema_present = self._schema_present()
            if not self.schema_present:
                create(self.connection.execute)
                self.schema_present, self.version = True, SCHEMA_VERSION
            elif self.version != SCHEMA_VERSION:  # an older catalog: upgraded in this write
                upgrade(self.connection.execute, self.version or VERSION_2)
                self.upgraded_from, self.version = self.version, SCHEMA_VERSION
        except BaseException:
            self.rollback()
            raise

    def _lock(self) -> None:
        """Take the writers' lock; after a second of waiting, say so, then wait on."""
        deadline = time.monotonic() + notices.WAIT_NOTICE_AFTER_S
        delay = 0.005
        while True:
            (taken,) = self.connection.execute("SELECT pg_try_advisory_xact_lock(%s)", (LOCK_KEY,)).fetchone()
            if taken:
                return
            if time.monotonic() >= deadline:
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        notices.notify(notices.WAITING)
        self.connection.execute(f"SET LOCAL lock_timeout = '{WRITER_WAIT_LIMIT_S}s'")
        try:
            self.connection.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        except self._psycopg.errors.LockNotAvailable:
            raise StoreBusy(
                f"another writer has held the store at {self.location} for over {WRITER_WAIT_LIMIT_S} s; "
                "nothing was changed, try again"
            ) from None
        self.connection.execute("SET LOCAL lock_timeout = 0")

    def commit(self) -> None:
        """COMMIT, with its outcome told truly. A commit still unanswered after a few
        seconds (a synchronous standby that does not answer) is announced; Ctrl-C during
        it asks the server to stop waiting, which keeps the commit. A connection lost
        while COMMIT is in flight leaves the outcome unknown: ``OutcomeUnknown``."""
        # a round trip first: a connection lost before COMMIT is sent has committed nothing
        # (a plain "lost the connection", exit 1); only one lost during COMMIT is unknown
        self.execute("SELECT 1")
        timer = threading.Timer(COMMIT_NOTICE_AFTER_S, notices.notify, (
            f"waiting for the store at {self.location} to confirm the commit (a synchronous standby may not be "
            "answering); Ctrl-C asks the server to stop waiting and keep the commit, a second Ctrl-C gives up "
            "with the outcome unknown…",))
        timer.daemon = True
        self.connection.add_notice_handler(self._server_notice)
        timer.start()
        try:
            with interrupts.on_press(self._cancel):
                self.connection.execute("COMMIT")
        except self._psycopg.OperationalError as exc:
            self.in_transaction = self.writing = False
            self.upgraded_from = None
            raise OutcomeUnknown(
                f"lost the connection to the store at {self.location} while it committed ({self.message(exc)}): "
                f"{UNKNOWN_OUTCOME}") from None
        except KeyboardInterrupt:  # Ctrl-C twice, the server silent
            self.in_transaction = self.writing = False
            self.upgraded_from = None
            raise OutcomeUnknown(
                f"interrupted while the store at {self.location} had not confirmed the commit: {UNKNOWN_OUTCOME}"
            ) from None
        finally:
            timer.cancel()
            self.connection.remove_notice_handler(self._server_notice)
        self.in_transaction = self.writing = False
        if self.upgraded_from is not None:
            self.upgraded_from = None
            notices.notify(UPGRADED.format(location=self.location, version=SCHEMA_VERSION))

    def _cancel(self) -> None:
        self.connection.cancel()

    def _server_notice(self, diagnostic) -> None:
        """The server's warnings during a commit (a wait for a standby cancelled) are said."""
        if diagnostic.severity_nonlocalized in ("WARNING",) and diagnostic.message_primary:
            detail = f" ({diagnostic.message_detail})" if diagnostic.message_detail else ""
            notices.notify(f"the store at {self.location} says: {diagnostic.message_primary}{detail}")

    def rollback(self) -> None:
        self.loader.abandon()
        if not self.in_transaction:
            return
        self.in_transaction = False
        try:
            self.connection.execute("ROLLBACK")
        except self._psycopg.Error:
            pass  # a broken connection has rolled back already
        self.upgraded_from = None
        if self.writing:
            self.writing = False
            try:
                self.schema_present = self._schema_present()  # a first write's schema is undone
            except self._psycopg.Error:
                self.schema_present = False


# --- objects ----------------------------------------------------------------------------


class PostgresObjectBackend(ObjectBackend):
    """Objects in the ``kidx.objects`` table: verified before they are packed and sent.

    Writes are queued and inserted by ``flush``, which the store calls inside the write
    transaction, before the catalog commits (one round of statements, not one per object).
    """

    def __init__(self, backend: PostgresBackend):
        self._backend = backend
        self.location = backend.location
        self._pending: dict[bytes, bytes] = {}
        self._dictionaries: dict[int, bytes] = {}  # text_dictionaries read or made, by id
        self._packer: ObjectPacker | None = None
        self._made_dictionary = False  # by the write in progress
        self._packing: tuple[list[bytes], Packing] | None = None  # a bulk write's objects, being packed
        self._replacing: set[bytes] = set()  # pending replacements of damaged objects

    @property
    def pending(self) -> dict[bytes, bytes]:
        """The objects written since the last flush, by digest (their 32 bytes)."""
        return self._pending

    @property
    def connection(self) -> Connection:
        return self._backend.connection()

    def read(self, hexdigest: str) -> bytes:
        key = bytes.fromhex(hexdigest)
        if key in self._pending:
            return self._pending[key]
        found = self.read_many([hexdigest])
        if hexdigest not in found:
            raise FileNotFoundError(hexdigest)
        return found[hexdigest]

    def read_many(self, hexdigests: Iterable[str]) -> dict[str, bytes]:
        keys = list({bytes.fromhex(hexdigest) for hexdigest in hexdigests})
        connection = self.connection
        if not keys or not connection.schema_present:
            return {}
        rows = connection.translating(
            lambda: connection.execute(
                "SELECT digest, content FROM kidx.objects WHERE digest = ANY(%s)", (keys,)
            ).fetchall()
        )
        return {bytes(key).hex(): self.unpacked(content) for key, content in rows}

    def unpacked(self, content) -> bytes:
        """An object's bytes from its stored content (schema 4 packs them: kidx.store.object_packing)."""
        return unpack_object(bytes(content), self._dictionary)

    def _dictionary(self, dictionary_id: int) -> bytes | None:
        found = self._dictionaries.get(dictionary_id)
        if found is None:
            connection = self.connection
            row = connection.translating(lambda: connection.execute(
                "SELECT dictionary FROM kidx.text_dictionaries WHERE id = %s", (dictionary_id,)).fetchone())
            if row is not None:
                found = self._dictionaries[dictionary_id] = bytes(row[0])
        return found

    def _packer_of_write(self, objects: list[bytes]) -> ObjectPacker:
        """The store's object packer: with its dictionary, made by this write if it is the
        first to hold enough objects (in its transaction: a rollback forgets it)."""
        if self._packer is not None and self._packer.dictionary_id:
            return self._packer
        dictionary = self._dictionary(OBJECT_DICTIONARY_ID)
        if dictionary is None:
            dictionary = make_object_dictionary(objects)
            if dictionary is not None:
                connection = self.connection
                connection.translating(connection.execute, "INSERT INTO kidx.text_dictionaries (id, dictionary) "
                                       "VALUES (%s, %s)", (OBJECT_DICTIONARY_ID, dictionary))
                self._dictionaries[OBJECT_DICTIONARY_ID] = dictionary
                self._made_dictionary = True
        self._packer = ObjectPacker(OBJECT_DICTIONARY_ID, dictionary)
        return self._packer

    def write(self, hexdigest: str, data: bytes) -> bool:
        key = bytes.fromhex(hexdigest)
        if hashlib.sha256(data).digest() != key:
            raise StoreError(f"object sha256:{hexdigest} does not hash to its digest; it was not stored")
        self._pending[key] = bytes(data)
        return True

    def exists(self, hexdigest: str) -> bool:
        return bytes.fromhex(hexdigest) in self._pending or not self.missing([hexdigest])

    def missing(self, hexdigests: Iterable[str]) -> set[str]:
        """Which of ``hexdigests`` the table does not hold (one query)."""
        wanted = {bytes.fromhex(hexdigest) for hexdigest in hexdigests}
        connection = self.connection
        if not wanted or not connection.schema_present:
            return {key.hex() for key in wanted}
        present = connection.translating(
            lambda: {
                bytes(row[0])
                for row in connection.execute("SELECT digest FROM kidx.objects WHERE digest = ANY(%s)", (list(wanted),))
            }
        )
        return {key.hex() for key in wanted - present}

    def hexdigests(self) -> Iterator[str]:
        connection = self.connection
        if not connection.schema_present:
            return iter(())
        rows = connection.translating(
            lambda: connection.execute("SELECT digest FROM kidx.objects ORDER BY digest").fetchall()
        )
        return (bytes(row[0]).hex() for row in rows)

    def flush(self) -> None:
        """The queued objects that the table does not hold yet, in one COPY (under the write
        lock no other writer adds objects meanwhile; a few go as INSERTs)."""
        self.flush_behind()
        self.connection.translating(self.connection.settle)

    def start_packing(self) -> None:
        """A bulk write's objects (COPY_FROM or more held): packed from now on, behind the
        write (by a process of their own, for many: ``Packing``), for ``flush_behind`` to load."""
        if len(self._pending) < COPY_FROM or self._packing is not None:
            return
        keys = [key for key in self._pending if key not in self._replacing]  # those go by INSERT (flush_behind)
        objects = [self._pending.pop(key) for key in keys]
        self._packing = (keys, Packing(self._packer_of_write(objects), objects))

    def flush_behind(self) -> None:
        """``flush``, its COPY run behind the write (``Connection.copy``): the write's next
        statement waits for it."""
        self.start_packing()
        connection = self.connection
        if self._packing is not None:
            keys, packing = self._packing
            self._packing = None

            def missing(psycopg_connection) -> list[tuple[bytes, bytes]]:
                rows = list(zip(keys, packing.result(), strict=True))
                # the digests as one array's text (psycopg dumps a list of bytes element by element)
                digests = "{" + ",".join([f"\\\\x{key.hex()}" for key in keys]) + "}"
                present = {bytes(row[0]) for row in psycopg_connection.execute(
                    "SELECT digest FROM kidx.objects WHERE digest = ANY(%s::bytea[])", (digests,))}
                return [row for row in rows if row[0] not in present] if present else rows

            connection.copy("kidx.objects", "digest, content", missing, ("bytea", "bytea"))
        if self._pending:  # a few, those written since the packing started, replacements of damaged ones
            rows = list(self._pending.items())
            self._pending.clear()
            packer = self._packer_of_write([data for _, data in rows])
            for replacing, conflict in ((False, "NOTHING"), (True, "UPDATE SET content = EXCLUDED.content")):
                connection.translating(
                    connection.executemany,
                    f"INSERT INTO kidx.objects (digest, content) VALUES (%s, %s) ON CONFLICT (digest) DO {conflict}",
                    [(key, packer.pack(data)) for key, data in rows if (key in self._replacing) == replacing],
                )
            self._replacing.clear()

    def discard(self) -> None:
        self._pending.clear()
        self._replacing.clear()
        packing, self._packing = self._packing, None
        if self._made_dictionary:  # made by the write that failed: the database no longer has it
            self._dictionaries.pop(OBJECT_DICTIONARY_ID, None)
            self._packer, self._made_dictionary = None, False
        if packing is not None:
            packing[1].abandon()

    def committed(self) -> None:
        """After a commit: a dictionary this write made is the store's."""
        self._made_dictionary = False

    def ensure_many(self, objects: dict[str, bytes]) -> dict[str, str]:
        """One query for those stored, each checked (a packed one is not re-hashed by the
        server): the missing are written, the damaged replaced (REPLACED)."""
        stored = self.read_many(objects)
        done = {}
        for hexdigest, data in objects.items():
            found = stored.get(hexdigest)
            if found is not None and (found == data or hashlib.sha256(found).hexdigest() == hexdigest):
                done[hexdigest] = PRESENT
                continue
            self.write(hexdigest, data)
            if found is None:
                done[hexdigest] = WRITTEN
            else:
                self._replacing.add(bytes.fromhex(hexdigest))
                done[hexdigest] = REPLACED
        return done

    def size(self, hexdigest: str) -> int | None:
        """The bytes the object takes in the table (packed, where it is)."""
        connection = self.connection
        if not connection.schema_present:
            return None
        row = connection.translating(lambda: connection.execute(
            "SELECT length(content) FROM kidx.objects WHERE digest = %s", (bytes.fromhex(hexdigest),)).fetchone())
        return None if row is None else row[0]

    def remove(self, hexdigest: str) -> None:
        """Delete an object (garbage collection, inside its write); a missing one is no error."""
        self._pending.pop(bytes.fromhex(hexdigest), None)
        connection = self.connection
        if connection.schema_present:
            connection.translating(
                connection.execute, "DELETE FROM kidx.objects WHERE digest = %s", (bytes.fromhex(hexdigest),))

    def where(self, hexdigest: str) -> str:
        return f"sha256:{hexdigest} in {self.location}"


# --- the catalog ------------------------------------------------------------------------


class PostgresCatalog(PostgresRows):
    """The catalog in PostgreSQL: entries, labels, references and revisions."""

    def __init__(self, backend: PostgresBackend):
        self.backend = backend
        self.connection = backend.connection()
        self._target_ids = {}
        self._label_ids = {}
        self._label_pairs = {}
        self._series_ids = {}
        self._replacements = {}
        self._row_series = {}
        self._digests_of_targets = {}
        self._dictionaries = {}
        self._rows_loaded = {}

    @property
    def readable(self) -> bool:
        return self.connection.schema_present

    def translated(self, method, *args, **kwargs):
        try:
            return self.connection.translating(lambda: method(*args, **kwargs))
        except PackedValueError as exc:
            raise StoreError(f"the store at {self.backend.location} is damaged: {exc}; `kidx fsck` tells what "
                             "is wrong") from None

    def _write_starts(self, changes: Sequence[Change]) -> bool:
        self._restore_starts(changes)
        return True  # _write_ends records the revision ids taken

    def _restore_starts(self, changes: Sequence[Change]) -> None:
        """Index the specs of the objects the rows refer to or carry (kept from the first
        write on), start packing the write's objects (by a process of their own, for many),
        and learn the ids of its labels, reference targets and series: the statements that
        read come first, so that none waits for a load. The objects are loaded behind the
        rows (``put_many``, ``restore``), once packed."""
        self._index_specs(self._specs_of(changes))  # reads this write's objects before they are packed
        self.backend.object_backend.start_packing()
        self._prepare_write(changes)

    def _object_texts(self, digests: Sequence) -> dict:
        """Objects by digest: this write's own from memory (not loaded yet), the others read."""
        pending = self.backend.object_backend.pending
        texts = {digest: pending[digest] for digest in digests if digest in pending}
        wanted = [digest for digest in digests if digest not in texts]
        if wanted:
            unpacked = self.backend.object_backend.unpacked
            texts.update((bytes(digest), unpacked(content)) for digest, content in self.connection.execute(
                "SELECT digest, content FROM kidx.objects WHERE digest = ANY(%s)", (wanted,)))
        return texts

    def put_many(self, changes: Sequence[Change], now: str) -> None:
        """``SQLCatalog.put_many``, its loads finished: their errors are the write's, raised
        before it commits."""
        super().put_many(changes, now)
        self.backend.object_backend.flush_behind()  # the objects' load after the rows' (packed meanwhile)
        self.connection.translating(self.connection.settle)

    def restore(self, changes: Sequence[Change], revisions: Sequence[Revision]) -> None:
        super().restore(changes, revisions)
        self.backend.object_backend.flush_behind()
        self.connection.translating(self.connection.settle)

    # --- transactions -------------------------------------------------------------------

    @translating
    def begin_read(self) -> None:
        self.connection.begin_read()

    @translating
    def begin_write(self) -> None:
        self.connection.begin_write()

    @translating
    def commit(self) -> None:
        self._refresh_statistics()
        self.connection.commit()
        self.backend.object_backend.committed()

    def rollback(self) -> None:
        self.backend.object_backend.discard()
        self._forget_write()
        self.connection.rollback()

    def close(self) -> None:
        self.backend.close()

    # --- writes (inside begin_write … commit) -------------------------------------------

    # --- maintenance (export, gc, bundle restore) -----------------------------------------

# --- the backend ------------------------------------------------------------------------


class PostgresBackend(StoreBackend):
    """A store in a PostgreSQL database; one connection, opened when first needed."""

    def __init__(self, url: str):
        self.url = url
        self.location = masked(url)
        self._connection: Connection | None = None
        self.object_backend = PostgresObjectBackend(self)
        self.objects = ObjectDB(self.object_backend)

    def connection(self) -> Connection:
        if self._connection is None:
            self._connection = Connection(self.url)
        return self._connection

    def exists(self) -> bool:
        return self.connection().schema_present

    def open_catalog(self, write: bool) -> PostgresCatalog:
        return PostgresCatalog(self)

    def check_writable(self) -> None:
        connection = self.connection()  # unreachable: "cannot connect to the store at …"
        reason = connection.translating(self._read_only_reason, connection)
        if reason is not None:
            raise StoreReadOnly(f"the store at {self.location} is read-only ({reason}): nothing can be written to it")

    @staticmethod
    def _read_only_reason(connection: Connection) -> str | None:
        """Why this connection's role may not write the store, or None: asked of the server's
        privileges, so that nothing is written to find out."""
        (read_only,) = connection.execute("SELECT current_setting('transaction_read_only')").fetchone()
        if read_only == "on":
            return "the server or the role's sessions are read-only (transaction_read_only is on)"
        if not connection.schema_present:
            (may_create,) = connection.execute(
                "SELECT has_database_privilege(current_database(), 'CREATE')").fetchone()
            return None if may_create else "the role may not create the kidx schema in this database"
        (usage,) = connection.execute("SELECT has_schema_privilege('kidx', 'USAGE')").fetchone()
        if not usage:
            return "the role may not use the kidx schema"
        rows = connection.execute(
            "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'kidx' AND c.relkind IN ('r', 'p') AND NOT (has_table_privilege(c.oid, 'INSERT') "
            "AND has_table_privilege(c.oid, 'UPDATE') AND has_table_privilege(c.oid, 'DELETE')) "
            "ORDER BY c.relname").fetchall()
        if rows:
            return "the role may not write the tables " + ", ".join(f"kidx.{name}" for (name,) in rows)
        return None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def backend(location: str) -> PostgresBackend:
    return PostgresBackend(location)
