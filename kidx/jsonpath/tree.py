"""The JSONPath dialect's parse tree: path selectors, filter expressions and template
parts, each evaluating itself on plain JSON data (kubectl's semantics)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kidx.jsonpath.lexer import _EvaluationError, _node
from kidx.jsonpath.printing import format_value

# ------------------------------------------------------------------------------- AST
#
# Paths are tuples of selectors; each selector maps one value to zero or more values.
# Filters are boolean expressions over operands; operands yield lists of values.


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value[key] for key in sorted(value, key=str)]
    if isinstance(value, list):
        return value
    return []


@_node
class _Child:
    name: str

    def select(self, value: Any) -> Iterable[Any]:
        if isinstance(value, dict) and self.name in value:
            return (value[self.name],)
        return ()


@_node
class _Wildcard:
    def select(self, value: Any) -> Iterable[Any]:
        return _children(value)


def _go_type(value: Any) -> str:
    """The Go type kubectl names in evaluation errors, for a decoded JSON value."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _go_value(value: Any) -> str:
    """Go's ``%v`` of a decoded JSON value (``map[a:1 b:[x y]]``), for error texts."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{_go_value(value[key])}" for key in sorted(value, key=str)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_value(item) for item in value) + "]"
    if value is None:
        return "<nil>"
    return format_value(value)


@_node
class _Array:
    """``[i]``, ``[i:j]``, ``[i:j:k]`` with kubectl's rules: ``[i]`` is ``[i:i+1]``
    (``[]`` is ``[0]``), negative bounds count from the end, a request for no elements
    (``[2:2]``) is empty, and any other bound outside the list, or a start after the
    end, is an error, as is indexing something that is not a list (null gives nothing)."""

    start: int | None
    stop: int | None
    step: int | None
    single: bool = False  # [i]: the end is derived from the start

    def select(self, value: Any) -> Iterable[Any]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise _EvaluationError(f"{_go_type(value)} is not array or slice")
        length = len(value)
        start = 0 if self.start is None else self.start
        if start < 0:
            start += length
        if self.single:
            stop = (self.start or 0) + 1
            if stop <= 0:
                stop += length
        else:
            stop = length if self.stop is None else self.stop
            if stop < 0:
                stop += length
        if stop == start:  # asking for no elements is allowed anywhere
            return ()
        if start >= length or start < 0:
            raise _EvaluationError(f"array index out of bounds: index {start}, length {length}")
        if stop > length or stop < 0:
            raise _EvaluationError(f"array index out of bounds: index {stop - 1}, length {length}")
        if start > stop:
            raise _EvaluationError(f"starting index {start} is greater than ending index {stop}")
        return value[start:stop:self.step or 1]


@_node
class _Union:
    items: tuple[Any, ...]

    def select(self, value: Any) -> Iterable[Any]:
        return [out for item in self.items for out in item.select(value)]


@_node
class _Descendants:
    """``..``: the value and every object or list below it, in pre-order (as kubectl)."""

    def select(self, value: Any) -> Iterator[Any]:
        stack = [value]
        while stack:
            current = stack.pop()
            if isinstance(current, (dict, list)):
                yield current
                stack.extend(reversed(_children(current)))


@_node
class _Filter:
    condition: Any

    def select(self, value: Any) -> Iterable[Any]:
        if isinstance(value, list):
            return [item for item in value if self.condition.test(item)]
        if value is None:
            return ()
        raise _EvaluationError(f"{_go_value(value)} is not array or slice and cannot be filtered")


@_node
class _Path:
    selectors: tuple[Any, ...]
    # derived: the field names when every selector is a plain child (`.metadata.name`),
    # found by a direct walk, the same result without a list per step (table columns run
    # this once per row and column)
    names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if all(type(selector) is _Child for selector in self.selectors):
            object.__setattr__(self, "names", tuple(selector.name for selector in self.selectors))

    def find(self, value: Any) -> list[Any]:
        names = self.names
        if names is not None:
            for name in names:
                if not isinstance(value, dict) or name not in value:
                    return []
                value = value[name]
            return [value]
        current = [value]
        for selector in self.selectors:
            if isinstance(selector, _Union):  # kubectl: each alternative over all values, in turn
                current = [out for part in selector.items for item in current for out in part.select(item)]
            else:
                current = [out for item in current for out in selector.select(item)]
        return current


@_node
class _Literal:
    value: Any

    def values(self, current: Any) -> list[Any]:
        return [self.value]


@_node
class _PathOperand:
    path: _Path

    def values(self, current: Any) -> list[Any]:
        try:
            return self.path.find(current)
        except _EvaluationError:  # inside a filter a path that cannot be followed finds nothing
            return []


@_node
class _Exists:
    operand: _PathOperand

    def test(self, current: Any) -> bool:
        return bool(self.operand.values(current))


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: values of different kinds differ (``true`` is not ``1``)."""
    kind = _kind(a)
    if kind != _kind(b):
        return False
    if kind == "object":
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if kind == "list":
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _ordered(a: Any, b: Any) -> bool:
    """Only numbers with numbers and strings with strings have an order."""
    kind = _kind(a)
    return kind == _kind(b) and kind in ("number", "string")


_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "==": _equal,
    "!=": lambda a, b: not _equal(a, b),
    "<": lambda a, b: _ordered(a, b) and a < b,
    ">": lambda a, b: _ordered(a, b) and a > b,
    "<=": lambda a, b: _ordered(a, b) and a <= b,
    ">=": lambda a, b: _ordered(a, b) and a >= b,
}


@_node
class _Compare:
    op: str
    left: Any
    right: Any

    def test(self, current: Any) -> bool:
        compare = _COMPARISONS[self.op]
        rights = self.right.values(current)
        return any(compare(left, right) for left in self.left.values(current) for right in rights)


@_node
class _Match:
    left: Any
    pattern: Any  # kidx.jsonpath.regex.Regex

    def test(self, current: Any) -> bool:
        return any(isinstance(v, str) and self.pattern.search(v)
                   for v in self.left.values(current))


@_node
class _Not:
    operand: Any

    def test(self, current: Any) -> bool:
        return not self.operand.test(current)


@_node
class _And:
    operands: tuple[Any, ...]

    def test(self, current: Any) -> bool:
        return all(o.test(current) for o in self.operands)


@_node
class _Or:
    operands: tuple[Any, ...]

    def test(self, current: Any) -> bool:
        return any(o.test(current) for o in self.operands)


# Template parts.


@_node
class _Text:
    text: str


@_node
class _Action:
    path: _Path


@_node
class _Range:
    path: _Path
    body: tuple[Any, ...]
