"""YAML 1.2 documents built straight from libyaml's event stream.

ruamel.yaml's C parser (libyaml) turns text into events quickly; its composer and
constructor then spend several times as long turning events into node objects and the
node objects into data, and the composer recurses in C, one frame per nesting level, so a
deeply nested document crashes the process. This builder goes from events to plain data
in one iterative pass:

- the YAML 1.2 core schema, and nothing else: ``null``/``~``/empty, ``true``/``false``,
  decimal, ``0o`` and ``0x`` integers, floats with ``.inf``/``.nan``; every other plain
  scalar is a string, so ``1_000``, ``yes``, ``0b101`` and timestamps stay exactly as
  written (docs/design.md §2: a digest must not depend on the YAML dialect);
- explicit tags for those types (``!!str``, ``!!int``, …) and ``!!timestamp`` (kept as
  its text); any other tag is refused, since it has no JSON form;
- duplicate mapping keys are errors; aliases share the anchored value (the value checks
  count every visit, so alias bombs are caught there);
- nesting deeper than NESTING_LIMIT is refused as it happens, never recursed into.
"""

from __future__ import annotations

import re
import warnings

from kidx.manifests.parsed import ParsedDocument, ParseError

NESTING_LIMIT = 64  # the same bound as values.MAX_DEPTH

_YAML = "tag:yaml.org,2002:"
_NULLS = frozenset(("~", "null", "Null", "NULL", ""))
_TRUES = frozenset(("true", "True", "TRUE"))
_FALSES = frozenset(("false", "False", "FALSE"))
_DECIMAL = re.compile(r"[-+]?[0-9]+\Z")
_OCTAL = re.compile(r"0o[0-7]+\Z")
_HEXADECIMAL = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INFINITY = re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)\Z")
_COLLECTION_TAGS = {None: None, "!": None, _YAML + "map": "map", _YAML + "seq": "seq"}
_NO_KEY = object()
PURE_PYTHON_WARNING = (
    "ruamel.yaml's C parser (ruamel.yaml.clib) is not installed: YAML is parsed in pure Python, "
    "about four times slower; pip install 'ruamel.yaml[oldlibyaml]' restores it"
)


def resolve_plain(text: str):
    """A plain (unquoted) scalar under the core schema."""
    if not text:
        return None
    first = text[0]
    if first in "~nN" and text in _NULLS:
        return None
    if first in "tTfF":
        if text in _TRUES:
            return True
        if text in _FALSES:
            return False
        return text
    if first in "-+.0123456789":
        if _DECIMAL.match(text):
            return _integer(text, 10)
        if _OCTAL.match(text):
            return _integer(text[2:], 8)
        if _HEXADECIMAL.match(text):
            return _integer(text[2:], 16)
        if _FLOAT.match(text):
            return float(text)
        if _INFINITY.match(text):
            return float("-inf") if first == "-" else float("inf")
        if _NAN.match(text):
            return float("nan")
    return text


def _integer(digits: str, base: int) -> int:
    try:
        return int(digits, base)
    except ValueError:  # beyond Python's digit limit: far beyond int64 anyway
        raise ValueError("integer out of range (must fit in 64 bits)") from None


def _tagged(tag: str, text: str):
    """A scalar with an explicit tag: one of the core types, or a timestamp as text."""
    short = tag[len(_YAML):] if tag.startswith(_YAML) else None
    if tag == "!" or short in ("str", "timestamp"):
        return text
    value = resolve_plain(text)
    if short == "null" and value is None:
        return None
    if short == "bool" and type(value) is bool:
        return value
    if short == "int" and type(value) is int:
        return value
    if short == "float" and type(value) in (int, float):
        return float(value)
    if short in ("null", "bool", "int", "float"):
        raise ValueError(f"{text!r} is not a valid value for !!{short}")
    raise ValueError(f"tag {_shown(tag)} is not supported "
                     "(kidx reads plain JSON data: strings, numbers, booleans, null, maps, lists)")


def _shown(tag: str) -> str:
    return "!!" + tag[len(_YAML):] if tag.startswith(_YAML) else tag


def _path(stack: list[list]) -> str | None:
    """Where the builder is, as ``spec.measurements[0].unit``: for error messages."""
    steps = [frame[3] for frame in stack[1:]]
    innermost = stack[-1] if stack else None
    if innermost is not None:
        if innermost[2] and innermost[1] is not _NO_KEY:
            steps.append(innermost[1])
        elif not innermost[2]:
            steps.append(len(innermost[0]))
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text or None


class PurePythonParserWarning(UserWarning):
    """ruamel.yaml's C parser is missing: YAML is read correctly, but slowly."""


_warned_pure_python = False


def _event_reader(text: str):
    """``get_event()`` over ruamel.yaml's public ``parse``: libyaml's C parser when
    ruamel.yaml.clib is installed (the ``oldlibyaml`` extra), else ruamel's pure-Python
    parser, which gives the same events about four times slower, and says so once."""
    from ruamel.yaml import YAML
    from ruamel.yaml.parser import Parser as PurePythonParser

    yaml = YAML(typ="safe", pure=False)
    if yaml.Parser is PurePythonParser:
        global _warned_pure_python
        if not _warned_pure_python:
            _warned_pure_python = True
            warnings.warn(PURE_PYTHON_WARNING, PurePythonParserWarning, stacklevel=2)
    events = yaml.parse(text)
    return lambda: next(events, None)


def build_documents(text: str) -> list[ParsedDocument]:
    """Every non-empty document of a YAML stream, with where each starts."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.events import (
        AliasEvent,
        DocumentStartEvent,
        MappingEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceEndEvent,
        SequenceStartEvent,
    )

    documents: list[ParsedDocument] = []
    next_event = _event_reader(text)
    # frames: [container, pending key (mappings) or _NO_KEY, is_mapping, where in its parent]
    stack: list[list] = []
    anchors: dict = {}
    root = _NO_KEY
    index = line = 0
    event = None
    try:
        while True:
            event = next_event()
            if event is None:
                break
            kind = type(event)
            if kind is ScalarEvent:
                if event.tag is None or event.tag == "!" and event.style:
                    value = resolve_plain(event.value) if event.implicit[0] and not event.style else event.value
                else:
                    value = _tagged(event.tag, event.value)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                if event.tag not in _COLLECTION_TAGS:
                    raise ValueError(f"tag {_shown(event.tag)} is not supported (kidx reads plain maps and lists)")
                if len(stack) >= NESTING_LIMIT:
                    raise ValueError(f"document is nested more than {NESTING_LIMIT} levels deep")
                value = {} if kind is MappingStartEvent else []
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                stack.pop()
                continue
            elif kind is AliasEvent:
                if event.anchor not in anchors:
                    raise ValueError(f"found undefined alias {event.anchor!r}")
                value = anchors[event.anchor]
            elif kind is DocumentStartEvent:
                index += 1
                anchors, root = {}, _NO_KEY
                continue
            else:  # stream start and end, document end
                if root is not _NO_KEY and root is not None and type(event).__name__ == "DocumentEndEvent":
                    documents.append(ParsedDocument(root, index, line))
                    root = _NO_KEY
                continue
            if event.anchor is not None and kind is not AliasEvent:
                anchors[event.anchor] = value
            where = None
            if stack:
                frame = stack[-1]
                if frame[2]:  # a mapping: keys and values alternate
                    if frame[1] is _NO_KEY:
                        if type(value) in (dict, list):
                            raise ValueError("a mapping key must be a scalar, not a map or a list")
                        if value in frame[0]:
                            frame[1] = value  # so that the error's path ends at this key
                            raise ValueError(f'duplicate key "{value}"')
                        frame[1] = value
                    else:
                        frame[0][frame[1]] = value
                        where, frame[1] = frame[1], _NO_KEY
                else:
                    where = len(frame[0])
                    frame[0].append(value)
            else:
                root, line = value, event.start_mark.line + 1
            if kind is MappingStartEvent or kind is SequenceStartEvent:
                stack.append([value, _NO_KEY, kind is MappingStartEvent, where])
    except ParseError:
        raise
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise ParseError(f"invalid YAML: {message}", mark.line + 1 if mark else None, index or 1) from None
    except YAMLError as exc:
        raise ParseError(f"invalid YAML: {exc}", None, index or 1) from None
    except ValueError as exc:
        where = event.start_mark.line + 1 if event is not None and event.start_mark else None
        raise ParseError(f"invalid YAML: {exc}", where, index or 1, path=_path(stack)) from None
    return documents
