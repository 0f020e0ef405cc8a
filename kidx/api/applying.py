"""What ``kidx apply`` and ``Store.apply`` read: files, folders and standard input, or
manifests handed over from Python, checked the same way before anything is written.

Manifests from Python are written out as one indented JSON ``List`` (source
``<python>``; the n-th manifest given is ``items[n]``) and read back by the same reader
as a file, so nested Lists, bundles, size limits and every error message, with line and
field path, are those of ``kidx apply -f``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kidx.errors import InvalidInputError, Problem, UsageError

if TYPE_CHECKING:
    from kidx.kinds.registry import KindRegistry
    from kidx.manifests.reader import ReadResult

PYTHON_SOURCE = "<python>"


def read_manifest_files(filenames: Iterable[str], recursive: bool, registry: KindRegistry) -> ReadResult:
    """The documents of ``-f`` arguments; every problem at once (also of the documents
    that could be read) as InvalidInputError; no documents at all is a usage error."""
    from kidx.manifests.reader import expand_sources, read_sources

    return _checked(read_sources(expand_sources(list(filenames), recursive)), registry)


def read_python_manifests(manifests: Iterable[Mapping[str, Any]], registry: KindRegistry) -> ReadResult:
    """Manifests given as mappings, read as the command line reads a JSON file."""
    from kidx.manifests.reader import ReadResult, read_text

    items = [_plain(manifest) for manifest in manifests]
    result = ReadResult()
    if items:
        try:
            text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"manifests must be JSON data (mappings, lists, strings, numbers, booleans): {exc}") \
                from None
        read_text(text, PYTHON_SOURCE, result, is_json=True)
    return _checked(result, registry)


def _plain(value: Any, depth: int = 0) -> Any:
    """Read-only mappings and tuples (as ``StoredObject.spec`` gives them) as JSON data.

    Deeper than any document may nest (kidx.manifests.values.MAX_DEPTH), what lies below
    is left out (an empty mapping or list): the reader then refuses the document at its
    field path, as it refuses such a file, and no recursion runs out on the way."""
    from kidx.manifests.values import MAX_DEPTH

    if isinstance(value, Mapping):
        return {key: _plain(item, depth + 1) for key, item in value.items()} if depth <= MAX_DEPTH else {}
    if isinstance(value, tuple | list):
        return [_plain(item, depth + 1) for item in value] if depth <= MAX_DEPTH else []
    return value


def _checked(result: ReadResult, registry: KindRegistry) -> ReadResult:
    refuse_bundles(result.documents)
    if result.problems:
        # every error at once: also validate the documents that could be read
        from kidx.operations.maintain.apply import validate_batch

        problems = list(result.problems)
        try:
            validate_batch(result.documents, registry, result.texts)
        except InvalidInputError as exc:
            problems.extend(exc.problems)
        raise InvalidInputError(problems)
    if not result.documents:
        raise UsageError("no objects passed to apply")
    return result


def refuse_bundles(documents: list[Any]) -> None:
    """A bundle from 'kidx export' holds history, not manifests: point to its command."""
    from kidx.operations.maintain.bundle import FORMAT_PREFIX

    problems = [
        Problem(document.location(), "a kidx bundle (from 'kidx export'), not manifests: restore it with "
                f"'kidx import bundle {document.source}'")
        for document in documents
        if isinstance(document.body.get("format"), str) and document.body["format"].startswith(FORMAT_PREFIX)
    ]
    if problems:
        raise InvalidInputError(problems)
