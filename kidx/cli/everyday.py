"""``get`` and ``describe`` without the argument parser: what the commands do once their
arguments are read.

The typer commands (``cli/commands/get.py``, ``describe.py``) call these, and so does the
fast path (``cli/fast.py``), which reads simple arguments itself so that the everyday
commands start without importing typer. Nothing here imports typer."""

from __future__ import annotations

from kidx.cli.common import (
    kind_registry,
    open_store,
    output,
    parse_field_selector,
    parse_selector,
    report_missing,
)
from kidx.errors import UsageError


def run_get(
    arguments: list[str] | None = None,
    output_format: str | None = None,
    selector: str | None = None,
    field_selector: str | None = None,
    show_labels: bool = False,
    label_columns: list[str] | None = None,
    no_headers: bool = False,
    show_kind: bool = False,
    sort_by: str | None = None,
    ignore_not_found: bool = False,
    references: list[str] | None = None,
    limit: int | None = None,
    store: str | None = None,
) -> int:
    """``kidx get``: the objects printed in the format asked for; the exit code."""
    from kidx.operations.select.get import Query, find_objects, reference_namer
    from kidx.output.formats import parse_output_format
    from kidx.output.listing import listing_options, print_listing

    fmt = parse_output_format(output_format)
    options = listing_options(fmt, show_labels, label_columns, no_headers, show_kind)
    if not arguments:
        raise UsageError(
            'You must specify the type of resource to get. Use "kidx api-resources" for a complete '
            "list of supported resources."
        )
    sort_keys = []
    if sort_by:
        from kidx.query.sorting import parse_sort_keys

        sort_keys = parse_sort_keys(sort_by)
    plan = fmt.load_plan(sort_keys, options.prints_labels)
    query = Query(arguments=arguments, selector=parse_selector(selector),
                  field_selector=parse_field_selector(field_selector), sort_keys=sort_keys, limit=limit,
                  references=tuple(references or ()), load=plan.mode, reference_roles=plan.reference_roles,
                  labels=plan.labels, every_column=plan.every_column)
    the_store = open_store(store, must_exist=True)
    result = find_objects(the_store, kind_registry(), query)
    out = output()
    print_listing(out, result, fmt, options._replace(namer=reference_namer(the_store)))
    if not result.total and not result.missing and fmt.reads_columns and query.selector is not None:
        _hint_runs(out, the_store, [info for info, _ in result.groups], query.selector)
    return report_missing(out, result.missing, ignore_not_found)


def _hint_runs(out, the_store, kinds, selector) -> None:
    """After "No resources found" for runs: what in the label selector matched nothing."""
    from kidx.operations.select.selection_hint import no_runs_hint

    registry = kind_registry()
    if registry.resolve("benchmarkruns").kind in {info.kind for info in kinds}:
        hint = no_runs_hint(the_store, registry, selector)
        if hint is not None:
            out.notice(hint)


def run_describe(arguments: list[str] | None = None, selector: str | None = None, store: str | None = None) -> int:
    """``kidx describe``: each object's description; the exit code."""
    from kidx.operations.select.describe import describe_objects
    from kidx.output.describe import describe_result_text

    label_selector = parse_selector(selector)
    result = describe_objects(open_store(store, must_exist=True), kind_registry(), arguments or [], label_selector)
    out = output()
    out.data(describe_result_text(result))
    if not result.descriptions and not result.missing:
        out.notice("No resources found")
    return report_missing(out, result.missing, False)
