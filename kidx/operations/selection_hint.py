"""Why a label selector selects no run, in compare's words: for ``get``'s "No resources
found" and the Python API's ``EmptySelection`` warning.

compare's ``empty_selection`` names a key or value no run has, with what the store has
instead."""

from __future__ import annotations

from kidx.operations.analysed_runs import RUN_KIND
from kidx.operations.compare import empty_selection
from kidx.store.catalog import CatalogQuery


def no_runs_hint(store, registry, selector) -> str | None:
    """Why ``selector`` selects no run; None where it alone selects some (something else,
    a field selector or --references, left none)."""
    kind = registry.resolve(RUN_KIND).kind
    requirements = tuple(getattr(selector, "requirements", ()))
    if not requirements:
        return None
    with store.reading() as catalog:
        if catalog.list(CatalogQuery(kind=kind, labels=requirements, limit=1, annotations=False)):
            return None
        return empty_selection(selector, catalog)
