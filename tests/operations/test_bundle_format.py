"""The bundle file format (kidx.bundle/v1): written as documented, read back checked."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from conftest import SEED_BUNDLE, SEED_ENVIRONMENT_DIGEST, SEED_PROTOCOL_DIGEST

from kidx.errors import InvalidInputError
from kidx.identity import canonical_json, digest_of, identity_of
from kidx.operations.maintain.bundle import (
    FORMAT,
    Bundle,
    BundleName,
    BundleRevision,
    is_bundle,
    parse_bundle,
    write_bundle,
)

SEED = json.loads(SEED_BUNDLE.read_text(encoding="utf-8"))
PROTOCOL = canonical_json(identity_of(SEED["protocol"]))
ENVIRONMENT = canonical_json(identity_of(SEED["environment"]))


def sample() -> Bundle:
    name = BundleName("BenchmarkProtocol", "proto", SEED_PROTOCOL_DIGEST, "Ünïcode title", {"a": "b"}, {"note": "x\ny"},
                      "2026-01-01T00:00:00Z", 2)
    return Bundle(
        objects={SEED_PROTOCOL_DIGEST: PROTOCOL, SEED_ENVIRONMENT_DIGEST: ENVIRONMENT},
        names=[name],
        revisions=[
            BundleRevision("BenchmarkProtocol", "proto", "applied", SEED_PROTOCOL_DIGEST, None, {}, {}, 1,
                           "2026-01-01T00:00:00Z"),
            BundleRevision("ExecutionEnvironment", "env", "applied", SEED_ENVIRONMENT_DIGEST, None, {}, {}, 1,
                           "2026-01-01T00:00:01Z"),
            BundleRevision("ExecutionEnvironment", "env", "deleted", SEED_ENVIRONMENT_DIGEST, None, {}, {}, 1,
                           "2026-01-01T00:00:02Z"),
            BundleRevision("BenchmarkProtocol", "proto", "applied", SEED_PROTOCOL_DIGEST, "Ünïcode title", {"a": "b"},
                           {"note": "x\ny"}, 2, "2026-01-01T00:00:03Z"),
        ],
        exported="2026-01-02T00:00:00Z",
        selection="all",
    )


def digest_of_json(value) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value)).hexdigest()


def written(bundle: Bundle) -> bytes:
    stream = io.BytesIO()
    write_bundle(stream, bundle)
    return stream.getvalue()


def test_layout_is_one_json_object_with_one_entry_per_line():
    data = written(sample())
    lines = data.decode("utf-8").splitlines()
    assert lines[0] == (
        '{"format":"kidx.bundle/v1","exported":"2026-01-02T00:00:00Z","selection":"all",'
        '"counts":{"objects":2,"names":1,"revisions":4},'
    )
    assert lines[1] == '"objects":{'
    # objects sorted by digest, each exactly its stored bytes
    assert lines[2] == f'"{SEED_PROTOCOL_DIGEST}":{PROTOCOL.decode()},'
    assert lines[3] == f'"{SEED_ENVIRONMENT_DIGEST}":{ENVIRONMENT.decode()}'
    assert lines[4:6] == ["},", '"names":[']
    assert lines[6] == (
        '{"kind":"BenchmarkProtocol","name":"proto","digest":"' + SEED_PROTOCOL_DIGEST + '","title":"Ünïcode title",'
        '"labels":{"a":"b"},"annotations":{"note":"x\\ny"},"created":"2026-01-01T00:00:00Z","generation":2}'
    )
    assert lines[7:9] == ["],", '"revisions":[']
    assert len(lines) == 15 and lines[-2] == "],"
    # the checksum: over the object digests, names and revisions, as JSON values
    document = json.loads(data)
    expected = digest_of_json({"objects": sorted(document["objects"]), "names": document["names"],
                               "revisions": document["revisions"]})
    assert lines[-1] == f'"checksum":"{expected}"}}'
    document = json.loads(data)
    assert document["format"] == FORMAT
    assert is_bundle(data[:64])
    assert not is_bundle(b'{"apiVersion":"v1","kind":"List"}')


def test_round_trip_keeps_bytes_names_and_history():
    bundle = sample()
    again = parse_bundle(written(bundle), "b.json", known_kinds={"BenchmarkProtocol", "ExecutionEnvironment"})
    assert again.objects == bundle.objects
    assert again.names == bundle.names
    assert again.revisions == bundle.revisions
    assert (again.exported, again.selection) == (bundle.exported, bundle.selection)


def test_an_empty_bundle_is_valid():
    again = parse_bundle(written(Bundle(exported="t", selection="all")), "b.json")
    assert (again.objects, again.names, again.revisions) == ({}, [], [])


def problems(data: bytes, **kwargs) -> list[str]:
    with pytest.raises(InvalidInputError) as caught:
        parse_bundle(data, "b.json", **kwargs)
    return [str(problem) for problem in caught.value.problems]


def edited(change) -> bytes:
    document = json.loads(written(sample()))
    change(document)
    return json.dumps(document, ensure_ascii=False).encode()


def test_not_a_bundle():
    assert problems(b"{") == ["b.json: not a kidx bundle: invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"]
    assert problems(b'{"apiVersion":"v1","kind":"List","items":[]}') == ['b.json: not a kidx bundle (no "format": "kidx.bundle/v1")']
    assert problems(b'{"format":"kidx.bundle/v2"}') == [
        'b.json: format: unsupported bundle format "kidx.bundle/v2" (this kidx reads kidx.bundle/v1)'
    ]


def test_an_object_that_does_not_hash_to_its_name_is_refused():
    def change(document):
        document["objects"][SEED_PROTOCOL_DIGEST]["spec"]["harness"] = "edited"

    actual = digest_of(json.loads(edited(change))["objects"][SEED_PROTOCOL_DIGEST])
    assert actual != SEED_PROTOCOL_DIGEST
    assert problems(edited(change)) == [f"b.json: objects[{SEED_PROTOCOL_DIGEST}]: content hashes to {actual}, not to its name"]


def test_every_field_problem_is_reported_with_its_path():
    def change(document):
        document["names"][0]["generation"] = 0
        document["names"][0]["labels"] = {"a": 1}
        document["revisions"][1]["event"] = "renamed"
        document["revisions"][2]["digest"] = "sha256:abc"
        document["revisions"][3]["kind"] = "Nope"

    assert problems(edited(change), known_kinds={"BenchmarkProtocol", "ExecutionEnvironment"}) == [
        "b.json: names[0].labels: must be a mapping of strings to strings",
        "b.json: names[0].generation: must be a positive integer",
        'b.json: revisions[1].event: must be "applied" or "deleted"',
        "b.json: revisions[2].digest: must be a sha256:<64 hex digits> digest",
        'b.json: revisions[3].kind: unknown kind "Nope"',
    ]


def test_a_name_must_be_its_last_revision_and_its_object_must_be_there():
    def change(document):
        document["names"][0]["title"] = "other"

    assert problems(edited(change)) == ['b.json: names[0]: BenchmarkProtocol "proto" does not match its last revision']

    def drop_object(document):
        del document["objects"][SEED_ENVIRONMENT_DIGEST]

    assert problems(edited(drop_object)) == [
        f"b.json: revisions[1].digest: {SEED_ENVIRONMENT_DIGEST} is not among the bundle's objects"
    ]
