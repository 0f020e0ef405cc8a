"""``get``'s ``-o`` value, parsed once into an OutputFormat: its entry in the printer
table (``kidx.output.printers``) with its argument, what it must load, and how it prints.
Every other command's ``-o`` goes through ``kidx.output.printers.check_output``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from kidx.errors import UsageError
from kidx.output.printers import PRINTERS, Format, rejected_output
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kidx.jsonpath import Steps
    from kidx.operations.select.get import LoadPlan
    from kidx.query.sorting import SortKey

GET = PRINTERS["get"]


class OutputFormat(NamedTuple):
    kind: str  # table, wide, name, yaml, json, jsonpath, custom-columns, custom-columns-file, csv, tsv
    argument: str | None = None
    format: Format | None = None  # its entry in the printer table (None: get's default, a table)

    @property
    def printer(self) -> Format:
        return self.format or GET.default or Format("table")

    @property
    def is_table(self) -> bool:
        return self.printer.render == "tables"

    @property
    def is_delimited(self) -> bool:
        """csv or tsv: the table's columns (or a custom-columns spec) with raw values."""
        return self.printer.render == "delimited"

    @property
    def reads_columns(self) -> bool:
        """Whether the printed values are columns (the CRD's, or custom columns), which
        the catalog's cached values may answer, rather than whole objects or names."""
        return self.printer.load == "table"

    @property
    def speed_of_light(self) -> bool:
        """Whether the printed columns include the speed of light of runs (-o wide, and
        -o csv|tsv, its raw form), which reads each run's workload and environment."""
        return bool(self.printer.shows)

    def load_plan(self, sort_keys: Sequence[SortKey] = (), labels: bool = True) -> LoadPlan:
        """What ``get`` must load to print this format sorted by ``sort_keys``, from the
        parse trees of the paths printed and sorted by; ``labels``: whether the listing
        prints labels (--show-labels, -L)."""
        from kidx.operations.select.get import LoadMode, LoadPlan

        shown = self.printer.shows
        if not sort_keys and not self.argument:  # nothing to read paths from (the common case)
            # a table prints every printer column but as the default table (-o wide, csv, tsv)
            return LoadPlan(LoadMode(self.printer.load), shown, labels, every_column=self.kind != "table")
        from kidx.jsonpath import compile_relaxed
        from kidx.query.reference_paths import path_reads

        sorted_by = path_reads(steps for key in sort_keys
                               for path in (compile_relaxed(key.path),) if path is not None
                               for steps in path.steps())
        try:
            printed = path_reads(self._printed_steps())
        except UsageError:  # reported, as before, when the output is rendered
            return LoadPlan(LoadMode.MANIFESTS, sorted_by.roles | shown)
        roles = printed.roles | sorted_by.roles | shown
        if self.kind == "name":
            return LoadPlan(LoadMode.MANIFESTS if sort_keys else LoadMode.NAMES, roles)
        if self.reads_columns and not (printed.own_spec or sorted_by.own_spec):
            return LoadPlan(LoadMode.COLUMNS, roles)
        return LoadPlan(LoadMode.MANIFESTS, roles)

    def _printed_steps(self) -> Iterator[Steps]:
        """The steps of every path this format prints with (none for the CRD's columns,
        which the catalog caches, nor for whole objects and names)."""
        if not self.argument:
            return
        if self.kind == "jsonpath":
            from kidx.jsonpath import JSONPathTemplate

            yield from JSONPathTemplate.parse(self.argument).steps()
            return
        from kidx.jsonpath import compile_relaxed
        from kidx.output.custom_columns import parse_custom_columns, parse_custom_columns_file

        parse = parse_custom_columns_file if self.kind == "custom-columns-file" else parse_custom_columns
        for _, path in parse(self.argument):
            compiled = compile_relaxed(path)
            if compiled is not None:
                yield from compiled.steps()


def parse_output_format(value: str | None) -> OutputFormat:
    if value is None or value == "":
        return OutputFormat("table")
    name, equals, argument = value.partition("=")
    format = GET.find(name, bool(equals))
    if format is None:
        raise rejected_output(value, "get")
    if not format.takes_argument:
        return OutputFormat(name, None, format)
    if name == "jsonpath-file":
        return OutputFormat("jsonpath", _read(argument), format)
    if name == "custom-columns-file":
        return OutputFormat("custom-columns-file", _read(argument), format)
    if name in ("csv", "tsv") and not argument:
        raise UsageError(f"{name} format specified with '=' but no custom columns given")
    if not argument:
        what = "template" if name == "jsonpath" else "custom columns"
        format_name = "template format" if name == "jsonpath" else "custom-columns format"
        raise UsageError(f"{format_name} specified but no {what} given")
    return OutputFormat(name, argument, format)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"error reading {path}: {exc.strerror}") from None
