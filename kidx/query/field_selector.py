"""Field selectors (``--field-selector``): kubectl's grammar, kidx's choice of fields.

The syntax and its error texts follow apimachinery's ``pkg/fields/selector.go``
(docs/design.md §6): comma-separated ``FIELD OP VALUE`` terms, OP one of
``=``, ``==``, ``!=``, the first operator in a term splitting it, and ``\\,`` ``\\=``
``\\\\`` as the only escapes in a value. Which fields exist is a server decision in
kubernetes; kidx has no server, so it accepts ``metadata.name``, ``metadata.title`` and
any path into ``spec`` that the kind's schema has (the common wish,
kubernetes/kubectl#1202; see ``kidx.kinds.field_paths``), and answers anything else as
a server would: ``field label not supported: <field>``.

Matching resolves the path in the manifest dict. As with kubernetes' field sets, an
absent field reads as ""; a field that holds a mapping or a list equals no value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kidx.errors import UsageError
from kidx.query.label_selector import trim_space
from kidx.store.catalog import field_text as _field_text


class FieldSelectorError(UsageError):
    """A field selector that does not parse, or names a field kidx cannot select on."""


_METADATA_FIELDS = frozenset({"metadata.name", "metadata.title"})
_IDENTIFIER_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_IDENTIFIER_REST = _IDENTIFIER_START | frozenset("0123456789")


def _is_identifier(segment: str) -> bool:
    """ASCII identifier: what manifest field names look like (``sourceNative``)."""
    return (
        bool(segment)
        and segment[0] in _IDENTIFIER_START
        and all(ch in _IDENTIFIER_REST for ch in segment[1:])
    )


def split_path(field: str) -> list[str]:
    """Split a field path into its segments, checking only its form: names joined by
    dots (``spec.sourceNative.benchmark``). Whether a kind has the field is for
    :func:`check_fields`, which knows the kinds."""
    segments = field.split(".")
    if len(segments) > 1 and all(map(_is_identifier, segments)):
        return segments
    raise FieldSelectorError(f"field label not supported: {field}")


def check_fields(selector: FieldSelector, registry, kinds) -> frozenset[str]:
    """Refuse a field that one of ``kinds`` does not have, as kubectl's server does
    ("field label not supported"), naming the path and, when only the case of a name
    is wrong, the path meant. Returns the references the fields reach through
    (``workload`` for ``workload.spec.parameters.seq``)."""
    from kidx.kinds.field_paths import nearest_field_path, resolve_field_path

    through: set[str] = set()
    for info in kinds:
        for requirement in selector.requirements:
            found = resolve_field_path(registry, info, requirement.field)
            if found is None:
                meant = nearest_field_path(registry, info, requirement.field)
                hint = (f" (did you mean {meant}?)" if meant
                        else f" ({info.plural} have no such field)" if len(kinds) > 1 else "")
                raise FieldSelectorError(f"field label not supported: {requirement.field}{hint}")
            if found.reference is not None:
                through.add(requirement.field.split(".", 1)[0])
    return frozenset(through)


@dataclass(frozen=True)
class FieldRequirement:
    """``field = value`` or ``field != value``; the value is already unescaped."""

    field: str
    operator: str
    value: str
    _segments: tuple[str, ...] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.operator not in ("=", "!="):
            raise ValueError(f"unknown field selector operator {self.operator!r}")
        object.__setattr__(self, "_segments", tuple(split_path(self.field)))

    def matches(self, obj: Mapping) -> bool:
        equal = _field_text(obj, self._segments) == self.value
        return equal if self.operator == "=" else not equal

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"


def escape_value(value: str) -> str:
    """The inverse of unescaping: backslash first, so the added ones are not doubled."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _split_terms(selector: str) -> list[str]:
    """Split on commas that are not escaped; escapes stay in the terms."""
    terms, start, escaped = [], 0, False
    for index, ch in enumerate(selector):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(selector[start:index])
            start = index + 1
    terms.append(selector[start:])
    return terms


_TERM_OPERATORS = ("!=", "==", "=")  # "==" before "=" so no '=' is left on the value


def _split_term(term: str) -> tuple[str, str, str] | None:
    """(field, operator, raw value) split at the first operator; None when there is none."""
    for index in range(len(term)):
        for operator in _TERM_OPERATORS:
            if term.startswith(operator, index):
                return term[:index], operator, term[index + len(operator):]
    return None


def unescape_value(raw: str) -> str:
    """Undo ``\\,`` ``\\=`` ``\\\\``; any other escape or a bare ',' / '=' is an error.

    The bare-character message prints the character's code point (``61`` for '='),
    because kubernetes formats the Go rune with %v; kidx keeps the upstream text.
    """
    out, escaped = [], False
    for ch in raw:
        if escaped:
            if ch not in "\\,=":
                raise FieldSelectorError(
                    f"invalid field selector: invalid escape sequence: \\{ch}"
                )
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise FieldSelectorError(
                f"invalid field selector: unescaped character in value: {ord(ch)}"
            )
        else:
            out.append(ch)
    if escaped:
        raise FieldSelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _parse_term(selector: str, term: str) -> tuple[str, str, str]:
    split = _split_term(term)
    if split is None:
        raise FieldSelectorError(f"invalid selector: '{selector}'; can't understand '{term}'")
    field, operator, raw = split
    return field, "!=" if operator == "!=" else "=", unescape_value(raw)


class FieldSelector:
    """An AND of FieldRequirements; the empty selector matches everything."""

    __slots__ = ("requirements", "_tests")

    def __init__(self, requirements: Iterable[FieldRequirement] = ()):
        self.requirements: tuple[FieldRequirement, ...] = tuple(requirements)
        self._tests = tuple(requirement.matches for requirement in self.requirements)

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        """Parse a ``--field-selector`` argument.

        Like kubernetes, terms are sorted and syntax is checked for every term before
        any field name is: that decides which error a user sees first.
        """
        selector = trim_space(text)
        terms = sorted(term for term in _split_terms(selector) if term)
        parsed = [_parse_term(selector, term) for term in terms]
        return cls(FieldRequirement(*term) for term in parsed)

    @property
    def is_empty(self) -> bool:
        return not self.requirements

    def matches(self, obj: Mapping) -> bool:
        for test in self._tests:
            if not test(obj):
                return False
        return True

    def __str__(self) -> str:
        return ",".join(str(requirement) for requirement in self.requirements)

    def __repr__(self) -> str:
        return f"FieldSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)
