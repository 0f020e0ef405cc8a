"""Label selectors (``-l`` / ``--selector``), parsed and matched exactly as kubectl does.

kidx users bring kubectl habits and scripts, so the grammar, the matching rules and the
error texts follow apimachinery's ``pkg/labels/selector.go`` (docs/design.md §6
§1). The parser is a small tokenizer plus a recursive-descent parser shaped like the Go
one on purpose: the *order* in which problems are detected decides which message a user
sees, and that order is part of the behaviour we copy (e.g. a bad key is reported before
a missing operator, a bad value only after the whole requirement has been read).

Matching is on the hot path (``get`` may test 100k label sets), so each Requirement
compiles itself into a closure once, when it is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from kidx.errors import UsageError
from kidx.query.selector_bounds import SelectorTooLarge as SelectorTooLarge
from kidx.query.selector_bounds import within_bounds
from kidx.records import NamedTuple

# The operators a Requirement can carry. "==" is accepted by the parser but stored as
# "=": the two mean the same thing, and one spelling keeps equality and str() simple.
OPERATORS = ("=", "!=", "in", "notin", "exists", "!", "gt", "lt", "prefix", "ge", "le")
# kidx's own forms, which kubectl refuses to parse (so no kubectl selector changes meaning):
# ``key=PREFIX*`` (a value starting so: liger_version=0.5.*) and ``key>=V``/``key<=V`` (at
# or after, at or before V in version order: 0.5.10 after 0.5.9). The store answers
# kubectl's operators only: ``resolved`` turns these into ``in`` over the label's values.
KIDX_OPERATORS = ("prefix", "ge", "le")

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# Go's unicode.IsSpace set: kubectl TrimSpace()s a selector before parsing it.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def trim_space(text: str) -> str:
    """Trim leading/trailing whitespace the way Go's strings.TrimSpace does."""
    return text.strip(_GO_SPACE)


def go_quote(text: str) -> str:
    """Quote ``text`` like Go's ``%q`` verb, which kubectl uses for values in messages."""
    out = ['"']
    for ch in text:
        out.append(_go_escape(ch))
    out.append('"')
    return "".join(out)


_GO_SIMPLE_ESCAPES = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n",
    "\r": "\\r", "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"',
}


def _go_escape(ch: str) -> str:
    if ch in _GO_SIMPLE_ESCAPES:
        return _GO_SIMPLE_ESCAPES[ch]
    if ch.isprintable():  # same rule as Go's unicode.IsPrint: no C*/Z* except ' '
        return ch
    code = ord(ch)
    if code < 0x80:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


# --------------------------------------------------------------------------- errors


class SelectorError(UsageError):
    """A label selector that does not parse.

    ``str(err)`` is the bare parser message, as apimachinery returns it; the command
    layer shows it inside kubectl's client-side wrapper (see ``wrapped``/``wrap``).
    """

    def __init__(self, message: str, selector: str | None = None):
        super().__init__(message)
        self.message = message
        self.selector = selector

    def wrap(self, selector_text: str) -> str:
        """The full line kubectl prints after ``error: `` for this selector."""
        return f"the provided selector {go_quote(selector_text)} is not valid: {self.message}"

    @property
    def wrapped(self) -> str:
        """``wrap`` applied to the selector this error came from (as parse saw it)."""
        return self.wrap(self.selector if self.selector is not None else "")


class _RequirementError(Exception):
    """Raised inside one requirement; parse() prefixes 'unable to parse requirement: '."""


# ------------------------------------------------------- key and value validation
# apimachinery pkg/api/validate/content (IsLabelKey, IsLabelValue, IsDNS1123Subdomain).

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_NAME_INNER = _ALNUM | frozenset("-_.")
_DNS_END = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_DNS_INNER = _DNS_END | frozenset("-")

_NAME_MAX_BYTES = 63
_VALUE_MAX_BYTES = 63
_SUBDOMAIN_MAX_BYTES = 253

_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE_FMT = "(" + _NAME_FMT + ")?"
_DNS_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _DNS_LABEL_FMT + "(\\." + _DNS_LABEL_FMT + ")*"

_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    quoted = ", or ".join(f"'{example}'" for example in examples)
    return f"{message} (e.g. {quoted}, regex used for validation is '{fmt}')"


def _max_len_error(limit: int) -> str:
    return f"must be no more than {limit} bytes"


_NAME_REGEX_ERROR = _regex_error(_NAME_MSG, _NAME_FMT, "MyName", "my.name", "123-abc")
_VALUE_REGEX_ERROR = _regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345")
_SUBDOMAIN_REGEX_ERROR = _regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com")
_TOO_MANY_SLASHES_ERROR = (
    "a valid label key " + _NAME_REGEX_ERROR
    + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)


def _byte_len(text: str) -> int:
    """Go measures limits in UTF-8 bytes, not characters."""
    return len(text.encode("utf-8", "surrogatepass"))


def _is_name(text: str) -> bool:
    """``([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`` without a regex."""
    if not text or text[0] not in _ALNUM or text[-1] not in _ALNUM:
        return False
    return all(ch in _NAME_INNER for ch in text[1:-1])


def _is_dns_label(text: str) -> bool:
    if not text or text[0] not in _DNS_END or text[-1] not in _DNS_END:
        return False
    return all(ch in _DNS_INNER for ch in text[1:-1])


def _subdomain_errors(prefix: str) -> list[str]:
    errors = []
    if _byte_len(prefix) > _SUBDOMAIN_MAX_BYTES:
        errors.append(_max_len_error(_SUBDOMAIN_MAX_BYTES))
    if not all(_is_dns_label(part) for part in prefix.split(".")):
        errors.append(_SUBDOMAIN_REGEX_ERROR)
    return errors


def key_errors(key: str) -> list[str]:
    """Why ``key`` is not a valid label key (empty list when it is)."""
    prefix, slash, name = key.partition("/")
    errors: list[str] = []
    if not slash:
        name = key
    elif "/" in name:
        return [_TOO_MANY_SLASHES_ERROR]
    elif not prefix:
        errors.append("prefix part must be non-empty")
    else:
        errors.extend("prefix part " + error for error in _subdomain_errors(prefix))
    if not name:
        errors.append("name part must be non-empty")
    elif _byte_len(name) > _NAME_MAX_BYTES:
        errors.append("name part " + _max_len_error(_NAME_MAX_BYTES))
    if not _is_name(name):
        errors.append("name part " + _NAME_REGEX_ERROR)
    return errors


def value_errors(value: str) -> list[str]:
    """Why ``value`` is not a valid label value (empty list when it is)."""
    errors = []
    if _byte_len(value) > _VALUE_MAX_BYTES:
        errors.append(_max_len_error(_VALUE_MAX_BYTES))
    if value and not _is_name(value):
        errors.append(_VALUE_REGEX_ERROR)
    return errors


def _invalid(path: str, value: str, details: list[str]) -> str:
    """apimachinery's field.Invalid(...).Error() text."""
    return f"{path}: Invalid value: {go_quote(value)}: {'; '.join(details)}"


def _aggregate(messages: list[str]) -> str:
    """utilerrors.Aggregate's text: one message bare, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64): optional sign, ASCII digits, 64-bit range."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


# ------------------------------------------------------------------ requirements

LabelTest = Callable[[Mapping[str, str]], bool]


class Requirement:
    """One AND-ed term of a selector: ``key``, an operator from OPERATORS, and values.

    Values are sorted and deduplicated by the parser (kubernetes keeps them in a set);
    'exists' and '!' have none, '=', '!=', 'gt', 'lt' exactly one. A plain slotted class
    rather than a dataclass: class creation is on every ``get -l`` start-up path.
    """

    __slots__ = ("key", "operator", "values", "_test")

    def __init__(self, key: str, operator: str, values: Iterable[str] = ()) -> None:
        if operator not in _COMPILERS:
            raise ValueError(f"unknown label selector operator {operator!r}")
        self.key = key
        self.operator = operator
        self.values: tuple[str, ...] = tuple(values)
        self._test: LabelTest = _COMPILERS[operator](key, self.values)

    def _identity(self) -> tuple:
        return (self.key, self.operator, self.values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Requirement) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        return f"Requirement(key={self.key!r}, operator={self.operator!r}, values={self.values!r})"

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self._test(labels)

    def __str__(self) -> str:
        if self.operator == "exists":
            return self.key
        if self.operator == "!":
            return "!" + self.key
        values = ",".join(sorted(self.values))
        if self.operator in ("in", "notin"):
            return f"{self.key} {self.operator} ({values})"
        if self.operator == "prefix":
            return f"{self.key}={values}*"
        return f"{self.key}{_OPERATOR_TEXT[self.operator]}{values}"


_OPERATOR_TEXT = {"=": "=", "!=": "!=", "gt": ">", "lt": "<", "ge": ">=", "le": "<="}


def _compile_in(key: str, values: tuple[str, ...]) -> LabelTest:
    """'=' and 'in': the key is present and its value is one of ``values``."""
    if len(values) == 1:
        (wanted,) = values
        return lambda labels: labels.get(key) == wanted
    allowed = frozenset(values)
    return lambda labels: labels.get(key) in allowed


def _compile_not_in(key: str, values: tuple[str, ...]) -> LabelTest:
    """'!=' and 'notin': an absent key matches too (get() gives None, never a value)."""
    if len(values) == 1:
        (unwanted,) = values
        return lambda labels: labels.get(key) != unwanted
    refused = frozenset(values)
    return lambda labels: labels.get(key) not in refused


def _compile_exists(key: str, values: tuple[str, ...]) -> LabelTest:
    return lambda labels: key in labels


def _compile_absent(key: str, values: tuple[str, ...]) -> LabelTest:
    return lambda labels: key not in labels


def _compile_compare(greater: bool) -> Callable[[str, tuple[str, ...]], LabelTest]:
    """'gt'/'lt': the label value must parse as an int64, like the bound itself."""

    def compile_(key: str, values: tuple[str, ...]) -> LabelTest:
        bound = parse_int64(values[0]) if len(values) == 1 else None
        if bound is None:
            return lambda labels: False

        def test(labels: Mapping[str, str]) -> bool:
            raw = labels.get(key)
            number = None if raw is None else parse_int64(raw)
            if number is None:
                return False
            return number > bound if greater else number < bound

        return test

    return compile_


def _compile_prefix(key: str, values: tuple[str, ...]) -> LabelTest:
    (start,) = values
    return lambda labels: key in labels and labels[key].startswith(start)


def _compile_version(at_least: bool) -> Callable[[str, tuple[str, ...]], LabelTest]:
    """'ge'/'le': the label value at or after (before) the bound in version order."""

    def compile_(key: str, values: tuple[str, ...]) -> LabelTest:
        from kidx.query.versions import version_key

        bound = version_key(values[0])

        def test(labels: Mapping[str, str]) -> bool:
            raw = labels.get(key)
            if raw is None:
                return False
            order = version_key(raw)
            return order >= bound if at_least else order <= bound

        return test

    return compile_


def resolved(requirements: Iterable[Requirement], label_values: Callable[[str], list[str]]) -> tuple[Requirement, ...]:
    """The requirements with kidx's own forms (``KIDX_OPERATORS``) as ``in`` over the
    values the store has for the key (``label_values(key)``), which every backend answers."""
    out = []
    for requirement in requirements:
        if requirement.operator in KIDX_OPERATORS:
            values = [value for value in label_values(requirement.key) if requirement.matches({requirement.key: value})]
            requirement = Requirement(requirement.key, "in", sorted(values))
        out.append(requirement)
    return tuple(out)


_COMPILERS: dict[str, Callable[[str, tuple[str, ...]], LabelTest]] = {
    "=": _compile_in,
    "in": _compile_in,
    "!=": _compile_not_in,
    "notin": _compile_not_in,
    "exists": _compile_exists,
    "!": _compile_absent,
    "gt": _compile_compare(greater=True),
    "lt": _compile_compare(greater=False),
    "prefix": _compile_prefix,
    "ge": _compile_version(at_least=True),
    "le": _compile_version(at_least=False),
}


def _new_requirement(key: str, operator: str, values: set[str]) -> Requirement:
    """NewRequirement: validate the values (the key was checked while parsing)."""
    ordered = tuple(sorted(values))
    if operator == "=" and len(ordered) == 1 and ordered[0].endswith("*"):  # kidx's prefix form
        start = ordered[0][:-1]
        problems = value_errors(start + "0") if start else []
        if problems:
            raise _RequirementError(_invalid("values[0][" + key + "]", ordered[0], problems))
        return Requirement(key, "prefix", (start,))
    errors = []
    if operator in ("gt", "lt"):
        for index, value in enumerate(ordered):
            if parse_int64(value) is None:
                detail = "for 'Gt', 'Lt' operators, the value must be an integer"
                errors.append(_invalid(f"values[{index}]", value, [detail]))
    for index, value in enumerate(ordered):
        problems = value_errors(value)
        if problems:
            errors.append(_invalid(f"values[{index}][{key}]", value, problems))
    if errors:
        raise _RequirementError(_aggregate(errors))
    return Requirement(key, operator, ordered)


# -------------------------------------------------------------------- tokenizer


class _Tok:
    """Token kinds; each value is how kubernetes names the token in messages."""

    END = "end of string"
    IDENT = "identifier"
    IN = "in"
    NOTIN = "notin"
    OPEN = "("
    CLOSE = ")"
    COMMA = ","
    BANG = "!"
    EQ = "="
    DEQ = "=="
    NEQ = "!="
    GT = ">"
    LT = "<"
    GE = ">="
    LE = "<="


class _Token(NamedTuple):
    kind: str  # one of the _Tok values
    text: str


_SYMBOLS = {
    "(": _Tok.OPEN, ")": _Tok.CLOSE, ",": _Tok.COMMA, "!": _Tok.BANG, "=": _Tok.EQ,
    "==": _Tok.DEQ, "!=": _Tok.NEQ, ">": _Tok.GT, "<": _Tok.LT, ">=": _Tok.GE, "<=": _Tok.LE,
}
_KEYWORDS = {"in": _Tok.IN, "notin": _Tok.NOTIN}
_WHITESPACE = frozenset(" \t\r\n")
_SPECIAL = frozenset("=!(),><")
_WORD_END = _WHITESPACE | _SPECIAL
_END = _Token(_Tok.END, "")


def _tokenize(text: str) -> list[_Token]:
    """Split a selector into tokens; the list always ends with one END token.

    Special characters form the longest symbol they can ("==", "!=", else one char);
    everything between whitespace and special characters is one word, so ``app:web``
    or ``a/b/c`` reach key validation whole and fail there with kubectl's message.
    """
    tokens = []
    position, length = 0, len(text)
    while True:
        while position < length and text[position] in _WHITESPACE:
            position += 1
        if position == length:
            tokens.append(_END)
            return tokens
        if text[position] in _SPECIAL:
            symbol = text[position:position + 2]
            if symbol not in _SYMBOLS:
                symbol = text[position]
            tokens.append(_Token(_SYMBOLS[symbol], symbol))
            position += len(symbol)
        else:
            start = position
            while position < length and text[position] not in _WORD_END:
                position += 1
            word = text[start:position]
            tokens.append(_Token(_KEYWORDS.get(word, _Tok.IDENT), word))


# ----------------------------------------------------------------------- parser


class _Parser:
    """Recursive descent over the token list, mirroring apimachinery's Parser.

    ``in``/``notin`` are keywords only where an operator is expected; everywhere else
    (keys, values) they read as identifiers, which is what the ``values`` flag of
    _peek/_next does (Go's "Values" parser context).
    """

    def __init__(self, text: str):
        self._tokens = _tokenize(text)
        self._position = 0

    def _peek(self, values: bool = True) -> _Token:
        return self._as_context(self._tokens[self._position], values)

    def _next(self, values: bool = True) -> _Token:
        token = self._tokens[self._position]
        if token.kind is not _Tok.END:
            self._position += 1
        return self._as_context(token, values)

    @staticmethod
    def _as_context(token: _Token, values: bool) -> _Token:
        if values and token.kind in (_Tok.IN, _Tok.NOTIN):
            return _Token(_Tok.IDENT, token.text)
        return token

    def parse(self) -> list[Requirement]:
        """selector := requirement ( "," requirement )*  |  nothing."""
        requirements: list[Requirement] = []
        while True:
            token = self._peek()
            if token.kind is _Tok.END:
                return requirements
            if token.kind not in (_Tok.IDENT, _Tok.BANG):
                raise SelectorError(
                    f"found '{token.text}', expected: !, identifier, or 'end of string'"
                )
            try:
                requirements.append(self._requirement())
            except _RequirementError as exc:
                raise SelectorError(f"unable to parse requirement: {exc}") from None
            if self._at_end_after_requirement():
                return requirements

    def _at_end_after_requirement(self) -> bool:
        """Consume what follows a requirement: the end, or a ',' before another one."""
        token = self._next()
        if token.kind is _Tok.END:
            return True
        if token.kind is not _Tok.COMMA:
            raise SelectorError(f"found '{token.text}', expected: ',' or 'end of string'")
        following = self._peek()
        if following.kind not in (_Tok.IDENT, _Tok.BANG):
            raise SelectorError(f"found '{following.text}', expected: identifier after ','")
        return False

    def _requirement(self) -> Requirement:
        key, operator = self._key_and_inferred_operator()
        if operator is not None:
            return _new_requirement(key, operator, set())
        operator = self._operator()
        if operator in ("in", "notin"):
            values = self._value_set()
        else:
            values = self._exact_value()
        return _new_requirement(key, operator, values)

    def _key_and_inferred_operator(self) -> tuple[str, str | None]:
        """``[!] KEY``; returns '!' or 'exists' when no binary operator can follow.

        A '!key' never takes an operator: ``!app=x`` stops after ``!app`` and the '='
        is then reported by the separator check, exactly as kubectl reports it.
        """
        operator = None
        token = self._next()
        if token.kind is _Tok.BANG:
            operator = "!"
            token = self._next()
        if token.kind is not _Tok.IDENT:
            raise _RequirementError(f"found '{token.text}', expected: identifier")
        problems = key_errors(token.text)
        if problems:
            # kubectl validates the key against a nil field path, hence "<nil>:".
            raise _RequirementError(_invalid("<nil>", token.text, problems))
        if operator is None and self._peek().kind in (_Tok.END, _Tok.COMMA):
            operator = "exists"
        return token.text, operator

    _BINARY = {
        _Tok.IN: "in", _Tok.NOTIN: "notin", _Tok.EQ: "=", _Tok.DEQ: "=",
        _Tok.NEQ: "!=", _Tok.GT: "gt", _Tok.LT: "lt", _Tok.GE: "ge", _Tok.LE: "le",
    }

    def _operator(self) -> str:
        token = self._next(values=False)
        operator = self._BINARY.get(token.kind)
        if operator is None:
            raise _RequirementError(
                f"found '{token.text}', expected: in, notin, =, ==, !=, gt, lt"
            )
        return operator

    def _value_set(self) -> set[str]:
        """``( VALUE , ... )`` where an empty entry is the empty string."""
        token = self._next()
        if token.kind is not _Tok.OPEN:
            raise _RequirementError(f"found '{token.text}' expected: '('")  # sic: no comma
        token = self._peek()
        if token.kind is _Tok.CLOSE:
            self._next()
            return {""}
        if token.kind not in (_Tok.IDENT, _Tok.COMMA):
            raise _RequirementError(f"found '{token.text}', expected: ',', ')' or identifier")
        values = self._value_list()
        self._next()  # the ')' that _value_list stopped in front of
        return values

    def _value_list(self) -> set[str]:
        """Entries up to (not including) ')'; "(,a)", "(a,)", "(a,,b)", "(a,,)" all add ""."""
        values: set[str] = set()
        while True:
            token = self._next()
            if token.kind is _Tok.IDENT:
                values.add(token.text)
                following = self._peek()
                if following.kind is _Tok.CLOSE:
                    return values
                if following.kind is not _Tok.COMMA:
                    raise _RequirementError(
                        f"found '{following.text}', expected: ',' or ')'"
                    )
            elif token.kind is _Tok.COMMA:
                if not values:
                    values.add("")
                following = self._peek()
                if following.kind is _Tok.CLOSE:
                    values.add("")
                    return values
                if following.kind is _Tok.COMMA:  # the next comma is read by the next turn
                    values.add("")
            else:
                raise _RequirementError(f"found '{token.text}', expected: ',', or identifier")

    def _exact_value(self) -> set[str]:
        """The single value after =, ==, !=, >, <; nothing before ',' or the end is ""."""
        if self._peek().kind in (_Tok.END, _Tok.COMMA):
            return {""}
        token = self._next()
        if token.kind is not _Tok.IDENT:
            raise _RequirementError(f"found '{token.text}', expected: identifier")
        return {token.text}


# --------------------------------------------------------------------- selector


class LabelSelector:
    """An AND of Requirements, kept sorted by key as kubernetes does.

    The empty selector matches everything. ``str()`` is kubernetes' canonical form,
    which parses back to an equal selector.
    """

    __slots__ = ("requirements", "_tests")

    def __init__(self, requirements: Iterable[Requirement] = ()):
        # sorted() is stable, so requirements sharing a key keep their written order.
        self.requirements: tuple[Requirement, ...] = tuple(
            sorted(requirements, key=lambda requirement: requirement.key)
        )
        self._tests = tuple(requirement._test for requirement in self.requirements)

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse a ``-l`` argument; empty or whitespace-only text selects everything.

        Raises SelectorError carrying kubectl's parser message.
        """
        selector = trim_space(text)
        try:
            requirements = _Parser(selector).parse()
        except SelectorError as exc:
            exc.selector = selector
            raise
        within_bounds(requirements)
        return cls(requirements)

    @property
    def is_empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        for test in self._tests:
            if not test(labels):
                return False
        return True

    def __str__(self) -> str:
        return ",".join(str(requirement) for requirement in self.requirements)

    def __repr__(self) -> str:
        return f"LabelSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)
