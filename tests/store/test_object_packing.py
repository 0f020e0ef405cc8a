"""Objects packed for the PostgreSQL store (schema 4): each deflated on its own, with or
without the store's preset dictionary; exact bytes kept where packing does not shorten
them; many packed by a process of their own, byte for byte as in this one."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
import zlib

import pytest

from kidx.store import object_packing
from kidx.store.object_packing import (
    DICTIONARY_BYTES,
    DICTIONARY_OBJECTS,
    ObjectPacker,
    Packing,
    make_object_dictionary,
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


class PackedOnlyByTheWorker(ObjectPacker):
    """A packer whose objects may be packed by its worker only (the worker makes its own)."""

    def pack(self, data: bytes) -> bytes:
        raise AssertionError("packed in the write's own process")


@pytest.mark.parametrize("dictionary_id", [0, 2])
def test_many_objects_are_packed_by_a_process_of_their_own_byte_for_byte(monkeypatch, dictionary_id):
    monkeypatch.setattr(object_packing, "WORKER_FROM", 50)
    dictionary = make_object_dictionary(OBJECTS) if dictionary_id else None
    packer = ObjectPacker(dictionary_id, dictionary)
    assert Packing(PackedOnlyByTheWorker(dictionary_id, dictionary), OBJECTS).result() == [packer.pack(d) for d in OBJECTS]
    with pytest.raises(AssertionError, match="packed in the write's own process"):  # fewer: packed here
        Packing(PackedOnlyByTheWorker(dictionary_id, dictionary), OBJECTS[:49]).result()


def test_the_worker_imports_this_kidx_whatever_the_working_folder_holds(monkeypatch, tmp_path):
    (tmp_path / "kidx").mkdir()
    (tmp_path / "kidx" / "__init__.py").write_text("raise ImportError('not this kidx')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(object_packing, "WORKER_FROM", 10)
    assert Packing(PackedOnlyByTheWorker(), OBJECTS).result() == [ObjectPacker().pack(data) for data in OBJECTS]


def test_where_the_worker_fails_or_cannot_start_the_objects_are_packed_here(monkeypatch):
    monkeypatch.setattr(object_packing, "WORKER_FROM", 10)
    packer = ObjectPacker()
    expected = [packer.pack(data) for data in OBJECTS]
    real_popen = subprocess.Popen

    def failing(command, **kwargs):  # an interpreter that cannot find the module
        return real_popen([sys.executable, "-c", "import sys; sys.stdin.buffer.read(); sys.exit('no kidx')"],
                          **kwargs)

    monkeypatch.setattr(subprocess, "Popen", failing)
    assert Packing(packer, OBJECTS).result() == expected
    monkeypatch.setattr(subprocess, "Popen", real_popen)
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    assert Packing(packer, OBJECTS).result() == expected


def test_a_packing_given_up_stops_its_worker_and_waits_for_it(monkeypatch):
    """Before or after the worker has read its objects: no error, no process left."""
    started = []
    real_popen = subprocess.Popen

    def spied(*args, **kwargs):
        started.append(real_popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(subprocess, "Popen", spied)
    for pause in (0.0, 0.5):
        packing = Packing(ObjectPacker(), OBJECTS * (object_packing.WORKER_FROM // len(OBJECTS) + 1))
        time.sleep(pause)
        packing.abandon()
        assert started[-1].returncode is not None  # reaped
    assert len(started) == 2
