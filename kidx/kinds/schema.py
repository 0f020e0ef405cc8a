"""Validation of manifests against their CRD's structural OpenAPI v3 schema.

jsonschema (Draft 2020-12, with format checking) is the validator of record: every error
message for an invalid document comes from it. It costs about 600 µs per run manifest, so
valid documents -- the bulk of every apply -- take a fast path first: the schema compiled
once into closures that answer only "valid or not" (``compile_predicate``), a few
microseconds per field. Only a document the fast path rejects meets jsonschema, which is
imported then and not before. The fast path must accept exactly what jsonschema accepts
(a property test checks this on documents generated around the CRDs).

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
from collections.abc import Callable, Sized
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


_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    # integers are strict: 5.0 and 5 hash differently, so only a true integer is one
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) is int or type(v) is float,
    "boolean": lambda v: type(v) is bool,
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


def _length_test(measure: type[Sized], bound: int, at_least: bool) -> Predicate:
    """minLength/maxLength (``measure`` str) or minItems/maxItems (list)."""
    if at_least:
        return lambda v: type(v) is not measure or len(v) >= bound
    return lambda v: type(v) is not measure or len(v) <= bound


def compile_predicate(schema: dict) -> Predicate:
    """The fast path: whether a value satisfies ``schema``, nothing more. Must accept
    exactly what jsonschema accepts (see the module docstring)."""
    return _compile(schema)[0]


# the Python types each schema type accepts, as the _TYPE_TESTS read them
_TYPE_SETS: dict[str, frozenset[type]] = {
    "object": frozenset({dict}),
    "array": frozenset({list}),
    "string": frozenset({str}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
}


def _compile(schema: dict) -> tuple[Predicate, frozenset[type] | None]:
    """The predicate, and when all the schema asks is a type (nullable or not), the Python
    types it accepts: an object checks such a property with one ``type(v) in types``
    instead of a call. The common shapes (an object of properties, a string with a
    pattern, an array of items) are one function each, type test included: the
    predicate runs for every field of every document of an apply."""
    unknown = set(schema) - KNOWN_KEYWORDS
    if unknown:
        raise SchemaCompileError(f"unsupported schema keywords: {', '.join(sorted(unknown))}")
    type_name = schema.get("type")
    if type_name is not None and (not isinstance(type_name, str) or type_name not in _TYPE_TESTS):
        raise SchemaCompileError(f"unsupported schema type: {type_name!r}")
    tests: list[Predicate] = []
    nullable = bool(schema.get("nullable"))
    type_test = _TYPE_TESTS.get(type_name) if type_name is not None else None  # a known type, checked above
    # the one test of a common shape, fused with the type test below
    fused: Predicate | None = None
    if "enum" in schema:
        allowed = tuple(schema["enum"])
        tests.append(lambda v: v in allowed and not (type(v) is bool and not any(a is v for a in allowed)))
    if "pattern" in schema:
        search = pattern_regex(schema["pattern"]).search
        tests.append(lambda v: type(v) is not str or search(v) is not None)
        if type_name == "string":
            fused = (lambda v: v is None or type(v) is str and search(v) is not None) if nullable \
                else (lambda v: type(v) is str and search(v) is not None)
    if schema.get("format") in CHECKED_FORMATS:
        tests.append(CHECKED_FORMATS[schema["format"]])
    if "minimum" in schema:
        low = schema["minimum"]
        tests.append(lambda v: type(v) not in (int, float) or v >= low)
    if "maximum" in schema:
        high = schema["maximum"]
        tests.append(lambda v: type(v) not in (int, float) or v <= high)
    for keyword, measure, at_least in (
        ("minLength", str, True), ("maxLength", str, False), ("minItems", list, True), ("maxItems", list, False),
    ):
        if keyword in schema:
            bound = schema[keyword]
            tests.append(_length_test(measure, bound, at_least))
    if "properties" in schema or "additionalProperties" in schema or "required" in schema:
        tests.append(_object_predicate(schema, non_object=True))
        if type_name == "object":
            fused = _object_predicate(schema, non_object=False, nullable=nullable)
    if "items" in schema:
        item_valid = compile_predicate(schema["items"])
        tests.append(lambda v: type(v) is not list or all(item_valid(item) for item in v))
        if type_name == "array":
            fused = (lambda v: v is None or type(v) is list and all(item_valid(item) for item in v)) if nullable \
                else (lambda v: type(v) is list and all(item_valid(item) for item in v))
    if "anyOf" in schema:
        branches = tuple(compile_predicate(branch) for branch in schema["anyOf"])
        tests.append(lambda v: any(branch(v) for branch in branches))
    if not tests:
        if type_name is None:
            return (lambda v: True), None
        types = _TYPE_SETS[type_name] | ({type(None)} if nullable else set())
        return (lambda v: type(v) in types), types
    if fused is not None and len(tests) == 1:
        return fused, None
    if type_name == "string" and not {"properties", "additionalProperties", "required", "items", "anyOf"} & set(schema):
        return _string_predicate(schema, nullable), None
    checks = tuple(tests)

    def valid(value) -> bool:
        if value is None and nullable:
            return True
        if type_test is not None and not type_test(value):
            return False
        for test in checks:
            if not test(value):
                return False
        return True

    return valid, None


def _string_predicate(schema: dict, nullable: bool) -> Predicate:
    """A string schema's rules in one function: enum, pattern, lengths, format (minimum and
    maximum say nothing about a string)."""
    allowed = tuple(schema["enum"]) if "enum" in schema else None
    search = pattern_regex(schema["pattern"]).search if "pattern" in schema else None
    shortest, longest = schema.get("minLength"), schema.get("maxLength")
    form = CHECKED_FORMATS.get(schema.get("format", ""))

    def valid_string(value) -> bool:
        if type(value) is not str:
            return nullable and value is None
        if allowed is not None and value not in allowed:
            return False
        if shortest is not None and len(value) < shortest or longest is not None and len(value) > longest:
            return False
        if search is not None and search(value) is None:
            return False
        return form is None or form(value)

    return valid_string


def _object_predicate(schema: dict, non_object: bool, nullable: bool = False) -> Predicate:
    """The object rules of ``schema``. A value that is not an object passes when
    ``non_object`` (the type is checked elsewhere, or not at all); else it fails, unless it
    is None and ``nullable``."""
    compiled = {name: _compile(sub) for name, sub in schema.get("properties", {}).items()}
    properties = {name: predicate for name, (predicate, types) in compiled.items() if types is None}
    typed = {name: types for name, (_, types) in compiled.items() if types is not None}
    required = tuple(schema.get("required", ()))
    additional = schema.get("additionalProperties")
    open_object = schema.get("x-kubernetes-preserve-unknown-fields") is True or additional is True
    additional_valid = compile_predicate(additional) if isinstance(additional, dict) else None
    closed = not open_object and additional_valid is None and ("properties" in schema or additional is False)

    def valid_object(value) -> bool:
        if type(value) is not dict:
            return non_object or (nullable and value is None)
        for name in required:
            if name not in value:
                return False
        for key, item in value.items():
            types = typed.get(key)
            if types is not None:
                if type(item) not in types:
                    return False
                continue
            sub = properties.get(key)
            if sub is not None:
                if not sub(item):
                    return False
            elif additional_valid is not None:
                if not additional_valid(item):
                    return False
            elif closed:
                return False
        return True

    return valid_object


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
