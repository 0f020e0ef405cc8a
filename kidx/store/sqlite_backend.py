"""The SQLite store: a folder holding ``catalog.sqlite`` (``kidx.store.sqlite_catalog``)
beside the objects (loose files and ``objects/packed.sqlite``: ``kidx.store.packed_objects``),
and what is wrong with a folder that cannot be one."""

from __future__ import annotations

import os
import sqlite3

from kidx.errors import StoreError, StoreReadOnly
from kidx.records import TYPE_CHECKING
from kidx.store.catalog import Catalog, StoreBackend
from kidx.store.objects import FileObjectBackend, ObjectDB, path_text
from kidx.store.packed_objects import PACK_FILE, PackedObjectBackend
from kidx.store.sqlite_catalog import BUSY_TIMEOUT_S, CATALOG_FILE, SQLiteCatalog, store_error

if TYPE_CHECKING:
    from pathlib import Path


def _has_files(folder: str) -> bool:
    """Whether there are object files (loose under ``folder``, or a pack beside it)."""
    if os.path.isfile(os.path.join(os.path.dirname(folder), PACK_FILE)):
        return True
    try:
        with os.scandir(folder) as fan_out:
            for entry in fan_out:
                if entry.is_dir() and any(os.scandir(entry.path)):
                    return True
    except OSError:
        pass
    return False


def _read_only_reason(root: str) -> str | None:
    """Why nothing in the store folder can be written, or None when it can."""
    paths = [root, os.path.join(root, CATALOG_FILE), os.path.join(root, "objects", "sha256"),
             os.path.join(root, "objects", PACK_FILE)]
    if all(not os.path.exists(path) or os.access(path, os.W_OK) for path in paths):
        return None
    try:
        if os.statvfs(root).f_flag & os.ST_RDONLY:
            return "a read-only file system"
    except OSError:
        pass
    return "no permission to write"


class SQLiteBackend(StoreBackend):
    """A store folder: ``catalog.sqlite`` beside ``objects/sha256/`` and ``objects/packed.sqlite``."""

    def __init__(self, root: Path | str):
        # strings and os calls: opening a store for reading should not import pathlib
        self.location = path_text(root)
        self._objects_folder = path_text(os.path.join(self.location, "objects", "sha256"))
        self._catalog_file = path_text(os.path.join(self.location, CATALOG_FILE))
        loose = FileObjectBackend(self._objects_folder)
        self.objects = ObjectDB(PackedObjectBackend(loose, os.path.join(self.location, "objects", PACK_FILE),
                                                    BUSY_TIMEOUT_S))

    @property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self.location)

    @property
    def catalog_path(self) -> Path:
        from pathlib import Path

        return Path(self._catalog_file)

    def exists(self) -> bool:
        return os.path.exists(self._catalog_file)

    def lost_catalog(self, catalog: Catalog) -> str | None:
        if getattr(catalog, "has_schema", True) or not _has_files(self._objects_folder):
            return None
        state = "is empty" if os.path.exists(self._catalog_file) else "is missing"
        return (
            f"the store at {self.location} has object files but its catalog ({CATALOG_FILE}) {state}, so its "
            "names, labels and history cannot be read (nothing was changed); run `kidx fsck --repair` to "
            "rebuild what can be rebuilt: names and history come back only from a bundle made by `kidx export`"
        )

    def _check_folder(self) -> None:
        """A store path that is (or lies under) a file is a mistake, not an empty store."""
        path = self.location
        while True:  # the folder, then each parent, as Path.parents gives them
            if os.path.exists(path):
                if not os.path.isdir(path):
                    raise StoreError(f"cannot open the store at {self.location}: {path} is a file, not a folder")
                return
            parent = os.path.dirname(path)
            if not parent or parent == path:
                return
            path = parent

    def _check_catalog_files(self) -> None:
        """The catalog and its WAL files are regular files where they exist: SQLite's
        open of a FIFO in their place would wait for a writer for ever, and a device or a
        folder is no catalog. Asked by stat, which never waits."""
        import stat

        for path in (self._catalog_file, self._catalog_file + "-wal", self._catalog_file + "-shm"):
            try:
                mode = os.stat(path).st_mode
            except OSError:
                continue  # absent (or a dangling link): SQLite says what it finds
            if not stat.S_ISREG(mode):
                from kidx.manifests.reader import file_type

                raise StoreError(f"cannot open the store at {self.location}: {path} is {file_type(mode)}, not a "
                                 "catalog file (nothing was read or changed)")

    def check_writable(self) -> None:
        self._check_folder()
        self._check_catalog_files()
        if os.path.exists(self.location):
            reason = _read_only_reason(self.location)
            if reason is not None:
                raise StoreReadOnly(f"the store at {self.location} is read-only ({reason}): nothing can be written "
                                    "to it")
            if os.path.lexists(self._catalog_file):
                self.open_catalog(False).close()  # a catalog that is no database, or no file, is said now
            return
        parent = os.path.dirname(os.path.abspath(self.location))
        while not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if not os.access(parent, os.W_OK | os.X_OK):
            raise StoreReadOnly(f"cannot create the store at {self.location}: no permission to write in {parent}")

    def open_catalog(self, write: bool) -> SQLiteCatalog:
        self._check_folder()
        self._check_catalog_files()
        try:
            if write:
                reason = _read_only_reason(self.location) if os.path.exists(self.location) else None
                if reason is not None:
                    raise StoreReadOnly(
                        f"the store at {self.location} is read-only ({reason}): nothing was changed; "
                        "reading it still works"
                    )
                os.makedirs(self.location, exist_ok=True)
                return SQLiteCatalog(self._catalog_file, self.objects, write=True)
            found = os.path.exists(self._catalog_file)
            return SQLiteCatalog(self._catalog_file if found else None, self.objects, write=False)
        except OSError as exc:
            raise StoreError(f"cannot open the store at {self.location}: {exc.strerror or exc}") from None
        except sqlite3.Error as exc:
            error = store_error(exc, self._catalog_file)
            if type(error) is not StoreError or "cannot be used" not in str(error):
                raise error from None  # busy, damaged, read-only, full: their own messages
            raise StoreError(f"cannot open the store at {self.location}: {exc}") from None
