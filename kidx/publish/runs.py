"""The environment pages and the run pages: each run a section of the page its digest's
first hex digits name (``context.run_page``), drawn by the site's script from the page's
compressed data (``run_shards``: a large store has a hundred thousand runs)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import NamedTuple

from markupsafe import Markup

from kidx.operations.select.analysed_runs import AnalysedRun, Referenced
from kidx.output.units import quantity
from kidx.publish.context import SiteContext, environment_path, group_path, run_page, series_path
from kidx.publish.run_shards import ROLES, RunLinks, shard

__all__ = ["ROLES", "RunTexts", "environment_and_run_pages", "run_texts", "speed_of_light_text"]


RUN_PAGES_A_JOB = 16  # run pages are small: a job (``workers``) makes this many


class RunTexts(NamedTuple):
    """What the pages say of each measured run beyond its figure (``run_texts``), by run name."""

    sol: dict[str, str]  # its speed of light, where its cost is known
    host: dict[str, str]  # its host-bound evidence, where it has some (kidx.analysis.hostbound.HostEvidence.text)
    flagged: dict[str, str]  # of those, the host-bound and the likely host-bound: the points the pages mark


def environment_and_run_pages(site: SiteContext, reference_fields: dict[str, tuple[str, str]],
                              texts: RunTexts) -> list[Callable[[], list[tuple[str, str]]]]:
    """Jobs (``workers``): one per environment page, one per RUN_PAGES_A_JOB run pages.
    ``reference_fields``: the run fields that refer to other objects, by kind
    (kidx.operations.select.analysed_runs.run_reference_fields); ``texts``: ``run_texts`` of the site's runs."""
    pages = _RunPages(site, reference_fields)
    jobs: list[Callable[[], list[tuple[str, str]]]] = [
        functools.partial(lambda environment: [pages.environment_page(environment)], environment)
        for environment in site.model.environments]
    shards = pages.run_shards()
    links = pages.run_links(texts)
    for start in range(0, len(shards), RUN_PAGES_A_JOB):
        jobs.append(functools.partial(pages.run_pages, shards[start:start + RUN_PAGES_A_JOB], links))
    return jobs


class _RunPages:
    def __init__(self, site: SiteContext, reference_fields: dict[str, tuple[str, str]]):
        self.site = site
        # a run's reference in a field is the digest the field holds, where it holds one
        # (kidx.operations.select.analysed_runs.analysed): the roles in the order of their fields
        roles = [role for _, role in sorted((field, role) for role, (field, _) in reference_fields.items())]
        self.referrers: dict[str, list[AnalysedRun]] = {}
        for run in site.model.runs:
            for role in roles:
                digest = run.reference(role).digest
                if digest is not None:
                    self.referrers.setdefault(digest, []).append(run)

    def environment_page(self, environment: Referenced) -> tuple[str, str]:
        path = environment_path(environment)
        spec = environment.spec or {}
        families = sorted((f for f in self.site.model.families if f.environment.digest == environment.digest),
                          key=lambda f: (f.title, self.site.title(f.protocol), f.id))
        return self.site.page("environment.html", path, environment=environment,
                              title=self.site.title(environment), facts=_flatten(spec),
                              families=[(group_path(family.id), family) for family in families],
                              runs=len(self.referrers.get(environment.digest or "", [])), titles=self.site.titles)

    def run_shards(self) -> list[tuple[str, list[AnalysedRun]]]:
        """Each run page's path and its runs, in the order of their digests."""
        shards: dict[str, list[AnalysedRun]] = {}
        for run in self.site.model.runs:
            shards.setdefault(run_page(run), []).append(run)
        for members in shards.values():
            members.sort(key=lambda r: r.manifest["metadata"]["digest"])
        return sorted(shards.items())

    def run_links(self, texts: RunTexts) -> RunLinks:
        """``texts``: ``run_texts`` of the site's runs."""
        sol, host = texts.sol, texts.host
        return RunLinks(
            anchor=self.site.anchor, path=self.site.run_path,
            family={name: group_path(family.id) for name, family in self.site.family_of_run.items()},
            series={name: series_path(page) for name, page in self.site.series_of_run.items()}, titles=self.site.titles,
            environment_path=environment_path, referrers=self.referrers, figures=sol, host=host,
            # its figure alone (not its spread, which a run page does not show)
            measure=lambda run: quantity(run.measure.value, run.measure.unit) if run.measure else "")

    def run_pages(self, shards: list[tuple[str, list[AnalysedRun]]], links: RunLinks) -> list[tuple[str, str]]:
        pages = []
        for path, members in shards:
            sections, data = shard(members, links)
            # the data is base64: nothing to escape
            pages.append(self.site.page("runs.html", path, runs=sections, data=Markup(data)))
        return pages


def run_texts(runs: list[AnalysedRun]) -> RunTexts:
    """Each measured run's speed of light as its page says it, and its host-bound evidence
    (read from its twins and sweeps among ``runs``, the published runs, by
    ``kidx.operations.select.host_bound.evidence``, as compare reads it), by run name, where it
    has them. Text only: a large site has them worked out by a process of its own while
    this one works out the site's model (``workers.beside``)."""
    from kidx.operations.select.host_bound import achieved_of, evidence

    solved: dict[str, object] = {}  # run name -> its speed of light: the evidence's and the page's, made once

    def figures_of(run: AnalysedRun):
        if run.name not in solved:
            solved[run.name] = achieved_of(run)
        return solved[run.name]

    host = evidence(runs, runs, figures_of)
    sol = {run.name: text for run in runs if run.measure and (text := speed_of_light_text(figures_of(run)))}
    return RunTexts(sol, {name: found.text() for name, found in host.items()},
                    {name: found.text() for name, found in host.items() if found.flagged})


def speed_of_light_text(figures) -> str:
    """``1.861TB/s, 38.8% of the H200 SXM 141GB's peak`` where the run's cost is known
    (docs/speed-of-light.md); "" otherwise. ``figures``: the run's speed of light
    (``kidx.operations.select.host_bound.achieved_of``), which the host-bound evidence reads too."""
    from kidx.output.speed_of_light import bandwidth, flop_rate, percent

    if figures is None:
        return ""
    rates = [text for value, text in ((figures.bytes_per_second, bandwidth(figures.bytes_per_second)),
                                      (figures.flops_per_second, flop_rate(figures.flops_per_second)))
             if value is not None]
    if figures.peak is not None and figures.peak.sol is not None:
        rates.append(f"{percent(figures.peak.sol)} of the {figures.gpu}'s peak")
    return ", ".join(rates)


def _flatten(value, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        out = []
        for key in sorted(value):
            out += _flatten(value[key], f"{prefix}.{key}" if prefix else str(key))
        return out
    if isinstance(value, list):
        out = []
        for i, item in enumerate(value):
            out += _flatten(item, f"{prefix}[{i}]")
        return out
    return [(prefix, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))]
