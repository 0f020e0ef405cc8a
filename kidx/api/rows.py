"""Runs as table rows: what ``Store.records`` returns and ``Store.frame`` puts in a DataFrame.

One row per run, with the same columns in every row of a result (``None`` where a run
has no value), in this order:

- ``name``, ``digest``, ``status``, ``observedAt`` (a timezone-aware ``datetime``, UTC
  for times written without a zone; ``None`` when absent or unreadable);
- the headline figure, as ``kidx compare`` reads it: ``metric`` (latency, peak_memory),
  ``statistic`` (the primary one: median, mean, min or max), ``value``, ``low`` and
  ``high`` (p20 and p80, when the run has both) and ``unit`` (``ns`` or ``B``, the stored
  unit); all ``None`` for a run with no figure (not passed, or no number);
- ``labels.KEY`` for every label key of the selected runs, sorted;
- for each referenced object (``protocol``, ``workload``, ``environment``,
  ``implementation``): ``ROLE.name`` and ``ROLE.digest``, then every scalar field of its
  spec as ``ROLE.spec.PATH`` (``workload.spec.parameters.seq``: the path a field
  selector takes), sorted; lists are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kidx.operations.analysed_runs import AnalysedRun

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


def data_frame(rows: list[dict[str, Any]], columns: Sequence[str] | None) -> Any:
    """The rows as a pandas DataFrame (``observedAt`` as datetime64 in UTC)."""
    try:
        import pandas
    except ImportError:
        from kidx.errors import MissingDependencyError, install_hint

        raise MissingDependencyError(
            f"Store.frame() needs pandas, which is not installed: {install_hint('pandas')} "
            "(Store.records() gives the same rows as dicts without it)"
        ) from None
    names = list(rows[0]) if rows else list(columns if columns is not None else LEADING)
    frame = pandas.DataFrame.from_records(rows, columns=names)
    if "observedAt" in frame.columns:
        frame["observedAt"] = pandas.to_datetime(frame["observedAt"], utc=True)
    return frame
