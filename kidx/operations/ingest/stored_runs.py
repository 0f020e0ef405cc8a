"""Imported runs merged with the runs of the same names already in the store.

A format may hold one measurement in two files (pytest-benchmark's ``--benchmark-json``
and autosave files of one session): its importer's ``merge_stored(incoming, stored)``
says which run to store, so that the second file does not replace a fuller record with
a thinner one. Runs the store does not hold pass unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

from kidx.formats.framework import Conversion
from kidx.store.store import Store


def merged_with_stored(conversion: Conversion, merge: Callable[[dict, dict], dict], store: Store) -> Conversion:
    if not store.exists():
        return conversion
    names = [d.body["metadata"]["name"] for d in conversion.documents if d.body["kind"] == "BenchmarkRun"]
    with store.reading() as catalog:
        found = catalog.get_many("BenchmarkRun", names)
        stored = {name: store.manifest(entry) for name, entry in found.items()}
    if not stored:
        return conversion
    documents = []
    for document in conversion.documents:
        body = document.body
        if body["kind"] == "BenchmarkRun" and body["metadata"]["name"] in stored:
            document = document._replace(body=merge(body, stored[body["metadata"]["name"]]))
        documents.append(document)
    return Conversion(documents, conversion.rows_read, conversion.skipped, conversion.noun, conversion.notes)


def named_apart_from_stored(conversion: Conversion, store: Store) -> Conversion:
    """The conversion with each object an importer named (a workload, protocol,
    implementation or environment) renamed when the store holds its name with another
    spec: ``-`` and 10 hex digits of its digest added, as for two specs of one name in one
    batch (kidx.formats.framework.SharedObjects). Names that slug alike (``a/b``, ``a-b``)
    then never take over each other's object across imports; runs refer by digest, so
    nothing else changes."""
    if not store.exists():
        return conversion
    from kidx.formats.framework import MAX_NAME, SHARED_KINDS, hashed_name
    from kidx.identity import digest_of

    wanted: dict[str, list[str]] = {}
    for document in conversion.documents:
        if document.body["kind"] in SHARED_KINDS:
            wanted.setdefault(document.body["kind"], []).append(document.body["metadata"]["name"])
    if not wanted:
        return conversion
    with store.reading() as catalog:
        held = {kind: {name: entry.digest for name, entry in catalog.get_many(kind, names).items()}
                for kind, names in wanted.items()}
    documents = []
    for document in conversion.documents:
        body = document.body
        stored = held.get(body["kind"], {}).get(body["metadata"]["name"])
        if stored is not None:
            digest = digest_of(body)
            if digest != stored:
                name = hashed_name(body["metadata"]["name"], digest, MAX_NAME)
                document = document._replace(body={**body, "metadata": {**body["metadata"], "name": name}})
        documents.append(document)
    return Conversion(documents, conversion.rows_read, conversion.skipped, conversion.noun, conversion.notes)
