"""Writing a file whole or not at all: the one helper every writer of a finished file uses
(objects, bundles, the CRD cache, exports).

The guarantee: the data goes to a temporary file of its own in the target's folder (a
unique name, created with O_EXCL: never an existing file, never through a link), which
is renamed over the target only once written, so the target is either the old file or
the whole new one; with ``sync`` (the user's data: bundles, exports) the file is flushed
to disk before the rename. On any failure the temporary file is removed, and an error
names the target, not the temporary file. Plain ``os`` calls on strings: the store
writes each object through here.

A file a user names for output (``kidx export -o``, ``kidx plot -o``) goes through
``output_file`` / ``write_output``: written whole in the same way where it is a regular
file or does not exist yet (through a symbolic link, the file it names is written and the
link kept), but written into, never replaced, where it is something else: a named pipe,
a terminal, ``/dev/null``, ``/dev/stdout``. A folder is refused by the rename, as before."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:  # typing itself costs an everyday command's start (kidx/records.py)
    from typing import BinaryIO

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


# a temporary file's name (a regular expression, its group the target's name): the target's
# name, the writer's process id and 8 random hex digits
TEMPORARY = r"\.(.+)\.[0-9]+-[0-9a-f]{8}\.tmp"


def temporary_path(path: str) -> str:
    """A name of its own for a temporary file beside ``path`` (``TEMPORARY`` matches it)."""
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")


def write_file(path: str | os.PathLike[str], data: bytes, *, sync: bool, temporary: str | None = None,
               mode: int = 0o666) -> None:
    """``data`` as the whole of ``path``; ``temporary``: the temporary file's name, when the
    caller names its own (the store's, which gc recognises)."""
    target = os.fspath(path)
    temporary = temporary or temporary_path(target)
    try:
        descriptor = os.open(temporary, _FLAGS, mode)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view):]
            if sync:
                os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temporary, target)
    except BaseException as exc:
        _failed(exc, temporary, target)
        raise


@contextmanager
def atomic_file(path: str | os.PathLike[str], *, sync: bool, mode: int = 0o666) -> Iterator[BinaryIO]:
    """A binary stream whose bytes become the whole of ``path`` when the block ends
    without an error (for data written in pieces: a bundle)."""
    target = os.fspath(path)
    temporary = temporary_path(target)
    try:
        with os.fdopen(os.open(temporary, _FLAGS, mode), "wb") as stream:
            yield stream
            if sync:
                stream.flush()
                os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException as exc:
        _failed(exc, temporary, target)
        raise


def output_target(path: str) -> tuple[str, bool]:
    """(where to write, whether to write into it rather than replace it) for a path a user
    named for output: see the module's docstring."""
    try:
        found = os.lstat(path)
    except OSError:
        return path, False  # nothing there yet (or unreadable: the write says why)
    if stat.S_ISREG(found.st_mode) or stat.S_ISDIR(found.st_mode):
        return path, False
    if stat.S_ISLNK(found.st_mode):
        try:
            named = os.stat(path)
        except OSError:
            return path, False  # a dangling link: replaced by the file, as before
        resolved = os.path.realpath(path)
        if stat.S_ISREG(named.st_mode) and os.path.isfile(resolved) and not resolved.startswith("/proc/"):
            return resolved, False
        if stat.S_ISDIR(named.st_mode):
            return path, False
    return path, True  # a named pipe, a device, a socket, or a link to one (/dev/stdout)


@contextmanager
def output_file(path: str | os.PathLike[str], *, sync: bool) -> Iterator[BinaryIO]:
    """A binary stream for a file a user named for output: whole or not at all where it
    is a regular file (``atomic_file``), else written into (``output_target``)."""
    target, into = output_target(os.fspath(path))
    if not into:
        with atomic_file(target, sync=sync) as stream:
            yield stream
        return
    regular = os.path.isfile(target)  # a regular file through /proc/self/fd: add to it, as a shell's >> does
    flags = os.O_WRONLY | getattr(os, "O_BINARY", 0) | (os.O_APPEND if regular else 0)
    with os.fdopen(os.open(target, flags), "wb") as stream:
        yield stream


def write_output(path: str | os.PathLike[str], data: bytes, *, sync: bool) -> None:
    """``data`` as the whole of a file a user named for output (``output_file``)."""
    target, into = output_target(os.fspath(path))
    if not into:
        write_file(target, data, sync=sync)
        return
    with output_file(target, sync=sync) as stream:
        stream.write(data)


def _failed(exc: BaseException, temporary: str, target: str) -> None:
    try:
        os.unlink(temporary)
    except OSError:
        pass
    if isinstance(exc, OSError) and exc.filename == temporary:
        exc.filename = target  # the user named the target; the temporary file is kidx's business
