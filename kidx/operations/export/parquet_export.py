"""Selected runs as one Parquet table: ``kidx export --format parquet -o FILE``.

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
from kidx.kinds.registry import KindRegistry
from kidx.store.store import Store

SOL_COLUMNS = ("sol.bytes", "sol.flops", "sol.bytesPerSecond", "sol.flopsPerSecond", "sol.ofPeak",
               "sol.ofMeasuredPeak")
_FLOATS = ("value", "low", "high", *SOL_COLUMNS)
_STRINGS = ("name", "digest", "status", "metric", "statistic", "unit", "samples.unit")


@dataclass(frozen=True)
class _Request:
    names: list[str]
    selector: Any = None
    field_selector: Any = None
    references: tuple = ()


@dataclass
class ParquetReport:
    runs: int
    columns: int
    size: int


def parquet_rows(store: Store, registry: KindRegistry, selected: list[tuple[str, str]] | None) -> list[dict]:
    """The rows of the selected runs (None: every run), sorted by name."""
    from kidx.operations.select.analysed_runs import select_runs
    from kidx.operations.select.run_rows import run_rows

    if selected is not None and not selected:
        return []
    names = [] if selected is None else [name for _, name in selected]
    runs = sorted(select_runs(store, registry, _Request(names)).runs, key=lambda run: run.name)
    rows = run_rows(runs)
    for row, run in zip(rows, runs, strict=True):
        samples = (run.manifest.get("spec") or {}).get("samples")
        values = samples.get("values") if isinstance(samples, dict) else None
        row["samples"] = [float(v) for v in values] if isinstance(values, list) else None
        row["samples.unit"] = samples.get("unit") if isinstance(samples, dict) else None
        row.update(_speed_of_light(run))
    return rows


def _speed_of_light(run) -> dict[str, float | None]:
    from kidx.speed_of_light.achieved import achieved

    figures: dict[str, float | None] = dict.fromkeys(SOL_COLUMNS)
    environment = None
    if run.environment.spec is not None:
        environment = {"spec": run.environment.spec, "metadata": {"annotations": run.environment.annotations or {}}}
    found = achieved(run.manifest.get("spec") or {}, run.workload.spec, environment)
    if found is None:
        return figures
    figures.update({
        "sol.bytes": found.cost.bytes, "sol.flops": found.cost.flops,
        "sol.bytesPerSecond": found.bytes_per_second, "sol.flopsPerSecond": found.flops_per_second,
        "sol.ofPeak": found.peak.sol if found.peak is not None else None,
        "sol.ofMeasuredPeak": found.measured.sol if found.measured is not None else None,
    })
    return {key: float(value) if value is not None else None for key, value in figures.items()}


def write_parquet(rows: list[dict], path: Path) -> ParquetReport:
    """Write ``rows`` to ``path`` through kidx/files.py (the old file or the whole new one,
    synced to disk before it replaces the old: the user's data)."""
    pa, pq = require_pyarrow()
    from kidx.operations.select.run_rows import LEADING

    names = list(rows[0]) if rows else [*LEADING, "samples", "samples.unit", *SOL_COLUMNS]
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
