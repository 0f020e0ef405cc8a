"""Runs written as one Parquet table: ``kidx export --format parquet -o FILE`` (written
only: kidx reads no Parquet). ``kidx.operations.export.parquet_rows`` makes the rows.

One row per run. The columns are those of ``Store.records()`` (kidx.api.rows), in its
order, then the run's samples and its speed-of-light figures:

- ``name``, ``digest``, ``status``: strings; ``observedAt``: a timestamp (microseconds,
  UTC), null where the run has none;
- ``metric``, ``statistic``, ``unit``: strings; ``value``, ``low``, ``high``: float64 in
  ``unit`` (``ns`` for a latency, ``B`` for memory), as ``kidx compare`` reads the run;
- ``labels.KEY``: one string column per label key of the selected runs (flattened, not a
  map: the same names as ``Store.records()`` and ``kidx get -o csv`` give, so a query
  reads ``"labels.gpu"``), null where a run has no such label;
- ``ROLE.name``, ``ROLE.digest`` and ``ROLE.spec.PATH`` for the protocol, workload,
  environment and implementation: a column holding only integers is int64, only numbers
  float64, only booleans bool; any other column is strings (a value that is not a string
  written as JSON);
- ``samples``: a list of float64 (the run's ``spec.samples.values``), ``samples.unit``;
- ``sol.bytes``, ``sol.flops`` (the workload's cost), ``sol.bytesPerSecond``,
  ``sol.flopsPerSecond``, ``sol.ofPeak`` and ``sol.ofMeasuredPeak`` (fractions of the
  GPU's published and measured peak): float64, null where the cost or the peak is
  unknown (docs/speed-of-light.md).

Writing needs pyarrow (the ``parquet`` extra).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kidx.files import write_output

SOL_COLUMNS = ("sol.bytes", "sol.flops", "sol.bytesPerSecond", "sol.flopsPerSecond", "sol.ofPeak",
               "sol.ofMeasuredPeak")
_FLOATS = ("value", "low", "high", *SOL_COLUMNS)
_STRINGS = ("name", "digest", "status", "metric", "statistic", "unit", "samples.unit")


@dataclass
class ParquetReport:
    runs: int
    columns: int
    size: int


def write_parquet(rows: list[dict], names: list[str], path: Path) -> ParquetReport:
    """Write ``rows``, in the columns ``names``, to ``path`` through kidx/files.py (the old
    file or the whole new one, synced to disk before it replaces the old: the user's data)."""
    pa, pq = require_pyarrow()
    fields, arrays = [], []
    for name in names:
        values = [row.get(name) for row in rows]
        kind, values = _column_type(pa, name, values)
        fields.append(pa.field(name, kind))
        arrays.append(pa.array(values, type=kind))
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    sink = pa.BufferOutputStream()  # whole in memory first: a pipe has no size to ask afterwards
    pq.write_table(table, sink)
    data = sink.getvalue().to_pybytes()
    write_output(path, data, sync=True)
    return ParquetReport(len(rows), len(names), len(data))


def _column_type(pa, name: str, values: list) -> tuple[Any, list]:
    """The column's Arrow type and its values as that type takes them."""
    if name == "observedAt":
        return pa.timestamp("us", tz="UTC"), values
    if name == "samples":
        return pa.list_(pa.float64()), values
    if name in _FLOATS:
        return pa.float64(), [None if v is None else float(v) for v in values]
    if name in _STRINGS or name.startswith("labels.") or name.endswith((".name", ".digest")):
        return pa.string(), values
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.bool_(), values
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.int64(), values
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.float64(), [None if v is None else float(v) for v in values]
    return pa.string(), [None if v is None else v if isinstance(v, str) else json.dumps(v) for v in values]


def require_pyarrow():
    """pyarrow and pyarrow.parquet, or a MissingDependencyError naming the extra."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        from kidx.errors import MissingDependencyError, install_hint

        raise MissingDependencyError(
            f"kidx export --format parquet needs pyarrow, which is not installed: {install_hint('parquet')}"
        ) from None
    return pyarrow, pyarrow.parquet
