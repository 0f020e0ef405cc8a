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

from collections.abc import Sequence
from typing import Any

from kidx.operations.select.run_rows import LEADING, ROLES, run_rows

__all__ = ["LEADING", "ROLES", "data_frame", "run_rows"]


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
