"""Argument values shared by the command line and the Python API, read one way.

Selectors are strings in the command line's grammar; ``--by``, ``--only``,
``--threshold``, ``--alpha`` and ``--tail`` are the analysis commands' values. Each bad value raises the
``kidx.errors`` exception with the command line's message, whichever face was used.
"""

from __future__ import annotations

from collections.abc import Iterable

from kidx.errors import UsageError
from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from kidx.query.field_selector import FieldSelector
    from kidx.query.label_selector import LabelSelector

BY_IMPLEMENTATION = "implementation"  # --by's default: compare the implementations within each group


def reference_values(values: Iterable[str]) -> tuple[str, ...]:
    """``--references`` values (``workload/NAME``, a digest, ``TYPE:SELECTOR``), each of
    which the selected objects must refer to; one string is one value, not its letters."""
    return (values,) if isinstance(values, str) else tuple(values)


def parse_selector(text: str | None) -> LabelSelector | None:
    """A label selector (``-l``), or None for none."""
    if text is None:
        return None
    from kidx.query.label_selector import LabelSelector, SelectorError

    try:
        return LabelSelector.parse(text)
    except SelectorError as exc:
        raise UsageError(f'the provided selector "{text}" is not valid: {exc}') from None


def parse_field_selector(text: str | None) -> FieldSelector | None:
    """A field selector (``--field-selector``), references included, or None for none."""
    if text is None:
        return None
    from kidx.query.field_selector import FieldSelector

    return FieldSelector.parse(text)


def parse_by(value: str) -> str | None:
    """``implementation`` → None; ``label=KEY`` → KEY."""
    if value == BY_IMPLEMENTATION:
        return None
    name, equals, key = value.partition("=")
    if name == "label" and equals and key:
        return key
    raise UsageError(f'invalid --by value "{value}": use "{BY_IMPLEMENTATION}" or "label=KEY"')


def parse_only(value: str | Iterable[str] | None) -> frozenset[str]:
    """``--only``: verdicts, comma-separated (or, from Python, any iterable of them)."""
    if value is None:
        return frozenset()
    text = value if isinstance(value, str) else ",".join(value)
    verdicts = frozenset(v.strip() for v in text.split(",") if v.strip())
    from kidx.analysis.significance import VERDICTS  # what --only can keep: every verdict

    unknown = sorted(verdicts - set(VERDICTS))
    if unknown or not verdicts:
        raise UsageError(f'invalid --only value "{text}": use {", ".join(VERDICTS[:-1])} or {VERDICTS[-1]} '
                         "(comma-separated)")
    return verdicts


def _number(value: object, option: str, meaning: str) -> float:
    """A number, as typer reads one from the command line; anything else (``"5%"``) a
    UsageError in the command line's words rather than a TypeError."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"invalid {option} {value!r}: {meaning}, given as a number")
    return float(value)


def parse_alpha(value: float) -> float:
    """``--alpha``: the significance level of the analysis' tests."""
    value = _number(value, "--alpha", "a probability between 0 and 1")
    if not 0 < value < 1:
        raise UsageError(f"invalid --alpha {value:g}: a probability between 0 and 1")
    return value


def parse_tail(value: int | None) -> int | None:
    """``--tail``: how many of each series' newest points to show (None: every point)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"invalid --tail {value!r}: a whole number of points, 1 or more")
    return value


def parse_threshold(value: float | None) -> float | None:
    """``--threshold`` in percent → the fraction the analysis uses; None (not given): the
    threshold follows the evidence (``kidx.analysis.significance``)."""
    if value is None:
        return None
    value = _number(value, "--threshold", "a percentage from 0 up to, not including, 100")
    if not 0 <= value < 100:  # a change within ±threshold is "same": 100% or more would reach a ratio of 0
        raise UsageError(f"invalid --threshold {value:g}: a percentage from 0 up to, not including, 100")
    return value / 100
