"""``--sort-by``: kubectl's sort, plus the descending and multi-key sorts users ask for.

kubectl sorts by one relaxed path, ascending, unstable, and aborts on values it cannot
compare (kubernetes/kubernetes#77277, kubernetes/community#7710). kidx accepts
``--sort-by=KEY[,KEY…]`` where KEY is a relaxed path (``.spec.replicas``,
``{.metadata.name}``, see ``kidx.jsonpath.relaxed_path``) optionally prefixed by ``-`` for
descending order, and sorts stably, so equal objects keep their input order.

Per key, only the first value the path yields counts. The order is total, so every input
sorts the same way every time:

    missing < null < numbers < strings < booleans < objects and lists

Numbers compare numerically (ints with floats); strings in natural order, like current
kubectl (sortorder.NaturalLess: ``web-2`` < ``web-10``; digit runs compare as integers,
then fewer leading zeros first, other characters byte-wise, and digits before other
characters); ``false`` < ``true``; objects and lists by their compact JSON text. A
descending key reverses exactly this order, so missing values come last. kubectl also
compares two strings that both parse as Kubernetes quantities (``100m``, ``1Gi``) as
quantities; kidx does not, because version-like strings (``2.10`` vs ``2.9``) are common
in a benchmark index and natural order sorts them as people expect.

A path that no object has at all is a mistake, reported as kubectl does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kidx.errors import UsageError
from kidx.jsonpath import RelaxedPathError, compile_relaxed, format_value, relaxed_path, split_outside_brackets

__all__ = ["SortError", "SortKey", "natural_key", "parse_sort_keys", "sort_objects"]


class SortError(UsageError):
    """A sort key that cannot be used."""

    path: str | None = None  # the key no object has, in ``{.…}`` form


_MISSING = object()


@dataclass(frozen=True, slots=True)
class SortKey:
    """One key of ``--sort-by``: a path in normalised ``{.…}`` form and a direction."""

    path: str
    descending: bool = False

    def first_value(self, obj: Any) -> Any:
        """The first value the path yields in ``obj``, or a private "missing" marker."""
        compiled = compile_relaxed(self.path)
        values = compiled.find(obj) if compiled is not None else []
        return values[0] if values else _MISSING

    def __str__(self) -> str:
        return ("-" if self.descending else "") + self.path


def parse_sort_keys(spec: str) -> list[SortKey]:
    """``-.spec.replicas,.metadata.name`` → two keys; an empty spec means no sorting."""
    if not spec.strip():
        return []
    keys = []
    for raw in split_outside_brackets(spec):
        text = raw.strip()
        descending = text.startswith("-")
        path_text = text[1:].strip() if descending else text
        if not path_text:
            raise SortError(f"invalid sort key {json.dumps(text)} in {json.dumps(spec)}, "
                            "expected a path such as .metadata.name or -.spec.replicas")
        try:
            path = relaxed_path(path_text)
        except RelaxedPathError as exc:
            raise SortError(str(exc)) from None
        compile_relaxed(path)  # a bad path is reported before anything is read
        keys.append(SortKey(path, descending))
    return keys


_CHUNKS = re.compile(r"[0-9]+|[^0-9]+")


def natural_key(text: str) -> tuple[tuple[Any, ...], ...]:
    """A sort key giving sortorder.NaturalLess order: equal keys only for equal strings."""
    key: list[tuple[Any, ...]] = []
    for chunk in _CHUNKS.findall(text):
        if "0" <= chunk[0] <= "9":
            zeros = len(chunk) - len(chunk.lstrip("0"))
            key.append((0, int(chunk), zeros))
        else:
            key.append((1, chunk))
    return tuple(key)


def _value_key(value: Any) -> tuple[Any, ...]:
    if value is _MISSING:
        return (0,)
    if value is None:
        return (1,)
    if isinstance(value, bool):
        return (4, int(value))
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return (2, 1)  # after every other number, so the order stays total
        return (2, 0, value)
    if isinstance(value, str):
        return (3, natural_key(value))
    return (5, format_value(value))


def sort_objects(objects: Sequence[dict], keys: Sequence[SortKey] | str, *, require_found: bool = True) -> list[dict]:
    """A new list of ``objects`` sorted by ``keys`` (or a ``--sort-by`` spec string).

    With ``require_found`` (the default) a key that no object has is an error; callers
    that sort several lists (one per kind) check that over all of them instead."""
    if isinstance(keys, str):
        keys = parse_sort_keys(keys)
    items = list(objects)
    if not items or not keys:
        return items
    columns = []
    for key in keys:
        firsts = [key.first_value(obj) for obj in items]
        if require_found and all(v is _MISSING for v in firsts):
            error = SortError(f"couldn't find any field with path {json.dumps(key.path, ensure_ascii=False)} "
                              "in the list of objects")
            error.path = key.path  # for a caller that knows the kinds to name the path meant
            raise error
        columns.append([_value_key(v) for v in firsts])
    order = list(range(len(items)))
    # Stable sorts from the last key to the first give the multi-key order; Python keeps
    # equal elements in input order even with reverse=True.
    for key, column in reversed(list(zip(keys, columns, strict=True))):
        order.sort(key=column.__getitem__, reverse=key.descending)
    return [items[i] for i in order]
