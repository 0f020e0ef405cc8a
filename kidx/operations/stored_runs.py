"""Imported runs merged with the runs of the same names already in the store.

A format may hold one measurement in two files (pytest-benchmark's ``--benchmark-json``
and autosave files of one session): its importer's ``merge_stored(incoming, stored)``
says which run to store, so that the second file does not replace a fuller record with
a thinner one. Runs the store does not hold pass unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

from kidx.importers.framework import Conversion
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
