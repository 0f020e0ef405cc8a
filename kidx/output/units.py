"""Human-readable quantities: ages (kubectl's HumanDuration), latencies, byte sizes."""

from __future__ import annotations

from datetime import UTC, datetime

from kidx.units import BINARY_STEPS, BYTES, COUNT, DECIMAL_STEPS, NANOSECONDS, TIME_STEPS, TIMES


def human_duration(seconds: float) -> str:
    """kubectl's ``HumanDuration``: ``45s``, ``2m30s``, ``150m``, ``3h5m``, ``3d4h``, ``400d``, ``2y5d``."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    for unit, size, smaller, smaller_size, both_below, alone_below in _DURATION_UNITS:
        count = s // size
        if count < both_below:
            rest = s % size // smaller_size
            return f"{count}{unit}{rest}{smaller}" if rest else f"{count}{unit}"
        if alone_below is None or count < alone_below:
            return f"{count}{unit}"
    raise AssertionError("unreachable: the last unit has no bound")


# HumanDuration's units, largest last: (unit, its seconds, the next smaller unit, its
# seconds, below how many of the unit the smaller one is shown too, below how many the
# unit is shown alone; past that, the next unit)
_DURATION_UNITS: tuple[tuple[str, int, str, int, int, int | None], ...] = (
    ("m", 60, "s", 1, 10, 180),
    ("h", 3600, "m", 60, 8, 48),
    ("d", 86400, "h", 3600, 8, 365 * 2),
    ("y", 86400 * 365, "d", 86400, 8, None),
)


def parse_timestamp(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


def age(timestamp: str | None, now: datetime | None = None) -> str:
    if now is None:
        # one "now" per process, so a table's rows agree, and each distinct timestamp
        # (a bulk apply gives thousands of rows the same one) is worked out once
        cached = _AGES.get(timestamp)
        if cached is None:
            cached = _AGES[timestamp] = _age(timestamp, _process_now())
        return cached
    return _age(timestamp, now)


_AGES: dict = {}
_NOW: list = []


def _process_now() -> datetime:
    if not _NOW:
        _NOW.append(datetime.now(UTC))
    return _NOW[0]


def _age(timestamp: str | None, now: datetime) -> str:
    moment = parse_timestamp(timestamp) if timestamp else None
    if moment is None:
        return "<unknown>"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return human_duration((now - moment).total_seconds())


def _significant(value: float) -> str:
    """Four significant digits, no trailing zeros: 417.5, 46.83, 1.2."""
    text = f"{value:.4g}"
    if "e" in text and 1 <= abs(value) < 1e15:  # 12340, not 1.234e+04; the extremes stay short: 1e-300
        text = f"{value:.0f}"
    return text


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _in_steps(value: float, steps: tuple[tuple[str, float], ...]) -> str | None:
    """``value`` in the largest of ``steps`` ((unit, its scale), largest first) it
    reaches; None where it reaches none."""
    for unit, scale in steps:
        if abs(value) >= scale:
            return _significant(value / scale) + unit
    return None


def nanoseconds(value) -> str:
    """A latency in ns as ns, µs, ms or s: ``417536`` → ``417.5µs``."""
    if not _number(value):
        return str(value)
    return _in_steps(value, TIME_STEPS) or _significant(value) + NANOSECONDS


def byte_size(value) -> str:
    """A size in bytes in binary units: ``734134784`` → ``700.1MiB``."""
    if not _number(value):
        return str(value)
    return _in_steps(value, BINARY_STEPS) or f"{value}B"


def rate(value, unit: str) -> str:
    """A rate in decimal units, as datasheets print them: ``1.326TB/s``, ``554.1TFLOP/s``,
    ``1.26k tokens/s``."""
    if not _number(value):
        return str(value)
    shown = unit if unit[:1] in ("B", "F") else " " + unit
    return (_in_steps(value, DECIMAL_STEPS) or _significant(value)) + shown


def quantity(value, unit: str) -> str:
    """A measured figure in its unit's readable form: a latency in ns, µs, ms or s, bytes in
    binary units, a rate with decimal prefixes, a ratio as ``1.85x``, a count as a number;
    ``<none>`` where there is none. compare, series, get and the published site all print
    figures through it."""
    if value is None:
        return "<none>"
    if unit == BYTES:
        return byte_size(value)
    if unit == NANOSECONDS:
        return nanoseconds(value)
    if unit == TIMES:
        return _significant(value) + TIMES
    if unit == COUNT:
        return _significant(value)
    return rate(value, unit)


def spread_text(low, high, unit: str, separator: str = "-", none: str = "<none>") -> str:
    """A band ``low-high`` in the unit's readable form (the site separates with `` – ``);
    ``none`` where either end is unknown."""
    if low is None or high is None:
        return none
    return f"{quantity(low, unit)}{separator}{quantity(high, unit)}"


def short_digest(digest: str) -> str:
    """``sha256:`` and the first 12 hex digits, enough to be unique in practice."""
    return digest[:19] if digest.startswith("sha256:") else digest
