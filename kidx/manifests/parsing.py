"""Parsing text into documents: YAML 1.2 (multi-document) and JSON (one or concatenated).

YAML rules (design.md section 2): YAML 1.2, timestamps stay strings exactly as written,
duplicate keys are errors. The C parser is required for speed; ruamel.yaml is imported only
when YAML is actually read.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass


@dataclass(slots=True)
class ParsedDocument:
    data: object
    index: int  # 1-based document number in the text
    line: int  # 1-based line where the document starts


class ParseError(ValueError):
    def __init__(self, message: str, line: int | None = None, index: int | None = None, syntax: bool = False):
        super().__init__(message)
        self.message = message
        self.line = line
        self.index = index
        self.syntax = syntax  # the text is not in this format at all (not a bad value in it)


def looks_like_json(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith("{")


# --- JSON -----------------------------------------------------------------------------

def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _object_without_duplicates(pairs):
    result = dict(pairs)
    if len(result) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f'duplicate key "{key}"')
            seen.add(key)
    return result


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object_without_duplicates, parse_constant=_reject_constant
)


def parse_json_stream(text: str) -> list[ParsedDocument]:
    """One JSON value or several concatenated ones (as kubectl accepts)."""
    documents: list[ParsedDocument] = []
    position, length, line = 0, len(text), 1
    index = 0
    while True:
        start = position
        while position < length and text[position] in " \t\r\n":
            position += 1
        line += text.count("\n", start, position)
        if position >= length:
            return documents
        index += 1
        try:
            value, end = _DECODER.raw_decode(text, position)
        except RecursionError:
            raise ParseError("document is nested too deeply", line, index) from None
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno, index, syntax=True) from None
        except ValueError as exc:  # from the hooks: duplicate key, NaN; or int()'s digit limit
            raise ParseError(f"invalid JSON: {_value_problem(exc)}", line, index) from None
        documents.append(ParsedDocument(value, index, line))
        line += text.count("\n", position, end)
        position = end


# --- YAML -----------------------------------------------------------------------------

_yaml = None


# YAML 1.2 core schema (yaml.org/spec/1.2.2 §10.3.2): the only plain scalars that are not
# strings. ruamel's own resolver keeps some YAML 1.1 forms (1_000, 0b101, "=" as a value
# tag, timestamps), which would make a digest depend on the YAML dialect.
_CORE_SCHEMA = (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+.0123456789",
    ),
)


def _yaml_loader():
    """A safe YAML 1.2 loader on the C parser: core schema only, timestamps stay strings."""
    global _yaml
    if _yaml is None:
        import re

        from ruamel.yaml import YAML
        from ruamel.yaml.constructor import SafeConstructor
        from ruamel.yaml.resolver import BaseResolver

        class ManifestConstructor(SafeConstructor):
            pass

        class CoreSchemaResolver(BaseResolver):
            def __init__(self, version=None, loader=None, loadumper=None):
                super().__init__(loader if loader is not None else loadumper)

        CoreSchemaResolver.yaml_implicit_resolvers = {}
        for tag, pattern, first in _CORE_SCHEMA:
            # the _base variant: plain add_implicit_resolver also edits ruamel's global table
            CoreSchemaResolver.add_implicit_resolver_base(tag, re.compile(pattern), list(first))
        CoreSchemaResolver.add_implicit_resolver_base("tag:yaml.org,2002:null", re.compile(r"^$"), [""])
        loader = YAML(typ="safe", pure=False)
        loader.Constructor = ManifestConstructor
        loader.Resolver = CoreSchemaResolver
        loader.allow_duplicate_keys = False
        _yaml = loader
    return _yaml


def parse_yaml_stream(text: str) -> list[ParsedDocument]:
    """Every non-empty document of a YAML stream, with the line where each starts."""
    from ruamel.yaml.error import MantissaNoDotYAML1_1Warning

    loader = _yaml_loader()
    if _might_be_deep(text):
        _check_nesting(loader, text)
    with warnings.catch_warnings():
        # "1e3" is a float in YAML 1.2 (and JSON); ruamel's constructor warns as if it were 1.1
        warnings.simplefilter("ignore", MantissaNoDotYAML1_1Warning)
        return _parse_yaml(loader, text)


# ruamel's C composer recurses once per nesting level and crashes the process (SIGSEGV)
# past about 30,000 levels, before any limit of ours can run. Nesting needs indentation
# (block mappings), dashes on one line (compact sequences) or open brackets (flow): a text
# whose indentation, line length and bracket depth stay under these bounds cannot reach a
# third of the crash depth. Only other texts get the exact depth check, made on the
# parser's event stream, which is iterative. Depths between 64 and the bounds are refused
# after parsing, by the value checks.
_DEEP = 4096
_DEEP_INDENT = re.compile(r"\n[ \t]{%d}" % _DEEP)
_BRACKETS = re.compile(r"[\[\]{}]")
NESTING_LIMIT = 64  # the same bound as values.MAX_DEPTH


def _might_be_deep(text: str) -> bool:
    if len(text) < _DEEP:
        return False
    if _DEEP_INDENT.search(text):
        return True
    if text.count("[") + text.count("{") >= _DEEP:
        depth = 0
        for bracket in _BRACKETS.finditer(text):
            depth += 1 if bracket.group() in "[{" else -1
            if depth >= _DEEP:
                return True
    return max(map(len, text.split("\n"))) >= 2 * _DEEP


def _check_nesting(loader, text: str) -> None:
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent, DocumentStartEvent

    depth, index, line = 0, 0, 1
    try:
        for event in loader.parse(text):
            if isinstance(event, DocumentStartEvent):
                index += 1
                line = event.start_mark.line + 1 if event.start_mark else line
            elif isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > NESTING_LIMIT:
                    raise ParseError(f"document is nested more than {NESTING_LIMIT} levels deep", line, index or 1)
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
    except YAMLError:
        return  # a syntax error: the real parse reports it with its position


def _parse_yaml(loader, text: str) -> list[ParsedDocument]:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    documents: list[ParsedDocument] = []
    index = 0
    line = 1
    try:
        constructor, parser = loader.get_constructor_parser(text)
        # with the C parser the returned object is parser, composer and constructor in one
        composer = constructor if hasattr(constructor, "get_node") else loader.composer
        try:
            while composer.check_node():
                index += 1
                node = composer.get_node()
                line = node.start_mark.line + 1 if node.start_mark else line
                data = constructor.construct_document(node)
                if data is not None:
                    documents.append(ParsedDocument(data, index, line))
        finally:
            parser.dispose()
            try:
                loader._reader.reset_reader()
                loader._scanner.reset_scanner()
            except AttributeError:
                pass
    except RecursionError:
        raise ParseError("document is nested too deeply", line, index) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise ParseError(
            f"invalid YAML: {message}", mark.line + 1 if mark else None, index or 1
        ) from None
    except YAMLError as exc:
        raise ParseError(f"invalid YAML: {exc}", None, index or 1) from None
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
        # a scalar its tag's constructor refuses: !!float abc, !!bool maybe, a 5000-digit int
        raise ParseError(f"invalid YAML: {_value_problem(exc)}", line, index or 1) from None
    return documents


def _value_problem(exc: Exception) -> str:
    """A constructor's or hook's exception as a reader-facing phrase (no Python internals)."""
    text = str(exc)
    if "integer string conversion" in text:  # int()'s 4300-digit limit
        return "integer out of range (must fit in 64 bits)"
    if isinstance(exc, KeyError) and exc.args:  # !!bool maybe
        return f"{exc.args[0]!r} is not a valid value for its tag"
    return text
