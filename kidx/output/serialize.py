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
    stream = io.StringIO()
    _yaml_dumper().dump(_sorted(value), stream)
    return stream.getvalue()
