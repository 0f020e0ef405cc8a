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
catalog commits any name that points at them, and ``discard`` when the write fails
instead (a backend may hold writes until ``flush``: ``kidx.store.packed_objects``).
For fsck, gc and export it also provides ``remove`` (gc only: objects are otherwise
immutable), ``where`` (for messages) and, where it can have them, ``leftovers`` (files
that are not objects).

``write`` checks what is already stored under the name (size, then content, then hash)
and replaces a damaged object: writing an object is also how a hand-edited, truncated
or emptied one is repaired. It answers WRITTEN, PRESENT or REPLACED.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator

from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from pathlib import Path

HEX_DIGITS = "0123456789abcdef"


def _is_hex(text: str) -> bool:
    """64 lowercase hex digits and nothing else (``^[0-9a-f]{64}$`` without re's ``$``,
    which would also let a line break end it): every object read asks, and compiling the
    pattern would cost a cold ``describe`` more than all its asking."""
    return len(text) == 64 and not text.strip(HEX_DIGITS)


TEMPORARY_PREFIX = ".tmp-"

# what ``write`` did
WRITTEN = "written"  # nothing was stored under the name: written
PRESENT = "present"  # stored and intact: nothing to do
REPLACED = "replaced"  # stored but damaged (wrong size or content): replaced


class Leftover(NamedTuple):
    """A file among the objects that is not one: a crashed writer's temporary file, or
    something kidx did not write."""

    path: Path
    temporary: bool
    size: int


class ObjectBackend(ABC):
    location: str  # for messages

    @abstractmethod
    def read(self, hexdigest: str) -> bytes: ...

    @abstractmethod
    def write(self, hexdigest: str, data: bytes) -> str | bool:
        """Store ``data``: WRITTEN, PRESENT (already there, intact) or REPLACED (there but
        damaged: replaced atomically). True/False are read as WRITTEN/PRESENT."""

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

    def write_many(self, objects: dict[str, bytes]) -> dict[str, str]:
        """``write`` of each object, in order: hexdigest -> WRITTEN, PRESENT or REPLACED (a
        backend may look them up together)."""
        return {hexdigest: _outcome(self.write(hexdigest, data)) for hexdigest, data in objects.items()}

    def ensure_many(self, objects: dict[str, bytes]) -> dict[str, str]:
        """Make sure each object is stored intact, writing those that are not: hexdigest ->
        WRITTEN, PRESENT or REPLACED. For objects whose names are ``unchanged``, where a
        plain write would be wasted; a backend may answer with one query."""
        done = {}
        for hexdigest, data in objects.items():
            done[hexdigest] = PRESENT if self.exists(hexdigest) else _outcome(self.write(hexdigest, data))
        return done

    def discard(self) -> None:
        """Forget what a write that failed or was interrupted holds, not yet flushed
        (a backend that holds nothing has nothing to forget)."""
        return None

    def remove(self, hexdigest: str) -> None:
        """Delete an object (garbage collection only); a missing one is not an error."""
        from kidx.errors import StoreError

        raise StoreError(f"this store's backend cannot remove objects ({self.location})")

    def where(self, hexdigest: str) -> str:
        """Where the object is kept, for messages (a file path, a table row)."""
        return f"sha256:{hexdigest} in {self.location}"

    def size(self, hexdigest: str) -> int | None:
        try:
            return len(self.read(hexdigest))
        except FileNotFoundError:
            return None

    def leftovers(self) -> Iterator[Leftover]:
        """What is kept among the objects but is not one; a database has none."""
        return iter(())

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
        if algorithm != "sha256" or not _is_hex(hexdigest):
            raise ValueError(f"not a sha256 digest: {digest!r}")
        return hexdigest

    def read(self, digest: str) -> bytes:
        return self.backend.read(self._hex(digest))

    def read_many(self, digests: Iterable[str]) -> dict[str, bytes]:
        found = self.backend.read_many(self._hex(digest) for digest in digests)
        return {"sha256:" + hexdigest: data for hexdigest, data in found.items()}

    def write(self, digest: str, data: bytes, verify: bool = False) -> str:
        """Store ``data`` under ``digest``: WRITTEN, PRESENT or REPLACED (see the module
        docstring). With ``verify`` (bytes from elsewhere, such as another store), refuse
        bytes that do not hash to it."""
        hexdigest = self._hex(digest)
        if verify and _digest_bytes(data) != digest:
            from kidx.errors import StoreError

            raise StoreError(f"object {digest}: its bytes do not hash to its digest")
        return _outcome(self.backend.write(hexdigest, data))

    def write_many(self, objects: dict[str, bytes]) -> dict[str, str]:
        """``write`` of each object (digest -> data), in order: digest -> what was done."""
        done = self.backend.write_many({self._hex(digest): data for digest, data in objects.items()})
        return {"sha256:" + hexdigest: outcome for hexdigest, outcome in done.items()}

    def ensure_many(self, objects: dict[str, bytes]) -> dict[str, str]:
        """Each object stored intact afterwards: digest -> WRITTEN, PRESENT or REPLACED."""
        done = self.backend.ensure_many({self._hex(digest): data for digest, data in objects.items()})
        return {"sha256:" + hexdigest: outcome for hexdigest, outcome in done.items()}

    def remove(self, digest: str) -> None:
        self.backend.remove(self._hex(digest))

    def where(self, digest: str) -> str:
        return self.backend.where(self._hex(digest))

    def size(self, digest: str) -> int | None:
        return self.backend.size(self._hex(digest))

    def leftovers(self) -> Iterator[Leftover]:
        return self.backend.leftovers()

    def exists(self, digest: str) -> bool:
        return self.backend.exists(self._hex(digest))

    def missing(self, digests: Iterable[str]) -> set[str]:
        """Which of ``digests`` are not stored (push and pull copy those)."""
        return {"sha256:" + hexdigest for hexdigest in self.backend.missing({self._hex(d) for d in digests})}

    def flush(self) -> None:
        self.backend.flush()

    def discard(self) -> None:
        self.backend.discard()

    def digests(self) -> Iterator[str]:
        for hexdigest in self.backend.hexdigests():
            yield "sha256:" + hexdigest

    def verify(self, digest: str) -> bool:
        return _digest_bytes(self.read(digest)) == digest


def path_text(path: Path | str) -> str:
    """``str(Path(path))`` (repeated and trailing slashes and ``.`` parts dropped, ``..``
    kept), so that messages name a folder as they always have, without importing pathlib
    on a command's read path."""
    text = os.fspath(path)
    if os.name != "posix":
        from pathlib import Path

        return str(Path(text))
    root = "//" if text.startswith("//") and not text.startswith("///") else "/" if text.startswith("/") else ""
    return root + "/".join(part for part in text.split("/") if part and part != ".") or "."


def syncfs(path: Path | str) -> None:
    """One syncfs(2) of the file system holding ``path``: every file written there is
    durable, at the cost of one call (os.sync where syncfs is missing)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        descriptor = os.open(path, os.O_RDONLY)
        try:
            if libc.syncfs(descriptor) == 0:
                return
        finally:
            os.close(descriptor)
    except (OSError, AttributeError):
        pass
    os.sync()


class FileObjectBackend(ObjectBackend):
    """One file per object under ``root`` (a store's ``objects/sha256``), fanned out by
    the first two hex digits."""

    def __init__(self, root: Path | str):
        # plain os calls on strings where a command reads (pathlib's import is not free)
        self._root_text = path_text(root)
        self.location = self._root_text
        self._folders: set[str] = set()  # fan-out folders known to exist
        self._temporary_prefix = f"{TEMPORARY_PREFIX}{os.getpid()}-{os.urandom(4).hex()}-"
        self._written = 0
        self._anonymous = _ANONYMOUS_FLAGS != 0  # new objects through ``_link_new`` until it cannot

    @property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self._root_text)

    def path_of(self, digest: str) -> Path:
        from pathlib import Path

        return Path(self.where(ObjectDB._hex(digest)))

    def _folder(self, hexdigest: str) -> str:
        """The fan-out folder of an object: its first two hex digits."""
        return f"{self._root_text}/{hexdigest[:2]}"

    def where(self, hexdigest: str) -> str:
        """An object's file: the rest of its hex digits in its fan-out folder (the one
        place the layout is written; plain strings, as ``os`` takes them)."""
        return f"{self._folder(hexdigest)}/{hexdigest[2:]}"

    def exists(self, hexdigest: str) -> bool:
        return os.path.isfile(self.where(hexdigest))

    def read(self, hexdigest: str) -> bytes:
        # plain os calls: get reads one file per listed object. Non-blocking open and a
        # type check: a FIFO or a link to /dev/zero in an object's place is refused, not
        # waited on or read forever
        descriptor = os.open(self.where(hexdigest), os.O_RDONLY | os.O_NONBLOCK)
        try:
            mode = os.fstat(descriptor).st_mode
            if not stat.S_ISREG(mode):
                from kidx.manifests.reader import file_type

                raise OSError(errno.EINVAL, f"not a regular file ({file_type(mode)})", self.where(hexdigest))
            os.set_blocking(descriptor, True)
            chunks = []
            while chunk := os.read(descriptor, 1 << 16):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(descriptor)

    def write(self, hexdigest: str, data: bytes) -> str:
        """A file already at the path is checked, size first, then content (a same-size
        edit is caught too); one that is not this digest's is replaced atomically. Plain
        ``os`` calls on strings: this runs once per object in a bulk apply, where most
        objects are new, so a new one is tried first (``_link_new``)."""
        folder, path = self._folder(hexdigest), self.where(hexdigest)
        if folder not in self._folders:
            os.makedirs(folder, exist_ok=True)
            self._folders.add(folder)
        if self._anonymous and self._link_new(folder, path, data):
            return WRITTEN
        return self._checked_write(hexdigest, folder, path, data)

    def _link_new(self, folder: str, path: str, data: bytes) -> bool:
        """Write ``data`` to a file without a name in ``folder`` (O_TMPFILE) and link it
        at ``path`` in one step, which fails when something is there already: one
        directory change per object instead of a look-up, a temporary name and a rename,
        and a crash leaves no temporary file behind. False (nothing written) when
        something is at ``path``, or when the file system or the platform cannot do it
        (then never again in this process; the plain way reports any real failure)."""
        try:
            descriptor = os.open(folder, _ANONYMOUS_FLAGS, 0o644)
        except OSError:
            self._anonymous = False
            return False
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view):]
            os.link(str(descriptor), path, src_dir_fd=_process_descriptors())
            return True
        except FileExistsError:
            return False
        except OSError:
            self._anonymous = False
            return False
        finally:
            os.close(descriptor)

    def _checked_write(self, hexdigest: str, folder: str, path: str, data: bytes) -> str:
        outcome = WRITTEN
        try:
            found = os.stat(path)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISDIR(found.st_mode) and not os.path.islink(path):
                from kidx.errors import StoreError

                raise StoreError(f"cannot write object sha256:{hexdigest}: {path} is a folder, not an object "
                                 "file (move it away; 'kidx fsck' lists it as a stray file)")
            if stat.S_ISREG(found.st_mode):
                if found.st_size == len(data) and _content_is(path, data):
                    return PRESENT
                if _hashes_to(path, hexdigest):
                    return PRESENT  # intact: the bytes given are not this digest's, keep the file
            # damaged, or a FIFO, a device or a link to one (never opened: that could wait
            # or read forever): the object replaces it
            outcome = REPLACED
        self._written += 1
        from kidx.files import write_file  # a write's (it imports contextlib): a read imports neither

        # not synced one by one: the catalog's commit, after the objects, is the durable step
        write_file(path, data, sync=False, temporary=f"{folder}/{self._temporary_prefix}{self._written}", mode=0o644)
        return outcome

    def ensure_many(self, objects: dict[str, bytes]) -> dict[str, str]:
        """Objects that should be stored already: each is looked at first, not written."""
        done = {}
        for hexdigest, data in objects.items():
            folder = self._folder(hexdigest)
            if folder not in self._folders:
                os.makedirs(folder, exist_ok=True)
                self._folders.add(folder)
            done[hexdigest] = self._checked_write(hexdigest, folder, self.where(hexdigest), data)
        return done

    def remove(self, hexdigest: str) -> None:
        try:
            os.unlink(self.where(hexdigest))
        except FileNotFoundError:
            pass

    def size(self, hexdigest: str) -> int | None:
        try:
            return os.stat(self.where(hexdigest)).st_size
        except FileNotFoundError:
            return None

    def leftovers(self) -> Iterator[Leftover]:
        if not self.root.is_dir():
            return
        for fan in sorted(self.root.iterdir()):
            if not (re.match(r"^[0-9a-f]{2}$", fan.name) and fan.is_dir()):  # compiled when fsck asks
                yield _leftover(fan, temporary=False)
                continue
            for entry in sorted(fan.iterdir()):
                if _is_hex(fan.name + entry.name) and entry.is_file():
                    continue
                yield _leftover(entry, temporary=entry.name.startswith(TEMPORARY_PREFIX))

    def flush(self) -> None:
        """Make every written object durable before the catalog refers to it."""
        if os.path.exists(self._root_text):
            syncfs(self._root_text)

    def hexdigests(self) -> Iterator[str]:
        """Every well-formed object file; temporary files and strays are skipped."""
        if not self.root.is_dir():
            return
        for fan in sorted(self.root.iterdir()):
            if len(fan.name) != 2 or not fan.is_dir():
                continue
            for entry in sorted(fan.iterdir()):
                hexdigest = fan.name + entry.name
                if _is_hex(hexdigest) and entry.is_file():
                    yield hexdigest


# a file without a name, in the folder opened (Linux's O_TMPFILE; 0 where there is none)
_ANONYMOUS_FLAGS = (
    os.O_WRONLY | os.O_TMPFILE
    if hasattr(os, "O_TMPFILE") and os.link in os.supports_dir_fd and os.path.isdir("/proc/self/fd")
    else 0
)
_process_fds: tuple[int, int] | None = None  # (process id, its /proc/PID/fd folder, open)


def _process_descriptors() -> int:
    """This process's folder of open files (``/proc/PID/fd``), opened once per process: a
    descriptor's entry there links its file to a name. Opened again after a fork, which
    would otherwise name the parent's files."""
    global _process_fds
    pid = os.getpid()
    if _process_fds is None or _process_fds[0] != pid:
        _process_fds = (pid, os.open(f"/proc/{pid}/fd", os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)))
    return _process_fds[1]


def _outcome(written: str | bool) -> str:
    if isinstance(written, str):
        return written
    return WRITTEN if written else PRESENT


def _content_is(path: str, data: bytes) -> bool:
    try:
        with open(path, "rb") as stream:
            return stream.read(len(data) + 1) == data
    except OSError:
        return False


def _hashes_to(path: str, hexdigest: str) -> bool:
    import hashlib  # here, not at the top: reading the catalog never hashes, and its import is not free

    try:
        with open(path, "rb") as stream:
            return hashlib.file_digest(stream, "sha256").hexdigest() == hexdigest
    except OSError:
        return False


def _leftover(path: Path, temporary: bool) -> Leftover:
    return Leftover(path, temporary, path.lstat().st_size)


def _digest_bytes(data: bytes) -> str:
    from kidx.identity.canonical import digest_bytes  # imported where a digest is checked: a listing checks none

    return digest_bytes(data)
