"""Checks that a parsed document is plain JSON data that kidx can hash and store.

YAML can express things JSON cannot (non-string keys, dates, binary, shared nodes through
aliases); JSON parsers accept NaN and unbounded integers. Every document passes through
``check_json_data`` before it reaches validation, so later layers can assume plain data.
"""

from __future__ import annotations

import math
import re
from typing import Any

MAX_DEPTH = 64
MAX_NODES = 200_000  # per document, counting every visit, so alias bombs are caught
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# JSON's \ud800 escapes can produce lone surrogates, which have no UTF-8 form
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_MESSAGE = "string contains a lone UTF-16 surrogate (\\ud800-\\udfff), which is not a character"


class DataError(ValueError):
    """A value that is not plain JSON data; ``path`` is where it is."""

    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path
        self.message = message


def check_json_data(document: object, limit: int = MAX_NODES) -> int:
    """Raise DataError unless the document is bounded, plain JSON data; return its size.

    The fast check answers only yes or no; when it says no, the path-tracking check runs
    to say what and where. ``limit`` caps the values visited (aliases included).
    """
    left = _plain(document, 0, limit)
    if left < 0:
        _check(document, "", 0, [limit], limit)
        raise DataError("", "not plain JSON data")  # unreachable: _check raised
    return limit - left


def _plain(value: Any, depth: int, left: int) -> int:
    """Budget left after ``value``, or -1 when it is not plain, bounded JSON data."""
    # Any: dispatch is on the exact type (subclasses such as bool are not int here), kept
    # in one local for speed, which the type checker cannot follow. A container's scalar
    # members (strings, 64-bit integers, finite floats) are checked in its loop, without a call.
    left -= 1
    kind = type(value)
    if kind is str:
        return left if value.isascii() or not _SURROGATE.search(value) else -1
    if kind is dict:
        if depth >= MAX_DEPTH:
            return -1
        for key, item in value.items():
            if type(key) is not str or not key.isascii() and _SURROGATE.search(key):
                return -1
            member = type(item)
            if member is str:
                if not item.isascii() and _SURROGATE.search(item):
                    return -1
                left -= 1
            elif member is int and INT64_MIN <= item <= INT64_MAX or member is float and item - item == 0.0:
                left -= 1
            else:
                left = _plain(item, depth + 1, left)
            if left < 0:
                return -1
        return left
    if kind is list:
        if depth >= MAX_DEPTH:
            return -1
        for item in value:
            member = type(item)
            if member is str:
                if not item.isascii() and _SURROGATE.search(item):
                    return -1
                left -= 1
            elif member is int and INT64_MIN <= item <= INT64_MAX or member is float and item - item == 0.0:
                left -= 1
            else:
                left = _plain(item, depth + 1, left)
            if left < 0:
                return -1
        return left
    if kind is int:
        return left if INT64_MIN <= value <= INT64_MAX else -1
    if kind is float:
        return left if value - value == 0.0 else -1  # NaN and ±inf give NaN
    if kind is bool or value is None:
        return left
    return -1


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check(value: Any, path: str, depth: int, budget: list[int], limit: int) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise DataError(
            path, f"document has more than {limit} values (the limit for one object; YAML aliases expand to copies)"
        )
    kind = type(value)
    if kind is str:
        if not value.isascii() and _SURROGATE.search(value):
            raise DataError(path, _SURROGATE_MESSAGE)
        return
    if kind is bool or value is None:
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
            if not key.isascii() and _SURROGATE.search(key):
                raise DataError(path, f"mapping key {key!r}: {_SURROGATE_MESSAGE}")
            _check(item, _join(path, key), depth + 1, budget, limit)
        return
    if kind is list:
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]", depth + 1, budget, limit)
        return
    raise DataError(path, f"value of type {type(value).__name__} is not JSON data")
