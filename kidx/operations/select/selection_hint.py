"""Why a label selector selects no run, in one wording for ``get``'s "No resources found",
``summary``, compare's and series' problem line and the Python API's ``EmptySelection``
warning.

It names a key or value no run has, with what the store has instead; where every part
matches runs but not together, it says what each part matches."""

from __future__ import annotations

import difflib

from kidx.operations.select.analysed_runs import RUN_KIND
from kidx.query.label_selector import KIDX_OPERATORS, resolved
from kidx.query.versions import version_key
from kidx.store.catalog import CatalogQuery

SUGGESTIONS = 8  # values or keys listed when a name matches nothing
NO_COMBINATION = "no run matches every condition"


def nearest(wanted: str, present) -> list[str]:
    """``present``, the closest to ``wanted`` first (then in order)."""
    present = sorted(set(present), key=lambda v: (version_key(v), v))
    if not present:
        return []
    close = difflib.get_close_matches(wanted, present, n=len(present), cutoff=0.5)
    return (close + [v for v in present if v not in close])[:SUGGESTIONS]


def listed(values: list[str], total: int) -> str:
    more = f", … ({total} in all)" if total > len(values) else ""
    return ", ".join(values) + more


def empty_selection(selector, catalog) -> str:
    """What in the label selector matched nothing, with the keys or values the store has."""
    what = []
    for requirement in getattr(selector, "requirements", ()):
        if requirement.operator not in ("=", "in", *KIDX_OPERATORS):
            continue
        present = set(catalog.label_values(requirement.key))
        if present and requirement.operator in KIDX_OPERATORS:  # a prefix or version range
            if not resolved((requirement,), catalog.label_values)[0].values:
                what.append(f"no run has {requirement} ({requirement.key} values present: "
                            f"{listed(nearest(requirement.values[0], present), len(present))})")
            continue
        if not present:
            keys = set(catalog.label_keys())
            what.append(f"no run has the label {requirement.key}"
                        + (f" (labels present: {listed(nearest(requirement.key, keys), len(keys))})" if keys else ""))
        elif not present & set(requirement.values):
            wanted = requirement.values[0]
            what.append(f"no run has {requirement.key}={','.join(requirement.values)} ({requirement.key} values "
                        f"present: {listed(nearest(wanted, present), len(present))})")
    detail = "; ".join(what) if what else NO_COMBINATION
    return f"the selection matched no runs: {detail}"


def nothing_selected(catalog, kind: str, selector) -> str:
    """Why no run was selected: ``empty_selection``, and where each part of the label
    selector matches runs but not all together, what each part matches."""
    text = empty_selection(selector, catalog)
    requirements = tuple(getattr(selector, "requirements", ()))
    if not text.endswith(NO_COMBINATION) or len(requirements) < 2:
        return text
    if catalog.list(CatalogQuery(kind=kind, labels=resolved(requirements, catalog.label_values), limit=1,
                                 annotations=False)):
        return text  # the label selector selects runs: names, references or a field selector left none
    return _parts(catalog, kind, requirements, text)


def no_runs_hint(store, registry, selector) -> str | None:
    """Why ``selector`` selects no run; None where it alone selects some (something else,
    a field selector or --references, left none)."""
    kind = registry.resolve(RUN_KIND).kind
    requirements = tuple(getattr(selector, "requirements", ()))
    if not requirements:
        return None
    with store.reading() as catalog:
        if catalog.list(CatalogQuery(kind=kind, labels=resolved(requirements, catalog.label_values), limit=1,
                                     annotations=False)):
            return None
        text = empty_selection(selector, catalog)
        if not text.endswith(NO_COMBINATION) or len(requirements) < 2:
            return text
        return _parts(catalog, kind, requirements, text)


def _parts(catalog, kind: str, requirements, text: str) -> str:
    alone = [r for r in requirements if not catalog.list(CatalogQuery(kind=kind, labels=resolved((r,),
                                                                          catalog.label_values), limit=1,
                                                                          annotations=False))]
    if alone:
        shown = [str(r) for r in alone[:SUGGESTIONS]]
        return f"{text}: no run matches {listed(shown, len(alone))}"
    parts = [_what_matches(catalog, kind, requirement, requirements) for requirement in requirements]
    return f"{text}: " + "; ".join(parts)


def _what_matches(catalog, kind: str, requirement, requirements) -> str:
    """``kernel=rms_norm matches 12 runs, with gpu=nvidia-a100-sxm4-80gb``: the runs the one
    condition selects, and their values of the other conditions' keys."""
    entries = catalog.list(CatalogQuery(kind=kind, labels=resolved((requirement,), catalog.label_values),
                                        annotations=False))
    found = f"{requirement} matches {len(entries)} run{'' if len(entries) == 1 else 's'}"
    with_values = []
    for other in requirements:
        if other is requirement or other.operator not in ("=", "in") or other.key == requirement.key:
            continue
        present = {entry.labels[other.key] for entry in entries if other.key in entry.labels}
        with_values.append(f"{other.key}={listed(nearest(other.values[0], present), len(present))}" if present
                           else f"no {other.key} label")
    return found + (", with " + " and ".join(with_values) if with_values else "")
