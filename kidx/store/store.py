"""The store facade: where the store lives, and objects + catalog together, whatever the backend.

Reading never creates anything: a store that does not exist yet reads as empty. The
first write creates it. Operations use only this facade:

- ``store.catalog()`` for reads, ``with store.reading() as catalog:`` for several reads
  that must see one snapshot;
- ``with store.write() as tx:`` for a write: all or nothing under the store's write
  lock; on leaving the block the objects are made durable first, then the catalog
  commits, so no committed name ever points at an object a crash could lose. From the
  commit on, Ctrl-C is held (``kidx.store.interrupts``), so a commit that happened is
  reported as such;
- ``store.select(query)`` for a ``CatalogQuery`` (the backend compiles it);
- ``store.identity``/``store.manifest``/``store.identities`` for object contents, each
  checked against its digest (damage is an error naming the object, never served).

The backend comes from the location: a folder is the SQLite backend
(``kidx.store.sqlite_catalog``); a URL whose scheme is in ``BACKENDS`` names the module
of another one (it must define ``backend(location) -> StoreBackend``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator, Sequence

from kidx.errors import StoreError
from kidx.records import TYPE_CHECKING
from kidx.store.catalog import (
    Catalog,
    CatalogQuery,
    Change,
    Entry,
    Revision,
    StoreBackend,
    condition_holds,
    field_text,
)
from kidx.store.column_cache import spec_stubs
from kidx.store.objects import PRESENT

if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from pathlib import Path

STORE_ENV = "KIDX_STORE"
#: URL scheme -> module defining ``backend(location) -> StoreBackend``
BACKENDS: dict[str, str] = {"postgresql": "kidx.store.postgres", "postgres": "kidx.store.postgres"}


def configured_store_location() -> str | None:
    """``$KIDX_STORE`` where it is set and not empty: the one place kidx reads it."""
    return os.environ.get(STORE_ENV) or None


def default_store_location() -> str:
    """``$KIDX_STORE``, else the user data folder."""
    configured = configured_store_location()
    if configured:
        return configured
    from platformdirs import user_data_dir

    return user_data_dir("kidx")


def default_store_path() -> Path:
    """The default location as a folder (for the SQLite backend)."""
    from pathlib import Path

    return Path(default_store_location())


def backend_for(location: str | Path) -> StoreBackend:
    """The backend of a location: a URL of a known scheme (in any case), or a folder. A
    location that starts like a URL of any other scheme (``postgresq://…``,
    ``postgresql:/…``) is an error, never a folder named after it."""
    text = str(location)
    if ":" in text or "=" in text:  # else neither a URL nor a libpq keyword/value string
        return _backend_of_text(location, text)
    from kidx.store.sqlite_backend import SQLiteBackend

    return SQLiteBackend(text)


def _backend_of_text(location: str | Path, text: str) -> StoreBackend:
    from kidx.store.postgres_url import keyword_value_refusal, normalised, refusal, url_scheme

    if not isinstance(location, os.PathLike):  # a Path is a folder, by type
        reason = keyword_value_refusal(text)
        if reason is not None:
            raise StoreError(reason)
    if not isinstance(location, os.PathLike) and url_scheme(text) is not None:
        reason = refusal(text, tuple(BACKENDS))
        if reason is not None:
            raise StoreError(reason)
        text = normalised(text)
        import importlib  # a URL's backend: a folder store needs none

        return importlib.import_module(BACKENDS[text.partition(":")[0]]).backend(text)
    from kidx.store.sqlite_backend import SQLiteBackend

    return SQLiteBackend(text)


def utc_now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class WriteTransaction:
    """What a write may do; obtained from ``Store.write()`` only.

    ``catalog`` reads see the store as it is under the write lock (so decisions made from
    them cannot be overtaken by another writer)."""

    def __init__(self, catalog: Catalog, objects):
        self.catalog = catalog
        self._objects = objects
        self.objects_added = False
        self.timings: dict[str, float] = {}  # seconds of the flush and of the commit

    def add_object(self, digest: str, data: bytes) -> str:
        """Store an object's canonical bytes, durable before the commit: WRITTEN, PRESENT, or
        REPLACED when what was stored under the digest was damaged (kidx.store.objects)."""
        return self._added(self._objects.write(digest, data))

    def add_objects(self, objects: dict[str, bytes]) -> dict[str, str]:
        """``add_object`` of each (digest -> bytes), in order: digest -> what was done."""
        done = self._objects.write_many(objects)
        for outcome in done.values():
            self._added(outcome)
        return done

    def ensure_objects(self, objects: dict[str, bytes]) -> dict[str, str]:
        """Objects that should be stored already (their names are unchanged): each is
        checked, and written again when missing or damaged. digest -> what was done."""
        done = self._objects.ensure_many(objects)
        for outcome in done.values():
            self._added(outcome)
        return done

    def _added(self, written: str) -> str:
        if written != PRESENT:
            if not self.objects_added:
                from kidx.store.faults import crash_point

                crash_point("objects")
            self.objects_added = True
        return written

    def where(self, digest: str) -> str:
        return self._objects.where(digest)

    def remove_object(self, digest: str) -> None:
        """Garbage collection: under the write lock, so no write in flight can need it."""
        self._objects.remove(digest)

    def reindex(self, change: Change) -> None:
        """Repair: rewrite a name's label and reference rows and cached columns from
        ``change``; no revision, nothing the user applied changes."""
        self.catalog.reindex(change)

    def drop_stray_index_rows(self) -> None:
        self.catalog.drop_stray_index_rows()

    def rebuild_catalog_indexes(self) -> None:
        self.catalog.rebuild_indexes()

    def restore(self, changes: Sequence[Change], revisions: Sequence[Revision]) -> None:
        """Names and revisions exactly as recorded elsewhere (a bundle)."""
        self.catalog.restore(changes, revisions)

    def put(self, changes: Sequence[Change], now: str) -> None:
        """Create or replace names; each gets an ``applied`` revision."""
        if changes:
            self.catalog.put_many(changes, now)

    def delete(self, entry: Entry, now: str) -> None:
        """Remove a name; it gets a ``deleted`` revision."""
        self.catalog.delete(entry, now)


class _Reading:
    """``Store.reading()``: the catalog between ``begin_read`` and ``rollback`` (a class, not
    contextlib's decorator: a read then imports no contextlib)."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def __enter__(self) -> Catalog:
        self.catalog.begin_read()
        return self.catalog

    def __exit__(self, *raised) -> None:
        self.catalog.rollback()


class Store:
    def __init__(self, location: str | Path, backend: StoreBackend | None = None):
        self.backend = backend if backend is not None else backend_for(location)
        self.location = self.backend.location
        self.objects = self.backend.objects
        self._catalog: Catalog | None = None
        self._writable = False
        self._kept: dict[str, dict] = {}  # identities read by select(), handed to the next reader

    def exists(self) -> bool:
        return self.backend.exists()

    def check_writable(self) -> None:
        """StoreError when a write could not open the store (see StoreBackend.check_writable)."""
        self.backend.check_writable()

    def catalog(self, write: bool = False, lost_ok: bool = False) -> Catalog:
        """The catalog; for reading, an empty one when the store does not exist yet.

        A store whose objects exist but whose catalog is gone is refused for reading
        (``lost_ok``: for a checker that reports it itself)."""
        if self._catalog is not None and (self._writable or not write):
            return self._catalog
        if self._catalog is not None:
            self._catalog.close()
            self._catalog = None
        catalog = self.backend.open_catalog(write)
        if not write and not lost_ok:
            lost = self.backend.lost_catalog(catalog)
            if lost is not None:
                catalog.close()
                raise StoreError(lost)
        self._catalog = catalog
        self._writable = write
        return self._catalog

    def reading(self, lost_ok: bool = False) -> _Reading:
        """Several reads that see one consistent snapshot (``lost_ok``: as for ``catalog``)."""
        return _Reading(self.catalog(lost_ok=lost_ok))

    def write(self) -> AbstractContextManager[WriteTransaction]:
        """One write, all or nothing: objects made durable, then the catalog committed."""
        from contextlib import contextmanager  # a write's, not a read's: get and describe import no contextlib

        return contextmanager(self._write)()

    def _write(self) -> Iterator[WriteTransaction]:
        from kidx.store import interrupts  # signal and threading: a write's cost, not a read's
        from kidx.store.faults import crash_point

        catalog = self.catalog(write=True)
        catalog.begin_write()
        transaction = WriteTransaction(catalog, self.objects)
        try:
            yield transaction
            started = time.perf_counter()
            if transaction.objects_added:
                self.objects.flush()
            flushed = time.perf_counter()
            crash_point("catalog")
            interrupts.hold()  # from here on, the commit's own outcome is the one reported
            try:
                catalog.commit()
            except BaseException:
                interrupts.after_failed_commit()
                raise
            transaction.timings["flush"] = flushed - started
            transaction.timings["commit"] = time.perf_counter() - flushed
        except BaseException:
            self.objects.discard()  # objects held for this write, not yet durable
            catalog.rollback()
            raise
        crash_point("commit")
        interrupts.after_commit()

    def close(self) -> None:
        if self._catalog is not None:
            self._catalog.close()
            self._catalog = None

    def select(self, query: CatalogQuery, catalog: Catalog | None = None) -> list[Entry]:
        """``catalog.list(query)``, with conditions on the objects' own spec checked here
        when the backend does not answer them (reading each candidate's object)."""
        catalog = catalog if catalog is not None else self.catalog()
        own_spec = [c for c in query.fields if c.path[:1] == ("spec",)]
        if not own_spec or catalog.answers_spec_fields:
            return catalog.list(query)
        narrowed = query._replace(fields=tuple(c for c in query.fields if c.path[:1] != ("spec",)), limit=None)
        found = []
        for entry in catalog.list(narrowed):
            identity = self.identity(entry.digest)
            if all(condition_holds(c, field_text(identity, c.path)) for c in own_spec):
                self._kept[entry.digest] = identity  # the caller reads it next: no second read
                found.append(entry)
                if query.limit is not None and len(found) >= query.limit:
                    break
        return found

    def identity(self, digest: str) -> dict:
        """The stored ``{apiVersion, kind, spec}`` of a digest, checked against its name."""
        kept = self._kept.pop(digest, None)
        if kept is not None:
            return kept
        try:
            data = self.objects.read(digest)
        except FileNotFoundError:
            raise StoreError(f"object {digest} is missing: {self.objects.where(digest)} (run 'kidx fsck')") from None
        return self._checked(digest, data)

    def _checked(self, digest: str, data: bytes) -> dict:
        """Bytes that hash to their name, parsed; anything else is damage, named as such."""
        from kidx.identity.canonical import digest_bytes  # hashlib's OpenSSL: only where a digest is checked

        if digest_bytes(data) != digest:
            raise StoreError(
                f"object {digest} is damaged: {self.objects.where(digest)} does not hash to its name (run 'kidx fsck')"
            )
        return json.loads(data)

    def identities(self, digests: Iterable[str]) -> dict[str, dict]:
        """Many objects at once, by digest (those missing from the store are left out)."""
        return {
            digest: self._checked(digest, data)
            for digest, data in self.objects.read_many(dict.fromkeys(digests)).items()
        }

    def referenced_manifests(
        self, digests: Iterable[str], kind: str, catalog: Catalog | None = None
    ) -> dict[str, dict]:
        """The manifests of many referenced objects at once, by digest, for columns and
        sort keys that follow a reference (``workload.spec.parameters.seq``): the object
        with the metadata of its first current name of ``kind`` (by name), or with only
        ``metadata.digest`` when no name points at it. Digests not in the store are left out."""
        wanted = list(dict.fromkeys(digests))
        names = (catalog if catalog is not None else self.catalog()).by_digests(wanted, kind)
        found = {}
        for digest, identity in self.identities(wanted).items():
            entries = names.get(digest)
            if entries:
                found[digest] = manifest_of(entries[0], identity)
            else:
                found[digest] = {"apiVersion": identity.get("apiVersion"), "kind": identity.get("kind"),
                                 "metadata": {"digest": digest}, "spec": identity.get("spec")}
        return found

    def manifest(self, entry: Entry) -> dict:
        return manifest_of(entry, self.identity(entry.digest))

    def manifests(self, entries: Sequence[Entry]) -> list[dict]:
        """``manifest`` of each entry, their objects read at once (a missing one is named
        as ``manifest`` names it)."""
        identities = self.identities(entry.digest for entry in entries if entry.digest not in self._kept)
        return [manifest_of(entry, identities[entry.digest]) if entry.digest in identities else self.manifest(entry)
                for entry in entries]

    def table_manifests(self, entries: Sequence[Entry], info) -> list[dict]:
        """Enough of each manifest for a table row: metadata and the printer columns' fields,
        from the catalog row alone when it caches them (no object file read)."""
        manifests = []
        api_version, kind = info.api_version, info.kind
        for entry, stub in zip(entries, spec_stubs(info, [entry.columns for entry in entries]), strict=True):
            if stub is None:
                manifests.append(self.manifest(entry))
            else:
                manifests.append(manifest_of(entry, {"apiVersion": api_version, "kind": kind, "spec": stub}))
        return manifests


def manifest_of(entry: Entry, identity: dict) -> dict:
    """The manifest as users see it: identity plus metadata, store-set fields included."""
    metadata: dict = {"name": entry.name}
    if entry.title is not None:
        metadata["title"] = entry.title
    if entry.labels:
        metadata["labels"] = dict(entry.labels)
    if entry.annotations:
        metadata["annotations"] = dict(entry.annotations)
    metadata["digest"] = entry.digest
    metadata["creationTimestamp"] = entry.created
    metadata["generation"] = entry.generation
    return {
        "apiVersion": identity["apiVersion"],
        "kind": identity["kind"],
        "metadata": metadata,
        "spec": identity["spec"],
    }
