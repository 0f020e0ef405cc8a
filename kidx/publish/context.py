"""What every page of the site is made with: the request, the site's model, the stored
titles, the series, and the pages' addresses (a run's page and anchor, an environment's
page). Each kind of page is made by its own module (``matrix``, ``groups``, ``history``,
``runs``) from a ``SiteContext``; ``site.publish`` puts them together."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from kidx.analysis.significance import ALPHA, DEFAULT_THRESHOLD, rule_text, threshold_text
from kidx.operations.analyse.compare import Comparison
from kidx.operations.analyse.series import Series
from kidx.operations.select.analysed_runs import AnalysedRun, Referenced
from kidx.output.units import quantity, spread_text
from kidx.publish import TITLE
from kidx.publish.model import Family, SiteModel, digest_hex, page_id
from kidx.publish.sections import section_path
from kidx.publish.tree import E, Element

RUN_SHARD = 3  # hex digits: 4,096 run pages at most


class PublishRequest(NamedTuple):
    folder: Path
    names: list[str]
    selector: object = None
    field_selector: object = None
    references: tuple = ()
    title: str = TITLE
    base_url: str | None = None
    baselines: tuple[str, ...] = ()
    release_label: str | None = None
    dry_run: bool = False
    # the verdict rule's (kidx.analysis.significance), for cells and series; None: it follows the evidence
    threshold: float | None = DEFAULT_THRESHOLD
    alpha: float = ALPHA


def run_page(run: AnalysedRun) -> str:
    """The page a run is on: runs whose digests share their first RUN_SHARD hex digits share one."""
    return f"runs/{digest_hex(run.manifest['metadata']['digest'])[:RUN_SHARD]}.html"


def group_path(family_id: str) -> str:
    """A group family's address from the site's root: its shard page and its id (``sections``)."""
    return section_path("groups", family_id)


def series_path(page: str) -> str:
    """A series page's address from the site's root (``sections``)."""
    return section_path("series", page)


def environment_path(environment: Referenced) -> str:
    return f"environments/{digest_hex(environment.digest or '')}.html"


def version_order(value: str) -> tuple:
    """``0.5.2`` before ``0.5.10``: numbers by value, the rest as text."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"[.\-+]", value))


def metric_words(metric: str) -> str:
    return {"latency": "latency", "peak_memory": "peak memory"}.get(metric, metric.replace("_", " "))


def axis_format(unit: str):
    """An axis tick's text: the unit's readable form, and a bare ``0``."""
    return lambda value: "0" if value == 0 else quantity(value, unit)


class SiteContext:
    def __init__(self, jinja, request: PublishRequest, model: SiteModel, series: list[Series],
                 titles: dict[str, str], regressions: Comparison | None = None, host: dict[str, str] | None = None):
        """``host``: the runs whose figure is host-bound or likely so, with why, by name
        (``kidx.publish.runs.RunTexts.flagged``): the group and series pages and the
        matrices mark them."""
        self.jinja, self.request, self.model, self.titles = jinja, request, model, titles
        # the regressions page's comparison (hints.regressions_request), where it has one
        self.regressions = regressions
        self.host = host or {}
        self.series_pages: dict[str, list[Series]] = {}
        for one in series:
            key = [one.protocol.digest, one.workload.digest, one.environment.digest]
            self.series_pages.setdefault(page_id(key), []).append(one)
        self.series_of_run: dict[str, str] = {}
        for pid, members in self.series_pages.items():
            for one in members:
                for point in one.points:
                    self.series_of_run[point.run.name] = pid
        self.family_of_run: dict[str, Family] = {}
        for family in model.families:
            for line in family.lines:
                for drawn in line.points:
                    self.family_of_run[drawn.run.name] = family
        self.environment_labels: dict[str, list[str]] | None = None  # made by the first matrix page
        self.as_of = max((run.manifest["metadata"].get("creationTimestamp") or "" for run in model.runs), default="")
        # a run's anchor is its digest's hex digits; runs that share a digest (one spec under
        # several names) each get their own: the first by name the digest's, the others it
        # and their name, so that no two sections of a page share an id
        by_digest: dict[str, list[str]] = {}
        for run in model.runs:
            by_digest.setdefault(run.manifest["metadata"]["digest"], []).append(run.name)
        self.anchors: dict[str, str] = {}
        for digest, names in by_digest.items():
            first, *others = sorted(names)
            self.anchors[first] = digest_hex(digest)
            self.anchors.update({name: f"{digest_hex(digest)}-{name}" for name in others})
        # every run's address, made once: the group, series and run pages link to each run
        self.paths = {run.name: f"{run_page(run)}#{self.anchor(run)}" for run in model.runs}
        self._figures: dict[tuple[str, str], tuple[str, str]] = {}

    def figures(self, run: AnalysedRun, unit: str) -> tuple[str, str]:
        """A measured run's figure and its p20–p80 spread in ``unit``, as the pages show
        them: made once per run for the group, series and run pages."""
        key = (run.name, unit)
        found = self._figures.get(key)
        if found is None:
            m = run.known_measure
            found = self._figures[key] = (quantity(m.value, unit), spread_text(m.low, m.high, unit, " – ", ""))
        return found

    def run_path(self, run: AnalysedRun) -> str:
        """A run's permanent address: its page and, as the anchor, its digest's hex digits
        (and its name, for a run whose digest another published run has too)."""
        path = self.paths.get(run.name)
        return path if path is not None else f"{run_page(run)}#{self.anchor(run)}"

    def anchor(self, run: AnalysedRun) -> str:
        return self.anchors.get(run.name) or digest_hex(run.manifest["metadata"]["digest"])

    def title(self, referenced: Referenced) -> str:
        return self.titles.get(referenced.digest or "", referenced.label)

    def page(self, template: str, path: str, **values) -> tuple[str, str]:
        root = "../" * path.count("/")
        text = self.jinja.get_template(template).render(
            root=root, site_title=self.request.title, as_of=self.as_of, base_url=self.request.base_url,
            path=path, threshold=threshold_text(self.request.threshold),
            rule=rule_text(self.request.threshold, self.request.alpha), **values)
        return path, text

    @staticmethod
    def environment_href(environment: Referenced, root: str) -> str:
        return root + environment_path(environment) if environment.digest else ""

    def step(self, point) -> str:
        """A series point's place on its axis: its release, else when it was observed."""
        if self.request.release_label and point.label is not None:
            return point.label
        return point.run.observed[:16].replace("T", " ")


HOST_NOTE = ("a dashed ring marks a point whose timing is likely the host's (Python, autograd, the kernel launches), "
             "not the kernel's: a change in the kernel does not show there (docs/analysis.md, \"Is a timing the "
             "kernel's or the host's?\"); its row says why.")


def host_mark(reason: str) -> Element:
    """A host-bound point's mark in a table: its word (``host-bound``, ``likely host-bound``)
    shown, and why as its title; ``reason``: ``HostEvidence.text``."""
    return E("em", {"class": "host", "title": reason}, "⚑ " + reason.partition(":")[0])


def host_notes(site: SiteContext, points) -> Element | None:
    """Below a chart's tables: each marked point (``points``: (its line's label, its x, its
    run)) and why, in words; None where none is marked."""
    items = [E("li", {}, E("strong", {}, f"{label} · {x}"), ": " + site.host[run.name])
             for label, x, run in points if run.name in site.host]
    if not items:
        return None
    return E("div", {"class": "hostnote"}, E("h2", {}, "Likely host-bound points"),
             E("p", {}, HOST_NOTE[0].upper() + HOST_NOTE[1:]), E("ul", {}, *items))
