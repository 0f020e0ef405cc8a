"""The store facade: where the store lives, and objects + catalog together.

Reading never creates anything: a store that does not exist yet reads as empty. The
first write creates the folder, the object database and the catalog.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kidx.errors import StoreError
from kidx.identity.canonical import digest_bytes
from kidx.store.catalog import Catalog, Entry
from kidx.store.column_cache import fingerprint, spec_stub
from kidx.store.objects import ObjectStore

STORE_ENV = "KIDX_STORE"
CATALOG_FILE = "catalog.sqlite"


def default_store_path() -> Path:
    configured = os.environ.get(STORE_ENV)
    if configured:
        return Path(configured)
    from platformdirs import user_data_dir

    return Path(user_data_dir("kidx"))


def utc_now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Store:
    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.objects = ObjectStore(self.root)
        self._catalog: Catalog | None = None
        self._writable = False

    @property
    def catalog_path(self) -> Path:
        return self.root / CATALOG_FILE

    def catalog(self, write: bool = False) -> Catalog:
        """The catalog; for reading, an empty one when the store does not exist yet."""
        if self._catalog is not None and (self._writable or not write):
            return self._catalog
        if self._catalog is not None:
            self._catalog.close()
        try:
            if write:
                self.root.mkdir(parents=True, exist_ok=True)
                self._catalog = Catalog(self.catalog_path)
            else:
                self._catalog = Catalog(self.catalog_path if self.catalog_path.exists() else None)
        except OSError as exc:
            raise StoreError(f"cannot open the store at {self.root}: {exc.strerror or exc}") from None
        except Exception as exc:  # sqlite3.Error and friends, without importing sqlite3 here
            raise StoreError(f"cannot open the store at {self.root}: {exc}") from None
        self._writable = write
        return self._catalog

    def close(self) -> None:
        if self._catalog is not None:
            self._catalog.close()
            self._catalog = None

    def identity(self, digest: str) -> dict:
        """The stored ``{apiVersion, kind, spec}`` of a digest, checked against its name."""
        try:
            data = self.objects.read(digest)
        except FileNotFoundError:
            raise StoreError(
                f"object {digest} is missing: no file {self.objects.path_of(digest)} (run 'kidx fsck')"
            ) from None
        if digest_bytes(data) != digest:
            raise StoreError(
                f"object {digest} is damaged: {self.objects.path_of(digest)} does not hash to its name "
                "(run 'kidx fsck')"
            )
        return json.loads(data)

    def manifest(self, entry: Entry) -> dict:
        return manifest_of(entry, self.identity(entry.digest))

    def table_manifest(self, entry: Entry, info) -> dict:
        """Enough of the manifest for a table row: metadata and the printer columns' fields,
        from the catalog row alone when it caches them (no object file read)."""
        stub = spec_stub(info, entry.columns, fingerprint(info))
        if stub is None:
            return self.manifest(entry)
        return manifest_of(entry, {"apiVersion": info.api_version, "kind": info.kind, "spec": stub})


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
