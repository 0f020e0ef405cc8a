"""kidx publish DIR [NAME…] [-l SEL] [--field-selector SEL] [--references …] [--title T] [--base-url URL] …"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kidx.analysis.defaults import ALPHA, DEFAULT_THRESHOLD
from kidx.cli.analysis_options import AlphaOption, FieldSelectorOption, ReferencesOption, RunsArgument, ThresholdOption
from kidx.cli.common import kind_registry, open_store, output, parse_dry_run, parse_field_selector, parse_selector
from kidx.cli.options import DryRunOption, SelectorOption, StoreOption
from kidx.errors import UsageError
from kidx.publish import TITLE

EXAMPLES = """\b
Examples:
  kidx publish site --title 'Liger-Kernel benchmarks' --baseline transformers --baseline torch \\
      --release-label liger_version
  kidx publish site -l gpu=nvidia-h100-80gb-hbm3 --store postgresql://bench@db/kidx
"""


def publish(
    folder: Annotated[str, typer.Argument(help="The site's folder (created; an earlier site there is updated).",
                                          show_default=False)],
    names: RunsArgument = None,
    selector: SelectorOption = None,
    field_selector: FieldSelectorOption = None,
    references: ReferencesOption = None,
    title: Annotated[str, typer.Option("--title", help="The site's title.")] = TITLE,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Where the site will be served (for canonical links).")
    ] = None,
    baseline: Annotated[
        list[str] | None,
        typer.Option("--baseline", help="The implementation (name or library) speedups are against; repeatable, "
                                        "the first a group holds wins (default: its earliest observed run's)."),
    ] = None,
    release_label: Annotated[
        str | None, typer.Option("--release-label", help="The label that names a release, e.g. liger_version.")
    ] = None,
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    alpha: AlphaOption = ALPHA,
    dry_run: DryRunOption = "none",
    store: StoreOption = None,
) -> None:
    """Write a static site of the index: HTML, JavaScript and JSON, no server.

    Pages: the index (kernels by GPU by implementation, each cell the latest speedup over
    the group's baseline with its history), one page per kernel (the same for each of its
    group families), one page per group family (the curve against
    the swept parameter, one line per implementation, p20-p80 bands), one per series over
    releases or time, the regressions, every run and every environment. Publishing into
    the same folder again rewrites only the files that changed and removes the pages of
    runs no longer selected; files kidx did not write are left alone.
    """
    from kidx.api.arguments import parse_alpha, parse_threshold
    from kidx.publish import require_jinja

    require_jinja()
    from kidx.publish.site import PublishRequest
    from kidx.publish.site import publish as write_site

    if not folder:
        raise UsageError("a folder is required: kidx publish DIR")
    request = PublishRequest(
        folder=Path(folder),
        names=list(names or ()),
        selector=parse_selector(selector),
        field_selector=parse_field_selector(field_selector),
        references=tuple(references or ()),
        title=title,
        base_url=base_url,
        baselines=tuple(baseline or ()),
        release_label=release_label,
        dry_run=parse_dry_run(dry_run) is not None,
        threshold=parse_threshold(threshold),
        alpha=parse_alpha(alpha),
    )
    from kidx.operations.events import SitePublished
    from kidx.output.events import stderr_reporter

    report = write_site(open_store(store), kind_registry(), request)
    stderr_reporter(output())(SitePublished(folder, report.pages, report.runs, report.families, report.series,
                                            len(report.written), report.unchanged, len(report.removed),
                                            request.dry_run))


def register(app: typer.Typer) -> None:
    app.command("publish", epilog=EXAMPLES)(publish)
