"""``-o`` values: the one check every command's value goes through, and the formats
``get`` understands, parsed once into an OutputFormat.

A value a command does not print is refused in one wording, kubectl's for ``get``:
``unable to match a printer suitable for the output format "X", allowed formats are: …``
with the command's formats sorted and comma-separated."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from kidx.errors import UsageError
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kidx.jsonpath import Steps
    from kidx.operations.get import LoadPlan
    from kidx.query.sorting import SortKey

SIMPLE = ("csv", "json", "name", "tsv", "wide", "yaml")
# csv=SPEC and tsv=SPEC take a custom-columns spec
WITH_ARGUMENT = ("csv", "custom-columns", "custom-columns-file", "jsonpath", "jsonpath-file", "tsv")
ALLOWED = sorted(set(SIMPLE + WITH_ARGUMENT))


def rejected_output(value: str, allowed: Iterable[str]) -> UsageError:
    """The error for an ``-o`` value that is none of ``allowed``."""
    return UsageError(f'unable to match a printer suitable for the output format "{value}", '
                      "allowed formats are: " + ",".join(sorted(allowed)))


def checked_output(value: str | None, allowed: Iterable[str], default: str | None = None) -> str | None:
    """``value`` when it is one of ``allowed``; ``default`` when no ``-o`` was given."""
    if value is None:
        return default
    allowed = tuple(allowed)
    if value not in allowed:
        raise rejected_output(value, allowed)
    return value


class OutputFormat(NamedTuple):
    kind: str  # table, wide, name, yaml, json, jsonpath, custom-columns, csv, tsv
    argument: str | None = None

    @property
    def is_table(self) -> bool:
        return self.kind in ("table", "wide")

    @property
    def is_delimited(self) -> bool:
        """csv or tsv: the table's columns (or a custom-columns spec) with raw values."""
        return self.kind in ("csv", "tsv")

    @property
    def reads_columns(self) -> bool:
        """Whether the printed values are columns (the CRD's, or custom columns), which
        the catalog's cached values may answer, rather than whole objects or names."""
        return self.is_table or self.is_delimited or self.kind.startswith("custom-columns")

    def load_plan(self, sort_keys: Sequence[SortKey] = ()) -> LoadPlan:
        """What ``get`` must load to print this format sorted by ``sort_keys``, from the
        parse trees of the paths printed and sorted by."""
        from kidx.operations.get import LoadMode, LoadPlan

        # the speed-of-light columns of -o wide read the workload and the environment
        shown = frozenset({"workload", "environment"}) if self.kind == "wide" else frozenset()
        if not sort_keys and not self.argument:  # nothing to read paths from (the common case)
            mode = LoadMode.NAMES if self.kind == "name" else LoadMode.TABLE if self.reads_columns \
                else LoadMode.MANIFESTS
            return LoadPlan(mode, shown)
        from kidx.jsonpath import compile_relaxed
        from kidx.query.reference_paths import path_reads

        sorted_by = path_reads(steps for key in sort_keys
                               for path in (compile_relaxed(key.path),) if path is not None
                               for steps in path.steps())
        try:
            printed = path_reads(self._printed_steps())
        except UsageError:  # reported, as before, when the output is rendered
            return LoadPlan(LoadMode.MANIFESTS, sorted_by.roles)
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
    if name in SIMPLE and not equals:
        return OutputFormat(name)
    if name in WITH_ARGUMENT and equals:
        if name == "jsonpath-file":
            return OutputFormat("jsonpath", _read(argument))
        if name == "custom-columns-file":
            return OutputFormat("custom-columns-file", _read(argument))
        if name in ("csv", "tsv") and not argument:
            raise UsageError(f"{name} format specified with '=' but no custom columns given")
        if not argument:
            what = "template" if name == "jsonpath" else "custom columns"
            format_name = "template format" if name == "jsonpath" else "custom-columns format"
            raise UsageError(f"{format_name} specified but no {what} given")
        return OutputFormat(name, argument)
    raise rejected_output(value, ALLOWED)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"error reading {path}: {exc.strerror}") from None
