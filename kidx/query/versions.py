"""Release values in version order: numeric parts compared as numbers, so 0.5.10 comes
after 0.5.9 (compare's --baseline previous, summary's release range, nearest values)."""

from __future__ import annotations

import re

_PARTS = re.compile(r"\d+|[A-Za-z]+")


def version_key(value: str) -> tuple:
    """Numeric parts compared as numbers: 0.10.0 after 0.9.1."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in _PARTS.findall(value))
