"""Paths that reach through a run's references: ``workload.spec.parameters.seq``.

The first segment names a reference field of the run without its ``Digest`` suffix
(``protocol``, ``workload``, ``environment``, ``implementation``); the rest is a path into
the referenced object (``spec…`` or ``metadata.name``/``metadata.title``). Any other path
is a path into the run itself (``spec.observedAt``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kidx.errors import UsageError

REFERENCE_ROLES = {
    "protocol": "protocolDigest",
    "workload": "workloadDigest",
    "environment": "environmentDigest",
    "implementation": "implementationDigest",
}


class FieldPath(NamedTuple):
    role: str | None  # None: a field of the run itself
    keys: tuple[str, ...]  # the path inside that object

    @property
    def text(self) -> str:
        return ".".join(((self.role,) if self.role else ()) + self.keys)


def parse_field_path(text: str) -> FieldPath:
    segments = text.strip().lstrip(".").split(".")
    if not all(segments):
        raise UsageError(f'invalid field path "{text}": empty segment')
    role = segments[0] if segments[0] in REFERENCE_ROLES else None
    keys = tuple(segments[1:] if role else segments)
    if not keys or keys[0] not in ("spec", "metadata"):
        where = f"a {role}'s" if role else "a run's"
        raise UsageError(f'invalid field path "{text}": expected {where} spec.… or metadata.… field'
                         + ("" if role else " (or protocol., workload., environment., implementation. and a path)"))
    return FieldPath(role, keys)


def value_at(document, keys: tuple[str, ...]):
    for key in keys:
        if not isinstance(document, dict) or key not in document:
            return None
        document = document[key]
    return document


def without(document: dict, keys: tuple[str, ...]) -> dict:
    """A copy of ``document`` with the field at ``keys`` removed."""
    if not keys or not isinstance(document, dict):
        return document
    head, rest = keys[0], keys[1:]
    if head not in document:
        return document
    copy = dict(document)
    if rest:
        copy[head] = without(document[head], rest)
    else:
        del copy[head]
    return copy


def reference_role(field: str) -> str:
    """``workloadDigest`` → ``workload``: how a path names the object a field refers to."""
    return field[: -len("Digest")] if field.endswith("Digest") else field


_ROLE_IN_TEXT = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(REFERENCE_ROLES) + r")\.(?:spec|metadata)(?![A-Za-z0-9_])")


def roles_mentioned(*texts: str | None) -> frozenset[str]:
    """The referenced objects that custom columns, a JSONPath template or sort keys reach
    into (``workload.spec.parameters.seq`` → ``workload``)."""
    return frozenset(match for text in texts if text for match in _ROLE_IN_TEXT.findall(text))
