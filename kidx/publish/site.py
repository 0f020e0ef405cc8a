"""``kidx publish``: the pages of a static site of the index, from the selected runs.

The selection is read once through the analysis operations (as ``compare``, ``series``
and ``plot`` read it); ``model`` works out what the site shows, and each kind of page is
made by its own module from a ``context.SiteContext``: ``matrix`` (the index and the
kernel pages), ``groups`` (the group families), ``history`` (the series and the
regressions) and ``runs`` (the environments and the runs). The pages are rendered with
Jinja2, which escapes every value; a run page's sections (a large store has a hundred
thousand) are its compressed data, drawn by the site's script through ``textContent``
(``run_shards``), and so are the group families and series, many to a page, as elements
the script builds (``sections``, ``tree``); ``files.SiteFolder`` writes only what changed. No
page carries a build time: the "data as of" line is the latest ``creationTimestamp``
among the runs shown. The pages are made by jobs of a few pages each, which a large site
shares out among worker processes (``workers``).
"""

from __future__ import annotations

import re
from importlib import resources
from typing import NamedTuple

import jinja2  # kidx[publish]; kidx.publish.require_jinja says so when it is missing

from kidx.errors import KidxError
from kidx.operations.analyse.compare import CompareRequest, Comparison, GroupVerdicts, compare
from kidx.operations.analyse.series import (
    SeriesReading,
    SeriesRequest,
    judged,
    read_series,
    series_of,
    series_result,
)
from kidx.operations.select.analysed_runs import AnalysedRun, Selection, run_reference_fields
from kidx.publish.context import RUN_SHARD, PublishRequest, SiteContext
from kidx.publish.files import SiteFolder
from kidx.publish.groups import group_pages
from kidx.publish.hints import regressions_request
from kidx.publish.history import regressions_page, series_pages
from kidx.publish.matrix import index_page, kernel_pages
from kidx.publish.model import build_model
from kidx.publish.runs import ROLES, environment_and_run_pages, run_texts
from kidx.publish.sections import SECTION_SHARD
from kidx.publish.workers import Job, beside, processes_for, write_pages

__all__ = ["PublishReport", "PublishRequest", "publish"]

ASSETS = ("site.css", "site.js")
REGRESSION_ROWS = 1000  # the regressions page lists this many steps, slower first
# every path a page can have (files.SiteFolder removes only these, never a hidden path or another file)
LAYOUT_FOLDERS = ("assets", "environments", "groups", "kernels", "runs", "series")
LAYOUT = re.compile(r"(?:index|regressions)\.html|assets/site\.(?:css|js)|runs/[0-9a-f]{" + str(RUN_SHARD) + r"}\.html"
                    r"|environments/[0-9a-f]{64}\.html|(?:groups|series)/[0-9a-f]{" + str(SECTION_SHARD) + r"}\.html"
                    r"|kernels/[0-9a-f]{16}\.html"
                    # the page per family and per series that kidx wrote before 2026-12 (removed, never written)
                    r"|groups/[0-9a-f]{16}\.(?:html|json)|series/[0-9a-f]{16}\.html")
REFERENCED_KINDS = ("BenchmarkProtocol", "Workload", "ExecutionEnvironment", "Implementation")


class PublishReport(NamedTuple):
    pages: int
    written: list[str]
    unchanged: int
    removed: list[str]
    runs: int
    families: int
    series: int


def publish(store, registry, request: PublishRequest) -> PublishReport:
    jinja = _jinja()
    folder = SiteFolder(request.folder, LAYOUT, LAYOUT_FOLDERS, request.dry_run)
    # the series read the selection: every page is made from the runs they read
    series_request = SeriesRequest(
        names=request.names, selector=request.selector, field_selector=request.field_selector,
        references=request.references, label_key=request.release_label,
        baseline=request.baselines[0] if request.baselines else None, more_baselines=request.baselines[1:],
        threshold=request.threshold, alpha=request.alpha,
    )
    reading = read_series(store, registry, series_request)
    runs = list(reading.selection.runs)
    processes = processes_for(len(runs))
    # the series' judgements and the run pages' speed-of-light and host-bound texts read
    # every run: worked out by a process of its own while this one works out the model
    with beside(processes > 1, _judged_and_texts, reading, series_request) as found:
        titles = _titles(store, runs)
        judged = GroupVerdicts(store, registry, CompareRequest(
            request.names, request.selector, request.field_selector, request.references,
            threshold=request.threshold, alpha=request.alpha), runs)
        model = build_model(runs, request.baselines, titles, request.threshold, request.alpha, judged)
        regressions = _regressions(store, registry, request, reading.selection)
        judgements, texts = found()
        series = series_result(store, registry, series_request, reading,
                               series_of(reading, series_request, judgements))
        site = SiteContext(jinja, request, model, series.series, titles, regressions, texts.flagged)
        jobs = [*_jobs(site, run_reference_fields(registry), texts), _assets]
    try:
        try:
            write_pages(folder, jobs, processes)
        except BaseException:
            folder.abandon()  # a failure or Ctrl-C: no temporary file left, the folder still a site
            raise
        removed = folder.finish()
    finally:
        folder.close()
    return PublishReport(len(folder.pages), folder.written, folder.unchanged, removed, len(runs),
                         len(model.families), len(series.series))


def _regressions(store, registry, request: PublishRequest, selection: Selection) -> Comparison | None:
    """The regressions page's comparison (``hints.regressions_request``) of the published
    ``selection``, read once; None without a release label, or where compare refuses the
    selection (named runs that are not comparable), and the page then follows the series."""
    compared = regressions_request(request)
    if compared is None:
        return None
    try:
        return compare(store, registry, compared, selection)
    except KidxError:
        return None


def _judged_and_texts(reading: SeriesReading, request: SeriesRequest):
    """What a process beside the model works out (``workers.beside``): the series' judgements
    (``kidx.operations.analyse.series.judged``) and the runs' ``run_texts``, in one process, so that
    the model has a CPU of its own on a machine of two."""
    return judged(reading, request), run_texts(list(reading.selection.runs))


def _jobs(site: SiteContext, reference_fields, texts) -> list[Job]:
    """Every page of the site, as jobs that make a few pages each (``workers``), in the site's order."""
    return [
        lambda: [index_page(site)],
        *kernel_pages(site),
        lambda: [regressions_page(site, REGRESSION_ROWS)],
        *group_pages(site),
        *series_pages(site),
        *environment_and_run_pages(site, reference_fields, texts),
    ]


def _assets() -> list[tuple[str, str]]:
    return [(f"assets/{asset}", resources.files("kidx.publish").joinpath("assets", asset).read_text("utf-8"))
            for asset in ASSETS]


def _jinja():
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resources.files("kidx.publish").joinpath("templates"))),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    return environment


def _titles(store, runs: list[AnalysedRun]) -> dict[str, str]:
    """Stored titles of the objects the runs refer to, by digest."""
    titles: dict[str, str] = {}
    for role, kind in zip(ROLES, REFERENCED_KINDS, strict=True):
        digests = {run.reference(role).digest for run in runs if run.reference(role).digest}
        if not digests:
            continue
        for digest, manifest in store.referenced_manifests(digests, kind).items():
            title = (manifest.get("metadata") or {}).get("title")
            if isinstance(title, str) and title:
                titles[digest] = title
    return titles
