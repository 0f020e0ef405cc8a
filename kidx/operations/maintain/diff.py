"""Diff: what is stored against what apply would store, object by object.

File labels follow kubectl's ``[group.]version.Kind.namespace.name`` naming (kidx has no
namespaces, so the namespace part is empty, as for kubectl's cluster-scoped objects);
``output.diff`` prints them under ``LIVE/`` and ``MERGED/`` instead of random temporary
folders, so the output is the same on every run.
"""

from __future__ import annotations

from typing import NamedTuple

from kidx.kinds.registry import KindRegistry
from kidx.manifests.document import Document
from kidx.operations.maintain.apply import plan_documents
from kidx.store.store import Store


class ObjectChange(NamedTuple):
    file_name: str  # group.version.Kind..name
    live: dict | None  # the stored manifest; None when apply would create the object
    merged: dict  # the manifest apply would store


def changed_objects(
    store: Store, documents: list[Document], registry: KindRegistry, texts: dict[str, str] | None = None
) -> list[ObjectChange]:
    """Every object apply would create or change, in the order of the documents."""
    plan = plan_documents(store, documents, registry, texts)
    changes = []
    for outcome, merged, live in plan.stored_manifests():
        if outcome.action == "unchanged":
            continue
        file_name = f"{outcome.info.group}.{outcome.info.version}.{outcome.info.kind}..{outcome.name}"
        changes.append(ObjectChange(file_name, store.manifest(live) if live else None, merged))
    return changes


__all__ = ["ObjectChange", "changed_objects"]
