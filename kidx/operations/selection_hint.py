"""Why a label selector selects no run, in compare's words: for ``get``'s "No resources
found" and the Python API's ``EmptySelection`` warning.

compare's ``empty_selection`` names a key or value no run has, with what the store has
instead; where every part matches runs but not together, this says what each part matches."""

from __future__ import annotations

from kidx.operations.analysed_runs import RUN_KIND
from kidx.operations.compare import SUGGESTIONS, _listed, empty_selection, nearest
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
        text = empty_selection(selector, catalog)
        if not text.endswith("no run matches every condition") or len(requirements) < 2:
            return text
        alone = [r for r in requirements if not catalog.list(CatalogQuery(kind=kind, labels=(r,), limit=1,
                                                                              annotations=False))]
        if alone:
            shown = [str(r) for r in alone[:SUGGESTIONS]]
            return f"{text}: no run matches {_listed(shown, len(alone))}"
        parts = [_what_matches(catalog, kind, requirement, requirements) for requirement in requirements]
    return f"{text}: " + "; ".join(parts)


def _what_matches(catalog, kind: str, requirement, requirements) -> str:
    """``kernel=rms_norm matches 12 runs, with gpu=nvidia-a100-sxm4-80gb``: the runs the one
    condition selects, and their values of the other conditions' keys."""
    entries = catalog.list(CatalogQuery(kind=kind, labels=(requirement,), annotations=False))
    found = f"{requirement} matches {len(entries)} run{'' if len(entries) == 1 else 's'}"
    with_values = []
    for other in requirements:
        if other is requirement or other.operator not in ("=", "in") or other.key == requirement.key:
            continue
        present = {entry.labels[other.key] for entry in entries if other.key in entry.labels}
        with_values.append(f"{other.key}={_listed(nearest(other.values[0], present), len(present))}" if present
                           else f"no {other.key} label")
    return found + (", with " + " and ".join(with_values) if with_values else "")
