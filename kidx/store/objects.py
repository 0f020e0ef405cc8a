"""The object database: immutable files named by the digest of their content.

``objects/sha256/ab/cdef…`` holds the exact canonical bytes of ``{apiVersion, kind,
spec}``; re-hashing a file gives its name. A file is written once, to a temporary name in
the same folder and renamed into place, so a reader never sees a partial object and a
crash leaves at most a stray temporary file (never listed as an object).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from kidx.store.faults import crash_point

_HEX = re.compile(r"^[0-9a-f]{64}$")
_FAN = re.compile(r"^[0-9a-f]{2}$")
TEMPORARY_PREFIX = ".tmp-"

# what ``write`` did
WRITTEN = "written"  # there was no file: written
PRESENT = "present"  # the file was there, intact: nothing to do
REPLACED = "replaced"  # the file was there but damaged (wrong size or content): replaced


class Leftover(NamedTuple):
    """A file under objects/ that is not an object: a crashed writer's temporary file, or
    something kidx did not write."""

    path: Path
    temporary: bool
    size: int
    modified: float  # seconds since the epoch


class ObjectStore:
    def __init__(self, root: Path):
        self.root = Path(root) / "objects" / "sha256"
        self._root_text = str(self.root)
        self._folders: set[str] = set()  # fan-out folders known to exist
        self._temporary_prefix = f"{TEMPORARY_PREFIX}{os.getpid()}-{os.urandom(4).hex()}-"
        self._written = 0

    @staticmethod
    def _hex(digest: str) -> str:
        algorithm, _, hexdigest = digest.partition(":")
        if algorithm != "sha256" or not _HEX.match(hexdigest):
            raise ValueError(f"not a sha256 digest: {digest!r}")
        return hexdigest

    def path_of(self, digest: str) -> Path:
        hexdigest = self._hex(digest)
        return self.root / hexdigest[:2] / hexdigest[2:]

    def exists(self, digest: str) -> bool:
        return self.path_of(digest).is_file()

    def read(self, digest: str) -> bytes:
        hexdigest = self._hex(digest)  # plain os calls: get reads one file per listed object
        descriptor = os.open(f"{self._root_text}/{hexdigest[:2]}/{hexdigest[2:]}", os.O_RDONLY)
        try:
            chunks = []
            while chunk := os.read(descriptor, 1 << 16):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(descriptor)

    def write(self, digest: str, data: bytes) -> str:
        """Store ``data`` under ``digest``: WRITTEN, PRESENT or REPLACED.

        A file already at the path is checked, size first, then content (a same-size edit
        is caught too), and a damaged one is replaced atomically: writing an object is how
        a hand-edited, truncated or emptied file gets repaired. Plain ``os`` calls on
        strings: this runs once per object in a bulk apply.
        """
        hexdigest = self._hex(digest)
        folder = f"{self._root_text}/{hexdigest[:2]}"
        path = f"{folder}/{hexdigest[2:]}"
        outcome = WRITTEN
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            pass
        else:
            if size == len(data) and self._content_is(path, data):
                return PRESENT
            if self._hashes_to(path, hexdigest):
                return PRESENT  # intact; the bytes given are not this digest's: keep the file
            outcome = REPLACED
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
        if self._written == 1:
            crash_point("objects")
        return outcome

    @staticmethod
    def _content_is(path: str, data: bytes) -> bool:
        try:
            with open(path, "rb") as stream:
                return stream.read(len(data) + 1) == data
        except OSError:
            return False

    @staticmethod
    def _hashes_to(path: str, hexdigest: str) -> bool:
        import hashlib

        try:
            with open(path, "rb") as stream:
                return hashlib.file_digest(stream, "sha256").hexdigest() == hexdigest
        except OSError:
            return False

    def size_of(self, digest: str) -> int | None:
        try:
            return os.stat(self.path_of(digest)).st_size
        except FileNotFoundError:
            return None

    def remove(self, digest: str) -> None:
        """Delete an object file (garbage collection only: objects are otherwise immutable)."""
        try:
            os.unlink(self.path_of(digest))
        except FileNotFoundError:
            pass

    def leftovers(self) -> Iterator[Leftover]:
        """Files under objects/ that are not objects, temporary files first marked as such."""
        if not self.root.is_dir():
            return
        for fan in sorted(self.root.iterdir()):
            if not (_FAN.match(fan.name) and fan.is_dir()):
                yield self._leftover(fan, temporary=False)
                continue
            for entry in sorted(fan.iterdir()):
                if _HEX.match(fan.name + entry.name) and entry.is_file():
                    continue
                yield self._leftover(entry, temporary=entry.name.startswith(TEMPORARY_PREFIX))

    @staticmethod
    def _leftover(path: Path, temporary: bool) -> Leftover:
        status = path.lstat()
        return Leftover(path, temporary, status.st_size, status.st_mtime)

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

    def digests(self) -> Iterator[str]:
        """Every well-formed object file; temporary files and strays are skipped."""
        if not self.root.is_dir():
            return
        for fan in sorted(self.root.iterdir()):
            if len(fan.name) != 2 or not fan.is_dir():
                continue
            for entry in sorted(fan.iterdir()):
                hexdigest = fan.name + entry.name
                if _HEX.match(hexdigest) and entry.is_file():
                    yield "sha256:" + hexdigest

    def verify(self, digest: str) -> bool:
        import hashlib

        return "sha256:" + hashlib.sha256(self.read(digest)).hexdigest() == digest
