"""Table columns for ``get``: NAME, the CRD's printer columns, labels.

A printer column's ``jsonPath`` is a simple field path in every CRD kidx ships, so it is
compiled into a key list once; anything more elaborate goes through the JSONPath
evaluator. Formats beyond Kubernetes' own: ``nanoseconds`` (``417.5µs``), ``bytes``
(``700.1MiB``), ``figure`` (a run's figure in its unit, whatever its metric: ``417.5µs``,
``1.326TB/s``; the column's path is its latency's) and ``reference`` (a digest shown as the
name of the object it refers to).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from kidx.analysis.measures import figure_median
from kidx.kinds.registry import KindInfo, PrinterColumn, simple_path_keys
from kidx.output.units import age, byte_size, nanoseconds, quantity, short_digest
from kidx.store.column_cache import FIGURE

NONE = "<none>"

ReferenceNamer = Callable[[str], "str | None"]


def _getter(json_path: str) -> Callable[[dict], object]:
    keys = simple_path_keys(json_path)
    if keys is not None:

        def get(obj: dict):
            # JSON values: indexing anything but a mapping by a key is a TypeError
            try:
                for key in keys:
                    obj = obj[key]
            except (KeyError, TypeError):
                return None
            return obj

        return get
    from kidx.jsonpath import evaluate

    def get_any(obj: dict):
        values = evaluate(json_path, obj)
        return values[0] if values else None

    return get_any


def _figure(manifest: dict):
    """A run's figure: (the median, its stored unit), or None."""
    spec = manifest.get("spec") if isinstance(manifest, dict) else None
    return figure_median(spec) if isinstance(spec, dict) else None


def _scalar_text(value) -> str:
    if type(value) is str:  # the usual value, first
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def raw_text(value) -> str:
    """A value for a delimited file: floats in their shortest round-trip form."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return _scalar_text(value)


class ColumnSet:
    """The columns of one kind's table, compiled once per command."""

    def __init__(self, info: KindInfo, wide: bool, namer: ReferenceNamer | None = None):
        self.columns: list[PrinterColumn] = list(info.columns if wide else info.default_columns)
        self._getters = [_figure if c.format == FIGURE else _getter(c.json_path) for c in self.columns]
        self._namer = namer
        # (getter, formatter) per column, each chosen once rather than on every cell
        self._shown = [(get, self._formatter(column)) for column, get in zip(self.columns, self._getters, strict=True)]

    @property
    def headers(self) -> list[str]:
        return [column.name.upper() for column in self.columns]

    def column_cells(self, manifests: list[dict]) -> list[list[str]]:
        """Each column's cells of every manifest, column by column: one map a column rather
        than a call and a comprehension a row (a fifth of the cells' time in a long table)."""
        return [list(map(shown, map(get, manifests))) for get, shown in self._shown]

    def raw_cells(self, manifest: dict) -> list[str]:
        """The same columns for ``-o csv``/``tsv``: numbers as numbers (nanoseconds, bytes),
        timestamps as written, references by name (the digest when not in the store),
        nothing for a missing value."""
        return [self._raw_cell(column, get(manifest)) for column, get in zip(self.columns, self._getters, strict=True)]

    def _raw_cell(self, column: PrinterColumn, value) -> str:
        if value is None:
            return ""
        if column.format == FIGURE and isinstance(value, tuple):
            return raw_text(value[0])  # in its stored unit: ns, B/s, FLOP/s, …
        if column.format == "reference" and isinstance(value, str):
            name = self._namer(value) if self._namer else None
            return name if name is not None else value
        return raw_text(value)

    def _formatter(self, column: PrinterColumn) -> Callable[[object], str]:
        """How the column shows a value: its type and format, ``<none>`` for no value."""
        if column.type == "date":
            return lambda value: age(value if isinstance(value, str) else None)
        if column.format == FIGURE:
            return lambda figure: NONE if figure is None else quantity(*figure)  # type: ignore[misc]
        if column.format == "nanoseconds":
            shown = nanoseconds
        elif column.format == "bytes":
            shown = byte_size
        elif column.format == "reference":
            shown = self._reference
        else:
            shown = _scalar_text
        return lambda value: NONE if value is None else shown(value)

    def _reference(self, value) -> str:
        if not isinstance(value, str):
            return _scalar_text(value)
        name = self._namer(value) if self._namer else None
        return name if name is not None else short_digest(value)


def label_column_header(key: str) -> str:
    """``-L app.kubernetes.io/name`` makes a column headed ``NAME``."""
    return key.rsplit("/", 1)[-1].upper()


def labels_cell(labels: dict[str, str]) -> str:
    return ",".join(f"{key}={labels[key]}" for key in sorted(labels)) or NONE
