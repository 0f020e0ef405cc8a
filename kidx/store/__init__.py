"""The store: objects + catalog behind one boundary (docs/design.md §3; kidx.store.catalog says what a backend is)."""

from kidx.store.store import Store, default_store_location, default_store_path

__all__ = ["Store", "default_store_location", "default_store_path"]
