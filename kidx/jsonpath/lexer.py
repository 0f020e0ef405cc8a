"""The JSONPath dialect's errors and tokens: the lexer (``kidx.jsonpath.dialect`` says
what the dialect is)."""

from __future__ import annotations

from typing import Any, TypeVar, dataclass_transform

from kidx.errors import KidxError, UsageError

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
