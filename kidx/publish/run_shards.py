"""The run pages: runs whose digests share their first hex digits share a page
(``runs/ABC.html``), each run an ``<article>`` whose id is its permanent anchor.

A large store has a hundred thousand runs, and their manifests were most of a site's
bytes. So a run page holds, for each run, only its anchor and its name as HTML; the rest
(title, figures, references, the runs that refer to it, the CLI commands and the
manifest) is one JSON document per page, compressed with zlib and written into the page
in base64 (``data-deflate``). The site's script inflates it with the browser's own
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

from kidx.operations.analysed_runs import AnalysedRun

ROLES = ("protocol", "workload", "environment", "implementation")
LEVEL = 6  # zlib's default


class RunLinks(NamedTuple):
    """What a run's section says about the rest of the site."""

    anchor: Callable[[AnalysedRun], str]  # the run's anchor on its page
    path: Callable[[AnalysedRun], str]  # the run's address from the site's root (page#anchor)
    family: dict[str, str]  # run name -> its group family's page id
    series: dict[str, str]  # run name -> its series page id
    titles: dict[str, str]  # digest -> the stored title of the object
    environment_path: Callable[[str], str]  # an environment's digest -> its page, from the site's root
    referrers: dict[str, list[AnalysedRun]]  # digest -> the published runs that refer to it
    figures: Callable[[AnalysedRun], str]  # the run's speed-of-light figures, "" where unknown
    host: dict  # run name -> kidx.analysis.hostbound.HostEvidence
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
    document = json.dumps({"objects": objects, "runs": records}, ensure_ascii=False, separators=(",", ":"),
                          sort_keys=True)
    data = base64.b64encode(zlib.compress(document.encode("utf-8"), LEVEL)).decode("ascii")
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
            href = (links.environment_path(referenced.digest)
                    if role == "environment" and referenced.name is not None else None)
            objects[referenced.digest] = [referenced.name, links.titles.get(referenced.digest), href]
    host = links.host.get(run.name) if run.measure else None
    return {
        "anchor": links.anchor(run), "name": run.name, "title": metadata.get("title") or run.name,
        "digest": digest, "status": run.status, "observed": run.observed,
        "measure": links.measure(run), "sol": links.figures(run) if run.measure else "",
        "host": host.text() if host is not None else "",
        "family": links.family.get(run.name), "series": links.series.get(run.name),
        "references": references,
        "referrers": [[links.path(r), r.name] for r in links.referrers.get(digest, []) if r is not run],
        "manifest": manifest_text(run.manifest),
    }


_COMPACT = json.JSONEncoder(ensure_ascii=False).encode  # json's C encoder, made once


def manifest_text(manifest: dict) -> str:
    """The manifest as indented JSON down to the spec's fields, each value on one line
    (json's C encoder writes only compact JSON; indenting it all would cost most of a
    large site's time)."""
    compact = _COMPACT

    def block(mapping: dict, indent: str, depth: int) -> str:
        if not mapping:
            return "{}"
        inner = indent + "  "
        parts = [f"{inner}{compact(key)}: "
                 + (block(value, inner, depth - 1) if depth > 0 and isinstance(value, dict) else compact(value))
                 for key, value in mapping.items()]
        return "{\n" + ",\n".join(parts) + "\n" + indent + "}"

    return block(manifest, "", 2)


def read_data(data: str) -> dict:
    """A run page's data, as the script reads it (for tests and tools)."""
    return json.loads(zlib.decompress(base64.b64decode(data)).decode("utf-8"))
