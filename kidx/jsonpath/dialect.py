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
import math
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from enum import Enum
from functools import lru_cache
from typing import Any, TypeVar, dataclass_transform

from kidx.errors import KidxError, UsageError

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


# Parsing and evaluating recurse once per level of {range}, filter, parenthesis and !;
# real templates use a handful, and this keeps far from Python's recursion limit.
MAX_NESTING = 64


class JSONPathError(UsageError):
    """A template or path that does not parse; the text is kubectl's message shape."""

    def __init__(self, template: str, reason: str):
        self.template = template
        self.reason = reason
        super().__init__(f"error parsing jsonpath {template}, {reason}")


class _SyntaxError(Exception):
    """Raised inside the lexer and parser; the public entry points add the template."""


class JSONPathEvaluationError(KidxError):
    """A path that parses but cannot be followed in the data (kubectl's execution
    errors: an index out of range, an index or filter applied to a non-list)."""


class _EvaluationError(Exception):
    """Raised while walking the data; the public entry points turn it into the above."""


# ----------------------------------------------------------------------------- lexer

# Token kinds. A dot and the name after it form one token because whitespace between
# them is not allowed (``. name`` is not ``.name``), unlike whitespace between tokens.
TEXT = "text"  # literal template text outside braces
LBRACE, RBRACE = "{", "}"
ROOT, CURRENT = "$", "@"

_T = TypeVar("_T")


@dataclass_transform(frozen_default=True)
def _node(cls: type[_T]) -> type[_T]:
    """An immutable record with positional and keyword construction, equality and a repr,
    like ``@dataclass(frozen=True, slots=True)`` but built without generating code: as
    dataclasses, the parse tree's 19 node classes made importing this module take about
    7 ms instead of 1 ms, on every command that prints columns or sorts."""
    annotations = cls.__dict__.get("__annotations__", {})
    names = tuple(annotations)
    defaults = {name: cls.__dict__[name] for name in names if name in cls.__dict__}
    namespace = {key: value for key, value in cls.__dict__.items()
                 if key not in defaults and key not in ("__dict__", "__weakref__")}
    namespace["__slots__"] = names

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__} takes at most {len(names)} arguments")
        values = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in names or key in values:
                raise TypeError(f"{cls.__name__}: unexpected or repeated argument {key!r}")
            values[key] = value
        for name in names:
            object.__setattr__(self, name, values[name] if name in values else defaults[name])
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{cls.__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in names)

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(getattr(self, n) for n in names)))

    def __repr__(self) -> str:
        return f"{cls.__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"

    namespace.update(__init__=__init__, __setattr__=__setattr__, __eq__=__eq__, __hash__=__hash__,
                     __repr__=__repr__)
    return type(cls.__name__, cls.__bases__, namespace)

FIELD = "field"  # .name
DOT = "."  # a dot not followed by a name: no-op
DOT_STAR = ".*"
DESCEND = ".."  # .. followed by a bracket (or nothing)
DESCEND_FIELD = "..name"
DESCEND_STAR = "..*"
LBRACKET, RBRACKET = "[", "]"
QUESTION, COMMA, COLON, STAR = "?", ",", ":", "*"
LPAREN, RPAREN = "(", ")"
OP = "operator"  # == != < > <= >= =~
AND, OR, NOT = "&&", "||", "!"
STRING, NUMBER, IDENT = "string", "number", "identifier"
EOF = "end"

_PATH_START = frozenset({ROOT, CURRENT, FIELD, DOT, DOT_STAR, DESCEND, DESCEND_FIELD,
                         DESCEND_STAR, LBRACKET})

# kubectl's terminators for names; inside filters the operator characters end a name too,
# so ``@.type=="x"`` reads the field ``type`` while ``.a=b`` outside a filter is key ``a=b``.
_NAME_END = frozenset(" \t\r\n.,[]$@{}")
_NAME_END_IN_FILTER = _NAME_END | frozenset("()=!<>&|")
_WHITESPACE = frozenset(" \t\r\n")
_SINGLE = {"$": ROOT, "@": CURRENT, "?": QUESTION, ",": COMMA, ":": COLON, "*": STAR,
           "(": LPAREN, ")": RPAREN}
_TWO_CHAR_OPS = {"==": OP, "!=": OP, "<=": OP, ">=": OP, "=~": OP, "&&": AND, "||": OR}
_STRING_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}


@_node
class _Token:
    kind: str
    value: Any
    text: str  # as written, for messages


def _char_name(ch: str) -> str:
    """Go's ``%#U``: ``U+0026 '&'``, which kubectl uses for unexpected characters."""
    code = f"U+{ord(ch):04X}"
    return f"{code} '{ch}'" if ch.isprintable() else code


class _Lexer:
    """Turns a template (or a bare path) into tokens, one at a time, on demand.

    Lexing on demand keeps errors in source order: the first problem reported is the
    first one a reader meets. The lexer tracks open brackets only to know whether it is
    inside a filter, which changes where a field name ends.
    """

    def __init__(self, source: str, *, template: bool):
        self.src = source
        self.pos = 0
        self.template = template
        self.in_action = not template
        self._brackets: list[bool] = []  # one entry per open '[': True for '[?'

    def next(self) -> _Token:
        if not self.in_action:
            return self._text()
        src = self.src
        while self.pos < len(src) and src[self.pos] in _WHITESPACE:
            self.pos += 1
        if self.pos >= len(src):
            if self.template:
                raise _SyntaxError("unclosed action")
            return _Token(EOF, None, "")
        ch = src[self.pos]
        two = src[self.pos:self.pos + 2]
        if ch == "}" and self.template:
            self.pos += 1
            self.in_action = False
            self._brackets.clear()
            return _Token(RBRACE, None, "}")
        if ch == ".":
            return self._dot()
        if ch == "[":
            self.pos += 1
            rest = src[self.pos:].lstrip()
            self._brackets.append(rest.startswith("?"))
            return _Token(LBRACKET, None, "[")
        if ch == "]":
            self.pos += 1
            if self._brackets:
                self._brackets.pop()
            return _Token(RBRACKET, None, "]")
        if two in _TWO_CHAR_OPS:
            self.pos += 2
            return _Token(_TWO_CHAR_OPS[two], two, two)
        if ch in "<>":
            self.pos += 1
            return _Token(OP, ch, ch)
        if ch == "!":
            self.pos += 1
            return _Token(NOT, ch, ch)
        if ch in _SINGLE:
            self.pos += 1
            return _Token(_SINGLE[ch], ch, ch)
        if ch in "'\"":
            return self._string(ch)
        if ch.isdigit() or (ch in "+-" and src[self.pos + 1:self.pos + 2].isdigit()):
            return self._number()
        if ch == "_" or ch.isalpha():
            start = self.pos
            while self.pos < len(src) and src[self.pos] not in self._name_end():
                self.pos += 1
            word = src[start:self.pos]
            return _Token(IDENT, word, word)
        raise _SyntaxError(f"unrecognized character in action: {_char_name(ch)}")

    def _text(self) -> _Token:
        src = self.src
        if self.pos >= len(src):
            return _Token(EOF, None, "")
        if src[self.pos] == "{":
            self.pos += 1
            self.in_action = True
            return _Token(LBRACE, None, "{")
        end = src.find("{", self.pos)
        end = len(src) if end < 0 else end
        text = src[self.pos:end]
        self.pos = end
        return _Token(TEXT, text, text)

    def _name_end(self) -> frozenset[str]:
        return _NAME_END_IN_FILTER if True in self._brackets else _NAME_END

    def _dot(self) -> _Token:
        start = self.pos
        descend = self.src.startswith("..", self.pos)
        self.pos += 2 if descend else 1
        name, escaped = self._name()
        text = self.src[start:self.pos]
        if descend:
            if name == "" and not escaped:
                return _Token(DESCEND, None, text)
            if name == "*" and not escaped:
                return _Token(DESCEND_STAR, None, text)
            return _Token(DESCEND_FIELD, name, text)
        if name == "" and not escaped:
            return _Token(DOT, None, text)
        if name == "*" and not escaped:
            return _Token(DOT_STAR, None, text)
        return _Token(FIELD, name, text)

    def _name(self) -> tuple[str, bool]:
        """A field name up to the next unescaped terminator; also whether ``\\`` was used."""
        src, ends = self.src, self._name_end()
        out: list[str] = []
        escaped = False
        while self.pos < len(src):
            ch = src[self.pos]
            if ch == "\\":
                if self.pos + 1 >= len(src):
                    raise _SyntaxError("unfinished escape at the end of a field name")
                out.append(src[self.pos + 1])
                self.pos += 2
                escaped = True
            elif ch in ends:
                break
            else:
                out.append(ch)
                self.pos += 1
        return "".join(out), escaped

    def _string(self, quote: str) -> _Token:
        src, start = self.src, self.pos
        self.pos += 1
        out: list[str] = []
        while True:
            if self.pos >= len(src):
                raise _SyntaxError("unterminated quoted string")
            ch = src[self.pos]
            if ch == quote:
                self.pos += 1
                return _Token(STRING, "".join(out), src[start:self.pos])
            if ch == "\\" and self.pos + 1 < len(src):
                nxt = src[self.pos + 1]
                hex4 = src[self.pos + 2:self.pos + 6]
                if nxt in _STRING_ESCAPES:
                    out.append(_STRING_ESCAPES[nxt])
                    self.pos += 2
                elif nxt == "u" and len(hex4) == 4 and all(c in "0123456789abcdefABCDEF" for c in hex4):
                    out.append(chr(int(hex4, 16)))
                    self.pos += 6
                else:  # kept verbatim so that regular expressions read naturally
                    out.append("\\" + nxt)
                    self.pos += 2
                continue
            out.append(ch)
            self.pos += 1

    def _number(self) -> _Token:
        src, start = self.src, self.pos
        self.pos += 1  # sign or first digit
        while self.pos < len(src) and src[self.pos].isdigit():
            self.pos += 1
        is_float = False
        if src[self.pos:self.pos + 1] == "." and src[self.pos + 1:self.pos + 2].isdigit():
            is_float = True
            self.pos += 1
            while self.pos < len(src) and src[self.pos].isdigit():
                self.pos += 1
        if src[self.pos:self.pos + 1] in ("e", "E"):
            mark = self.pos + 1
            if src[mark:mark + 1] in ("+", "-"):
                mark += 1
            if src[mark:mark + 1].isdigit():
                is_float = True
                self.pos = mark
                while self.pos < len(src) and src[self.pos].isdigit():
                    self.pos += 1
        text = src[start:self.pos]
        try:
            value: int | float = float(text) if is_float else int(text)
        except ValueError:  # unicode digits that Python cannot convert
            raise _SyntaxError(f"cannot parse number {text}") from None
        return _Token(NUMBER, value, text)


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


# ---------------------------------------------------------------------------- parser


def _describe(token: _Token) -> str:
    if token.kind == EOF:
        return "end of path"
    if token.kind == RBRACE:
        return 'end of action "}"'
    return json.dumps(token.text, ensure_ascii=False)


class _Parser:
    """Recursive descent over the lexer's tokens, with one token of lookahead.

    Grammar (``{…}`` actions in a template; a bare path is just ``path``)::

        template  := (TEXT | "{" action "}")*
        action    := "range" path | "end" | STRING | path
        path      := ("$" | "@")? segment*
        segment   := FIELD | "." | ".*" | ".." (NAME | "*")? | "[" bracket "]"
        bracket   := "?" or | item ("," item)*
        item      := "*" | STRING | INT | INT? ":" INT? (":" INT?)?
        or        := and ("||" and)*
        and       := not ("&&" not)*
        not       := "!" not | "(" or ")" | operand (OP operand)?
        operand   := path | STRING | NUMBER | "true" | "false"
    """

    def __init__(self, source: str, *, template: bool):
        self.lexer = _Lexer(source, template=template)
        self.tok = self.lexer.next()
        self.depth = 0  # open {range}s, filters, parentheses and !s around the current token

    def enter(self, what: str) -> None:
        """One level deeper; parsing and evaluating recurse, so the depth is bounded."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise _SyntaxError(f"{what} nested more than {MAX_NESTING} levels deep (kidx's limit)")

    def advance(self) -> _Token:
        token = self.tok
        self.tok = self.lexer.next()
        return token

    def unexpected(self, expected: str | None = None) -> _SyntaxError:
        found = _describe(self.tok)
        return _SyntaxError(f"unexpected {found}" + (f", expected {expected}" if expected else ""))

    # -- templates

    def template(self) -> tuple[Any, ...]:
        return self._parts(in_range=False)

    def _parts(self, *, in_range: bool) -> tuple[Any, ...]:
        parts: list[Any] = []
        while True:
            if self.tok.kind == EOF:
                if in_range:
                    raise _SyntaxError("{range} without a matching {end}")
                return tuple(parts)
            if self.tok.kind == TEXT:
                parts.append(_Text(self.advance().value))
                continue
            self.advance()  # "{"
            keyword = self.tok.value if self.tok.kind == IDENT else None
            if keyword == "range":
                self.advance()
                self.enter("{range}")
                path = self.path()
                self._close_action()
                parts.append(_Range(path, self._parts(in_range=True)))
                self.depth -= 1
            elif keyword == "end":
                self.advance()
                self._close_action()
                if not in_range:
                    raise _SyntaxError("not in range, nothing to end")
                return tuple(parts)
            elif self.tok.kind == STRING:
                parts.append(_Text(self.advance().value))
                self._close_action()
            else:
                parts.append(_Action(self.path()))
                self._close_action()

    def _close_action(self) -> None:
        if self.tok.kind != RBRACE:
            if self.tok.kind == IDENT:
                raise _SyntaxError(f"unrecognized identifier {self.tok.value}")
            raise self.unexpected('"}"')
        self.advance()

    # -- paths

    def bare_path(self) -> _Path:
        path = self.path()
        if self.tok.kind != EOF:
            if self.tok.kind == IDENT:
                raise _SyntaxError(f"unrecognized identifier {self.tok.value}")
            raise self.unexpected()
        return path

    def path(self) -> _Path:
        selectors: list[Any] = []
        if self.tok.kind in (ROOT, CURRENT):
            self.advance()
        previous = None
        while True:
            kind = self.tok.kind
            if kind in (DESCEND, DESCEND_FIELD, DESCEND_STAR) and previous == DESCEND:
                raise _SyntaxError("invalid multiple recursive descent")
            if kind == FIELD:
                selectors.append(_Child(self.tok.value))
            elif kind == DOT:
                pass
            elif kind == DOT_STAR:
                selectors.append(_Wildcard())
            elif kind == DESCEND:
                selectors.append(_Descendants())
            elif kind == DESCEND_FIELD:
                selectors += [_Descendants(), _Child(self.tok.value)]
            elif kind == DESCEND_STAR:
                selectors += [_Descendants(), _Wildcard()]
            elif kind == LBRACKET:
                previous = kind
                selectors.append(self._bracket())
                continue
            else:
                return _Path(tuple(selectors))
            previous = kind
            self.advance()

    def _bracket(self) -> Any:
        self.advance()  # "["
        if self.tok.kind == QUESTION:
            self.advance()
            self.enter("filters")
            condition = self._or()
            self._close_bracket("unterminated filter")
            self.depth -= 1
            return _Filter(condition)
        items = [self._item()]
        while self.tok.kind == COMMA:
            self.advance()
            items.append(self._item())
        self._close_bracket("unterminated array")
        return items[0] if len(items) == 1 else _Union(tuple(items))

    def _close_bracket(self, unterminated: str) -> None:
        if self.tok.kind in (EOF, RBRACE):
            raise _SyntaxError(unterminated)
        if self.tok.kind != RBRACKET:
            raise self.unexpected('"]"')
        self.advance()

    def _item(self) -> Any:
        if self.tok.kind == STAR:
            self.advance()
            return _Wildcard()
        if self.tok.kind == STRING:
            return _Child(self.advance().value)
        bounds: list[int | None] = [self._int(), None, None]
        colons = 0
        while self.tok.kind == COLON and colons < 2:
            self.advance()
            colons += 1
            bounds[colons] = self._int()
        if colons == 0:
            if bounds[0] is None:
                if self.tok.kind == RBRACKET:  # kubectl reads [] as [0]
                    return _Array(None, None, None, single=True)
                if self.tok.kind == COMMA:
                    raise _SyntaxError("empty array index")
                if self.tok.kind in (EOF, RBRACE):
                    raise _SyntaxError("unterminated array")
                raise _SyntaxError(f"invalid array index {self.tok.text}")
            return _Array(bounds[0], None, None, single=True)
        start, stop, step = bounds
        if step is not None and step <= 0:
            raise _SyntaxError("step must be > 0")
        return _Array(start, stop, step)

    def _int(self) -> int | None:
        if self.tok.kind != NUMBER:
            return None
        if not isinstance(self.tok.value, int):
            raise _SyntaxError(f"array index {self.tok.text} is not an integer")
        return self.advance().value

    # -- filters

    def _or(self) -> Any:
        operands = [self._and()]
        while self.tok.kind == OR:
            self.advance()
            operands.append(self._and())
        return operands[0] if len(operands) == 1 else _Or(tuple(operands))

    def _and(self) -> Any:
        operands = [self._not()]
        while self.tok.kind == AND:
            self.advance()
            operands.append(self._not())
        return operands[0] if len(operands) == 1 else _And(tuple(operands))

    def _not(self) -> Any:
        if self.tok.kind == NOT:
            self.advance()
            self.enter("! and parentheses")
            negated = _Not(self._not())
            self.depth -= 1
            return negated
        if self.tok.kind == LPAREN:
            self.advance()
            self.enter("parentheses")
            inner = self._or()
            self.depth -= 1
            if self.tok.kind in (EOF, RBRACE):
                raise _SyntaxError("unterminated filter")
            if self.tok.kind != RPAREN:
                raise self.unexpected('")"')
            self.advance()
            return inner
        left = self._operand()
        if self.tok.kind != OP:
            if isinstance(left, _Literal):
                raise _SyntaxError(
                    f"a filter needs a path or a comparison, not only {json.dumps(left.value)}")
            return _Exists(left)
        op = self.advance().value
        right = self._operand()
        if op != "=~":
            return _Compare(op, left, right)
        if not (isinstance(right, _Literal) and isinstance(right.value, str)):
            raise _SyntaxError("=~ needs a quoted regular expression on its right")
        from kidx.jsonpath.regex import RegexError, compile_regex

        try:
            return _Match(left, compile_regex(right.value))
        except RegexError as exc:
            raise _SyntaxError(
                f"invalid regular expression {json.dumps(right.value, ensure_ascii=False)}: {exc}"
            ) from None

    def _operand(self) -> Any:
        kind = self.tok.kind
        if kind in (STRING, NUMBER):
            return _Literal(self.advance().value)
        if kind == IDENT:
            word = self.tok.value
            if word in ("true", "false"):
                self.advance()
                return _Literal(word == "true")
            raise _SyntaxError(f"unrecognized identifier {word}")
        if kind in _PATH_START:
            return _PathOperand(self.path())
        if kind in (EOF, RBRACE):
            raise _SyntaxError("unterminated filter")
        raise self.unexpected("a path or a literal")


# ---------------------------------------------------------------------------- output


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digits of ``abs(value)`` (as Python's repr and Go agree) and
    the decimal exponent of the first digit."""
    sign, digits, exponent = Decimal(repr(abs(value))).as_tuple()
    assert isinstance(exponent, int), value  # finite numbers only: NaN and infinities print elsewhere
    text = "".join(map(str, digits)).lstrip("0") or "0"
    stripped = text.rstrip("0") or "0"
    exponent += len(text) - len(stripped)
    return stripped, len(stripped) - 1 + exponent


def _fixed(digits: str, exp10: int) -> str:
    if exp10 >= 0:
        whole = digits[:exp10 + 1].ljust(exp10 + 1, "0")
        frac = digits[exp10 + 1:]
    else:
        whole, frac = "0", "0" * (-exp10 - 1) + digits
    return whole + ("." + frac if frac else "")


def _scientific(digits: str, exp10: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{'-' if exp10 < 0 else '+'}{abs(exp10):02d}"


def _float_text(value: float) -> str:
    """Go's ``%v`` for a float64 (how kubectl prints a float): ``2``, ``0.5``, ``1e-06``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, exp10 = _shortest_digits(value)
    if exp10 < -4 or exp10 >= 6:  # strconv 'g' with shortest precision uses 6 here
        return sign + _scientific(digits, exp10)
    return sign + _fixed(digits, exp10)


def _json_float(value: float) -> str:
    """Go's encoding/json for a float64, as kubectl prints numbers inside maps and lists."""
    if not math.isfinite(value):
        return _float_text(value)
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, exp10 = _shortest_digits(value)
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        text = _scientific(digits, exp10)
        if exp10 < 0 and -10 < exp10:  # Go trims e-07 to e-7
            text = text.replace("e-0", "e-")
        return sign + text
    return sign + _fixed(digits, exp10)


def _compact_json(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        out.append("{")
        for i, key in enumerate(sorted(value, key=str)):
            if i:
                out.append(",")
            out.append(json.dumps(str(key), ensure_ascii=False))
            out.append(":")
            _compact_json(value[key], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _compact_json(item, out)
        out.append("]")
    elif isinstance(value, float):
        out.append(_json_float(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    else:
        out.append(format_value(value))


def format_value(value: Any) -> str:
    """One value as ``-o jsonpath`` prints it (also the text of custom-columns cells)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, (dict, list, tuple)):
        out: list[str] = []
        _compact_json(value, out)
        return "".join(out)
    return str(value)


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
