"""How the JSONPath dialect prints values, as kubectl does: strings bare, numbers as Go
prints them, objects and lists as compact JSON with sorted keys."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

# ---------------------------------------------------------------------------- output


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digits of ``abs(value)`` (as Python's repr and Go agree) and
    the decimal exponent of the first digit."""
    sign, digits, exponent = Decimal(repr(abs(value))).as_tuple()
    assert isinstance(exponent, int), value  # finite numbers only: NaN and infinities print elsewhere
    text = "".join(map(str, digits)).lstrip("0") or "0"
    stripped = text.rstrip("0") or "0"
    exponent += len(text) - len(stripped)
    return stripped, len(stripped) - 1 + exponent


def _fixed(digits: str, exp10: int) -> str:
    if exp10 >= 0:
        whole = digits[:exp10 + 1].ljust(exp10 + 1, "0")
        frac = digits[exp10 + 1:]
    else:
        whole, frac = "0", "0" * (-exp10 - 1) + digits
    return whole + ("." + frac if frac else "")


def _scientific(digits: str, exp10: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{'-' if exp10 < 0 else '+'}{abs(exp10):02d}"


def _float_text(value: float) -> str:
    """Go's ``%v`` for a float64 (how kubectl prints a float): ``2``, ``0.5``, ``1e-06``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, exp10 = _shortest_digits(value)
    if exp10 < -4 or exp10 >= 6:  # strconv 'g' with shortest precision uses 6 here
        return sign + _scientific(digits, exp10)
    return sign + _fixed(digits, exp10)


def _json_float(value: float) -> str:
    """Go's encoding/json for a float64, as kubectl prints numbers inside maps and lists."""
    if not math.isfinite(value):
        return _float_text(value)
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, exp10 = _shortest_digits(value)
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        text = _scientific(digits, exp10)
        if exp10 < 0 and -10 < exp10:  # Go trims e-07 to e-7
            text = text.replace("e-0", "e-")
        return sign + text
    return sign + _fixed(digits, exp10)


def _compact_json(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        out.append("{")
        for i, key in enumerate(sorted(value, key=str)):
            if i:
                out.append(",")
            out.append(json.dumps(str(key), ensure_ascii=False))
            out.append(":")
            _compact_json(value[key], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _compact_json(item, out)
        out.append("]")
    elif isinstance(value, float):
        out.append(_json_float(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    else:
        out.append(format_value(value))


def format_value(value: Any) -> str:
    """One value as ``-o jsonpath`` prints it (also the text of custom-columns cells)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, (dict, list, tuple)):
        out: list[str] = []
        _compact_json(value, out)
        return "".join(out)
    return str(value)
