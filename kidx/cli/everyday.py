"""``get`` and ``describe`` without the argument parser: what the commands do once their
arguments are read.

The typer commands (``cli/commands/get.py``, ``describe.py``) call these, and so does the
fast path (``cli/fast.py``), which reads simple arguments itself so that the everyday
commands start without importing typer. Nothing here imports typer."""

from __future__ import annotations

from collections.abc import Callable

from kidx.cli.common import (
    kind_registry,
    open_store,
    output,
    parse_field_selector,
    parse_selector,
    report_missing,
)
from kidx.errors import UsageError
from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from kidx.store.store import Store


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
    # the speed-of-light columns of runs (-o wide, and -o csv/tsv, its raw form) read the workload and environment
    speed_of_light = fmt.kind == "wide" or (fmt.is_delimited and not fmt.argument)
    if speed_of_light:
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
                                       speed_of_light=speed_of_light)
        out.data(listing.render_tables(result.groups, options, _reference_namer(the_store)))
    elif fmt.is_delimited:
        options = listing.TableOptions(True, show_labels, keys, no_headers, False, speed_of_light=speed_of_light)
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


def run_describe(arguments: list[str] | None = None, selector: str | None = None, store: str | None = None) -> int:
    """``kidx describe``: each object's description; the exit code."""
    from kidx.operations.describe import describe_objects
    from kidx.output.describe import describe_result_text

    label_selector = parse_selector(selector)
    result = describe_objects(open_store(store, must_exist=True), kind_registry(), arguments or [], label_selector)
    out = output()
    out.data(describe_result_text(result))
    if not result.descriptions and not result.missing:
        out.notice("No resources found")
    return report_missing(out, result.missing, False)
