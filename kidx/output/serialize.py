"""Manifests as JSON and YAML text, the way kubectl prints them.

Keys are sorted at every level; JSON is indented by four spaces, YAML by two with list
dashes at the parent's column; both end with a newline. YAML strings are quoted only when
they would otherwise read back as something else (timestamps, numbers, booleans).
"""

from __future__ import annotations

import io
import json
import math


def as_list(items: list[dict]) -> dict:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def to_json(value) -> str:
    """JSON, always valid: a figure that overflowed (a ratio of 1e300 to 1e-300) or is
    undefined is null, never ``Infinity`` or ``NaN``, which no JSON reader takes."""
    try:
        return json.dumps(value, indent=4, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError:  # only then is the value walked
        return json.dumps(_finite(value), indent=4, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def _finite(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


_dumper = None


def _yaml_dumper():
    global _dumper
    if _dumper is None:
        from ruamel.yaml import YAML

        dumper = YAML(typ="safe", pure=False)
        dumper.default_flow_style = False
        dumper.allow_unicode = True
        dumper.width = 1 << 30  # never fold long strings
        dumper.sort_base_mapping_type_on_output = True
        _dumper = dumper
    return _dumper


def _sorted(value):
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def to_yaml(value) -> str:
    """YAML as ruamel.yaml writes it (``_yaml_dumper``), byte for byte. The structure of a
    mapping or list of JSON's kinds of values is laid out here, and each distinct scalar is
    written by ruamel.yaml once, in one call: thousands of runs take about as long as JSON,
    where ruamel.yaml's representer takes six times as long. A value laid out otherwise (a
    string that spans lines, a key too long to be a simple key, a scalar at the top) is
    written by ruamel.yaml whole (tests/output/test_serialize.py holds the two equal)."""
    try:
        return _laid_out(value)
    except _ByRuamel:
        pass
    stream = io.StringIO()
    _yaml_dumper().dump(_sorted(value), stream)
    return stream.getvalue()


class _ByRuamel(Exception):
    """The value is not one ``_laid_out`` writes as ruamel.yaml would: ruamel.yaml writes it."""


_SCALARS = (str, int, float, bool, type(None))
# what YAML reads as a line break: a string holding one is written over several lines
_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")
_KEY_LIMIT = 100  # a longer key may be written as a complex key ("? …"), ruamel.yaml's limit being 128


def _laid_out(value) -> str:
    if not isinstance(value, (dict, list)) or not value:
        raise _ByRuamel
    scalars: dict = {}
    try:
        _collect(value, scalars)
    except RecursionError:
        raise _ByRuamel from None
    texts = _scalar_texts(scalars)
    lines: list[str] = []
    if isinstance(value, dict):
        _mapping(value, 0, lines, texts)
    else:
        _sequence(value, 0, lines, texts)
    lines.append("")
    return "\n".join(lines)


def _collect(value, scalars: dict) -> None:
    """Every distinct scalar of ``value`` (by type and value: 1, 1.0 and True are three)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if type(key) is not str or not key or len(key) > _KEY_LIMIT or any(mark in key for mark in _BREAKS):
                raise _ByRuamel  # not a simple key: ruamel.yaml writes it as "? …"
            scalars[(str, key)] = None
            _collect(item, scalars)
    elif isinstance(value, list):
        for item in value:
            _collect(item, scalars)
    elif type(value) in _SCALARS:
        if type(value) is str and any(mark in value for mark in _BREAKS):
            raise _ByRuamel
        scalars[(type(value), value)] = None
    else:
        raise _ByRuamel


def _scalar_texts(scalars: dict) -> dict:
    """Each scalar as ruamel.yaml writes it, from one list of them all (one line each)."""
    keys = list(scalars)
    stream = io.StringIO()
    _yaml_dumper().dump([value for _, value in keys], stream)
    lines = stream.getvalue().split("\n")
    if len(lines) != len(keys) + 1 or any(not line.startswith("- ") for line in lines[:-1]):
        raise _ByRuamel
    texts = {key: line[2:] for key, line in zip(keys, lines, strict=False)}
    texts[(dict, None)], texts[(list, None)] = "{}", "[]"
    return texts


def _text(value, texts: dict) -> str:
    return texts[(dict, None)] if type(value) is dict else (
        texts[(list, None)] if type(value) is list else texts[(type(value), value)])


def _mapping(value: dict, indent: int, lines: list[str], texts: dict) -> None:
    pad = " " * indent
    for key in sorted(value):
        item = value[key]
        name = texts[(str, key)]
        if item and type(item) is dict:
            lines.append(f"{pad}{name}:")
            _mapping(item, indent + 2, lines, texts)
        elif item and type(item) is list:
            lines.append(f"{pad}{name}:")
            _sequence(item, indent, lines, texts)  # the dashes at the key's column
        else:
            lines.append(f"{pad}{name}: {_text(item, texts)}")


def _sequence(value: list, indent: int, lines: list[str], texts: dict) -> None:
    pad = " " * indent
    for item in value:
        if item and type(item) in (dict, list):
            first = len(lines)
            if type(item) is dict:
                _mapping(item, indent + 2, lines, texts)
            else:
                _sequence(item, indent + 2, lines, texts)
            lines[first] = f"{pad}- {lines[first][indent + 2:]}"
        else:
            lines.append(f"{pad}- {_text(item, texts)}")
