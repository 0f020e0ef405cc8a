"""The JSONPath dialect's parser: tokens into the parse tree (kubectl's grammar and
messages)."""

from __future__ import annotations

import json
from typing import Any

from kidx.jsonpath.lexer import (
    _PATH_START,
    AND,
    COLON,
    COMMA,
    CURRENT,
    DESCEND,
    DESCEND_FIELD,
    DESCEND_STAR,
    DOT,
    DOT_STAR,
    EOF,
    FIELD,
    IDENT,
    LBRACKET,
    LPAREN,
    MAX_NESTING,
    NOT,
    NUMBER,
    OP,
    OR,
    QUESTION,
    RBRACE,
    RBRACKET,
    ROOT,
    RPAREN,
    STAR,
    STRING,
    TEXT,
    _Lexer,
    _SyntaxError,
    _Token,
)
from kidx.jsonpath.tree import (
    _Action,
    _And,
    _Array,
    _Child,
    _Compare,
    _Descendants,
    _Exists,
    _Filter,
    _Literal,
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
