"""The run pages: runs whose digests share their first hex digits share a page
(``runs/ABC.html``), each run an ``<article>`` whose id is its permanent anchor.

A large store has a hundred thousand runs, and their manifests were most of a site's
bytes. So a run page holds, for each run, only its anchor and its name as HTML; the rest
(title, figures, references, the runs that refer to it, the CLI commands and the
manifest) is one JSON document per page, each run's manifest on a line of its own after
it (its JSON text as it is, not escaped into a string), compressed with zlib and written
into the page in base64 (``data-deflate``). The site's script inflates it with the browser's own
``DecompressionStream`` and draws each section through ``textContent``, so nothing stored
is ever parsed as HTML, and the page needs no fetch: it works from ``file://`` as well as
from any static host. The HTML part is escaped here with ``markupsafe.escape``.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable
from typing import NamedTuple

from markupsafe import Markup, escape

from kidx.operations.select.analysed_runs import AnalysedRun, Referenced

ROLES = ("protocol", "workload", "environment", "implementation")
LEVEL = 4  # below zlib's default (6): a large site's data compresses in much less time for a little more size


class RunLinks(NamedTuple):
    """What a run's section says about the rest of the site."""

    anchor: Callable[[AnalysedRun], str]  # the run's anchor on its page
    path: Callable[[AnalysedRun], str]  # the run's address from the site's root (page#anchor)
    family: dict[str, str]  # run name -> its group family's address, from the site's root
    series: dict[str, str]  # run name -> its series' address, from the site's root
    titles: dict[str, str]  # digest -> the stored title of the object
    environment_path: Callable[[Referenced], str]  # an environment's page, from the site's root
    referrers: dict[str, list[AnalysedRun]]  # digest -> the published runs that refer to it
    figures: dict[str, str]  # run name -> its speed-of-light figures, where known (kidx.publish.runs.run_texts)
    host: dict[str, str]  # run name -> its host-bound evidence, where it has some (the same)
    measure: Callable[[AnalysedRun], str]  # the run's figure as text, "" where it has none


def shard(runs: list[AnalysedRun], links: RunLinks) -> tuple[Markup, str]:
    """A run page's sections (HTML: each run's anchor and name) and its data (base64 of
    the zlib-compressed JSON that the script draws the sections from)."""
    objects: dict[str, list] = {}
    records = []
    sections = []
    for run in runs:
        record = _record(run, links, objects)
        records.append(record)
        sections.append(f'<article class="run" id="{escape(record["anchor"])}">\n'
                        f'<p class="lede"><code>{escape(run.name)}</code></p>\n</article>\n')
    # each manifest on a line of its own after the document, as the JSON text it is: never
    # escaped into a string of the document (compact JSON holds no newline)
    manifests = [record.pop("manifest") for record in records]
    text = "\n".join([_SORTED({"objects": objects, "runs": records}), *manifests])
    data = base64.b64encode(zlib.compress(text.encode("utf-8"), LEVEL)).decode("ascii")
    return Markup("".join(sections)), data


def _record(run: AnalysedRun, links: RunLinks, objects: dict[str, list]) -> dict:
    metadata = run.manifest["metadata"]
    digest = metadata["digest"]
    references = []
    for role in ROLES:
        referenced = run.reference(role)
        if referenced.digest is None:
            continue
        references.append([role, referenced.digest])
        if referenced.digest not in objects:
            href = (links.environment_path(referenced)
                    if role == "environment" and referenced.name is not None else None)
            objects[referenced.digest] = [referenced.name, links.titles.get(referenced.digest), href]
    return {
        "anchor": links.anchor(run), "name": run.name, "title": metadata.get("title") or run.name,
        "digest": digest, "status": run.status, "observed": run.observed,
        "measure": links.measure(run), "sol": links.figures.get(run.name, "") if run.measure else "",
        "host": links.host.get(run.name, "") if run.measure else "",
        "family": links.family.get(run.name), "series": links.series.get(run.name),
        "references": references,
        "referrers": [[links.path(r), r.name] for r in links.referrers.get(digest, []) if r is not run],
        # its JSON text, exactly as stored (the script indents it without parsing a number),
        # written on its own line after the page's document (``shard``)
        "manifest": _COMPACT(run.manifest),
    }


# json's C encoder, made once; no check for circles (a manifest read from JSON has none)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode
_SORTED = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, check_circular=False).encode


def read_data(data: str) -> dict:
    """A run page's data, as the script reads it (for tests and tools): the document,
    each run with its manifest's text."""
    document, *manifests = zlib.decompress(base64.b64decode(data)).decode("utf-8").split("\n")
    found = json.loads(document)
    for record, manifest in zip(found["runs"], manifests, strict=True):
        record["manifest"] = manifest
    return found
