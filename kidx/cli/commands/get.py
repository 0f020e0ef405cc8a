"""kidx get TYPE [NAME…] | TYPE/NAME… | T1,T2 | all  [-l SEL] [-o FORMAT] …"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from kidx.cli.common import (
    SelectorOption,
    StoreOption,
    kind_registry,
    open_store,
    output,
    parse_field_selector,
    parse_selector,
    report_missing,
)
from kidx.errors import UsageError

if TYPE_CHECKING:
    from kidx.store.store import Store

OutputOption = Annotated[
    str | None,
    typer.Option(
        "--output", "-o",
        help="wide, name, yaml, json, csv, tsv, csv=SPEC, tsv=SPEC, jsonpath=TEMPLATE, "
        "jsonpath-file=FILE, custom-columns=SPEC, custom-columns-file=FILE.",
    ),
]


EXAMPLES = """\b
Examples:
  kidx get runs -l liger_version=0.6.1
  kidx get runs --references environment/liger-bench-nvidia-h100-80gb-hbm3 -o name
  kidx get runs --field-selector spec.status=failed --sort-by=-.spec.timing.latencyNs.median
  kidx get runs -o jsonpath='{range .items[*]}{.metadata.name}{"\\t"}{.spec.timing.latencyNs.median}{"\\n"}{end}'
  kidx get runs -o custom-columns=NAME:.metadata.name,DIGEST:.metadata.digest
  kidx get run DIGEST-PREFIX -o yaml    (a name, a digest, or its first 8+ hex digits)
  kidx get runs -l liger_version=0.6.1 -o csv > runs.csv
  kidx get runs -o csv='NAME:.metadata.name,MEDIAN_NS:.spec.timing.latencyNs.median'
"""


def get(
    arguments: Annotated[
        list[str] | None,
        typer.Argument(help="TYPE [NAME…], TYPE/NAME…, T1,T2 or all.", show_default=False),
    ] = None,
    output_format: OutputOption = None,
    selector: SelectorOption = None,
    field_selector: Annotated[
        str | None,
        typer.Option("--field-selector", help="Field selector: metadata.name=x,spec.status!=passed."),
    ] = None,
    show_labels: Annotated[bool, typer.Option("--show-labels", help="Add a LABELS column.")] = False,
    label_columns: Annotated[
        list[str] | None,
        typer.Option("--label-columns", "-L", help="Add a column per label key (repeatable, comma-separated)."),
    ] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers", help="Omit the header row.")] = False,
    show_kind: Annotated[bool, typer.Option("--show-kind", help="Prefix names with their kind.")] = False,
    sort_by: Annotated[
        str | None,
        typer.Option("--sort-by", help="Sort by a field path; '-path' for descending; comma-separated keys."),
    ] = None,
    ignore_not_found: Annotated[
        bool,
        typer.Option("--ignore-not-found", help="Named objects that do not exist are not an error."),
    ] = False,
    references: Annotated[
        list[str] | None,
        typer.Option(
            "--references",
            help="Only objects that refer to TYPE/NAME, a digest, or TYPE:SELECTOR (repeatable: all must hold).",
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Print at most N objects.", min=0)] = None,
    store: StoreOption = None,
) -> int:
    """Display one or many objects.

    Types may be spelled as plural, singular, short name or Kind (runs, run, br,
    BenchmarkRun); 'all' means every kind. An object may be named by its digest or a
    unique digest prefix of at least 8 hex digits.
    """
    from kidx.operations.get import Query, find_objects
    from kidx.output import listing
    from kidx.output.formats import parse_output_format

    fmt = parse_output_format(output_format)
    keys = [key for value in label_columns or [] for key in value.split(",") if key]
    if show_labels and not (fmt.is_table or fmt.is_delimited):
        raise UsageError(f"--show-labels option cannot be used with {fmt.kind} printer")
    if keys and (fmt.kind.startswith("custom-columns") or (fmt.is_delimited and fmt.argument)):
        raise UsageError(f"--label-columns option cannot be used with {fmt.kind} printer")
    if not arguments:
        raise UsageError(
            'You must specify the type of resource to get. Use "kidx api-resources" for a complete '
            "list of supported resources."
        )
    sort_keys = []
    if sort_by:
        from kidx.query.sorting import parse_sort_keys

        sort_keys = parse_sort_keys(sort_by)
    plan = fmt.load_plan(sort_keys)
    if fmt.kind == "wide":  # the speed-of-light columns of runs read the workload and the environment
        plan = plan._replace(reference_roles=plan.reference_roles | {"workload", "environment"})
    query = Query(
        arguments=arguments,
        selector=parse_selector(selector),
        field_selector=parse_field_selector(field_selector),
        sort_keys=sort_keys,
        limit=limit,
        references=tuple(references or ()),
        load=plan.mode,
        reference_roles=plan.reference_roles,
    )
    the_store = open_store(store, must_exist=True)
    result = find_objects(the_store, kind_registry(), query)
    out = output()
    if fmt.is_table:
        options = listing.TableOptions(fmt.kind == "wide", show_labels, keys, no_headers, show_kind,
                                       speed_of_light=fmt.kind == "wide")
        out.data(listing.render_tables(result.groups, options, _reference_namer(the_store)))
    elif fmt.is_delimited:
        options = listing.TableOptions(True, show_labels, keys, no_headers, False)
        out.data(listing.render_delimited_listing(result.groups, fmt, options, _reference_namer(the_store)))
    elif fmt.kind == "name":
        out.data(listing.render_names([(i, [m["metadata"]["name"] for m in ms]) for i, ms in result.groups]))
    elif fmt.kind in ("yaml", "json"):
        if plan.reference_roles:
            from kidx.operations.get import without_referenced

            result = result._replace(groups=[(i, without_referenced(ms, plan.reference_roles))
                                             for i, ms in result.groups])
        if result.total or not result.missing:
            out.data(listing.render_documents(result.groups, fmt, result.single))
    elif fmt.kind == "jsonpath":
        if result.total or not result.missing:
            out.data(listing.render_jsonpath(result.groups, fmt.argument or "", result.single))
    elif result.total:
        out.data(listing.render_custom_columns(result.groups, fmt, no_headers))
    if not result.total and not result.missing and fmt.reads_columns:
        out.notice("No resources found")
    return report_missing(out, result.missing, ignore_not_found)


def _reference_namer(store: Store) -> Callable[[str], str | None]:
    names: dict[str, str | None] = {}

    def namer(digest: str) -> str | None:
        if digest not in names:
            found = store.catalog().by_digest(digest)
            names[digest] = found[0].name if found else None
        return names[digest]

    return namer


def register(app: typer.Typer) -> None:
    app.command("get", epilog=EXAMPLES)(get)
