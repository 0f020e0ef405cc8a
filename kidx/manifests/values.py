"""Checks that a parsed document is plain JSON data that kidx can hash and store.

YAML can express things JSON cannot (non-string keys, dates, binary, shared nodes through
aliases); JSON parsers accept NaN and unbounded integers. Every document passes through
``check_json_data`` before it reaches validation, so later layers can assume plain data.
"""

from __future__ import annotations

import math

MAX_DEPTH = 64
MAX_NODES = 200_000  # per document, counting every visit, so alias bombs are caught
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class DataError(ValueError):
    """A value that is not plain JSON data; ``path`` is where it is."""

    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path
        self.message = message


def check_json_data(document: object) -> None:
    """Raise DataError unless the document is bounded, plain JSON data."""
    budget = [MAX_NODES]
    _check(document, "", 0, budget)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check(value: object, path: str, depth: int, budget: list[int]) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise DataError(path, f"document has more than {MAX_NODES} values (YAML aliases expand to copies)")
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return
    if kind is int:
        if not INT64_MIN <= value <= INT64_MAX:
            raise DataError(path, "integer out of range (must fit in 64 bits)")
        return
    if kind is float:
        if not math.isfinite(value):
            raise DataError(path, "NaN and infinite numbers are not allowed")
        return
    if depth >= MAX_DEPTH:
        raise DataError(path, f"document is nested more than {MAX_DEPTH} levels deep")
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise DataError(path, f"mapping key {key!r} is not a string")
            _check(item, _join(path, key), depth + 1, budget)
        return
    if kind is list:
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]", depth + 1, budget)
        return
    raise DataError(path, f"value of type {type(value).__name__} is not JSON data")
