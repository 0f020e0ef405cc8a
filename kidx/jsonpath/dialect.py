"""kubectl's JSONPath template dialect (``-o jsonpath=…``), evaluated on plain JSON data.

Users bring templates from kubectl, so the dialect is kubectl's (client-go
``util/jsonpath``), not RFC 9535, and the output rules are kubectl's too.

Templates
    Text outside ``{…}`` is copied literally. Inside braces: a path, a string literal
    (``{"\\n"}``, ``{'x'}``), ``{range PATH}…{end}`` (nestable), or nothing (``{}`` is the
    current object).

Paths
    ``$`` and ``@`` (both optional) name the current object: the data at top level, the
    item inside ``{range}``, the element under test inside a filter. (kubectl treats both
    as no-ops; so does kidx, so ``{$.x}`` inside a range means the item's ``x``.)
    ``.name`` child (``\\`` escapes the next character: ``.labels.app\\.kubernetes\\.io/name``;
    ``/`` and ``-`` need no escape); ``['name']`` / ``["name"]`` child, any characters;
    ``[0]``, ``[-1]``, ``[1:3]``, ``[::2]`` index and slice; ``[*]`` and ``.*`` every
    child; ``..name`` recursive descent; ``[0,2]`` / ``['a','b']`` union;
    ``[?(FILTER)]`` keeps the list elements for which FILTER holds.

Filters
    ``@.x OP literal`` with OP one of ``== != < > <= >=``; ``@.x`` alone tests existence
    (the key is present, even if null or false); literals are quoted strings, ints,
    floats, ``true``/``false``; a path may stand on either side (``@.a == @.b``).

Extensions beyond kubectl (kubectl rejects all of these, see its issues #20352, #72220,
kubectl#1341)
    * ``&&``, ``||``, ``!`` and parentheses: ``[?(@.a=="x" && !(@.b>2))]``. ``!`` negates
      the test or comparison after it (``!@.a==1`` is ``!(@.a==1)``, ``!@.a`` is "has no
      ``a``"); ``&&`` binds tighter than ``||``. A filter need not be parenthesised as a
      whole: ``[?(@.a) || (@.b)]`` and ``[?@.a]`` work too.
    * ``=~`` regular-expression search against a quoted pattern in RE2 syntax (Go's, as
      kubectl would use), matched in linear time (``kidx.jsonpath.regex``):
      ``[?(@.metadata.name =~ "^liger-.*rope")]``; non-string values never match.
    * Comparisons never abort: a path yielding several values matches when any value
      satisfies the comparison (kubectl: "can only compare one element at a time");
      values of different types are simply unequal and unordered (kubectl: "incompatible
      types for comparison"); ints and floats compare numerically.

Indexes, as kubectl
    ``[i]`` is ``[i:i+1]`` and ``[]`` is ``[0]``; an index outside the list, a start
    after the end, and an index or filter applied to a non-list (null aside) are
    execution errors (JSONPathEvaluationError, kubectl's texts); a request for no
    elements (``[2:2]``) is empty. Union alternatives apply in turn to all values.

Where kidx is more lenient than kubectl, for predictability
    A missing key is never an error (kubectl's ``--allow-missing-template-keys=true``),
    nor is a field of a non-object, or a path inside a filter that cannot be followed.
    ``[*]`` also lists an object's values (as ``.*`` does). ``['a.b']`` is the key ``a.b``
    (kubectl splits it at the dot). ``.`` not followed by a name is a no-op, so ``{.}`` is
    the whole object and ``.['k']`` works.
    Wildcards and ``..`` visit object keys in sorted order (kubectl: Go map order, random).
    In quoted strings ``\\n \\t \\r \\\\ \\" \\' \\uXXXX`` are escapes and any other
    backslash is kept as written, so regular expressions like ``"\\d+\\.rope"`` need no
    doubling.

Output
    Values from one ``{…}`` are joined by one space; nothing else is added (no trailing
    newline). Strings print raw, ``true``/``false``, ``null``, numbers as Go's ``%v``
    (``2.0`` → ``2``, ``1e-06``, ``1.234567e+06``), objects and lists as compact JSON with
    sorted keys and non-ASCII characters unescaped (``{"app":"web","tier":"fe"}``).

Field names in paths run until whitespace or one of ``. , [ ] $ @ { }``; inside a filter
also ``( ) = ! < > & |`` end a name. Anything else needs ``\\`` or ``['…']``.
"""


from __future__ import annotations

import json
from collections.abc import Iterator
from enum import Enum
from functools import lru_cache
from typing import Any

from kidx.jsonpath.lexer import JSONPathError, JSONPathEvaluationError, _EvaluationError, _SyntaxError
from kidx.jsonpath.parser import _Parser
from kidx.jsonpath.printing import format_value
from kidx.jsonpath.tree import (
    _Action,
    _And,
    _Child,
    _Compare,
    _Descendants,
    _Exists,
    _Filter,
    _Match,
    _Not,
    _Or,
    _Path,
    _PathOperand,
    _Range,
    _Text,
    _Union,
    _Wildcard,
)

__all__ = [
    "JSONPath",
    "JSONPathError",
    "JSONPathEvaluationError",
    "JSONPathTemplate",
    "Step",
    "Steps",
    "evaluate",
    "format_value",
]


# ------------------------------------------------------------------ the parse tree walked


class Step(Enum):
    """What a step of a path reads when it is not one field by name (``JSONPath.steps``)."""

    EVERY = "every"  # .*, [*] and ..: every child, or every value below
    ELEMENTS = "elements"  # [i], [i:j] and [?(…)]: some elements of a list


# One path as its steps in order; each step is the alternatives it may take (a field
# name or a Step), more than one only for a union (``['spec','metadata']``).
Steps = tuple[tuple[str | Step, ...], ...]


def _step(selector: Any) -> str | Step:
    if type(selector) is _Child:
        return selector.name
    if isinstance(selector, (_Wildcard, _Descendants)):
        return Step.EVERY
    return Step.ELEMENTS


def _path_steps(path: _Path) -> Iterator[Steps]:
    """The steps of ``path``, and of every path inside its filters (each relative to the
    element a filter tests)."""
    steps = []
    for selector in path.selectors:
        alternatives = selector.items if isinstance(selector, _Union) else (selector,)
        for alternative in alternatives:
            if isinstance(alternative, _Filter):
                yield from _condition_steps(alternative.condition)
        steps.append(tuple(dict.fromkeys(_step(alternative) for alternative in alternatives)))
    yield tuple(steps)


def _condition_steps(condition: Any) -> Iterator[Steps]:
    if isinstance(condition, (_And, _Or)):
        for operand in condition.operands:
            yield from _condition_steps(operand)
    elif isinstance(condition, _Not):
        yield from _condition_steps(condition.operand)
    elif isinstance(condition, _Exists):
        yield from _path_steps(condition.operand.path)
    elif isinstance(condition, (_Compare, _Match)):
        for side in (condition.left, getattr(condition, "right", None)):
            if isinstance(side, _PathOperand):
                yield from _path_steps(side.path)


def _template_steps(parts: tuple[Any, ...]) -> Iterator[Steps]:
    for part in parts:
        if isinstance(part, (_Action, _Range)):
            yield from _path_steps(part.path)
        if isinstance(part, _Range):
            yield from _template_steps(part.body)


# ------------------------------------------------------------------------ public API


class JSONPath:
    """A compiled bare path (no braces), e.g. ``.spec.ports[*].port``."""

    __slots__ = ("expr", "_path")

    def __init__(self, expr: str, path: _Path):
        self.expr = expr
        self._path = path

    @classmethod
    def parse(cls, expr: str, *, display: str | None = None) -> JSONPath:
        """Parse ``expr``; errors name ``display`` (default ``expr``), e.g. the ``{…}`` form."""
        try:
            return cls(expr, _Parser(expr, template=False).bare_path())
        except _SyntaxError as exc:
            raise JSONPathError(expr if display is None else display, str(exc)) from None

    def find(self, data: Any) -> list[Any]:
        """Every value the path reaches, in document order; missing data gives ``[]``.

        Raises JSONPathEvaluationError (its text is kubectl's reason) where kubectl
        reports an execution error."""
        try:
            return self._path.find(data)
        except _EvaluationError as exc:
            raise JSONPathEvaluationError(str(exc)) from None

    def steps(self) -> Iterator[Steps]:
        """The steps of this path, then of each path inside its filters (which read the
        element tested): what the path may read, without evaluating it."""
        return _path_steps(self._path)

    def __repr__(self) -> str:
        return f"JSONPath({self.expr!r})"


class JSONPathTemplate:
    """A parsed ``-o jsonpath`` template."""

    __slots__ = ("text", "_parts")

    def __init__(self, text: str, parts: tuple[Any, ...]):
        self.text = text
        self._parts = parts

    @classmethod
    def parse(cls, text: str) -> JSONPathTemplate:
        try:
            return cls(text, _Parser(text, template=True).template())
        except _SyntaxError as exc:
            raise JSONPathError(text, str(exc)) from None

    def find_results(self, data: Any) -> list[list[Any]]:
        """The values of each executed ``{…}`` and text piece, in output order (as
        client-go's ``FindResults``): a ``{range}`` body contributes once per item."""
        results: list[list[Any]] = []
        try:
            self._run(self._parts, data, results)
        except _EvaluationError as exc:
            raise JSONPathEvaluationError(
                f"error executing jsonpath {json.dumps(self.text, ensure_ascii=False)}: "
                f"Error executing template: {exc}") from None
        return results

    def _run(self, parts: tuple[Any, ...], current: Any, results: list[list[Any]]) -> None:
        for part in parts:
            if isinstance(part, _Text):
                results.append([part.text])
            elif isinstance(part, _Action):
                results.append(part.path.find(current))
            else:
                for item in part.path.find(current):
                    self._run(part.body, item, results)

    def steps(self) -> Iterator[Steps]:
        """The steps of every path the template evaluates: its actions, its ranges and
        the paths in their bodies (each relative to an item), and the paths in filters."""
        return _template_steps(self._parts)

    def render(self, data: Any) -> str:
        return "".join(" ".join(format_value(v) for v in values)
                       for values in self.find_results(data))

    def __repr__(self) -> str:
        return f"JSONPathTemplate({self.text!r})"


@lru_cache(maxsize=512)
def _compiled(expr: str) -> JSONPath:
    return JSONPath.parse(expr)


def evaluate(expr: str, data: Any) -> list[Any]:
    """Evaluate a bare path (``.metadata.name``, ``$.a[0]``, ``..name``) on ``data``.

    Compiled paths are cached: table printers call this once per cell. A path that
    cannot be followed finds nothing here, as in kubernetes' printer columns.
    """
    try:
        return _compiled(expr)._path.find(data)
    except _EvaluationError:
        return []
