"""The object database: immutable objects named by the digest of their content.

``ObjectDB(backend)`` is what the rest of kidx uses: it checks digests, reads, writes,
lists and verifies objects. Where the bytes live is the backend's business, injected as
dvc-objects injects a filesystem into ``ObjectDB(fs, path)``:

- ``FileObjectBackend(root)``: one file per object, ``root/ab/cdef…`` holding the exact
  canonical bytes of ``{apiVersion, kind, spec}``; re-hashing a file gives its name. A
  file is written once, to a temporary name in the same folder and renamed into place, so
  a reader never sees a partial object and a crash leaves at most a stray temporary file
  (never listed as an object).
- a database table (another backend), written in the catalog's own transaction.

An ``ObjectBackend`` implements ``read``/``write``/``exists``/``hexdigests``/``flush``
on 64-digit hex names; ``read`` raises FileNotFoundError for a missing object.
``flush`` makes every object written so far durable; the store calls it before the
catalog commits any name that points at them.
"""

from __future__ import annotations

import hashlib
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from pathlib import Path

_HEX = re.compile(r"^[0-9a-f]{64}$")


class ObjectBackend(ABC):
    location: str  # for messages

    @abstractmethod
    def read(self, hexdigest: str) -> bytes: ...

    @abstractmethod
    def write(self, hexdigest: str, data: bytes) -> bool:
        """Store ``data``; False when it was already there."""

    @abstractmethod
    def exists(self, hexdigest: str) -> bool: ...

    @abstractmethod
    def hexdigests(self) -> Iterator[str]:
        """Every complete object, sorted."""

    @abstractmethod
    def flush(self) -> None: ...

    def missing(self, hexdigests: Iterable[str]) -> set[str]:
        """Which of ``hexdigests`` are not stored; a database answers in one query."""
        return {hexdigest for hexdigest in hexdigests if not self.exists(hexdigest)}

    def read_many(self, hexdigests: Iterable[str]) -> dict[str, bytes]:
        """Many objects at once (missing ones left out); a database answers in one query."""
        found = {}
        for hexdigest in hexdigests:
            try:
                found[hexdigest] = self.read(hexdigest)
            except FileNotFoundError:
                pass
        return found


class ObjectDB:
    """Objects by ``sha256:…`` digest, over an injected backend."""

    def __init__(self, backend: ObjectBackend):
        self.backend = backend

    @property
    def location(self) -> str:
        return self.backend.location

    @staticmethod
    def _hex(digest: str) -> str:
        algorithm, _, hexdigest = digest.partition(":")
        if algorithm != "sha256" or not _HEX.match(hexdigest):
            raise ValueError(f"not a sha256 digest: {digest!r}")
        return hexdigest

    def read(self, digest: str) -> bytes:
        return self.backend.read(self._hex(digest))

    def read_many(self, digests: Iterable[str]) -> dict[str, bytes]:
        found = self.backend.read_many(self._hex(digest) for digest in digests)
        return {"sha256:" + hexdigest: data for hexdigest, data in found.items()}

    def write(self, digest: str, data: bytes, verify: bool = False) -> bool:
        """Store ``data`` under ``digest``; False when it was already there. With ``verify``
        (bytes from elsewhere, such as another store), refuse bytes that do not hash to it."""
        hexdigest = self._hex(digest)
        if verify and hashlib.sha256(data).hexdigest() != hexdigest:
            from kidx.errors import StoreError

            raise StoreError(f"object {digest}: its bytes do not hash to its digest")
        return self.backend.write(hexdigest, data)

    def exists(self, digest: str) -> bool:
        return self.backend.exists(self._hex(digest))

    def missing(self, digests: Iterable[str]) -> set[str]:
        """Which of ``digests`` are not stored (push and pull copy those)."""
        return {"sha256:" + hexdigest for hexdigest in self.backend.missing({self._hex(d) for d in digests})}

    def flush(self) -> None:
        self.backend.flush()

    def digests(self) -> Iterator[str]:
        for hexdigest in self.backend.hexdigests():
            yield "sha256:" + hexdigest

    def verify(self, digest: str) -> bool:
        return "sha256:" + hashlib.sha256(self.read(digest)).hexdigest() == digest


class FileObjectBackend(ObjectBackend):
    """One file per object under ``root`` (a store's ``objects/sha256``), fanned out by
    the first two hex digits."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.location = str(self.root)
        self._root_text = str(self.root)
        self._folders: set[str] = set()  # fan-out folders known to exist
        self._temporary_prefix = f".tmp-{os.getpid()}-{os.urandom(4).hex()}-"
        self._written = 0

    def path_of(self, digest: str) -> Path:
        hexdigest = ObjectDB._hex(digest)
        return self.root / hexdigest[:2] / hexdigest[2:]

    def exists(self, hexdigest: str) -> bool:
        return os.path.isfile(f"{self._root_text}/{hexdigest[:2]}/{hexdigest[2:]}")

    def read(self, hexdigest: str) -> bytes:
        # plain os calls: get reads one file per listed object
        descriptor = os.open(f"{self._root_text}/{hexdigest[:2]}/{hexdigest[2:]}", os.O_RDONLY)
        try:
            chunks = []
            while chunk := os.read(descriptor, 1 << 16):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(descriptor)

    def write(self, hexdigest: str, data: bytes) -> bool:
        """Plain ``os`` calls on strings: this runs once per object in a bulk apply."""
        folder = f"{self._root_text}/{hexdigest[:2]}"
        path = f"{folder}/{hexdigest[2:]}"
        if os.path.exists(path):
            return False
        if folder not in self._folders:
            os.makedirs(folder, exist_ok=True)
            self._folders.add(folder)
        self._written += 1
        temporary = f"{folder}/{self._temporary_prefix}{self._written}"
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(descriptor, view):]
            finally:
                os.close(descriptor)
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
        return True

    def flush(self) -> None:
        """Make every written object durable before the catalog refers to it."""
        if not self.root.exists():
            return
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            descriptor = os.open(self.root, os.O_RDONLY)
            try:
                if libc.syncfs(descriptor) == 0:
                    return
            finally:
                os.close(descriptor)
        except (OSError, AttributeError):
            pass
        os.sync()

    def hexdigests(self) -> Iterator[str]:
        """Every well-formed object file; temporary files and strays are skipped."""
        if not self.root.is_dir():
            return
        for fan in sorted(self.root.iterdir()):
            if len(fan.name) != 2 or not fan.is_dir():
                continue
            for entry in sorted(fan.iterdir()):
                hexdigest = fan.name + entry.name
                if _HEX.match(hexdigest):
                    yield hexdigest
