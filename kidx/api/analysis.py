"""compare and series from Python: the command's request, the command's result.

``compare_request`` and ``series_request`` turn the commands' option values into the
operations' requests (the command line calls them too); ``Comparison`` and
``SeriesResult`` are the results the commands render, with ``to_dict()`` giving the
document ``-o json`` prints, key for key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kidx.analysis.defaults import ALPHA, DEFAULT_THRESHOLD
from kidx.api.arguments import (
    BY_IMPLEMENTATION,
    parse_alpha,
    parse_by,
    parse_field_selector,
    parse_only,
    parse_selector,
    parse_tail,
    parse_threshold,
    reference_values,
)

if TYPE_CHECKING:
    from kidx.operations.analyse.compare import CompareRequest
    from kidx.operations.analyse.series import SeriesRequest


def compare_request(
    names: Sequence[str] = (),
    selector: str | None = None,
    field_selector: str | None = None,
    references: Iterable[str] = (),
    by: str = BY_IMPLEMENTATION,
    baseline: str | None = None,
    threshold: float | None = DEFAULT_THRESHOLD,
    only: str | Iterable[str] | None = None,
    force: bool = False,
    alpha: float = ALPHA,
    aggregate: str | None = None,
    metric: str | None = None,
) -> CompareRequest:
    """``kidx compare``'s options as the operation's request (threshold in percent;
    ``aggregate``: ``--aggregate``'s key, ``operation``, ``implementation`` or ``label=K``;
    ``metric``: ``--metric``, the metric each run is judged by instead of its headline)."""
    from kidx.errors import UsageError
    from kidx.operations.analyse.aggregate import parse_aggregate
    from kidx.operations.analyse.compare import PREVIOUS, CompareRequest

    label_key = parse_by(by)
    if baseline == PREVIOUS and label_key is None:
        raise UsageError(f"--baseline {PREVIOUS} sets each value of a label against the one before it: it needs "
                         "--by label=KEY")
    return CompareRequest(
        **_runs_and_baseline(names, selector, field_selector, references, baseline, threshold),
        label_key=label_key,
        force=force,
        only=parse_only(only),
        alpha=parse_alpha(alpha),
        aggregate=parse_aggregate(aggregate) if aggregate is not None else None,
        metric=metric or None,
    )


def series_request(
    names: Sequence[str] = (),
    selector: str | None = None,
    field_selector: str | None = None,
    references: Iterable[str] = (),
    label: str | None = None,
    baseline: str | None = None,
    threshold: float | None = DEFAULT_THRESHOLD,
    alpha: float = ALPHA,
    tail: int | None = None,
) -> SeriesRequest:
    """``kidx series``'s options as the operation's request (threshold in percent;
    ``tail``: each series' newest points to show, None for all)."""
    from kidx.operations.analyse.series import SeriesRequest

    return SeriesRequest(
        **_runs_and_baseline(names, selector, field_selector, references, baseline, threshold),
        label_key=label,
        alpha=parse_alpha(alpha),
        tail=parse_tail(tail),
    )


def _runs_and_baseline(names: Sequence[str], selector: str | None, field_selector: str | None,
                       references: Iterable[str], baseline: str | None, threshold: float | None) -> dict[str, Any]:
    """What compare's and series' requests share: the runs named or selected, the
    baseline, and the threshold of a verdict, parsed."""
    return {
        "names": list(names),
        "selector": parse_selector(selector),
        "field_selector": parse_field_selector(field_selector),
        "references": reference_values(references),
        "baseline": baseline,
        "threshold": parse_threshold(threshold),
    }


class _Result:
    """An operation's result object, with ``to_dict()``; its attributes are the result's."""

    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        self.result = result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.result, name)

    def __repr__(self) -> str:
        """A summary line (the whole result is ``.result``, its document ``to_dict()``)."""
        parts = [f"{len(getattr(self.result, name))} {name}" for name in ("groups", "series")
                 if hasattr(self.result, name)]
        parts.append(f"{len(self.result.regressions)} regressions")
        return f"{type(self).__name__}({', '.join(parts)})"


class Comparison(_Result):
    """What ``kidx compare`` found: ``groups`` (each with ``rows`` of ``run``, ``verdict``,
    ``judgement``), ``regressions``, ``rule``, ``threshold``, and the runs left out; with
    ``aggregate=``, ``aggregates`` (``to_dict()["aggregates"]``, as ``-o json`` prints them)
    and ``overall``; the operation's own result object is ``.result``."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The document ``kidx compare -o json`` prints."""
        from kidx.output.aggregates import aggregate_document

        document: dict[str, Any] = aggregate_document(self.result)
        return document


class SeriesResult(_Result):
    """What ``kidx series`` found: ``series`` (each with ``points``), ``regressions``,
    ``rule``, and the series and runs left out; the operation's own result object is
    ``.result``."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The document ``kidx series -o json`` prints."""
        from kidx.output.series import series_document

        document: dict[str, Any] = series_document(self.result)
        return document
