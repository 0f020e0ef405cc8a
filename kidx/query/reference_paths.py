"""Paths that reach through an object's references: ``workload.spec.parameters.seq``.

The first segment names a reference field of the kind (``x-kidx-reference`` in its CRD)
without its ``Digest`` suffix (a run's ``protocol``, ``workload``, ``environment``,
``implementation``); the rest is a path into the referenced object (``spec…`` or
``metadata.…``). Any other path is a path into the object itself (``spec.observedAt``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from kidx.errors import UsageError

_MANIFEST_KEYS = ("apiVersion", "kind", "metadata", "spec")


class FieldPath(NamedTuple):
    role: str | None  # None: a field of the object itself
    keys: tuple[str, ...]  # the path inside that object

    @property
    def text(self) -> str:
        return ".".join(((self.role,) if self.role else ()) + self.keys)


def reference_role(field: str) -> str:
    """``workloadDigest`` → ``workload``: how a path names the object a field refers to."""
    return field[: -len("Digest")] if field.endswith("Digest") else field


def reference_roles(info) -> dict[str, str]:
    """``{"workload": "Workload", …}``: the reference names a kind's paths may start with,
    and the kinds they point at."""
    return {reference_role(ref.field): ref.target_kind for ref in info.references}


def parse_field_path(text: str, roles: Iterable[str]) -> FieldPath:
    """A dotted path, either into the object or, after one of ``roles``, into a referenced one."""
    roles = tuple(roles)
    segments = text.strip().lstrip(".").split(".")
    if not all(segments):
        raise UsageError(f'invalid field path "{text}": empty segment')
    role = segments[0] if segments[0] in roles else None
    keys = tuple(segments[1:] if role else segments)
    if not keys or keys[0] not in ("spec", "metadata"):
        where = f"a {role}'s" if role else "the run's"
        prefixes = ", ".join(f"{r}." for r in roles)
        raise UsageError(f'invalid field path "{text}": expected {where} spec.… or metadata.… field'
                         + ("" if role else f" (or one of {prefixes} and a path)"))
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


_ROLE_IN_TEXT = re.compile(r"(?<![A-Za-z0-9_.])\.?([A-Za-z_][A-Za-z0-9_]*)\.(?:spec|metadata)(?![A-Za-z0-9_])")


def roles_mentioned(*texts: str | None) -> frozenset[str]:
    """Names that custom columns, a JSONPath template or sort keys may use for referenced
    objects (``workload.spec.parameters.seq`` → ``workload``). Only those a kind has as
    references are attached (``with_referenced``); the manifest's own keys never count."""
    found = {match for text in texts if text for match in _ROLE_IN_TEXT.findall(text)}
    return frozenset(found - set(_MANIFEST_KEYS) - {"items"})


_SPEC = re.compile(r"(?<![A-Za-z0-9_])spec(?![A-Za-z0-9_])")
_PREFIXED_SPEC = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)\.spec(?![A-Za-z0-9_])")


def mentions_own_spec(*texts: str | None) -> bool:
    """Whether columns, a template or sort keys may read the object's own ``spec`` (so the
    whole object must be read), rather than only its metadata and referenced objects.
    Recursive descent (``..``) and wildcards count as reading everything."""
    for text in texts:
        if not text:
            continue
        if ".." in text or "*" in text:
            return True
        prefixed = sum(1 for m in _PREFIXED_SPEC.finditer(text) if m.group(1) not in _MANIFEST_KEYS + ("items",))
        if len(_SPEC.findall(text)) > prefixed:
            return True
    return False
