"""Printer-column values kept in each catalog row, so a ``get`` table reads no object files.

A table of 1,000 runs needs five spec fields per run; reading and parsing 1,000 object
files for them costs more than the rest of the command. So when an object is stored, the
values its kind's printer columns show are stored with it, as a small JSON array, under a
fingerprint of the column paths. A row whose fingerprint no longer matches the kind's
columns (the CRD changed) is simply read in full, as without the cache.
"""

from __future__ import annotations

import json
import zlib
from functools import cache

from kidx.kinds.registry import KindInfo, simple_path_keys
from kidx.store.catalog import decoded_together

FIGURE = "figure"  # a printer column's format: a run's figure, whatever its metric (kidx.output.columns)
MEASUREMENTS = ("measurements",)  # where a figure that is not a latency is found: a list, kept as it is


def _spec_paths(info: KindInfo) -> tuple[tuple[str, ...], ...] | None:
    return _paths_of(info.columns)


@cache  # once per kind and process: this runs for every row
def _paths_of(columns) -> tuple[tuple[str, ...], ...] | None:
    """The spec paths of the kind's columns, or None when one cannot be cached."""
    paths = []
    for column in columns:
        if column.json_path.startswith(".metadata."):
            continue  # metadata comes from the catalog row itself
        keys = simple_path_keys(column.json_path)  # a path in the spec: .spec.NAME[.NAME…]
        if keys is None or len(keys) < 2 or keys[0] != "spec":
            return None
        paths.append(tuple(keys[1:]))
        if column.format == FIGURE and MEASUREMENTS not in paths:
            paths.append(MEASUREMENTS)  # a run's figure may be any metric its measurements hold
    return tuple(paths)


def fingerprint(info: KindInfo) -> str | None:
    return _fingerprint_of(info.columns)


@cache
def _fingerprint_of(columns) -> str | None:
    paths = _paths_of(columns)
    if paths is None:
        return None
    return f"{zlib.crc32(json.dumps(paths).encode()):08x}"


# json.dumps(values, separators=(",", ":"), ensure_ascii=False), without a new encoder per call
_encode_values = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
# a kind's columns -> (its columns, spec paths, "fingerprint:"), or None: looked up by the
# columns' identity, once per row of a bulk write (hashing the columns costs more than the look-up)
_PLANS: dict[int, tuple] = {}


def _plan(info: KindInfo) -> tuple:
    columns = info.columns
    plan = _PLANS.get(id(columns))
    if plan is None or plan[0] is not columns:
        paths, print_key = _spec_paths(info), fingerprint(info)
        if paths is None or print_key is None:
            plan = _PLANS[id(columns)] = (columns, None, None)
        else:
            plan = _PLANS[id(columns)] = (columns, paths, _values_function(paths, f"{print_key}:"))
    return plan


def column_values(info: KindInfo, spec: dict) -> str | None:
    """``fingerprint:[values…]`` for the catalog row; None when the kind cannot be cached."""
    values_of = _plan(info)[2]
    return None if values_of is None else values_of(spec)


def _values_function(paths: tuple[tuple[str, ...], ...], prefix: str):
    """``column_values`` of a kind, made into a function once per kind and process (as
    ``_builder`` is; an apply calls it for every object, and a loop over the paths took
    twice its time): each path's value, None where a step is not a mapping or the value
    is one (a mapping or a list; the measurements are kept as ``_measurements`` says),
    encoded after ``prefix``. The keys are JSON-path names (``simple_path_keys``), written as
    Python string literals."""
    lines = ["def values_of(spec):"]
    for index, path in enumerate(paths):
        value = f"value{index}"
        lines.append(f"    {value} = spec")
        for segment in path:
            lines.append(f"    {value} = {value}.get({segment!r}) if isinstance({value}, dict) else None")
        if path == MEASUREMENTS:
            lines.append(f"    {value} = _measurements(spec, {value})")
        else:
            lines.append(f"    if isinstance({value}, (dict, list)):")
            lines.append(f"        {value} = None")
    lines.append(f"    return {prefix!r} + _encode_values([{', '.join(f'value{i}' for i in range(len(paths)))}])")
    namespace: dict = {"_measurements": _measurements, "_encode_values": _encode_values}
    exec("\n".join(lines), namespace)  # noqa: S102 (the text above, from the kind's own column paths)
    return namespace["values_of"]


def _measurements(spec: dict, value: object) -> list | None:
    """The measurements a figure column reads: only a run's without a latency or a memory
    figure (whose figure they are), each entry's keys in order (the object is canonical
    JSON, a manifest applied as written: the same cache either way)."""
    if not isinstance(value, list) or "timing" in spec or "memory" in spec:
        return None
    return [dict(sorted(entry.items())) if isinstance(entry, dict) else entry for entry in value]


def spec_stubs(info: KindInfo, cached: list[str | None]) -> list[dict | None]:
    """For each cached value, a spec holding just its column values, or None where the
    cache does not apply (no value, or one made for other columns). The values of all the
    rows are decoded together (kidx.store.catalog.decoded_together)."""
    expected, paths = fingerprint(info), _spec_paths(info)
    if expected is None or paths is None:
        return [None] * len(cached)
    prefix = expected + ":"
    start = len(prefix)
    applies = [bool(text) and text.startswith(prefix) for text in cached]  # type: ignore[union-attr]
    payloads = [text[start:] for text, ok in zip(cached, applies, strict=True) if ok]  # type: ignore[index]
    decoded = decoded_together(payloads)
    if decoded is None:  # a damaged value: each read alone, as it was
        decoded = [json.loads(payload) for payload in payloads]
    build = _builder(paths)
    values = iter(decoded)
    return [build(next(values)) if ok else None for ok in applies]


@cache
def _builder(paths: tuple[tuple[str, ...], ...]):
    """A function from the cached values (in ``paths``' order) to the spec stub: each
    value present at its path, nothing for a None."""

    def build_merged(values: list) -> dict:
        stub: dict = {}
        for path, value in zip(paths, values, strict=False):
            if value is None:
                continue
            node = stub
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = value
        return stub

    firsts = [path[0] for path in paths]
    if len(set(firsts)) != len(firsts):
        return build_merged
    # Where no two paths share their first key, the stub is one statement per value, made
    # into a function once per kind and process (as collections.namedtuple makes its
    # classes): a loop over the paths costs more than the rest of a table row. The keys
    # are JSON-path names (``simple_path_keys``), written as Python string literals.
    lines = ["def build_apart(values):", f"    if len(values) != {len(paths)}:", "        return build_merged(values)",
             "    stub = {}"]
    for index, path in enumerate(paths):
        value = f"values[{index}]"
        for key in reversed(path[1:]):
            value = f"{{{key!r}: {value}}}"
        lines.append(f"    if values[{index}] is not None:")
        lines.append(f"        stub[{path[0]!r}] = {value}")
    lines.append("    return stub")
    namespace: dict = {"build_merged": build_merged}
    exec("\n".join(lines), namespace)  # noqa: S102 (the text above, from the kind's own column paths)
    return namespace["build_apart"]
