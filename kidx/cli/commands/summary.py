"""kidx summary [-l SELECTOR] [--release-label KEY] [-o json|yaml|csv|tsv]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import kind_registry, open_store, output, parse_selector
from kidx.cli.options import SelectorOption, StoreOption
from kidx.output.printers import output_help
from kidx.output.to_printer import to_printer

EXAMPLES = """\b
Examples:
  kidx summary
  kidx summary -l gpu=nvidia-h100-80gb-hbm3 -o csv
"""


def summary(
    selector: SelectorOption = None,
    release_label: Annotated[
        str | None,
        typer.Option("--release-label", help="The label whose range to show (default: the one label key ending "
                                             "in _version that the runs carry, e.g. liger_version)."),
    ] = None,
    output_format: Annotated[str | None, typer.Option("--output", "-o", help=output_help("summary"))] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers", help="Omit the header row.")] = False,
    store: StoreOption = None,
) -> None:
    """What the store holds at a glance: runs by operation and GPU, with the release range.

    Read from the catalog (labels and the runs' references), never from each run's object.
    The totals go to standard error.
    """
    from kidx.operations.analyse.summary import summarize
    from kidx.output import summary as printed

    printing = to_printer("summary", output_format, printed.RENDERERS)
    label_selector = parse_selector(selector)
    the_store = open_store(store, must_exist=True)
    result = summarize(the_store, kind_registry(), label_selector, release_label)
    out = output()
    out.data(printing.render(result, printing.format.name, no_headers))
    if not result.runs:
        out.notice("No resources found")
        _hint(out, the_store, label_selector)
    elif output_format is None:
        out.notice(printed.summary_line(result))


def _hint(out, the_store, selector) -> None:
    from kidx.operations.select.selection_hint import no_runs_hint

    if selector is not None:
        hint = no_runs_hint(the_store, kind_registry(), selector)
        if hint is not None:
            out.notice(hint)


def register(app: typer.Typer) -> None:
    app.command("summary", epilog=EXAMPLES)(summary)
