"""The environment pages and the run pages: each run a section of the page its digest's
first hex digits name (``context.run_page``), made here rather than by a template (a
large store has a hundred thousand of them), every value through ``escape``."""

from __future__ import annotations

import json
from collections.abc import Iterator

from markupsafe import Markup, escape

from kidx.operations.analysed_runs import AnalysedRun, Referenced
from kidx.output.units import quantity
from kidx.publish.context import SiteContext, environment_path, run_page

ROLES = ("protocol", "workload", "environment", "implementation")


def environment_and_run_pages(site: SiteContext, reference_fields: dict[str, tuple[str, str]]
                              ) -> Iterator[tuple[str, str]]:
    """``reference_fields``: the run fields that refer to other objects, by kind
    (kidx.operations.analysed_runs.run_reference_fields)."""
    pages = _RunPages(site, reference_fields)
    for environment in site.model.environments:
        yield pages.environment_page(environment)
    yield from pages.run_pages()


class _RunPages:
    def __init__(self, site: SiteContext, reference_fields: dict[str, tuple[str, str]]):
        self.site = site
        self.fields = sorted(field for field, _ in reference_fields.values())
        self.referrers: dict[str, list[AnalysedRun]] = {}
        for run in site.model.runs:
            spec = run.manifest.get("spec") or {}
            for field in self.fields:
                if isinstance(spec.get(field), str):
                    self.referrers.setdefault(spec[field], []).append(run)
        self.host: dict = {}  # run name -> kidx.analysis.hostbound.HostEvidence

    def environment_page(self, environment: Referenced) -> tuple[str, str]:
        path = environment_path(environment)
        spec = environment.spec or {}
        families = sorted((f for f in self.site.model.families if f.environment.digest == environment.digest),
                          key=lambda f: (f.title, self.site.title(f.protocol), f.id))
        return self.site.page("environment.html", path, environment=environment,
                              title=self.site.title(environment), facts=_flatten(spec), families=families,
                              runs=len(self.referrers.get(environment.digest or "", [])), titles=self.site.titles)

    def run_pages(self) -> Iterator[tuple[str, str]]:
        shards: dict[str, list[AnalysedRun]] = {}
        for run in self.site.model.runs:
            shards.setdefault(run_page(run), []).append(run)
        references: dict[tuple, str] = {}  # the references table, made once per combination
        from kidx.operations.host_bound import evidence

        runs = self.site.model.runs
        self.host = evidence(runs, runs)  # twins and sweeps among the published runs
        for path, shard in sorted(shards.items()):
            shard.sort(key=lambda r: r.manifest["metadata"]["digest"])
            yield self.site.page("runs.html", path, runs=[self._run(run, references) for run in shard])

    def _run(self, run: AnalysedRun, made: dict[tuple, str]) -> Markup:
        """One run's section of its page, made here rather than by the template (a large
        store has a hundred thousand of them); every value goes through ``escape``."""
        key = tuple(run.reference(role).digest for role in ROLES)
        if key not in made:
            made[key] = self._references(run)
        digest = run.manifest["metadata"]["digest"]
        anchor = self.site.anchor(run)
        family = self.site.family_of_run.get(run.name)
        series = self.site.series_of_run.get(run.name)
        links = []
        if family:
            links.append(f'<a href="../groups/{family.id}.html">group family</a>')
        if series:
            links.append(f'<a href="../series/{series}.html">series</a>')
        measure = ""
        if run.measure:
            measure = f" · <strong>{escape(quantity(run.measure.value, run.measure.unit))}</strong>"
            figures = speed_of_light_text(run)
            if figures:
                measure += f" · {escape(figures)}"
            host = self.host.get(run.name)
            if host is not None:
                measure += f' · <span class="host-bound">{escape(host.text())}</span>'
        referrers = [r for r in self.referrers.get(digest, []) if r is not run]
        referred = ""  # runs seldom refer to runs: the section is there only when one does
        if referrers:
            items = "".join(f'<li><a href="../{escape(self.site.run_path(r))}">{escape(r.name)}</a></li>'
                            for r in referrers)
            referred = f"<h2>Referred to by</h2>\n<ul>{items}</ul>\n"
        title = run.manifest["metadata"].get("title") or run.name
        name = escape(run.name)
        return Markup(
            f'<article class="run" id="{anchor}">\n<p class="crumbs">{" · ".join(links)}</p>\n'
            f'<h1 class="runname">{escape(title)}</h1>\n'
            f'<p class="lede"><code>{name}</code> · <code>{escape(digest)}</code> · {escape(run.status)}{measure}'
            f' · observed {escape(run.observed)}</p>\n<h2>References</h2>\n{made[key]}\n'
            f'{referred}<h2>In the CLI</h2>\n'
            f'<pre class="cli">kidx describe run {name}\nkidx get run {escape(digest)} -o yaml</pre>\n'
            f'<details open><summary>Manifest</summary>\n<pre class="manifest">{escape(manifest_text(run.manifest))}'
            f'</pre>\n</details>\n</article>\n')

    def _references(self, run: AnalysedRun) -> str:
        rows = []
        for role in ROLES:
            referenced = run.reference(role)
            if referenced.digest is None:
                continue
            if referenced.name is None:
                shown = "not in the store"
            else:
                shown = escape(referenced.name)
                if role == "environment":
                    shown = f'<a href="../{environment_path(referenced)}">{shown}</a>'
                title = self.site.titles.get(referenced.digest)
                if title:
                    shown += f" · {escape(title)}"
            rows.append(f'<tr><th scope="row">{role}</th><td>{shown}<br>'
                        f'<code>{escape(referenced.digest)}</code></td></tr>')
        return '<table class="facts">\n<tbody>\n' + "\n".join(rows) + "\n</tbody>\n</table>"


def speed_of_light_text(run: AnalysedRun) -> str:
    """``1.861TB/s, 38.8% of the H200 SXM 141GB's peak`` where the run's cost is known
    (docs/speed-of-light.md); "" otherwise."""
    from kidx.output.speed_of_light import bandwidth, flop_rate, percent
    from kidx.speed_of_light.achieved import achieved

    measure = run.measure
    if measure is None or measure.metric != "latency":
        return ""
    environment = {"spec": run.environment.spec} if run.environment.spec is not None else None
    figures = achieved(run.manifest.get("spec") or {}, run.workload.spec, environment, measure.value)
    if figures is None:
        return ""
    rates = [text for value, text in ((figures.bytes_per_second, bandwidth(figures.bytes_per_second)),
                                      (figures.flops_per_second, flop_rate(figures.flops_per_second)))
             if value is not None]
    if figures.peak is not None and figures.peak.sol is not None:
        rates.append(f"{percent(figures.peak.sol)} of the {figures.gpu}'s peak")
    return ", ".join(rates)


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
