"""Reading the fields of a Liger benchmark CSV row (the converter is kidx.formats.liger).

Numbers: latency ns = round-half-up(Decimal(ms text) x 10^6); bytes = Decimal(MB text)
x 1,048,576 (Liger's "MB" is MiB) and must be an exact integer; the float of the text is
kept beside it. Times: ``%Y-%m-%d %H:%M:%S`` becomes ``…T…Z``. Workloads: the swept x
value and the extra config become typed parameters under canonical names
(docs/liger-data.md §2.2).

Each reader appends what is wrong as (column, message) to ``bad`` and gives None (or a
stand-in); the converter reports them all at the row's line.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, NamedTuple

from kidx.manifests.values import INT64_MAX, INT64_MIN

Bad = list[tuple[str | None, str]]

EXTRA = "extra_benchmark_config_str"

# Parameter-name aliases (docs/liger-data.md §2.2). The x axis claims its name first.
ALIASES = {
    "T": "seq", "seq_len": "seq",
    "hidden_size": "hidden", "H": "hidden",
    "num_q_heads": "q_heads", "num_attention_heads": "q_heads",
    "num_kv_heads": "kv_heads", "num_key_value_heads": "kv_heads",
    "B": "batch", "bsz": "batch", "batch_size": "batch",
    "V": "vocab", "vocab_size": "vocab",
    "BT": "tokens",
    "intermediate_size": "inter",
    "model_config": "model",
}
_DTYPES = {"bfloat16": "bf16", "float32": "fp32", "float16": "fp16"}

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")
_INTEGER = re.compile(r"[+-]?\d+\Z")
_TIME_TEXT = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\Z")
_EXACT = decimal.Context(prec=1000, traps=[decimal.Inexact, decimal.InvalidOperation])
_WIDE = decimal.Context(prec=1000)
_MIB = 1 << 20


class YValue(NamedTuple):
    """A y value: as stored (integer ns or bytes) and as the source wrote it (a float)."""

    stored: int
    native: float


@dataclass(frozen=True)
class Shape:
    """A row's workload: typed parameters, the short dtype, the readable key, and the
    signature that tells apart what the key can merge (1, 1.0 and "1")."""

    parameters: dict[str, Any]
    dtype: str | None
    key: str
    signature: tuple


def y_value(text: str, column: str, metric: str, bad: Bad) -> YValue | None:
    """The value of a y column, or None for a missing one (nan, empty) or a bad one."""
    if text == "" or text.lower() == "nan":
        return None
    if not _NUMBER.match(text):
        bad.append((column, f"{text!r} is not a number"))
        return None
    number = float(text)
    if number in (float("inf"), float("-inf")):
        bad.append((column, f"{text!r} is out of range"))
        return None
    if number < 0:
        bad.append((column, f"{text!r} is negative"))
        return None
    exact = Decimal(text)
    if metric == "memory":
        try:
            scaled = _EXACT.multiply(exact, Decimal(_MIB))
        except decimal.Inexact:
            scaled = None
        if scaled is None or scaled != scaled.to_integral_value():
            bad.append((column, f"{text} MB is not a whole number of bytes ({text} x 1048576 is not an integer)"))
            return None
        return YValue(_stored_integer(int(scaled), text, "bytes", column, bad), number)
    # speed (or an unknown metric, which is reported elsewhere): ms -> ns, half up
    nanoseconds = exact.scaleb(6, context=_EXACT).quantize(Decimal(1), ROUND_HALF_UP, _WIDE)
    return YValue(_stored_integer(int(nanoseconds), text, "ns", column, bad), number)


def _stored_integer(value: int, text: str, unit: str, column: str, bad: Bad) -> int:
    """``value`` when it fits in 64 bits, as apply requires; else a problem (and 0)."""
    if INT64_MIN <= value <= INT64_MAX:
        return value
    bad.append((column, f"{text!r} is out of range ({Decimal(value):.3e} {unit} does not fit in 64 bits)"))
    return 0


def observed_at(timestamp: str) -> str | None:
    """The row's timestamp as ``observedAt``, or None where it is not a time."""
    match = _TIME_TEXT.match(timestamp)
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups())
    try:
        datetime.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
    return f"{timestamp[:10]}T{timestamp[11:]}.000Z"


def render(value: Any) -> str:
    """A parameter's value as workload keys and titles write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def shape(x_name: str, x_label: str, x_text: str, extra: str, bad: Bad) -> Shape | None:
    """The workload of a row; None only with a problem added to ``bad`` (or an empty x
    name or value, which the converter reports)."""
    config = _config(extra, bad)
    if config is None or not x_name or not x_text:
        return None
    try:
        parameters, dtype = _parameters(x_name, x_label, x_text, config)
    except ValueError as exc:
        bad.append((EXTRA, str(exc)))
        return None
    key = "-".join(f"{name}{render(value)}" for name, value in sorted(parameters.items()))
    if dtype is not None:
        key = f"{key}-{dtype}" if key else dtype
    # the key alone can merge 1, 1.0 and "1" (or strings holding "-"); the signature cannot
    signature = (dtype, tuple(sorted((k, type(v).__name__, v) for k, v in parameters.items())))
    return Shape(parameters, dtype, key, signature)


class _ConfigError(Exception):
    pass


def _config(text: str, bad: Bad) -> dict | None:
    if text in ("", "null"):
        return {}
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)
    except (ValueError, _ConfigError) as exc:
        message = exc.args[0] if isinstance(exc, _ConfigError) else f"not valid JSON: {exc}"
        bad.append((EXTRA, message))
        return None
    if not isinstance(value, dict):
        bad.append((EXTRA, f"expected a JSON object, found {type(value).__name__}"))
        return None
    for key, item in value.items():
        if isinstance(item, float) and not math.isfinite(item) or isinstance(item, int) and not (
                INT64_MIN <= item <= INT64_MAX):
            bad.append((EXTRA, f"key {key!r}: {_number_text(text, key)} is out of range (a number kidx stores is a "
                               "64-bit integer or a finite float)"))
            return None
        if isinstance(item, (dict, list)):
            bad.append((EXTRA, f"key {key!r} holds a {'list' if isinstance(item, list) else 'object'}; "
                               "only scalar values are supported"))
            return None
    return value


def _number_text(config: str, key: str) -> str:
    """The number as written for ``key`` in a config's JSON (json.loads keeps no text)."""
    match = re.search(re.escape(json.dumps(key)) + r"\s*:\s*(-?[0-9][0-9.eE+-]*)", config)
    return match.group(1) if match else "the value"


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _ConfigError(f"key {key!r} appears twice")
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise _ConfigError(f"{name} is not a number kidx can store")


def _typed_x(text: str) -> int | float | str:
    if _INTEGER.match(text):
        return int(text)
    if _NUMBER.match(text):
        number = float(text)
        if number not in (float("inf"), float("-inf")):
            return number
    return text


def x_parameter_name(x_name: str, x_label: str) -> str:
    """The workload parameter a Liger row's x column sets: ``T`` is ``seq`` or ``tokens`` by
    the harness's x label, any other name through the aliases (``kidx plot`` reads it too)."""
    if x_name == "T":
        label = x_label.strip().lower()
        return "tokens" if label in ("total tokens", "num_tokens") else "seq"
    return ALIASES.get(x_name, x_name)


def _short_dtype(text: str) -> str:
    bare = text[len("torch."):] if text.startswith("torch.") else text
    return _DTYPES.get(bare, re.sub(r"[^a-z0-9_]+", "_", bare.lower()).strip("_"))


def _parameters(x_name: str, x_label: str, x_text: str, config: dict) -> tuple[dict, str | None]:
    """Typed workload parameters and the short dtype (docs/liger-data.md §2.2).

    The x axis claims its canonical name first; config keys follow in sorted order (so
    key-order variants of one config give one workload); a key whose canonical name is
    taken (a stale sweep ceiling) keeps its raw name; nulls are swept placeholders and
    are dropped. Raises ValueError for a config that contradicts itself or the x axis.
    """
    x_value = _typed_x(x_text)
    parameters: dict[str, Any] = {x_parameter_name(x_name, x_label): x_value}
    dtype = None
    for key in sorted(config):
        value = config[key]
        if value is None:
            continue
        if key == "dtype" and isinstance(value, str):
            dtype = _short_dtype(value)
            if not dtype:
                raise ValueError(f"dtype {value!r} has no short form")
            continue
        if key == x_name and value == x_value and type(value) is type(x_value):
            continue
        name = ALIASES.get(key, key)
        if name in parameters:
            name = key
        if name in parameters:
            raise ValueError(
                f"key {key!r} = {render(value)} conflicts with parameter {name!r} = "
                f"{render(parameters[name])}"
            )
        parameters[name] = value
    return parameters, dtype
