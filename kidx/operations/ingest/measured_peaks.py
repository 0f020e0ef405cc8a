"""A captured environment stored again keeps the peaks measured on it before.

``kidx env capture --measure-peaks`` records what the machine reached in annotations
(``kernelindex.dev/measured-*``, docs/speed-of-light.md). A later capture without it, of
the same environment (the same spec, so the same digest), would replace them with
nothing when stored: ``env capture --apply``, and ``import --environment FILE`` and
``kidx record`` with a captured file, carry the stored ones over instead, and say so. A
capture that measured again brings its own. An environment whose spec changed under the
same name (``--name``) is another one: its earlier peaks are not carried, and stay in
the name's history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kidx.operations.events import PeaksKept, PeaksNotCarried

if TYPE_CHECKING:
    from kidx.manifests.document import Document
    from kidx.store.store import Store

MEASURED = "kernelindex.dev/measured-"  # kidx.speed_of_light.peaks' annotations all start so
MEASURED_AT = MEASURED + "peaks-at"


class KeptPeaks(NamedTuple):
    body: dict  # the manifest to store: with the stored measured peaks when kept
    notice: PeaksKept | PeaksNotCarried | None  # what happened to the stored peaks, when there were any


def keep_measured_peaks(body: dict, store: Store) -> KeptPeaks:
    """``body`` (an ExecutionEnvironment to store in ``store``) with the measured-peak
    annotations of the stored environment of its name, when it has none of its own and
    the stored one has the same spec."""
    from kidx.identity import digest_of

    metadata = body.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    name = metadata.get("name")
    if not name or any(key.startswith(MEASURED) for key in annotations) or not store.exists():
        return KeptPeaks(body, None)
    entry = store.catalog().get("ExecutionEnvironment", name)
    measured = {key: value for key, value in (entry.annotations if entry else {}).items() if key.startswith(MEASURED)}
    if entry is None or not measured:
        return KeptPeaks(body, None)
    at = measured.get(MEASURED_AT, "an earlier capture")
    if entry.digest != digest_of(body):
        return KeptPeaks(body, PeaksNotCarried(name, at))
    kept = {**body, "metadata": {**metadata, "annotations": {**annotations, **measured}}}
    return KeptPeaks(kept, PeaksKept(name, at))


def keep_measured_peaks_in(documents: list[Document], name: str,
                           store: Store) -> tuple[list[Document], list[PeaksKept | PeaksNotCarried]]:
    """``documents`` with the ExecutionEnvironment named ``name`` among them (when it is:
    ``import --environment FILE``) keeping the peaks measured on it before; the notices."""
    kept_documents: list[Document] = []
    notices: list[PeaksKept | PeaksNotCarried] = []
    for document in documents:
        metadata = document.body.get("metadata") or {}
        if document.body.get("kind") == "ExecutionEnvironment" and metadata.get("name") == name:
            kept = keep_measured_peaks(document.body, store)
            if kept.notice:
                notices.append(kept.notice)
            document = document._replace(body=kept.body)
        kept_documents.append(document)
    return kept_documents, notices


__all__ = ["KeptPeaks", "keep_measured_peaks", "keep_measured_peaks_in"]
