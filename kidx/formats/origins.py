"""Files converted apart and joined, and runs named by where they came from: what kidx
record does with the files its processes wrote (``kidx.operations.ingest.importing``'s
``origins``), so that no run of one process is ever taken for another's."""

from __future__ import annotations

import re

from kidx.formats.framework import MAX_NAME, SHARED_KINDS, Conversion, hashed_name
from kidx.identity import digest_of
from kidx.manifests.document import Document


def joined(conversions: list[Conversion]) -> Conversion:
    """Conversions of separate files as one batch: each shared object once per digest (the
    first conversion's document kept), and two objects of one kind that took one name with
    different specs each named ``-`` + 10 hex digits of its digest, as ``SharedObjects``
    names them within one batch; runs refer by digest, so nothing else changes. What was
    read, skipped and noted is added up (a note said by several files, once)."""
    shared: dict[str, Document] = {}
    runs: list[Document] = []
    for conversion in conversions:
        for document in conversion.documents:
            if document.body["kind"] in SHARED_KINDS:
                shared.setdefault(digest_of(document.body), document)
            else:
                runs.append(document)
    named: dict[tuple[str, str], set[str]] = {}
    for digest, document in shared.items():
        named.setdefault((document.body["kind"], document.body["metadata"]["name"]), set()).add(digest)
    documents = []
    for digest, document in shared.items():
        body = document.body
        name = body["metadata"]["name"]
        if len(named[body["kind"], name]) > 1:
            body = {**body, "metadata": {**body["metadata"], "name": hashed_name(name, digest, MAX_NAME)}}
            document = document._replace(body=body)
        documents.append(document)
    first = conversions[0] if conversions else Conversion([], 0)
    return Conversion(
        [*documents, *runs], sum(c.rows_read for c in conversions),
        [skipped for c in conversions for skipped in c.skipped], first.noun,
        list(dict.fromkeys(note for c in conversions for note in c.notes)))


_HASH_SUFFIX = re.compile(r"-[0-9a-f]{10}$")
MAX_RUN_NAME = 100  # what importers name runs within, so a name stays readable in a listing


def from_origin(conversion: Conversion, origin: str) -> Conversion:
    """The conversion with each run's identity made where it came from: ``origin`` (a
    recording and its process, ``20261207T083512Z-a1b2c3/base-03``) before the
    source's externalId (the harness's key for the record), and a name of its readable
    prefix and 10 hex digits of that identity. Runs of two processes then never share a
    name, whatever their figures, and a later recording never takes an earlier one's."""
    documents = []
    for document in conversion.documents:
        body = document.body
        if body["kind"] == "BenchmarkRun":
            native = body["spec"].get("sourceNative") or {}
            key = str(native.get("externalId") or body["metadata"]["name"])
            identity = f"{origin}/{key}"
            base = _HASH_SUFFIX.sub("", body["metadata"]["name"])
            spec = {**body["spec"], "sourceNative": {**native, "externalId": identity}} if native else body["spec"]
            metadata = {**body["metadata"], "name": hashed_name(base, identity, MAX_RUN_NAME)}
            document = document._replace(body={**body, "metadata": metadata, "spec": spec})
        documents.append(document)
    return Conversion(documents, conversion.rows_read, conversion.skipped, conversion.noun, conversion.notes)
