"""Where a store is, and the store a command or ``kidx.open_store`` opens there: the
location rules of docs/store.md ("Location"), and the error for a store named that does
not exist. Apart from ``kidx.api.store`` so that a cold ``get`` or ``describe``
(``kidx.cli.common.open_store``) imports only these, not the Python API's ``Store``."""

from __future__ import annotations

import os

from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from kidx.store import store as backend


def store_location(location: str | os.PathLike[str] | None = None) -> str:
    """Where a store is: ``location`` (a folder or a ``postgresql://`` URL), else
    ``$KIDX_STORE``, else the user data folder, as for ``--store``."""
    from kidx.store.store import default_store_location

    return os.fspath(location) if location is not None else default_store_location()


def backend_store(location: str | os.PathLike[str] | None = None) -> backend.Store:
    """The store the command line opens for ``--store location`` (not created until written)."""
    from kidx.store.store import Store as BackendStore

    return BackendStore(store_location(location))


def command_store(location: str | os.PathLike[str] | None, must_exist: bool,
                  source: str = "--store") -> backend.Store:
    """The store a command opens for ``--store location``; ``must_exist`` (a reading
    command): see ``require_store``."""
    store = backend_store(location)
    if must_exist:
        require_store(store, location, source)
    return store


def named_location(location: str | os.PathLike[str] | None, source: str) -> tuple[str, str] | None:
    """Where a store was named explicitly and by what: ``location`` by ``source``, else
    ``$KIDX_STORE``'s value by ``$KIDX_STORE``; None for the default store."""
    from kidx.store.store import STORE_ENV, configured_store_location

    if location is not None:
        return os.fspath(location), source
    configured = configured_store_location()
    return (configured, f"${STORE_ENV}") if configured else None


def require_store(store: backend.Store, location: str | os.PathLike[str] | None, source: str) -> None:
    """A store named explicitly (``location``, said as ``source``, or $KIDX_STORE) that
    does not exist is an error for reading, not an empty store; the default store reads
    as empty until its first write."""
    named, said = named_location(location, source) or ("", "")
    if named and not store.exists() and not _holds_files(named):
        from kidx.errors import KidxError
        from kidx.store.postgres_url import masked

        raise KidxError(f"no store at {masked(named)} ({said}): nothing has been written there (check "
                        "the path, or write to it first, e.g. kidx apply -f)")


def _holds_files(location: str) -> bool:
    """Something on disk at a folder store's location (a store whose catalog is lost, a
    file in its way): the store itself says what is wrong with it."""
    from pathlib import Path

    if "://" in location:
        return False
    folder = Path(location)
    if folder.is_dir():
        return any(folder.iterdir())
    existing = next((path for path in (folder, *folder.parents) if path.exists()), None)
    return existing is not None and not existing.is_dir()
