"""Stored objects as Python sees them: typed, read-only views of manifests.

``Store.get`` returns one of these per object: a ``Run``, ``Workload``,
``Implementation``, ``Protocol`` or ``Environment``. Each shows its name, kind, digest,
labels, annotations and title, its spec as a read-only mapping (nested mappings and
lists read-only too), and ``manifest``, a fresh copy of the stored document that may be
changed and applied again. A run's references (``run.workload`` and the others) are
looked up in the same store on first use, by digest, and are ``None`` when the store
does not hold the object.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

#: kind -> the class that shows it (filled in below, one entry per stored kind)
CLASSES: dict[str, type[StoredObject]] = {}

# how a run's manifest looks a referenced object up: (kind, digest) -> manifest or None
Resolver = Callable[[str, str], "dict[str, Any] | None"]


def frozen(value: Any) -> Any:
    """A read-only copy of JSON data: mappings become read-only mappings, lists tuples."""
    if isinstance(value, dict):
        return MappingProxyType({key: frozen(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(frozen(item) for item in value)
    return value


class StoredObject:
    """An object of the store, as it was read: name, kind, digest, metadata and spec."""

    kind: ClassVar[str] = ""

    __slots__ = ("_manifest", "_resolve", "_spec")

    def __init__(self, manifest: dict[str, Any], resolve: Resolver | None = None) -> None:
        self._manifest = manifest
        self._resolve = resolve
        self._spec: Mapping[str, Any] | None = None

    @property
    def name(self) -> str:
        """``metadata.name`` (for a referenced object that no name points at: its digest)."""
        metadata = self._manifest["metadata"]
        return str(metadata.get("name") or metadata["digest"])

    @property
    def digest(self) -> str:
        """The content digest, ``sha256:…`` of apiVersion, kind and spec (docs/design.md §2)."""
        return str(self._manifest["metadata"]["digest"])

    @property
    def api_version(self) -> str:
        """``kernelindex.dev/v1alpha1``."""
        return str(self._manifest["apiVersion"])

    @property
    def title(self) -> str | None:
        """``metadata.title``, free text for display, or None."""
        title = self._manifest["metadata"].get("title")
        return None if title is None else str(title)

    @property
    def labels(self) -> Mapping[str, str]:
        """``metadata.labels``, read-only."""
        return MappingProxyType(dict(self._manifest["metadata"].get("labels") or {}))

    @property
    def annotations(self) -> Mapping[str, str]:
        """``metadata.annotations``, read-only."""
        return MappingProxyType(dict(self._manifest["metadata"].get("annotations") or {}))

    @property
    def spec(self) -> Mapping[str, Any]:
        """The spec, read-only (``manifest`` gives a copy to change)."""
        if self._spec is None:
            self._spec = frozen(self._manifest.get("spec") or {})
        return self._spec

    @property
    def manifest(self) -> dict[str, Any]:
        """The stored document (store-set metadata included), as a new copy on each call."""
        return copy.deepcopy(self._manifest)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, digest={self.digest[:19]!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StoredObject):
            return NotImplemented
        return (self.kind, self.name, self.digest) == (other.kind, other.name, other.digest)

    def __hash__(self) -> int:
        return hash((self.kind, self.name, self.digest))


class Protocol(StoredObject):
    """A BenchmarkProtocol: how runs were measured."""

    kind = "BenchmarkProtocol"
    __slots__ = ()


class Workload(StoredObject):
    """A Workload: the operation, its shape parameters, its dtype."""

    kind = "Workload"
    __slots__ = ()


class Environment(StoredObject):
    """An ExecutionEnvironment: the machine and software runs ran on."""

    kind = "ExecutionEnvironment"
    __slots__ = ()


class Implementation(StoredObject):
    """An Implementation: which code was measured."""

    kind = "Implementation"
    __slots__ = ()


class Run(StoredObject):
    """A BenchmarkRun: one measurement, referring to the four kinds above by digest."""

    kind = "BenchmarkRun"
    __slots__ = ()

    @property
    def protocol(self) -> Protocol | None:
        """The BenchmarkProtocol of ``spec.protocolDigest``; None when not in the store."""
        found = self._referenced("protocolDigest", Protocol)
        return found if isinstance(found, Protocol) else None

    @property
    def workload(self) -> Workload | None:
        """The Workload of ``spec.workloadDigest``; None when not in the store."""
        found = self._referenced("workloadDigest", Workload)
        return found if isinstance(found, Workload) else None

    @property
    def environment(self) -> Environment | None:
        """The ExecutionEnvironment of ``spec.environmentDigest``; None when not in the store."""
        found = self._referenced("environmentDigest", Environment)
        return found if isinstance(found, Environment) else None

    @property
    def implementation(self) -> Implementation | None:
        """The Implementation of ``spec.implementationDigest``; None when not in the store."""
        found = self._referenced("implementationDigest", Implementation)
        return found if isinstance(found, Implementation) else None

    def _referenced(self, field: str, cls: type[StoredObject]) -> StoredObject | None:
        digest = (self._manifest.get("spec") or {}).get(field)
        if not isinstance(digest, str) or self._resolve is None:
            return None
        manifest = self._resolve(cls.kind, digest)
        return None if manifest is None else cls(manifest, self._resolve)


for _cls in (Run, Protocol, Workload, Environment, Implementation):
    CLASSES[_cls.kind] = _cls


def stored_object(manifest: dict[str, Any], resolve: Resolver | None = None) -> StoredObject:
    """The typed view of a stored manifest."""
    cls = CLASSES.get(str(manifest.get("kind")), StoredObject)
    return cls(manifest, resolve)


__all__ = ["Environment", "Implementation", "Protocol", "Run", "StoredObject", "Workload"]
