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
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 192:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    years = days // 365
    if years < 8:
        rest = days % 365
        return f"{years}y{rest}d" if rest else f"{years}y"
    return f"{years}y"


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


def nanoseconds(value) -> str:
    """A latency in ns as ns, µs, ms or s: ``417536`` → ``417.5µs``."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value)
    magnitude = abs(value)
    for unit, scale in TIME_STEPS:
        if magnitude >= scale:
            return _significant(value / scale) + unit
    return _significant(value) + NANOSECONDS


def byte_size(value) -> str:
    """A size in bytes in binary units: ``734134784`` → ``700.1MiB``."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value)
    magnitude = abs(value)
    for unit, scale in BINARY_STEPS:
        if magnitude >= scale:
            return _significant(value / scale) + unit
    return f"{value}B"


def rate(value, unit: str) -> str:
    """A rate in decimal units, as datasheets print them: ``1.326TB/s``, ``554.1TFLOP/s``,
    ``1.26k tokens/s``."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value)
    shown = unit if unit[:1] in ("B", "F") else " " + unit
    for prefix, scale in DECIMAL_STEPS:
        if abs(value) >= scale:
            return _significant(value / scale) + prefix + shown
    return _significant(value) + shown


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
