"""Printer-column values kept in each catalog row, so a ``get`` table reads no object files.

A table of 1,000 runs needs five spec fields per run; reading and parsing 1,000 object
files for them costs more than the rest of the command. So when an object is stored, the
values its kind's printer columns show are stored with it, as a small JSON array, under a
fingerprint of the column paths. A row whose fingerprint no longer matches the kind's
columns (the CRD changed) is simply read in full, as without the cache.
"""

from __future__ import annotations

import json
import re
import zlib
from functools import cache

from kidx.kinds.registry import KindInfo

_SPEC_PATH = re.compile(r"^\.spec(\.[A-Za-z_][A-Za-z0-9_-]*)+$")


def _spec_paths(info: KindInfo) -> tuple[tuple[str, ...], ...] | None:
    return _paths_of(info.columns)


@cache  # once per kind and process: this runs for every row
def _paths_of(columns) -> tuple[tuple[str, ...], ...] | None:
    """The spec paths of the kind's columns, or None when one cannot be cached."""
    paths = []
    for column in columns:
        if column.json_path.startswith(".metadata."):
            continue  # metadata comes from the catalog row itself
        if not _SPEC_PATH.match(column.json_path):
            return None
        paths.append(tuple(column.json_path.split(".")[2:]))
    return tuple(paths)


def fingerprint(info: KindInfo) -> str | None:
    return _fingerprint_of(info.columns)


@cache
def _fingerprint_of(columns) -> str | None:
    paths = _paths_of(columns)
    if paths is None:
        return None
    return f"{zlib.crc32(json.dumps(paths).encode()):08x}"


def column_values(info: KindInfo, spec: dict) -> str | None:
    """``fingerprint:[values…]`` for the catalog row; None when the kind cannot be cached."""
    paths, print_key = _spec_paths(info), fingerprint(info)
    if paths is None or print_key is None:
        return None
    values: list = []
    for path in paths:
        value: object = spec
        for segment in path:
            value = value.get(segment) if isinstance(value, dict) else None
        values.append(value if not isinstance(value, (dict, list)) else None)
    return print_key + ":" + json.dumps(values, separators=(",", ":"), ensure_ascii=False)


def spec_stub(info: KindInfo, cached: str | None, expected: str | None) -> dict | None:
    """A spec holding just the cached column values, or None when the cache does not apply."""
    if not cached or expected is None or not cached.startswith(expected + ":"):
        return None
    stub: dict = {}
    for path, value in zip(_spec_paths(info) or (), json.loads(cached[len(expected) + 1:]), strict=False):
        if value is None:
            continue
        node = stub
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return stub
