"""Objects packed for the PostgreSQL store (schema 4): each deflated on its own, with or
without the store's preset dictionary; exact bytes kept where packing does not shorten
them; many packed by a process of their own, byte for byte as in this one."""

from __future__ import annotations

import hashlib
import json
import sys
import zlib

import pytest

from kidx.errors import StoreError
from kidx.store import object_packing
from kidx.store.object_packing import (
    DICTIONARY_BYTES,
    DICTIONARY_OBJECTS,
    ObjectPacker,
    make_object_dictionary,
    pack_many,
    unpack_object,
)


def run_object(index: int) -> bytes:
    return json.dumps({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun",
                       "spec": {"protocolDigest": "sha256:" + hashlib.sha256(b"p").hexdigest(),
                                "timing": {"latencyNs": {"median": 1000 + index, "samples": list(range(index % 7))}},
                                "status": "passed", "labels": {"kernel": "rms_norm", "index": str(index)}}},
                      separators=(",", ":"), sort_keys=True).encode()


OBJECTS = [run_object(index) for index in range(200)]


def test_no_dictionary_is_made_from_fewer_objects_than_the_least_and_one_is_cut_to_deflates_window():
    assert make_object_dictionary(OBJECTS[:DICTIONARY_OBJECTS - 1]) is None
    dictionary = make_object_dictionary(OBJECTS * 40)
    assert dictionary is not None and len(dictionary) == DICTIONARY_BYTES
    assert make_object_dictionary(OBJECTS[:DICTIONARY_OBJECTS]) == b"".join(OBJECTS[:DICTIONARY_OBJECTS])


def test_a_packed_object_is_its_dictionarys_id_then_raw_deflate_and_unpacks_to_its_bytes():
    dictionary = make_object_dictionary(OBJECTS[:100])
    with_dictionary, without = ObjectPacker(2, dictionary), ObjectPacker()
    for data in OBJECTS[100:]:
        packed, plain = with_dictionary.pack(data), without.pack(data)
        assert packed[0] == 2 and zlib.decompressobj(-15, zdict=dictionary).decompress(packed[1:]) == data
        assert plain[0] == 0 and zlib.decompress(plain[1:], -15) == data
        assert len(packed) < len(plain) < len(data)
        assert unpack_object(packed, {2: dictionary}.get) == data == unpack_object(plain, {}.get)
    # about a fifth of the bytes with the dictionary
    assert sum(len(with_dictionary.pack(data)) for data in OBJECTS[100:]) < sum(map(len, OBJECTS[100:])) / 5


def test_exact_bytes_are_kept_where_packing_does_not_shorten_them_and_anything_else_is_packed():
    packer = ObjectPacker()
    assert packer.pack(b"{}") == b"{}"  # starts with "{": read as exact bytes
    assert unpack_object(b"{}", {}.get) == b"{}"
    odd = b"\x02not an object"  # does not start with "{": packed, or its first byte would be taken for an id
    assert packer.pack(odd)[0] == 0 and unpack_object(packer.pack(odd), {}.get) == odd


@pytest.mark.parametrize("stored", [b"\x02not deflate", b"\x00\xff\xff", b"\x07" + zlib.compress(b"{}")[2:-4]])
def test_a_value_that_cannot_be_unpacked_reads_as_stored_so_that_its_digest_check_fails(stored):
    dictionary = make_object_dictionary(OBJECTS)
    assert unpack_object(stored, {2: dictionary}.get) == stored


def test_a_value_cut_short_reads_as_stored():
    packed = ObjectPacker().pack(OBJECTS[0])
    assert unpack_object(packed[:-3], {}.get) == packed[:-3]


@pytest.mark.parametrize("dictionary_id", [0, 2])
def test_many_objects_are_packed_by_a_process_of_their_own_byte_for_byte(monkeypatch, dictionary_id):
    monkeypatch.setattr(object_packing, "WORKER_FROM", 50)
    dictionary = make_object_dictionary(OBJECTS) if dictionary_id else None
    packer = ObjectPacker(dictionary_id, dictionary)
    started = []
    real_popen = __import__("subprocess").Popen

    def popen(*args, **kwargs):
        started.append(args[0])
        return real_popen(*args, **kwargs)

    monkeypatch.setattr("subprocess.Popen", popen)
    assert pack_many(packer, OBJECTS) == [packer.pack(data) for data in OBJECTS]
    assert started == [[sys.executable, "-m", "kidx.store.object_packing"]]
    assert pack_many(packer, OBJECTS[:49]) == [packer.pack(data) for data in OBJECTS[:49]] and len(started) == 1


def test_a_worker_that_fails_fails_the_write_with_its_reason(monkeypatch):
    monkeypatch.setattr(object_packing, "WORKER_FROM", 10)
    real_popen = __import__("subprocess").Popen

    def failing(command, **kwargs):  # an interpreter that cannot find the module
        return real_popen([sys.executable, "-c", "import sys; sys.stdin.buffer.read(); "
                           "sys.exit('no module named kidx.store.object_packing')"], **kwargs)

    monkeypatch.setattr("subprocess.Popen", failing)
    with pytest.raises(StoreError) as raised:
        pack_many(ObjectPacker(), OBJECTS)
    assert str(raised.value) == ("packing the write's objects failed (no module named kidx.store.object_packing); "
                                 "nothing was stored")


def test_without_an_interpreter_to_start_they_are_packed_here(monkeypatch):
    monkeypatch.setattr(object_packing, "WORKER_FROM", 10)
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    packer = ObjectPacker()
    assert pack_many(packer, OBJECTS) == [packer.pack(data) for data in OBJECTS]
