"""Diff: what is stored against what apply would store, as unified diffs of YAML.

File labels follow kubectl's ``[group.]version.Kind.namespace.name`` naming (kidx has no
namespaces, so the namespace part is empty, as for kubectl's cluster-scoped objects),
under ``LIVE/`` and ``MERGED/`` instead of random temporary folders, so the output is
the same on every run.
"""

from __future__ import annotations

import difflib

from kidx.kinds.registry import KindRegistry
from kidx.manifests.document import Document
from kidx.operations.apply import plan_documents
from kidx.store.store import Store


def diff_documents(
    store: Store, documents: list[Document], registry: KindRegistry, texts: dict[str, str] | None = None
) -> str:
    from kidx.output.serialize import to_yaml

    plan = plan_documents(store, documents, registry, texts)
    chunks: list[str] = []
    for outcome, merged, live in plan.stored_manifests():
        if outcome.action == "unchanged":
            continue
        file_name = f"{outcome.info.group}.{outcome.info.version}.{outcome.info.kind}..{outcome.name}"
        before = to_yaml(store.manifest(live)).splitlines(keepends=True) if live else []
        after = to_yaml(merged).splitlines(keepends=True)
        lines = list(difflib.unified_diff(before, after, f"LIVE/{file_name}", f"MERGED/{file_name}"))
        if lines:
            chunks.append(f"diff -u -N LIVE/{file_name} MERGED/{file_name}\n" + "".join(lines))
    return "".join(chunks)
