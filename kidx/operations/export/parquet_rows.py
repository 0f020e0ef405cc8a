"""The rows ``kidx export --format parquet`` writes: one per selected run, the columns of
``Store.records()`` (``kidx.operations.select.run_rows``), then the run's samples and its
speed-of-light figures. The table's columns and their types, and writing the file, are
``kidx.formats.parquet``'s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kidx.formats.parquet import SOL_COLUMNS
from kidx.kinds.registry import KindRegistry
from kidx.store.store import Store


@dataclass(frozen=True)
class _Request:
    names: list[str]
    selector: Any = None
    field_selector: Any = None
    references: tuple = ()


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


def parquet_columns(rows: list[dict]) -> list[str]:
    """The table's columns: the rows', or (no run selected) those every table has."""
    from kidx.operations.select.run_rows import LEADING

    return list(rows[0]) if rows else [*LEADING, "samples", "samples.unit", *SOL_COLUMNS]
