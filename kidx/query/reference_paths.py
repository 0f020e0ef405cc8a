"""Paths that reach through an object's references: ``workload.spec.parameters.seq``.

The first segment names a reference field of the kind (``x-kidx-reference`` in its CRD)
without its ``Digest`` suffix (a run's ``protocol``, ``workload``, ``environment``,
``implementation``); the rest is a path into the referenced object (``spec…`` or
``metadata.…``). Any other path is a path into the object itself (``spec.observedAt``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from kidx.errors import UsageError
from kidx.jsonpath import Step, Steps

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


class PathReads(NamedTuple):
    """What a set of paths reads of an object, found from their parse trees."""

    roles: frozenset[str]  # names that may stand for referenced objects (workload.spec.…)
    own_spec: bool  # whether the object's own spec may be read (else metadata only)


_NOT_ROLES = frozenset(_MANIFEST_KEYS) | {"items"}
_INTO_OBJECT = ("spec", "metadata")


def path_reads(paths: Iterable[Steps]) -> PathReads:
    """What custom columns, a JSONPath template or sort keys read, from the steps of every
    path they evaluate (``JSONPath.steps``), never from their text, so a literal
    (``{"workload.spec"}``) or a quoted key counts as what it is.

    A name followed by ``spec`` or ``metadata`` may be a referenced object
    (``workload.spec.parameters.seq`` → ``workload``); only those a kind has as
    references are attached (``with_referenced``), and the manifest's own keys never
    count. The own spec is read by a ``spec`` step not behind such a name, by every
    wildcard and recursive descent, and by a path with no step (the whole object)."""
    roles: set[str] = set()
    own_spec = False
    for steps in paths:
        if not steps:
            own_spec = True
        for position, alternatives in enumerate(steps):
            if Step.EVERY in alternatives:
                own_spec = True
            names = [a for a in alternatives if isinstance(a, str)]
            if "spec" in names and not _behind_role(steps, position):
                own_spec = True
            following = steps[position + 1] if position + 1 < len(steps) else ()
            if any(step in _INTO_OBJECT for step in following):
                roles.update(name for name in names if name not in _NOT_ROLES)
    return PathReads(frozenset(roles), own_spec)


def _behind_role(steps: Steps, position: int) -> bool:
    """Whether the step at ``position`` follows a name that is not the manifest's own."""
    if position == 0:
        return False
    before = steps[position - 1]
    return all(isinstance(step, str) and step not in _NOT_ROLES for step in before)
