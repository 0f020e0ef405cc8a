"""Hostile bundles: `kidx import bundle` checks a bundle as apply checks its input (names,
labels, kinds, schemas, nesting, history), bounds it in size, and detects damage through
the bundle's checksum; nothing is restored from a bundle it refuses."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import SEED_BUNDLE, SEED_ENVIRONMENT_DIGEST, SEED_PROTOCOL_DIGEST, SEED_RUN_DIGEST, SEED_RUN_NAME

from kidx.errors import InvalidInputError
from kidx.identity import digest_of
from kidx.kinds.metadata import label_value_error, name_error, qualified_key_error
from kidx.operations.maintain.bundle import NO_CHECKSUM, checksum, parse_bundle

PROTOCOL = "liger-bench-do-bench-backward"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> bytes:
    """The seed's bundle, as `kidx export` writes it."""
    from kidx.cli.app import run

    folder = tmp_path_factory.mktemp("exported")
    store, bundle = folder / "store", folder / "seed.kidx.json"
    assert run(["apply", "-f", str(SEED_BUNDLE), "--store", str(store)]) == 0
    assert run(["export", "-o", str(bundle), "--store", str(store)]) == 0
    return bundle.read_bytes()


def resealed(document: dict) -> bytes:
    """A crafted bundle with a correct checksum, so that what is tested is the check of
    its content, not the checksum."""
    document = copy.deepcopy(document)
    document["counts"] = {key: len(document[key]) for key in ("objects", "names", "revisions")}
    document["checksum"] = checksum(document["objects"], document["names"], document["revisions"])
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


def position(document: dict, section: str, kind: str) -> int:
    return next(index for index, item in enumerate(document[section]) if item["kind"] == kind)


def import_bundle(kidx, tmp_path, data: bytes, *args: str):
    path = tmp_path / "crafted.kidx.json"
    path.write_bytes(data)
    target = tmp_path / "restored"
    return kidx("import", "bundle", str(path), *args, store_path=target), path, target


def refused(kidx, tmp_path, data: bytes) -> list[str]:
    """The error lines of a refused import; the target store must not have been created."""
    result, path, target = import_bundle(kidx, tmp_path, data)
    assert (result.code, result.out) == (1, ""), result
    assert not target.exists()
    lines = result.err.splitlines()
    assert lines[-1].startswith("error: ") and lines[-1].endswith("; nothing was changed") or len(lines) == 1
    return [line.replace(str(path), "B") for line in lines]


def renamed(document: dict, kind: str, name: str) -> dict:
    document = copy.deepcopy(document)
    old = document["names"][position(document, "names", kind)]["name"]
    for section in ("names", "revisions"):
        for item in document[section]:
            if item["kind"] == kind and item["name"] == old:
                item["name"] = name
    return document


@pytest.mark.parametrize("name", ["Bad/Name", "with space", "Capital", "esc\x1b[2Jx", "", "-leading"])
def test_a_name_apply_refuses_is_refused(kidx, tmp_path, exported, name):
    document = renamed(json.loads(exported), "BenchmarkProtocol", name)
    message = name_error(name)
    assert message
    names, revisions = position(document, "names", "BenchmarkProtocol"), position(document, "revisions",
                                                                                     "BenchmarkProtocol")
    escaped = message.replace("\x1b", "^[")
    # the name's last revision is the name itself: said once
    assert refused(kidx, tmp_path, resealed(document)) == [f"error: B: names[{names}].name: {escaped}"]
    # an earlier revision under the bad name is a problem of its own
    earlier = copy.deepcopy(document["revisions"][revisions])
    earlier.update(title="first", recorded="2001-01-01T00:00:00Z")
    document["revisions"].insert(revisions, earlier)
    for item in document["revisions"][revisions + 1:revisions + 2] + [document["names"][names]]:
        item["generation"] = 2
    assert refused(kidx, tmp_path, resealed(document)) == [
        f"error: B: names[{names}].name: {escaped}",
        f"error: B: revisions[{revisions}].name: {escaped}",
        "error: 2 problems found; nothing was changed",
    ]


def test_label_keys_and_values_apply_refuses_are_refused(kidx, tmp_path, exported):
    document = json.loads(exported)
    for section in ("names", "revisions"):
        item = document[section][position(document, section, "BenchmarkProtocol")]
        item["labels"] = {"bad key!": "v", "ok": "not a value!"}
    names = position(document, "names", "BenchmarkProtocol")
    key_message, value_message = qualified_key_error("bad key!"), label_value_error("not a value!")
    assert key_message and value_message
    assert refused(kidx, tmp_path, resealed(document)) == [
        f"error: B: names[{names}].labels.bad key!: {key_message}",
        f"error: B: names[{names}].labels.ok: {value_message}",
        "error: 2 problems found; nothing was changed",
    ]


def test_a_name_holding_an_object_of_another_kind_is_refused(kidx, tmp_path, exported):
    document = json.loads(exported)
    for section in ("names", "revisions"):
        document[section][position(document, section, "BenchmarkRun")]["digest"] = SEED_ENVIRONMENT_DIGEST
    names = position(document, "names", "BenchmarkRun")
    assert refused(kidx, tmp_path, resealed(document)) == [
        f'error: B: names[{names}].kind: BenchmarkRun "{SEED_RUN_NAME}" names {SEED_ENVIRONMENT_DIGEST}, '
        "an object of kind ExecutionEnvironment",
    ]


def with_object(document: dict, kind: str, change) -> tuple[dict, str]:
    """The bundle with ``kind``'s object replaced by a changed copy (under its own digest)."""
    document = copy.deepcopy(document)
    old = document["names"][position(document, "names", kind)]["digest"]
    content = copy.deepcopy(document["objects"][old])
    change(content["spec"])
    digest = digest_of(content)
    del document["objects"][old]
    document["objects"][digest] = content
    for section in ("names", "revisions"):
        for item in document[section]:
            if item.get("digest") == old:
                item["digest"] = digest
    return document, digest


def test_a_spec_that_fails_the_schema_is_refused(kidx, tmp_path, exported):
    def change(spec):
        spec["status"] = "exploded"
        spec["timing"]["latencyNs"]["median"] = "fast"

    document, digest = with_object(json.loads(exported), "BenchmarkRun", change)
    lines = refused(kidx, tmp_path, resealed(document))
    assert lines[-1] == "error: 2 problems found; nothing was changed"
    assert lines[0].startswith(f"error: B: objects[{digest}].spec.status: Unsupported value: \"exploded\"")
    assert lines[1].startswith(f"error: B: objects[{digest}].spec.timing.latencyNs.median: Invalid value: ")


def test_nesting_deeper_than_apply_allows_is_refused(kidx, tmp_path, exported):
    def change(spec):
        deep: dict = {}
        spec["sourceNative"]["deep"] = deep
        for _ in range(300):
            deep["a"] = {}
            deep = deep["a"]

    document, digest = with_object(json.loads(exported), "BenchmarkRun", change)
    lines = refused(kidx, tmp_path, resealed(document))
    assert len(lines) == 2 and lines[-1] == "error: 1 problem found; nothing was changed" or len(lines) == 1
    assert lines[0].startswith(f"error: B: objects[{digest}].spec.sourceNative.deep.a.")
    assert lines[0].endswith(": document is nested more than 64 levels deep")


def test_a_64_bit_overflow_in_an_object_is_refused(kidx, tmp_path, exported):
    document, digest = with_object(json.loads(exported), "BenchmarkRun",
                                   lambda spec: spec["timing"]["latencyNs"].update(median=2**70))
    assert refused(kidx, tmp_path, resealed(document)) == [
        f"error: B: objects[{digest}].spec.timing.latencyNs.median: integer out of range (must fit in 64 bits)"
    ]


def test_a_revision_listed_twice_is_refused(kidx, tmp_path, exported):
    document = json.loads(exported)
    twice = position(document, "revisions", "BenchmarkProtocol")
    document["revisions"].insert(twice + 1, copy.deepcopy(document["revisions"][twice]))
    assert refused(kidx, tmp_path, resealed(document)) == [
        f'error: B: revisions[{twice + 1}].generation: BenchmarkProtocol "{PROTOCOL}" generation 1 follows '
        "generation 1: a revision is listed twice or out of order"
    ]


def test_a_changed_time_is_caught_by_the_checksum(kidx, tmp_path, exported):
    document = json.loads(exported)
    document["names"][0]["created"] = "2001-01-01T00:00:00Z"
    document["revisions"][position(document, "revisions", document["names"][0]["kind"])]["recorded"] = (
        "2001-01-01T00:00:00Z")
    data = json.dumps(document, ensure_ascii=False).encode("utf-8")
    expected = checksum(document["objects"], document["names"], document["revisions"])
    assert refused(kidx, tmp_path, data) == [
        f"error: B: checksum: the bundle's names and history hash to {expected}, not to its checksum: the file "
        "was changed or damaged after it was written"
    ]


def test_counts_that_disagree_are_refused(kidx, tmp_path, exported):
    document = json.loads(exported)
    document["counts"]["revisions"] = 4
    assert refused(kidx, tmp_path, json.dumps(document).encode()) == [
        'error: B: counts: says {"objects": 3, "names": 3, "revisions": 4}, but the bundle holds '
        '{"objects": 3, "names": 3, "revisions": 3}'
    ]


def test_an_unknown_top_level_field_is_refused(kidx, tmp_path, exported):
    document = json.loads(exported)
    document["checksun"] = document.pop("checksum")  # a flipped bit in the key must not skip the check
    assert refused(kidx, tmp_path, json.dumps(document).encode()) == [
        "error: B: checksun: is not a field of a kidx bundle"
    ]


def _restorable(data: bytes):
    from kidx.cli.common import kind_registry

    bundle = parse_bundle(data, "b.json", registry=kind_registry())
    return bundle.objects, bundle.names, bundle.revisions


def test_single_bit_flips_are_refused_or_change_nothing(exported):
    """Every sampled single-bit flip either is refused or gives back exactly what was
    exported (a flip in the export time, say, which restore does not use)."""
    original = _restorable(exported)
    accepted_different = []
    for offset in range(0, len(exported), 7):
        flipped = bytearray(exported)
        flipped[offset] ^= 1 << (offset % 8)
        try:
            again = _restorable(bytes(flipped))
        except InvalidInputError:
            continue
        if again != original:
            accepted_different.append(offset)
    assert accepted_different == []


def test_a_bundle_without_a_checksum_is_restored_with_a_warning(kidx, tmp_path, exported):
    document = json.loads(exported)
    del document["checksum"]
    result, path, target = import_bundle(kidx, tmp_path, json.dumps(document).encode())
    assert result.code == 0, result.err
    assert result.err.splitlines()[0] == f"Warning: {path} {NO_CHECKSUM}"
    assert sorted(result.out.splitlines()) == sorted([
        f"benchmarkprotocol.kernelindex.dev/{PROTOCOL} restored",
        "executionenvironment.kernelindex.dev/liger-bench-nvidia-h100-80gb-hbm3 restored",
        f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME} restored",
    ])


def test_an_exported_bundle_restores_without_a_warning(kidx, tmp_path, exported):
    result, _, target = import_bundle(kidx, tmp_path, exported)
    assert result.code == 0 and "Warning" not in result.err
    assert kidx("get", "run", SEED_RUN_NAME, "-o", "jsonpath={.metadata.digest}", store_path=target).out == (
        SEED_RUN_DIGEST)


def test_a_bundle_over_the_input_limit_is_refused(kidx, tmp_path, exported, monkeypatch):
    monkeypatch.setenv("KIDX_MAX_INPUT_SIZE", str(len(exported) - 1))
    assert refused(kidx, tmp_path, exported) == [
        f"error: B: input is larger than {len(exported) - 1} bytes, the limit for one source "
        "(set KIDX_MAX_INPUT_SIZE to change it)"
    ]


def test_dev_zero_as_a_bundle_is_refused_at_the_limit(kidx, tmp_path, monkeypatch):
    monkeypatch.setenv("KIDX_MAX_INPUT_SIZE", "4Mi")
    result = kidx("import", "bundle", "/dev/zero", store_path=tmp_path / "restored")
    assert result == (1, "", "error: /dev/zero: input is larger than 4 MiB, the limit for one source "
                             "(set KIDX_MAX_INPUT_SIZE to change it)\n")


def test_nan_in_a_bundle_is_refused(kidx, tmp_path, exported):
    text = exported.replace(b'"generation":1', b'"generation":NaN', 1)
    lines = refused(kidx, tmp_path, text)
    assert lines == ["error: B: not a kidx bundle: invalid JSON: NaN is not a JSON number"]


def test_fsck_escapes_control_characters_in_names(kidx, store, tmp_path, exported):
    """A store that holds a name with ESC (restored by a kidx that did not check
    bundles): fsck's lines show it escaped."""
    from kidx.cli.common import kind_registry, open_store
    from kidx.operations.ingest.restore_bundle import restore

    document = renamed(json.loads(exported), "BenchmarkProtocol", "esc\x1b[2Jx")
    bundle = parse_bundle(resealed(document), "b.json")  # no registry: the old, unchecked reading
    restore(open_store(str(store)), kind_registry(), bundle, "b.json")
    hexdigest = SEED_PROTOCOL_DIGEST.partition(":")[2]
    (store / "objects" / "sha256" / hexdigest[:2] / hexdigest[2:]).unlink()
    result = kidx("fsck")
    assert result.code == 1 and "\x1b" not in result.out
    lines = result.out.splitlines()
    assert lines[0] == (
        f"missing-object objects/sha256/{hexdigest[:2]}/{hexdigest[2:]}: no object file; needed by "
        "BenchmarkProtocol/esc^[[2Jx, BenchmarkProtocol/esc^[[2Jx revision 1")
    # and the name itself is reported: apply would refuse it
    message = name_error("esc\x1b[2Jx").replace("\x1b", "^[")
    assert f"invalid-metadata BenchmarkProtocol/esc^[[2Jx: metadata.name: {message}" in lines


def test_fsck_reports_names_apply_refuses_and_objects_of_another_kind(kidx, store, exported):
    from kidx.cli.common import kind_registry, open_store
    from kidx.operations.ingest.restore_bundle import restore

    document = renamed(json.loads(exported), "BenchmarkProtocol", "Bad Name")
    for section in ("names", "revisions"):
        item = document[section][position(document, section, "BenchmarkProtocol")]
        item["labels"] = {"ok": "not a value!"}
        document[section][position(document, section, "BenchmarkRun")]["digest"] = SEED_ENVIRONMENT_DIGEST
    restore(open_store(str(store)), kind_registry(), parse_bundle(resealed(document), "b.json"), "b.json")
    result = kidx("fsck")
    assert result.code == 1
    lines = result.out.splitlines()
    assert [line for line in lines if line.startswith(("invalid-metadata", "wrong-kind"))] == [
        f"invalid-metadata BenchmarkProtocol/Bad Name: metadata.name: {name_error('Bad Name')}",
        f"invalid-metadata BenchmarkProtocol/Bad Name: metadata.labels.ok: {label_value_error('not a value!')}",
        f"wrong-kind BenchmarkRun/{SEED_RUN_NAME}: its object {SEED_ENVIRONMENT_DIGEST} is of kind "
        "ExecutionEnvironment",
    ]
