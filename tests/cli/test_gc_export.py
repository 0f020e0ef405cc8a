"""kidx gc removes only what nothing keeps; kidx export and import bundle round-trip a store
byte for byte (names, metadata, history)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    LIGER_DATA,
    REPO,
    SEED_BUNDLE,
    SEED_ENVIRONMENT_DIGEST,
    SEED_PROTOCOL_DIGEST,
    SEED_RUN_DIGEST,
    SEED_RUN_NAME,
)

ENVIRONMENT = "liger-bench-nvidia-h100-80gb-hbm3"
ORPHAN = b'{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Workload","spec":{"operation":"orphan"}}'
ORPHAN_DIGEST = "sha256:" + hashlib.sha256(ORPHAN).hexdigest()


def object_path(store: Path, digest: str) -> Path:
    return store / "objects" / "sha256" / digest[7:9] / digest[9:]


def object_files(store: Path) -> dict[str, bytes]:
    """The store's objects, loose files and packed rows alike: digest -> exact bytes."""
    from kidx.store.sqlite_backend import SQLiteBackend

    objects = SQLiteBackend(store).objects
    return {digest: objects.read(digest) for digest in objects.digests()}


@pytest.fixture
def seeded(kidx, store) -> Path:
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    return store


def add_orphan(store: Path) -> Path:
    path = object_path(store, ORPHAN_DIGEST)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(ORPHAN)
    return path


# --- gc ------------------------------------------------------------------------------------


def test_gc_removes_orphans_and_temporary_files_only(kidx, seeded):
    orphan = add_orphan(seeded)
    temporary = object_path(seeded, SEED_RUN_DIGEST).parent / ".tmp-99-abcdef01-1"
    temporary.write_bytes(b'{"part')
    stray = object_path(seeded, SEED_RUN_DIGEST).parent / "README"
    stray.write_text("not kidx's")
    # a deleted name's object stays: its history still shows it
    assert kidx("delete", "env", ENVIRONMENT).code == 0
    before = object_files(seeded)

    result = kidx("gc", "--dry-run")
    removed = [f"objects/sha256/{ORPHAN_DIGEST[7:9]}/{ORPHAN_DIGEST[9:]}",
               f"objects/sha256/{SEED_RUN_DIGEST[7:9]}/.tmp-99-abcdef01-1"]
    assert result == (0, "".join(f"{path} removed (dry run)\n" for path in removed),
                      f"1 unused object and 1 temporary file removed ({len(ORPHAN) + 6} bytes), 3 objects kept (dry run)\n")
    assert object_files(seeded) == before and temporary.exists() and orphan.exists()

    result = kidx("gc")
    assert result == (0, "".join(f"{path} removed\n" for path in removed),
                      f"1 unused object and 1 temporary file removed ({len(ORPHAN) + 6} bytes), 3 objects kept\n")
    assert not orphan.exists() and not temporary.exists() and stray.exists()
    assert object_path(seeded, SEED_ENVIRONMENT_DIGEST).exists()
    assert kidx("history", "env", ENVIRONMENT, "--revision", "1", "-o", "json").code == 0
    assert kidx("gc") == (0, "", "0 unused objects and 0 temporary files removed (0 bytes), 3 objects kept\n")


def test_gc_keeps_objects_that_kept_objects_refer_to(kidx, seeded):
    """An environment whose name and history are gone is still kept while a run refers to it."""
    connection = sqlite3.connect(seeded / "catalog.sqlite")
    connection.execute("DELETE FROM past_revisions WHERE kind='ExecutionEnvironment'")
    connection.execute("DELETE FROM objects WHERE kind='ExecutionEnvironment'")  # and its current revision
    connection.commit()
    connection.close()
    assert kidx("gc").out == ""
    assert object_path(seeded, SEED_ENVIRONMENT_DIGEST).exists()


def test_gc_of_no_store_does_nothing(kidx, store):
    assert kidx("gc") == (0, "", "0 unused objects and 0 temporary files removed (0 bytes), 0 objects kept\n")
    assert not store.exists()


def test_gc_waits_for_a_writer_and_never_removes_its_objects(kidx, seeded, tmp_path):
    """gc holds the catalog's write lock: an apply in flight (which writes its objects
    under that lock, before its commit) finishes first, or starts after gc."""
    connection = sqlite3.connect(seeded / "catalog.sqlite", isolation_level=None)
    connection.execute("BEGIN IMMEDIATE")  # a writer in flight
    add_orphan(seeded)  # as if it had just written this object, not yet committed
    process = subprocess.Popen(
        [sys.executable, "-m", "kidx", "gc", "--store", str(seeded)], cwd=REPO,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=1.5)
        assert object_path(seeded, ORPHAN_DIGEST).exists()
        # the writer commits a name for the object; then gc runs and keeps it
        connection.execute(  # a name and its current revision (the row itself)
            "INSERT INTO objects (kind, name, digest, labels, annotations, created, generation, revision, recorded) "
            "VALUES ('Workload', 'w', ?, '{}', '{}', 't', 1, 1000, 't')", (bytes.fromhex(ORPHAN_DIGEST[7:]),))
        connection.execute("COMMIT")
        out, err = process.communicate(timeout=60)
    finally:
        process.kill() if process.poll() is None else None
        connection.close()
    assert (process.returncode, out) == (0, b"")
    assert object_path(seeded, ORPHAN_DIGEST).exists()


# --- export and import bundle ----------------------------------------------------------


def catalog_dump(store: Path) -> dict:
    """Everything the catalog says, without its internal row ids: the printer columns name
    reference targets by row id and long annotations are deflated with the store's own
    dictionary (schema 3), so both are compared unpacked."""
    from kidx.store.catalog_packing import unpack_columns, unpack_text

    connection = sqlite3.connect(store / "catalog.sqlite")
    try:
        digests = {str(i): f"sha256:{bytes(t).hex()}" for i, t in connection.execute("SELECT id, target FROM ref_targets")}
        dictionaries = dict(connection.execute("SELECT id, dictionary FROM text_dictionaries"))

        def unpacked(row: tuple) -> tuple:
            *head, annotations, created, generation, columns = row
            return (*head, unpack_text(annotations, dictionaries.get), created, generation,
                    columns and unpack_columns(columns, digests))

        return {
            "objects": sorted(unpacked(row) for row in connection.execute(
                "SELECT kind, name, digest, title, labels, annotations, created, generation, columns FROM objects")),
            "labels": sorted(connection.execute(
                "SELECT o.kind, o.name, l.key, l.value FROM labels l JOIN objects o ON o.id = l.object_id")),
            "refs": sorted(connection.execute(
                "SELECT o.kind, o.name, r.field, r.target FROM refs r JOIN objects o ON o.id = r.object_id")),
            "revisions": [(*row[:6], unpack_text(row[6], dictionaries.get), *row[7:]) for row in connection.execute(
                "SELECT kind, name, event, digest, title, labels, annotations, generation, recorded "
                "FROM revisions ORDER BY id")],
        }
    finally:
        connection.close()


def test_round_trip_keeps_history_deleted_names_and_metadata(kidx, seeded, seed_bundle, tmp_path):
    changed = json.loads(json.dumps(seed_bundle["protocol"]))
    changed["metadata"]["labels"] = {"tier": "gold"}
    assert kidx("apply", "-f", "-", stdin=json.dumps(changed)).code == 0
    assert kidx("delete", "env", ENVIRONMENT).code == 0
    bundle = tmp_path / "all.kidx.json"
    result = kidx("export", "-o", str(bundle))
    assert result.code == 0 and result.out == ""
    assert result.err == (f"exported 2 names, 5 revisions and 3 objects to {bundle} "
                          f"({bundle.stat().st_size:,} bytes); 2 references to objects not in the store\n")
    restored = tmp_path / "restored"
    result = kidx("import", "bundle", str(bundle), store_path=restored)
    assert result.code == 0
    assert result.out.splitlines() == [
        f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME} restored",
        "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward restored",
        f"executionenvironment.kernelindex.dev/{ENVIRONMENT} restored",
    ]
    assert result.err == "import bundle: 2 names, 5 revisions, 3 objects; 3 restored\n"
    assert catalog_dump(restored) == catalog_dump(seeded)
    assert object_files(restored) == object_files(seeded)
    assert kidx("history", "protocol", "liger-bench-do-bench-backward", store_path=restored).out == \
        kidx("history", "protocol", "liger-bench-do-bench-backward").out
    # importing it again changes nothing
    result = kidx("import", "bundle", str(bundle), store_path=restored)
    assert result.code == 0 and result.err == "import bundle: 2 names, 5 revisions, 3 objects; 3 unchanged\n"
    assert catalog_dump(restored) == catalog_dump(seeded)


def test_export_of_a_selection_brings_what_it_refers_to(kidx, seeded, tmp_path):
    bundle = tmp_path / "run.kidx.json"
    assert kidx("export", "run", SEED_RUN_NAME, "-o", str(bundle)).code == 0
    document = json.loads(bundle.read_text(encoding="utf-8"))
    assert document["selection"] == f"run {SEED_RUN_NAME}"
    assert sorted(document["objects"]) == sorted([SEED_RUN_DIGEST, SEED_PROTOCOL_DIGEST, SEED_ENVIRONMENT_DIGEST])
    assert sorted(name["kind"] for name in document["names"]) == [
        "BenchmarkProtocol", "BenchmarkRun", "ExecutionEnvironment"]
    bundle = tmp_path / "env.kidx.json"
    assert kidx("export", "env", "-o", str(bundle)).code == 0
    document = json.loads(bundle.read_text(encoding="utf-8"))
    assert list(document["objects"]) == [SEED_ENVIRONMENT_DIGEST]
    assert kidx("export", "run", "nope", "-o", str(bundle)) == (
        1, "", 'Error (NotFound): benchmarkruns.kernelindex.dev "nope" not found\n')


def test_export_to_standard_output_and_usage(kidx, seeded):
    result = kidx("export", "-o", "-")
    assert result.code == 0 and json.loads(result.out)["format"] == "kidx.bundle/v1"
    assert kidx("export") == (1, "", "error: must specify -o FILE (or -o - for standard output)\n")


def test_export_refuses_to_carry_damage(kidx, seeded, tmp_path):
    object_path(seeded, SEED_PROTOCOL_DIGEST).write_bytes(b"{}")
    bundle = tmp_path / "b.json"
    result = kidx("export", "-o", str(bundle))
    assert result.code == 1
    assert result.err == (f"error: cannot export: object {SEED_PROTOCOL_DIGEST} is damaged: "
                          f"{object_path(seeded, SEED_PROTOCOL_DIGEST)} does not hash to its name (run 'kidx fsck')\n")
    assert not bundle.exists() and list(tmp_path.glob(".b.json*")) == []


def test_import_bundle_refuses_a_different_history(kidx, seeded, tmp_path, seed_bundle):
    bundle = tmp_path / "b.json"
    assert kidx("export", "-o", str(bundle)).code == 0
    other = tmp_path / "other"
    changed = json.loads(json.dumps(seed_bundle["protocol"]))
    changed["metadata"]["title"] = "elsewhere"
    assert kidx("apply", "-f", "-", stdin=json.dumps(changed), store_path=other).code == 0
    before = catalog_dump(other)
    result = kidx("import", "bundle", str(bundle), store_path=other)
    assert result.code == 1 and result.out == ""
    assert result.err.splitlines() == [
        f'error: {bundle}: BenchmarkProtocol "liger-bench-do-bench-backward" already has a different history in '
        "the store (1 revisions here, 1 in the bundle)",
        f"error: {bundle}: a bundle restores into an empty store, or over its own earlier restore; nothing was changed",
        "error: 2 problems found; nothing was changed",
    ]
    assert catalog_dump(other) == before


def test_apply_of_a_bundle_points_to_import_bundle(kidx, seeded, tmp_path):
    bundle = tmp_path / "b.json"
    assert kidx("export", "-o", str(bundle)).code == 0
    result = kidx("apply", "-f", str(bundle))
    assert result.code == 1
    assert result.err == (f"error: {bundle}, document 1, line 1: a kidx bundle (from 'kidx export'), not manifests: "
                          f"restore it with 'kidx import bundle {bundle}'\n")


@pytest.mark.slow
def test_liger_import_round_trips_byte_for_byte(kidx_process, store, tmp_path):
    csvs = sorted(str(path) for path in LIGER_DATA.glob("all_benchmark_data*.csv"))
    assert len(csvs) == 3
    imported = kidx_process("import", "liger", *csvs)
    assert imported.code == 0, imported.err
    bundle = tmp_path / "liger.kidx.json"
    exported = kidx_process("export", "-o", str(bundle))
    assert exported.code == 0, exported.err
    assert exported.err.startswith("exported 4,353 names, 4,353 revisions and 4,353 objects to ")
    restored = tmp_path / "restored"
    result = kidx_process("import", "bundle", str(bundle), env={"KIDX_STORE": str(restored)})
    assert result.code == 0, result.err
    assert result.err == "import bundle: 4,353 names, 4,353 revisions, 4,353 objects; 4,353 restored\n"
    assert object_files(restored) == object_files(store)
    assert catalog_dump(restored) == catalog_dump(store)
    assert kidx_process("fsck", env={"KIDX_STORE": str(restored)}).code == 0
    # and the restored store exports the same bundle again (apart from the export time)
    again = tmp_path / "again.kidx.json"
    assert kidx_process("export", "-o", str(again), env={"KIDX_STORE": str(restored)}).code == 0
    assert again.read_bytes().split(b"\n", 1)[1] == bundle.read_bytes().split(b"\n", 1)[1]


def test_an_empty_bundle_imports_with_a_summary_that_ends_cleanly(kidx, seeded, tmp_path):
    bundle = tmp_path / "none.kidx.json"
    result = kidx("export", "runs", "-l", "nosuch=x", "-o", str(bundle))
    assert (result.code, result.out) == (0, "")
    restored = tmp_path / "restored"
    assert kidx("import", "bundle", str(bundle), "--dry-run", store_path=restored) == (
        0, "", "import bundle: 0 names, 0 revisions, 0 objects (dry run)\n")
    assert kidx("import", "bundle", str(bundle), store_path=restored) == (
        0, "", "import bundle: 0 names, 0 revisions, 0 objects\n")


def _read_in_background(path: Path) -> tuple[object, list[bytes]]:
    import threading

    got: list[bytes] = []

    def read() -> None:
        with open(path, "rb") as pipe:
            got.append(pipe.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, got


@pytest.mark.parametrize("format_name", ["bundle", "bmf", "pytorch-benchmark", "parquet"])
def test_export_into_a_named_pipe_writes_into_it_and_keeps_it(kidx, seeded, tmp_path, format_name):
    """A named pipe is written into, never replaced by a regular file."""
    import stat

    if format_name == "parquet":
        pytest.importorskip("pyarrow")
    (tmp_path / "out").mkdir()
    pipe = tmp_path / "out" / "pipe"
    os.mkfifo(pipe)
    reader, got = _read_in_background(pipe)
    code, out, err = kidx("export", "runs", "--format", format_name, "-o", str(pipe))
    reader.join(timeout=60)  # type: ignore[attr-defined]
    assert (code, out) == (0, ""), err
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    assert os.listdir(tmp_path / "out") == ["pipe"]  # no temporary file left beside it
    [data] = got
    if format_name == "parquet":
        assert data.startswith(b"PAR1") and data.endswith(b"PAR1")
        assert err == f"exported 1 runs (37 columns) as Parquet to {pipe} ({len(data):,} bytes)\n"
    elif format_name == "bundle":
        assert json.loads(data)["format"] == "kidx.bundle/v1"
        assert err == (f"exported 3 names, 3 revisions and 3 objects to {pipe} ({len(data):,} bytes); 2 references "
                       "to objects not in the store\n")
    else:
        assert data.decode() == kidx("export", "runs", "--format", format_name, "-o", "-").out


def test_export_through_a_link_to_standard_output_keeps_the_link(kidx_process, seeded, tmp_path):
    """-o /dev/stdout (here a link of the test's own to /proc/self/fd/1, as /dev/stdout is):
    written into what the link names, the link kept; -o - is standard output too."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    code, out, err = kidx_process("export", "runs", "--format", "bmf", "-o", str(link))
    assert code == 0, err
    assert os.path.islink(link) and os.readlink(link) == "/proc/self/fd/1"
    assert out == kidx_process("export", "runs", "--format", "bmf", "-o", "-").out
    assert json.loads(out)
