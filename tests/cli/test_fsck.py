"""kidx fsck finds each kind of damage, names it, and --repair fixes what can be rebuilt;
object files are checked when read and when written (apply repairs what it rewrites)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import (
    SEED_BUNDLE,
    SEED_ENVIRONMENT_DIGEST,
    SEED_PROTOCOL_DIGEST,
    SEED_RUN_DIGEST,
    SEED_RUN_NAME,
)

PROTOCOL = "liger-bench-do-bench-backward"
ENVIRONMENT = "liger-bench-nvidia-h100-80gb-hbm3"
RUN = f"BenchmarkRun/{SEED_RUN_NAME}"
WORKLOAD_DIGEST = "sha256:acfd1d7e6ca5aee0df8b2dfece34e3144b249d3671745b21c015a45f41816344"
IMPLEMENTATION_DIGEST = "sha256:7b16e7caa07229eb63274c52969e9742bd849258f08f13b57ebaa55928740b6d"
# the seed run refers to a workload and an implementation the seed does not carry
SEED_NOTES = [
    f"dangling-reference {RUN}: implementationDigest {IMPLEMENTATION_DIGEST} is not in the store",
    f"dangling-reference {RUN}: workloadDigest {WORKLOAD_DIGEST} is not in the store",
]


def object_path(store: Path, digest: str) -> Path:
    return store / "objects" / "sha256" / digest[7:9] / digest[9:]


def relative(digest: str) -> str:
    return f"objects/sha256/{digest[7:9]}/{digest[9:]}"


@pytest.fixture
def seeded(kidx, store) -> Path:
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    return store


def sql(store: Path, statement: str, *parameters) -> None:
    connection = sqlite3.connect(store / "catalog.sqlite")
    try:
        connection.execute(statement, parameters)
        connection.commit()
    finally:
        connection.close()


def fsck_lines(kidx, *args) -> tuple[int, list[str], str]:
    result = kidx("fsck", *args)
    return result.code, result.out.splitlines(), result.err


def test_a_clean_store(kidx, seeded):
    code, lines, err = fsck_lines(kidx)
    assert (code, err) == (0, "")
    assert lines == [*SEED_NOTES, "checked 3 objects, 3 names, 3 revisions", "no problems found",
                     "2 notes: dangling-reference 2"]


def test_json_report(kidx, seeded):
    object_path(seeded, SEED_ENVIRONMENT_DIGEST).write_bytes(b"")
    result = kidx("fsck", "-o", "json")
    assert result.code == 1
    assert json.loads(result.out) == {
        "checked": {"objects": 3, "names": 3, "revisions": 3},
        "problems": [{"check": "damaged-object", "subject": SEED_ENVIRONMENT_DIGEST, "message": "empty file",
                      "path": relative(SEED_ENVIRONMENT_DIGEST)}],
        "notes": [{"check": "dangling-reference", "subject": RUN, "message": note.split(": ", 1)[1]}
                  for note in SEED_NOTES],
    }


def test_no_store_is_an_error(kidx, store):
    assert kidx("fsck") == (1, "", f"error: there is no store at {store}\n")
    assert not store.exists()


def test_hand_edited_object_is_found_refused_on_read_and_repaired_by_apply(kidx, seeded, seed_bundle):
    path = object_path(seeded, SEED_PROTOCOL_DIGEST)
    path.write_bytes(path.read_bytes().replace(b"backward", b"forwards"))  # same size
    edited = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    code, lines, err = fsck_lines(kidx)
    assert code == 1
    assert lines[0] == (f"damaged-object {relative(SEED_PROTOCOL_DIGEST)}: "
                        f"content hashes to {edited}, not to its name")
    assert lines[-2:] == ["1 problem: damaged-object 1", "2 notes: dangling-reference 2"]
    assert "apply the original manifests again" in err
    # reading it is an error naming the file, never the edited content
    result = kidx("get", "protocol", PROTOCOL, "-o", "jsonpath={.spec}")
    assert result.code == 1 and result.out == ""
    assert result.err == (f"error: object {SEED_PROTOCOL_DIGEST} is damaged: {path} does not hash to its name "
                          "(run 'kidx fsck')\n")
    # applying the original rewrites the file, and says so: the name is as it was, the store is not
    result = kidx("apply", "-f", str(SEED_BUNDLE))
    assert result.code == 0
    assert f"benchmarkprotocol.kernelindex.dev/{PROTOCOL} repaired" in result.out.splitlines()
    assert (f"Warning: benchmarkprotocol.kernelindex.dev/{PROTOCOL}: object {path} was damaged "
            "(it did not hash to its name); written again") in result.err.splitlines()
    assert fsck_lines(kidx)[0] == 0
    assert json.loads(kidx("get", "protocol", PROTOCOL, "-o", "json").out)["spec"] == seed_bundle["protocol"]["spec"]


@pytest.mark.parametrize("damage", ["missing", "empty", "truncated"])
def test_missing_or_empty_object_file(kidx, seeded, damage):
    path = object_path(seeded, SEED_ENVIRONMENT_DIGEST)
    original = path.read_bytes()
    if damage == "missing":
        path.unlink()
        expected = (f"missing-object {relative(SEED_ENVIRONMENT_DIGEST)}: no object file; "
                    f"needed by ExecutionEnvironment/{ENVIRONMENT}, ExecutionEnvironment/{ENVIRONMENT} revision 1")
        problem = "missing-object"
    else:
        path.write_bytes(b"" if damage == "empty" else original[:10])
        detail = "empty file" if damage == "empty" else (
            "content hashes to sha256:" + hashlib.sha256(original[:10]).hexdigest() + ", not to its name")
        expected = f"damaged-object {relative(SEED_ENVIRONMENT_DIGEST)}: {detail}"
        problem = "damaged-object"
    code, lines, _ = fsck_lines(kidx)
    assert code == 1 and lines[0] == expected and lines[-2] == f"1 problem: {problem} 1"
    result = kidx("describe", "env", ENVIRONMENT)
    assert result.code == 1 and "(run 'kidx fsck')" in result.err
    # apply of the original writes the object again and reports it: "repaired", not "unchanged"
    result = kidx("apply", "-f", str(SEED_BUNDLE))
    assert result.code == 0
    assert f"executionenvironment.kernelindex.dev/{ENVIRONMENT} repaired" in result.out.splitlines()
    what = "was missing" if damage == "missing" else "was damaged (it did not hash to its name)"
    assert f"object {path} {what}; written again" in result.err
    assert path.read_bytes() == original
    assert fsck_lines(kidx)[0] == 0


def test_an_empty_file_at_a_new_objects_path_is_replaced_on_create(kidx, store, seed_bundle):
    """What a power cut between rename and flush can leave: the next apply must not
    report "created" for a name it then cannot read."""
    path = object_path(store, SEED_PROTOCOL_DIGEST)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    result = kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle["protocol"]))
    assert result.out == f"benchmarkprotocol.kernelindex.dev/{PROTOCOL} created\n"
    assert result.err == (f"Warning: benchmarkprotocol.kernelindex.dev/{PROTOCOL}: object {path} was damaged "
                          "(it did not hash to its name); written again\n")
    shown = kidx("get", "protocol", PROTOCOL, "-o", "json")
    assert shown.code == 0 and json.loads(shown.out)["spec"] == seed_bundle["protocol"]["spec"]
    assert fsck_lines(kidx)[0] == 0


def test_stray_temporary_and_orphaned_files_are_notes(kidx, seeded):
    orphan_data = b'{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Workload","spec":{"operation":"x"}}'
    orphan = "sha256:" + hashlib.sha256(orphan_data).hexdigest()
    object_path(seeded, orphan).parent.mkdir(exist_ok=True)
    object_path(seeded, orphan).write_bytes(orphan_data)
    folder = object_path(seeded, SEED_RUN_DIGEST).parent
    (folder / ".tmp-4242-abcd-1").write_bytes(b'{"partial')
    (folder / "notes.txt").write_text("mine")
    code, lines, _ = fsck_lines(kidx)
    prefix = f"objects/sha256/{SEED_RUN_DIGEST[7:9]}"
    assert code == 0
    assert lines == [
        f"orphaned-object {relative(orphan)}: no name, revision or reference keeps it (kidx gc removes it)",
        *SEED_NOTES,
        f"temporary-file {prefix}/.tmp-4242-abcd-1: left by an interrupted write (kidx gc removes it)",
        f"stray-file {prefix}/notes.txt: not written by kidx (left alone)",
        "checked 4 objects, 3 names, 3 revisions",
        "no problems found",
        "5 notes: orphaned-object 1, dangling-reference 2, temporary-file 1, stray-file 1",
    ]


def test_revision_without_its_object(kidx, seeded):
    kidx("delete", "env", ENVIRONMENT)
    object_path(seeded, SEED_ENVIRONMENT_DIGEST).unlink()
    code, lines, _ = fsck_lines(kidx)
    assert code == 1
    assert lines[0] == (f"missing-object {relative(SEED_ENVIRONMENT_DIGEST)}: no object "
                        f"file; needed by ExecutionEnvironment/{ENVIRONMENT} revision 1, "
                        f"ExecutionEnvironment/{ENVIRONMENT} revision 2")


def test_index_and_cache_damage_is_found_and_repaired(kidx, seeded):
    table = kidx("get", "runs", "-o", "wide").out
    sql(seeded, "DELETE FROM labels WHERE key='liger_version'")
    sql(seeded, "INSERT INTO labels (object_id, key, value) VALUES (999, 'ghost', 'x')")
    # the run's protocolDigest row now names the environment (refs is a view of ref_links and ref_targets)
    environment = bytes.fromhex(SEED_ENVIRONMENT_DIGEST[7:])
    sql(seeded, "INSERT INTO ref_targets (field, target) VALUES ('protocolDigest', ?)", environment)
    sql(seeded, "UPDATE ref_links SET target_id=(SELECT id FROM ref_targets WHERE field='protocolDigest' AND target=?) "
        "WHERE target_id IN (SELECT id FROM ref_targets WHERE field='protocolDigest' AND target<>?)",
        environment, environment)
    # wrong values under the current columns' fingerprint (another fingerprint's values are never read)
    sql(seeded, "UPDATE objects SET columns=substr(columns, 1, 9) || '[]' WHERE kind='BenchmarkRun'")
    code, lines, err = fsck_lines(kidx)
    assert code == 1
    problems = [line for line in lines if line.split(" ", 1)[0] in ("label-index", "reference-index", "cached-columns")]
    assert [line.split(":")[0] for line in problems] == [
        f"label-index {RUN}", f"reference-index {RUN}", f"cached-columns {RUN}", "label-index (no name)",
    ]
    assert problems[-1] == "label-index (no name): 1 label rows belong to no name"
    assert lines[-2] == "4 problems: label-index 2, reference-index 1, cached-columns 1"
    assert "'kidx fsck --repair' rebuilds indexes and cached columns" in err
    code, lines, err = fsck_lines(kidx, "--repair")
    assert (code, err) == (0, "")
    assert lines[:4] == [
        "repaired label-index (no name): removed",
        f"repaired label-index {RUN}: rebuilt from its name and object",
        f"repaired reference-index {RUN}: rebuilt from its name and object",
        f"repaired cached-columns {RUN}: rebuilt from its name and object",
    ]
    assert lines[-2] == "no problems found"
    assert kidx("get", "runs", "-l", "liger_version=0.6.1", "-o", "name").out == \
        f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME}\n"
    assert kidx("get", "runs", "-o", "wide").out == table
    # repair records no revision: history is what the user applied
    assert len(kidx("history", "run", SEED_RUN_NAME).out.splitlines()) == 2


@pytest.fixture
def generations_repeated(kidx, seeded, seed_bundle) -> Path:
    """The seed with its protocol relabelled (revision 2, generation 2) and its environment
    deleted and applied again (generation 1 again: legitimate); then the protocol's second
    revision, and its name, given generation 1 as its first has, through the catalog's SQL."""
    relabelled = {**seed_bundle["protocol"], "metadata": {**seed_bundle["protocol"]["metadata"], "labels": {"t": "x"}}}
    assert kidx("apply", "-f", "-", stdin=json.dumps(relabelled)).code == 0
    assert kidx("delete", "env", ENVIRONMENT).code == 0
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle["environment"])).code == 0
    assert fsck_lines(kidx)[0] == 0  # generations 1, 2 and 1, 1 (deleted), 1: as they should be
    sql(seeded, "UPDATE past_revisions SET generation = 1 WHERE kind = 'BenchmarkProtocol'")
    # the name's row is its current revision too (revisions is a view of past_revisions and objects)
    sql(seeded, "UPDATE objects SET generation = 1 WHERE kind = 'BenchmarkProtocol'")
    return seeded


def test_a_generation_that_does_not_increase_is_reported_not_repaired(kidx, generations_repeated):
    problem = (f"revision-generation BenchmarkProtocol/{PROTOCOL}: revision 2 has generation 1, no higher than "
               "revision 1 before it (1)")
    code, lines, _ = fsck_lines(kidx)
    assert code == 1
    assert [line for line in lines if not line.startswith(("dangling-reference ", "checked ", "2 notes"))] == [
        problem, "1 problem: revision-generation 1"]
    code, lines, err = fsck_lines(kidx, "--repair")
    assert code == 1 and problem in lines and "cannot be repaired automatically" in err
    report = json.loads(kidx("fsck", "-o", "json").out)
    assert report["problems"] == [{"check": "revision-generation", "subject": f"BenchmarkProtocol/{PROTOCOL}",
                                   "message": problem.split(": ", 1)[1]}]


def test_a_store_with_a_repeated_generation_exports_a_backup_that_restores(kidx, generations_repeated, tmp_path):
    backup = tmp_path / "backup.json"
    code, _, err = kidx("export", "-o", str(backup))
    assert code == 0
    assert err.splitlines()[0] == (f"Warning: revision-generation BenchmarkProtocol/{PROTOCOL}: generation 1 follows "
                                   "generation 1; exported as the store has it (see 'kidx fsck')")
    assert err.splitlines()[1].startswith("exported 3 names, 6 revisions")
    code, out, err = kidx("import", "bundle", str(backup), store_path=tmp_path / "restored")
    assert code == 0, err
    assert err.splitlines()[0] == (
        f"Warning: {backup}: revisions[3]: BenchmarkProtocol \"{PROTOCOL}\" generation 1 follows "
        "generation 1 (revisions[1]); restored as recorded ('kidx fsck' reports it as revision-generation)")
    assert sorted(out.splitlines()) == sorted([
        f"benchmarkprotocol.kernelindex.dev/{PROTOCOL} restored",
        f"executionenvironment.kernelindex.dev/{ENVIRONMENT} restored",
        f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME} restored"])
    assert kidx("history", "protocol", PROTOCOL, store_path=tmp_path / "restored").out == \
        kidx("history", "protocol", PROTOCOL).out
    assert kidx("get", "protocol", PROTOCOL, "-o", "json", store_path=tmp_path / "restored").out == \
        kidx("get", "protocol", PROTOCOL, "-o", "json").out


def test_name_disagreeing_with_its_history_is_reported_not_guessed(kidx, seeded):
    # the name's current revision is its row: keep that revision as a past one, then forge the row
    sql(seeded, "INSERT INTO past_revisions (id, kind, name, event, digest, title, labels, annotations, generation, "
        "recorded) SELECT revision, kind, name, 'applied', digest, title, labels, annotations, generation, COALESCE(recorded, created) "
        "FROM objects WHERE kind='BenchmarkProtocol'")
    sql(seeded, "UPDATE objects SET title='forged', revision=NULL, recorded=NULL WHERE kind='BenchmarkProtocol'")
    code, lines, err = fsck_lines(kidx, "--repair")
    assert code == 1
    assert lines[0] == (f"name-revision BenchmarkProtocol/{PROTOCOL}: current state differs from its last revision "
                        "(1, applied)")
    assert "cannot be repaired automatically" in err


def test_repair_from_a_bundle_restores_objects_and_keeps_the_damaged_file(kidx, seeded, tmp_path):
    bundle = tmp_path / "backup.kidx.json"
    assert kidx("export", "-o", str(bundle)).code == 0
    damaged = object_path(seeded, SEED_RUN_DIGEST)
    damaged.write_bytes(b"{}")
    object_path(seeded, SEED_PROTOCOL_DIGEST).unlink()
    assert fsck_lines(kidx)[0] == 1
    code, lines, err = fsck_lines(kidx, "--repair", "--from-bundle", str(bundle))
    assert (code, err) == (0, "")
    assert sorted(lines[:2]) == sorted([
        f"repaired damaged-object {relative(SEED_RUN_DIGEST)}: written from {bundle}; "
        f"the damaged file was moved to lost+found/{SEED_RUN_DIGEST[7:]}",
        f"repaired missing-object {relative(SEED_PROTOCOL_DIGEST)}: written from {bundle}",
    ])
    assert (seeded / "lost+found" / SEED_RUN_DIGEST[7:]).read_bytes() == b"{}"


def test_from_bundle_needs_repair(kidx, seeded):
    assert kidx("fsck", "--from-bundle", "x") == (1, "", "error: --from-bundle needs --repair\n")


def test_missing_catalog_is_a_problem_and_nothing_is_created(kidx, seeded):
    for name in ("catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm"):
        (seeded / name).unlink(missing_ok=True)
    code, lines, err = fsck_lines(kidx, "--repair")
    assert code == 1
    assert lines[0] == ("catalog-missing catalog: 3 object files but no catalog: names and history can only "
                        "be restored from a bundle (kidx import bundle FILE)")
    assert not (seeded / "catalog.sqlite").exists()
    result = kidx("gc")
    assert result.code == 1 and "gc removes nothing" in result.err
    assert len([path for path in (seeded / "objects").rglob("*") if path.is_file()]) == 3


def test_catalog_integrity_failure_is_reported_and_a_damaged_index_rebuilt(kidx, seeded):
    connection = sqlite3.connect(seeded / "catalog.sqlite")
    connection.execute("PRAGMA writable_schema=ON")  # the index now disagrees with its table
    connection.execute("UPDATE sqlite_master SET sql='CREATE INDEX objects_by_digest ON objects (name)' "
                       "WHERE name='objects_by_digest'")
    connection.commit()
    connection.close()
    code, lines, err = fsck_lines(kidx)
    assert code == 1
    assert lines[:3] == [f"catalog-integrity catalog: row {n} missing from index objects_by_digest"
                         for n in (1, 2, 3)]
    assert "rebuilds indexes" in err
    code, lines, err = fsck_lines(kidx, "--repair")
    assert (code, err) == (0, "")
    assert lines[0] == "repaired catalog-integrity catalog: rebuilt the catalog's indexes from its tables"


def test_values_cached_for_other_printer_columns_are_no_inconsistency(kidx, seeded):
    """A kidx whose CRDs print other columns cached these (another fingerprint): reads never
    use them, so fsck does not report them, and get prints what the object says."""
    table = kidx("get", "runs", "-o", "wide").out
    sql(seeded, "UPDATE objects SET columns=? WHERE kind='BenchmarkRun'", "00000000:[]")
    code, lines, _ = fsck_lines(kidx)
    assert code == 0 and not [line for line in lines if line.startswith("cached-columns")]
    assert kidx("get", "runs", "-o", "wide").out == table
