"""How the PostgreSQL store packs its objects (catalog schema 4): each object's canonical
bytes deflated on their own, with a preset dictionary made once from the store's own objects.

A stored ``content`` is either the object's exact bytes, which always start with ``{`` (a
canonical JSON object), or packed: one byte, the id of its dictionary in
``kidx.text_dictionaries`` (0: none), then raw deflate of the exact bytes. An object is
packed where that is shorter; an object that does not start with ``{`` is always packed,
so that the first byte tells the two apart.

Deflate finds repeats up to 32 KiB back, so a dictionary of the last 32 KiB of objects like
the ones to come turns a run's object (about a kilobyte of JSON whose keys, kinds and
references repeat from run to run) into a few hundred bytes: bench_object_compression
measures it. The dictionary is made by the first write that holds DICTIONARY_OBJECTS objects
of its own, from objects spread over that write; writes before it pack without one.

Packing takes tens of microseconds an object (bench_object_compression times it), which a
bulk write of 100,000 runs would add to its own thread, where it makes the catalog rows
(zlib does not let two Python threads deflate side by side): from
WORKER_FROM objects on, a write's objects are packed by a process of its own
(``Packing``: this module's ``_serve``, fed through a pipe), on another core while the
write makes its catalog rows; it unpacks and compares each object it packed before it
answers, and where it cannot start or fails, the objects are packed in the write's own
process instead (the same bytes).

The server can no longer re-hash packed bytes, so its CHECK holds only for unpacked ones;
every read still checks each object against its digest after unpacking it (a packed value
that cannot be unpacked is read as it is stored, which does not hash to its digest: damage,
named as such), as the folder store does.
"""

from __future__ import annotations

import struct
import sys
import zlib
from collections.abc import Callable, Sequence
from typing import Any

OBJECT_DICTIONARY_ID = 2  # in kidx.text_dictionaries (1: the annotations')
DICTIONARY_BYTES = 32 * 1024  # deflate's window: a longer dictionary's start would never be used
DICTIONARY_OBJECTS = 32  # the fewest objects a write holds to make the dictionary from
DICTIONARY_SAMPLE = 128  # objects, spread over that write, the dictionary is cut from
LEVEL = 6  # zlib's default
RAW_START = b"{"
WORKER_FROM = 2_000  # objects a write packs from which it packs them in a process of its own
_LENGTH = struct.Struct(">I")  # before each object in the worker's pipes


def make_object_dictionary(objects: Sequence[bytes]) -> bytes | None:
    """The last DICTIONARY_BYTES of up to DICTIONARY_SAMPLE of ``objects`` taken at even
    steps (so that the kinds a write holds most of fill it); None from fewer than
    DICTIONARY_OBJECTS."""
    if len(objects) < DICTIONARY_OBJECTS:
        return None
    step = max(1, len(objects) // DICTIONARY_SAMPLE)
    return b"".join(objects[::step][-DICTIONARY_SAMPLE:])[-DICTIONARY_BYTES:]


class ObjectPacker:
    """Packs objects with dictionary ``dictionary_id`` (0 and None: without one)."""

    def __init__(self, dictionary_id: int = 0, dictionary: bytes | None = None):
        self.dictionary_id = dictionary_id if dictionary is not None else 0
        self.dictionary = dictionary
        self._tag = bytes([self.dictionary_id])
        # primed once: copying it costs less than setting the dictionary for every object
        self._primed = (zlib.compressobj(LEVEL, zlib.DEFLATED, -15) if dictionary is None else
                        zlib.compressobj(LEVEL, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, dictionary))

    def pack(self, data: bytes) -> bytes:
        """``data`` as stored: packed where that is shorter, or where it does not start with ``{``."""
        compressor = self._primed.copy()
        packed = self._tag + compressor.compress(data) + compressor.flush()
        return data if len(packed) >= len(data) and data[:1] == RAW_START else packed


def unpack_object(stored: bytes, dictionary: Callable[[int], bytes | None]) -> bytes:
    """An object's bytes from its stored ``content`` (``dictionary`` gives a dictionary by
    id). A packed value that cannot be unpacked comes back as stored: it does not hash to its
    digest, so the read that checks it names the object damaged."""
    if stored[:1] == RAW_START or not stored:
        return stored
    try:
        if stored[0] == 0:
            return zlib.decompress(stored[1:], -15)
        preset = dictionary(stored[0])
        if preset is None:
            return stored
        decompressor = zlib.decompressobj(-15, zdict=preset)
        data = decompressor.decompress(stored[1:])
        return data if decompressor.eof else stored
    except zlib.error:
        return stored


class Packing:
    """Objects being packed: from WORKER_FROM of them by a worker process, started at once
    (the caller goes on while it packs); ``result`` waits for them, ``abandon`` stops it.
    Where no worker can be started, or it fails, they are packed here: the same bytes."""

    def __init__(self, packer: ObjectPacker, objects: Sequence[bytes]):
        self._packer, self._objects = packer, objects
        self._worker: Any = None
        if len(objects) >= WORKER_FROM:
            try:
                self._start()
            except OSError:  # no interpreter to start (an embedded one)
                self._worker = None

    def _start(self) -> None:
        import os
        import subprocess
        import threading

        # this kidx, whatever the working folder holds (-m and -c would put it first on the path)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        serve = f"import sys; sys.path.insert(0, {root!r}); from {__name__} import _serve; sys.exit(_serve())"
        self._worker = worker = subprocess.Popen(
            [sys.executable, "-c", serve], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        payload = bytes([self._packer.dictionary_id]) + _framed([self._packer.dictionary or b"", *self._objects])
        pipe = worker.stdin
        assert pipe is not None  # stdin=PIPE

        def feed() -> None:  # one write of it all (communicate's would be 512 bytes at a time)
            try:
                with pipe:
                    pipe.write(payload)
            except (OSError, ValueError):  # the worker ended or was stopped: result() or abandon() sees to it
                pass

        self._feeder = threading.Thread(target=feed, name="kidx-object-packing", daemon=True)
        self._feeder.start()

    def result(self) -> list[bytes]:
        """The objects packed, in order."""
        worker, self._worker = self._worker, None
        if worker is not None:
            out = worker.stdout.read()
            self._feeder.join()
            worker.stderr.read()
            worker.wait()
            try:
                packed = _unframed(out) if worker.returncode == 0 else []
            except (ValueError, struct.error):  # cut short
                packed = []
            if len(packed) == len(self._objects):
                return packed
        return [self._packer.pack(data) for data in self._objects]

    def abandon(self) -> None:
        """The write is given up: the worker, if still packing, is stopped and waited for."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        worker.kill()
        worker.wait()
        for pipe in (worker.stdout, worker.stderr):
            try:
                pipe.close()
            except OSError:
                pass
        self._feeder.join()


def _framed(objects: Sequence[bytes]) -> bytes:
    pack = _LENGTH.pack
    return b"".join([part for data in objects for part in (pack(len(data)), data)])


def _unframed(stream: bytes) -> list[bytes]:
    found, position, end = [], 0, len(stream)
    unpack = _LENGTH.unpack_from
    while position < end:
        (length,) = unpack(stream, position)
        position += 4
        found.append(stream[position:position + length])
        position += length
    if position != end:
        raise ValueError("the last object is cut short")
    return found


def _serve() -> int:
    """The worker: objects framed on standard input (after the dictionary's id and the
    dictionary), each packed and checked, framed on standard output."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the write's to handle: it stops reading
    stream = sys.stdin.buffer.read()
    dictionary_id = stream[0]
    (dictionary, *objects) = _unframed(stream[1:]) if len(stream) > 1 else [b""]
    packer = ObjectPacker(dictionary_id, dictionary or None)
    packed = []
    for data in objects:
        stored = packer.pack(data)
        if unpack_object(stored, lambda _: dictionary) != data:
            print(f"an object did not unpack to its bytes (dictionary {dictionary_id})", file=sys.stderr)
            return 1
        packed.append(stored)
    sys.stdout.buffer.write(_framed(packed))
    return 0


