"""The store: content-addressed object files plus the SQLite catalog (docs/design.md §3)."""

from kidx.store.store import Store, default_store_path

__all__ = ["Store", "default_store_path"]
