"""Options shared by the analysis commands (compare, series, plot)."""

from __future__ import annotations

from kidx.errors import UsageError

ANALYSIS_ERROR_EXIT = 2  # as kidx diff: 1 is kept for "a regression was found"
FORMATS = ("table", "json", "yaml", "csv", "tsv")


def parse_by(value: str) -> str | None:
    """``implementation`` → None; ``label=KEY`` → KEY."""
    if value == "implementation":
        return None
    name, equals, key = value.partition("=")
    if name == "label" and equals and key:
        return key
    raise UsageError(f'invalid --by value "{value}": use "implementation" or "label=KEY"')


def parse_only(value: str | None) -> frozenset:
    if value is None:
        return frozenset()
    verdicts = frozenset(v.strip() for v in value.split(",") if v.strip())
    unknown = sorted(verdicts - {"faster", "slower", "same"})
    if unknown or not verdicts:
        raise UsageError(f'invalid --only value "{value}": use faster, slower or same (comma-separated)')
    return verdicts


def parse_threshold(value: float) -> float:
    if not 0 <= value < 1000:
        raise UsageError(f"invalid --threshold {value:g}: a percentage from 0 up")
    return value / 100
