"""Validation of manifests against their CRD's structural OpenAPI v3 schema.

jsonschema (Draft 2020-12, with format checking) is the validator of record: every error
message for an invalid document comes from it. It costs about 600 µs per run manifest, so
valid documents -- the bulk of every apply -- take a fast path first: the schema compiled
once into Python functions that answer only "valid or not" (``compile_predicate``), about
10 µs per run manifest. Only a document the fast path rejects meets jsonschema, which is
imported then and not before. The fast path must accept exactly what jsonschema accepts
(property tests check this on documents generated around the CRDs and on schemas of
every shape the fast path writes code for).

A CRD schema becomes a JSON Schema (``to_json_schema``) the way Kubernetes reads it:
OpenAPI's ``nullable: true`` allows null, and ``x-*`` extensions carry no rules. Three
rules follow Kubernetes rather than plain JSON Schema, in both validators alike:
- patterns are read as Go's RE2 (and ECMA-262) reads them: ``$`` only at the very end of
  the text (Python's ``$`` also matches before a final newline) and ``\\d``, ``\\w``, ``\\s``
  ASCII only (Python's match any script's digits);
- integers are strict: ``5.0`` is not an integer (it hashes differently from ``5``);
- ``format: date-time`` is checked strictly as RFC 3339 (``is_date_time``): ASCII digits,
  real calendar dates, valid times.
The fast path refuses any schema keyword it does not know, so it can never silently
ignore a rule.

Messages read ``<path>: <reason>: <jsonschema's message>``, the reason in Kubernetes'
field-error words (``Required value``, ``Unsupported value``, ``Invalid value``, ...), the
values the message quotes written as JSON.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

FieldError = tuple[str, str]  # (field path, message)

KNOWN_KEYWORDS = frozenset(
    {
        "type", "description", "properties", "required", "additionalProperties", "items",
        "enum", "pattern", "format", "minimum", "maximum", "minLength", "maxLength",
        "minItems", "maxItems", "nullable", "anyOf", "x-kubernetes-preserve-unknown-fields",
        "x-kidx-reference", "x-kidx-name-reference", "default", "example",
    }
)


class SchemaCompileError(ValueError):
    pass


def show(value: Any) -> str:
    """A value as Kubernetes prints it in field errors: strings quoted, the rest as JSON."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return text if len(text) <= 80 else text[:77] + "..."
    return json.dumps(value)


# the schema types the fast path checks and the Python types they accept (``type(v) is``):
# integers are strict, 5.0 and 5 hash differently, so only a true integer is one; a
# number is an int or a float; a bool is neither
_PYTHON_TYPES = {
    "object": "dict", "array": "list", "string": "str", "integer": "int", "number": "int or float", "boolean": "bool",
}


def _end_anchored(pattern: str) -> str:
    """The pattern with each ``$`` as ``\\Z``: in ECMA-262 and Go's RE2, which CRD patterns are
    written for, ``$`` matches only at the end of the text; in Python also before a final
    newline, so ``^sha256:[0-9a-f]{64}$`` would accept a digest followed by ``\\n``."""
    out: list[str] = []
    position, in_class = 0, False
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            out.append(pattern[position : position + 2])
            position += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            out.append(char)
            position += 1
            for literal in ("^", "]"):  # "[^" and a leading "]" stay inside the class
                if pattern.startswith(literal, position):
                    out.append(literal)
                    position += 1
            continue
        elif char == "$":
            char = "\\Z"
        out.append(char)
        position += 1
    return "".join(out)


@functools.cache
def pattern_regex(pattern: str) -> re.Pattern:
    """A CRD pattern compiled to match as RE2 does (see the module docstring)."""
    return re.compile(_end_anchored(pattern), re.ASCII)


_DATE_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))\Z"
)
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_date_time(text: Any) -> bool:
    """Whether ``text`` is an RFC 3339 date-time (section 5.6): ASCII digits only, a date
    that exists, hours 00-23, minutes 00-59, seconds 00-59 (60 only for a leap second, at
    23:59 UTC), an offset of at most 23:59. Anything not a string passes (JSON Schema's
    formats constrain strings only)."""
    if type(text) is not str:
        return True
    match = _DATE_TIME.match(text)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    sign, offset_hours, offset_minutes = match.groups()[6:]
    if not 1 <= month <= 12 or hour > 23 or minute > 59 or second > 60:
        return False
    leap_year = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= day <= _DAYS_IN_MONTH[month - 1] + (month == 2 and leap_year):
        return False
    offset = 0
    if sign is not None:
        if int(offset_hours) > 23 or int(offset_minutes) > 59:
            return False
        offset = (int(offset_hours) * 60 + int(offset_minutes)) * (1 if sign == "+" else -1)
    return second < 60 or (hour * 60 + minute - offset) % 1440 == 23 * 60 + 59


CHECKED_FORMATS = {"date-time": is_date_time}  # any other format is an annotation only


Predicate = Callable[[Any], bool]


def compile_predicate(schema: dict) -> Predicate:
    """The fast path: whether a value satisfies ``schema``, nothing more. Must accept
    exactly what jsonschema accepts (see the module docstring).

    It is Python source written from the schema's rules and compiled once per kind: one
    function per object, array or ``anyOf`` in the schema, each scalar field's rules
    written out in place, so that a document costs about one call per object rather
    than several per field. Raises SchemaCompileError for a keyword or type it does
    not know, so it never silently ignores a rule."""
    source = _PredicateSource()
    root = source.function(schema)
    # the source holds only the schema's property names (as literals) and this module's
    # checks; every value the rules compare with is passed in the namespace
    exec("\n\n".join(source.functions), source.namespace)  # noqa: S102
    return source.namespace[root]


_ABSENT = object()  # stands for a property the object does not have
_STRUCTURE = frozenset({"properties", "additionalProperties", "required", "items", "anyOf"})


def _type_mismatch(type_name: str, var: str) -> str:
    """The test that ``var`` is not of the schema type (see _PYTHON_TYPES)."""
    if type_name == "number":
        return f"type({var}) is not int and type({var}) is not float"
    return f"type({var}) is not {_PYTHON_TYPES[type_name]}"


class _PredicateSource:
    """The source of one schema's fast path, function by function."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"_ABSENT": _ABSENT}
        self.functions: list[str] = []

    def constant(self, value: Any) -> str:
        """A name in the generated code for ``value``."""
        name = f"_c{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def function(self, schema: dict) -> str:
        """The name of a new function ``NAME(v) -> bool`` checking ``schema``."""
        type_name = _checked_type(schema)
        name = f"_f{len(self.functions)}"
        position = len(self.functions)
        self.functions.append("")  # the place of this function; nested ones follow it
        lines = ["if v is None: return True"] if schema.get("nullable") else []
        if type_name is not None:
            lines.append(f"if {_type_mismatch(type_name, 'v')}: return False")
        lines += self.scalar_rules(schema, "v", type_name)
        if {"properties", "additionalProperties", "required"} & set(schema):
            lines += self.guarded("object", type_name, "dict", self.object_rules(schema))
        if "items" in schema:
            each_item = ["for y in v:", *_indent(self.field(schema["items"], "y"))]
            lines += self.guarded("array", type_name, "list", each_item)
        if "anyOf" in schema:
            branches = " or ".join(f"{self.function(branch)}(v)" for branch in schema["anyOf"])
            lines.append(f"if not ({branches}): return False")
        self.functions[position] = "\n".join([f"def {name}(v):", *_indent([*lines, "return True"])])
        return name

    @staticmethod
    def guarded(wanted: str, type_name: str | None, python: str, lines: list[str]) -> list[str]:
        """Rules of one type, checked only for a value of that type unless the schema's own
        type says it is one already."""
        if type_name == wanted or not lines:
            return lines
        return [f"if type(v) is {python}:", *_indent(lines)]

    def object_rules(self, schema: dict) -> list[str]:
        lines = [f"if {name!r} not in v: return False" for name in schema.get("required", ())]
        properties = schema.get("properties", {})
        additional = schema.get("additionalProperties")
        open_object = schema.get("x-kubernetes-preserve-unknown-fields") is True or additional is True
        additional_schema = additional if isinstance(additional, dict) else None
        closed = not open_object and additional_schema is None and ("properties" in schema or additional is False)
        if closed:
            lines.append("n = 0")  # the known properties present: any other key is refused
        for name, sub in properties.items():
            body = (["n += 1"] if closed else []) + self.field(sub, "x")
            lines += [f"x = v.get({name!r}, _ABSENT)", "if x is not _ABSENT:", *_indent(body or ["pass"])]
        if additional_schema is not None:
            check = self.field(additional_schema, "y")
            if check and properties:
                known = self.constant(frozenset(properties))
                lines += ["for k, y in v.items():", f"    if k not in {known}:", *_indent(check, 2)]
            elif check:
                lines += ["for y in v.values():", *_indent(check)]
        if closed:
            lines.append("if n != len(v): return False")
        return lines

    def field(self, schema: dict, var: str) -> list[str]:
        """Lines that return False when ``var`` breaks ``schema``: a scalar's rules in
        place, a call for an object, an array or an ``anyOf``."""
        if _STRUCTURE & set(schema):
            return [f"if not {self.function(schema)}({var}): return False"]
        type_name = _checked_type(schema)
        lines = [f"if {_type_mismatch(type_name, var)}: return False"] if type_name is not None else []
        lines += self.scalar_rules(schema, var, type_name)
        if schema.get("nullable") and lines:
            return [f"if {var} is not None:", *_indent(lines)]
        return lines

    def scalar_rules(self, schema: dict, var: str, type_name: str | None) -> list[str]:
        """enum, pattern, format, bounds and lengths, each for the values it speaks of."""
        lines = []
        if "enum" in schema:
            allowed = tuple(schema["enum"])
            if type_name == "string":  # a string is in the list or not; True is never a string
                lines.append(f"if {var} not in {self.constant(allowed)}: return False")
            else:
                # a listed 1 does not admit True (nor 0 False), though they compare equal
                listed = self.constant(
                    lambda v: v in allowed and not (type(v) is bool and not any(a is v for a in allowed)))
                lines.append(f"if not {listed}({var}): return False")
        if "pattern" in schema:
            search = self.constant(pattern_regex(schema["pattern"]).search)
            string = "" if type_name == "string" else f"type({var}) is str and "
            lines.append(f"if {string}{search}({var}) is None: return False")
        if schema.get("format") in CHECKED_FORMATS:
            lines.append(f"if not {self.constant(CHECKED_FORMATS[schema['format']])}({var}): return False")
        number = "" if type_name in ("integer", "number") else f"(type({var}) is int or type({var}) is float) and "
        for keyword, beyond in (("minimum", "<"), ("maximum", ">")):
            if keyword in schema:  # as jsonschema compares (NaN never reaches validation)
                lines.append(f"if {number}{var} {beyond} {self.constant(schema[keyword])}: return False")
        for keyword, measured, schema_type, short in (
            ("minLength", "str", "string", "<"), ("maxLength", "str", "string", ">"),
            ("minItems", "list", "array", "<"), ("maxItems", "list", "array", ">"),
        ):
            if keyword in schema:
                typed = "" if type_name == schema_type else f"type({var}) is {measured} and "
                lines.append(f"if {typed}len({var}) {short} {self.constant(schema[keyword])}: return False")
        return lines


def _checked_type(schema: dict) -> str | None:
    """The schema's type, after refusing keywords and types the fast path does not know."""
    unknown = set(schema) - KNOWN_KEYWORDS
    if unknown:
        raise SchemaCompileError(f"unsupported schema keywords: {', '.join(sorted(unknown))}")
    type_name = schema.get("type")
    if type_name is not None and (not isinstance(type_name, str) or type_name not in _PYTHON_TYPES):
        raise SchemaCompileError(f"unsupported schema type: {type_name!r}")
    return type_name


def _indent(lines: list[str], levels: int = 1) -> list[str]:
    return ["    " * levels + line for line in lines]


def to_json_schema(schema: dict) -> dict:
    """A CRD's structural schema as a JSON Schema: ``nullable`` becomes null allowed, ``x-*``
    extensions go (``x-kubernetes-preserve-unknown-fields`` only keeps an object open,
    which JSON Schema objects are unless they say ``additionalProperties: false``)."""
    converted: dict = {}
    for key, value in schema.items():
        if key.startswith("x-") or key == "nullable":
            continue
        if key == "properties":
            value = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            value = to_json_schema(value)
        elif key == "anyOf":
            value = [to_json_schema(branch) for branch in value]
        converted[key] = value
    if schema.get("nullable"):
        if "type" in converted:
            converted["type"] = [converted["type"], "null"]
        if "enum" in converted and None not in converted["enum"]:
            converted["enum"] = [*converted["enum"], None]
        if "anyOf" in converted:
            converted["anyOf"] = [*converted["anyOf"], {"type": "null"}]
    return converted


def json_schema_validator(schema: dict):
    """jsonschema's validator for a CRD schema: Draft 2020-12 with the readings of the
    module docstring. Imports jsonschema, so it is made only when a document needs it."""
    validator_class, format_checker = _jsonschema_kind()
    return validator_class(to_json_schema(schema), format_checker=format_checker)


@functools.lru_cache(maxsize=1)
def _jsonschema_kind():
    from jsonschema import Draft202012Validator, FormatChecker, validators
    from jsonschema.exceptions import ValidationError

    def pattern(validator, value, instance, schema):
        if validator.is_type(instance, "string") and pattern_regex(value).search(instance) is None:
            yield ValidationError(f"{instance!r} does not match '{value}'")  # not escaped as repr would

    type_checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", lambda checker, value: type(value) is int)
    checker = FormatChecker(formats=())
    for name, test in CHECKED_FORMATS.items():
        checker.checks(name)(test)
    # (format is only an annotation in Draft 2020-12 unless a checker is passed in)
    return validators.extend(Draft202012Validator, {"pattern": pattern}, type_checker=type_checker), checker


_REASONS = {
    "required": "Required value",
    "enum": "Unsupported value",
    "additionalProperties": "Unknown field",
    "maxLength": "Too long",
    "maxItems": "Too many",
}
_RANK = {"type": 0, "pattern": 1, "enum": 1}  # which of several errors of one field to show


def _field_path(parts) -> str:
    text = ""
    for part in parts:
        text = f"{text}[{part}]" if isinstance(part, int) else (f"{text}.{part}" if text else str(part))
    return text


def _as_json(message: str, error) -> str:
    """jsonschema's message with the values it quotes shown as JSON (``"great"``, ``null``,
    ``true``), as the rest of kidx's messages and the manifests themselves write them."""
    shown = repr(error.instance)
    if message.startswith(shown):
        message = show(error.instance) + message[len(shown):]
    if error.validator == "enum":
        listed = "[" + ", ".join(show(value) for value in error.validator_value) + "]"
        message = message.replace(repr(error.validator_value), listed, 1)
    return message


def _document_order(document: Any, parts: list) -> tuple:
    """Where a field sits in the document: the position of each step in its parent (a
    missing required field sorts first in its object, as kubectl lists them)."""
    key: list = []
    node = document
    for part in parts:
        if type(node) is dict and part in node:
            key.append(list(node).index(part))
            node = node[part]
        elif type(node) is list and type(part) is int and part < len(node):
            key.append(part)
            node = node[part]
        else:
            key.append(-1)
            node = None
    return tuple(key)


class SchemaValidator:
    """A kind's schema: ``errors(document)`` lists every field error, in document order."""

    def __init__(self, schema: dict):
        self.schema = schema
        self._valid = compile_predicate(schema)
        self._jsonschema: Any = None  # jsonschema's validator, made on first need

    def errors(self, document: Any) -> list[FieldError]:
        if self._valid(document):
            return []
        return self.jsonschema_errors(document)

    def jsonschema_errors(self, document: Any) -> list[FieldError]:
        """jsonschema's verdict, each error at the field it is about: a missing required
        field and an unknown field at themselves, not at the object holding them."""
        if self._jsonschema is None:
            self._jsonschema = json_schema_validator(self.schema)
        found: dict[tuple, tuple[tuple, str, str]] = {}  # path parts -> (order, validator, message)
        for error in self._jsonschema.iter_errors(document):
            base = list(error.absolute_path)
            if error.validator == "required":
                name = error.message[: -len(" is a required property")]
                missing = next(n for n in error.validator_value if repr(n) == name and n not in error.instance)
                entries = [((*base, missing), show(missing) + error.message[len(name):])]
            elif error.validator == "additionalProperties" and error.validator_value is False:
                known = error.schema.get("properties", {})
                entries = [
                    ((*base, key), f"Additional properties are not allowed ({show(key)} was unexpected)")
                    for key in error.instance if key not in known
                ]
            else:
                entries = [(tuple(base), _as_json(error.message, error))]
            for parts, message in entries:
                earlier = found.get(parts)
                # one error per field: a wrong type explains the rest, a pattern shows the form
                if earlier is None or _RANK.get(error.validator, 2) < _RANK.get(earlier[1], 2):
                    order = _document_order(document, list(parts))
                    found[parts] = (order, error.validator, message)
        ordered = sorted(found.items(), key=lambda item: item[1][0])
        return [
            (_field_path(parts), f"{_REASONS.get(validator, 'Invalid value')}: {message}")
            for parts, (_, validator, message) in ordered
        ]

