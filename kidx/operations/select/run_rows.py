"""Runs as table rows: the columns kidx.api.rows describes (``Store.records``), which
``kidx export --format parquet`` writes too; here, below both, so that an operation can
build them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kidx.operations.select.analysed_runs import AnalysedRun

LEADING = ("name", "digest", "status", "observedAt", "metric", "statistic", "value", "low", "high", "unit")
ROLES = ("protocol", "workload", "environment", "implementation")


def run_rows(runs: Sequence[AnalysedRun], columns: Sequence[str] | None = None,
             label_keys: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The rows of ``runs`` with every column, or only ``columns`` in the order given
    (``labels.KEY`` for a key of ``label_keys``, the store's, even where these runs lack it)."""
    partial = [_row(run) for run in runs]
    if columns is None:
        labels: set[str] = set()
        referenced: dict[str, set[str]] = {role: set() for role in ROLES}
        for row, run in zip(partial, runs, strict=True):
            labels.update(run.labels)
            for key in row:
                role = key.partition(".")[0]
                if role in referenced:
                    referenced[role].add(key)
        names = [*LEADING, *(f"labels.{key}" for key in sorted(labels))]
        for role in ROLES:
            names += [f"{role}.name", f"{role}.digest",
                      *sorted(k for k in referenced[role] if k not in (f"{role}.name", f"{role}.digest"))]
    else:
        names = list(columns)
        _check_columns(names, partial, label_keys)
    return [{name: row.get(name) for name in names} for row in partial]


def _check_columns(names: list[str], rows: list[dict[str, Any]], label_keys: Iterable[str]) -> None:
    """A column no selected run has (a mistyped ``workload.spec.parameter.seq``) is an
    error naming the nearest real one, not a column of ``None``. With no run selected
    every name is taken: there is nothing to tell a typo from."""
    from kidx.errors import UsageError

    if not rows:
        return
    known = set(LEADING) | {f"{role}.{field}" for role in ROLES for field in ("name", "digest")}
    known |= {f"labels.{key}" for key in label_keys}
    for row in rows:
        known.update(row)
    for name in names:
        if name not in known:
            import difflib

            # a path's likely meaning has its depth and its first part (workload.spec.…)
            alike = sorted(k for k in known if k.count(".") == name.count(".")
                           and k.partition(".")[0] == name.partition(".")[0])
            near = difflib.get_close_matches(name, alike, n=1) or difflib.get_close_matches(name, sorted(known), n=1)
            hint = f' (did you mean "{near[0]}"?)' if near else ""
            raise UsageError(f'unknown column "{name}": no selected run has it{hint}')


def _row(run: AnalysedRun) -> dict[str, Any]:
    from kidx.analysis.measures import observed_moment

    metadata = run.manifest["metadata"]
    measure = run.measure
    observed: datetime | None = observed_moment(run.observed) if run.observed else None
    row: dict[str, Any] = {
        "name": run.name,
        "digest": metadata.get("digest"),
        "status": run.status or None,
        "observedAt": observed,
    }
    if measure is not None:
        row.update(metric=measure.metric, statistic=measure.statistic, value=measure.value, low=measure.low,
                   high=measure.high, unit=measure.unit)
    for key, value in run.labels.items():
        row[f"labels.{key}"] = value
    for role in ROLES:
        referenced = run.reference(role)
        row[f"{role}.name"] = referenced.name
        row[f"{role}.digest"] = referenced.digest
        if referenced.spec is not None:
            _flatten(referenced.spec, f"{role}.spec", row)
    return row


def _flatten(value: dict[str, Any], prefix: str, row: dict[str, Any]) -> None:
    for key, item in value.items():
        path = f"{prefix}.{key}"
        if isinstance(item, dict):
            _flatten(item, path, row)
        elif not isinstance(item, list):
            row[path] = item
