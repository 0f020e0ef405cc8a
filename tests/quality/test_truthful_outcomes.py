"""An outcome reported is the outcome that happened: once a write has committed the
command has succeeded, whatever housekeeping follows; each store fault has its own
message; reads never write; a store that cannot be written can still be read."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, SEED_BUNDLE, SEED_RUN_NAME, Result

RUN = f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME}"
SEED_LINES = (
    f"{RUN} created\n"
    "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward created\n"
    "executionenvironment.kernelindex.dev/liger-bench-nvidia-h100-80gb-hbm3 created\n"
)


def files_of(folder: Path) -> dict[str, str]:
    """Every file's hash; SQLite's shared-memory index and an empty WAL are no content
    (a reader in a writable folder creates both)."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.endswith("-shm") and not (path.name.endswith("-wal") and not path.stat().st_size)
    }


def renamed_protocol(seed_bundle: dict, tmp_path: Path, name: str = "other-protocol") -> Path:
    protocol = seed_bundle["protocol"]
    protocol["metadata"]["name"] = name
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(protocol), encoding="utf-8")
    return path


# --- after the commit, success ---------------------------------------------------------


def test_a_reader_in_a_transaction_does_not_hold_up_a_write(kidx_process, store, seed_bundle, tmp_path):
    assert kidx_process("apply", "-f", str(SEED_BUNDLE)).code == 0
    reader = sqlite3.connect(store / "catalog.sqlite", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM objects").fetchall()  # holds a read snapshot
    try:
        started = time.monotonic()
        first = kidx_process("apply", "-f", str(renamed_protocol(seed_bundle, tmp_path, "first")))
        second = kidx_process("apply", "-f", str(renamed_protocol(seed_bundle, tmp_path, "second")))
        elapsed = time.monotonic() - started
    finally:
        reader.execute("COMMIT")
        reader.close()
    assert (first.code, first.out) == (0, "benchmarkprotocol.kernelindex.dev/first created\n")
    assert (second.code, second.out) == (0, "benchmarkprotocol.kernelindex.dev/second created\n")
    assert elapsed < 20  # it was 60 s each: the checkpoint waited for the reader
    names = kidx_process("get", "protocols", "-o", "name").out.split()
    assert names == ["benchmarkprotocol.kernelindex.dev/first", "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward",
                     "benchmarkprotocol.kernelindex.dev/second"]


@pytest.mark.parametrize("fault", [sqlite3.OperationalError("database or disk is full"), KeyboardInterrupt()])
def test_a_failed_or_interrupted_checkpoint_after_the_commit_is_still_success(kidx, store, monkeypatch, fault):
    from kidx.store.sqlite_catalog import SQLiteCatalog

    def failing_checkpoint(self):
        raise fault

    monkeypatch.setattr(SQLiteCatalog, "_checkpoint", failing_checkpoint)
    result = kidx("apply", "-f", str(SEED_BUNDLE))
    assert (result.code, result.out) == (0, SEED_LINES)
    monkeypatch.undo()
    assert kidx("get", "runs", "-o", "name").out == f"{RUN}\n"


# --- concurrent deletes ------------------------------------------------------------------


def test_names_another_delete_removed_meanwhile_are_not_found(kidx, store, monkeypatch):
    """The second of two concurrent deletes selects the names, then the first deletes them
    before the second has the write lock: the second must not claim them."""
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    import kidx.query.selection as selection_module

    select = selection_module.select

    def select_then_lose_the_race(*args, **kwargs):
        selection = select(*args, **kwargs)
        other = subprocess.run(
            [sys.executable, "-m", "kidx", "delete", "run", SEED_RUN_NAME, "--store", str(store)],
            capture_output=True, text=True, cwd=REPO,
        )
        assert other.returncode == 0, other.stderr
        return selection

    monkeypatch.setattr(selection_module, "select", select_then_lose_the_race)
    result = kidx("delete", f"run/{SEED_RUN_NAME}", "protocol/liger-bench-do-bench-backward")
    assert result.code == 1
    assert result.out == 'benchmarkprotocol.kernelindex.dev "liger-bench-do-bench-backward" deleted\n'
    assert result.err == f'Error (NotFound): benchmarkruns.kernelindex.dev "{SEED_RUN_NAME}" not found\n'
    monkeypatch.undo()
    history = kidx("history", "run", SEED_RUN_NAME).out.splitlines()
    assert [line.split()[1] for line in history[1:]] == ["applied", "deleted"]  # deleted once, not twice


def test_a_selector_whose_objects_vanished_meanwhile_finds_nothing(kidx, store, monkeypatch):
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    import kidx.query.selection as selection_module

    select = selection_module.select

    def select_then_lose_the_race(*args, **kwargs):
        selection = select(*args, **kwargs)
        subprocess.run([sys.executable, "-m", "kidx", "delete", "runs", "--all", "--store", str(store)],
                       capture_output=True, cwd=REPO, check=True)
        return selection

    monkeypatch.setattr(selection_module, "select", select_then_lose_the_race)
    result = kidx("delete", "runs", "--all")
    assert result == Result(0, "No resources found\n", "")


# --- one message per cause ---------------------------------------------------------------


def test_a_selector_with_999_requirements_is_answered(kidx):
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    selector = ",".join(f"key{i}!=value" for i in range(999))
    assert kidx("get", "runs", "-l", selector, "-o", "name") == Result(0, f"{RUN}\n", "")
    selector = ",".join(f"key{i}" for i in range(999))
    listed = ", ".join(sorted(f"key{i}" for i in range(999))[:8])
    assert kidx("get", "runs", "-l", selector) == Result(0, "", "No resources found\nthe selection matched no runs: "
                                                            f"no run matches every condition: no run matches {listed}, "
                                                            "… (999 in all)\n")


def test_a_damaged_catalog_page_is_named_as_damage(kidx_process, store):
    assert kidx_process("apply", "-f", str(SEED_BUNDLE)).code == 0
    catalog = store / "catalog.sqlite"
    connection = sqlite3.connect(catalog)
    root_pages = dict(connection.execute("SELECT name, rootpage FROM sqlite_master WHERE type='table'").fetchall())
    connection.close()
    original = catalog.read_bytes()

    def damage(pages) -> None:
        data = bytearray(original)
        for page in pages:  # numbered from 1
            start = (page - 1) * 4096
            for offset in range(start, min(start + 4096, len(data)), 7):
                data[offset] = (offset * 31) & 0xFF
        catalog.write_bytes(bytes(data))

    damage([root_pages["objects"]])  # the table of names
    result = kidx_process("get", "runs")
    assert result == Result(1, "", (
        f"error: the store's catalog {catalog} is damaged (database disk image is malformed); "
        "`kidx fsck` tells what is wrong\n"
    ))
    damage([root_pages["info"]])  # the page holding the schema version
    for command in (("get", "runs"), ("apply", "-f", str(SEED_BUNDLE))):
        assert kidx_process(*command) == result, command
    catalog.write_bytes(original)
    connection = sqlite3.connect(catalog)
    connection.execute("DELETE FROM info")  # tables without the version written with them
    connection.commit()
    connection.close()
    for command in (("get", "runs"), ("apply", "-f", str(SEED_BUNDLE))):
        assert kidx_process(*command) == Result(1, "", (
            f"error: the store's catalog {catalog} is damaged (its schema version is missing); "
            "`kidx fsck` tells what is wrong\n"
        )), command


def test_bytes_that_are_not_text_never_reach_the_terminal(kidx_process, store):
    assert kidx_process("apply", "-f", str(SEED_BUNDLE)).code == 0
    connection = sqlite3.connect(store / "catalog.sqlite")
    connection.execute("UPDATE objects SET title = CAST(x'ff1b5b324a0a' AS TEXT) WHERE kind='BenchmarkRun'")
    connection.commit()
    connection.close()
    result = kidx_process("get", "runs")
    assert result.code == 1
    assert result.err == (
        f"error: the store's catalog {store / 'catalog.sqlite'} is damaged (a text value is not UTF-8); "
        "`kidx fsck` tells what is wrong\n"
    )


# --- reads never write -------------------------------------------------------------------


def test_reading_an_empty_catalog_file_writes_nothing(kidx, store):
    store.mkdir()
    (store / "catalog.sqlite").write_bytes(b"")  # a kill during the very first write
    for command in (("get", "runs"), ("get", "all"), ("describe", "runs"), ("history", "run", "x")):
        kidx(*command)
    assert kidx("get", "runs") == Result(0, "", "No resources found\n")
    assert files_of(store) == {"catalog.sqlite": hashlib.sha256(b"").hexdigest()}
    assert (store / "catalog.sqlite").stat().st_size == 0
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0  # and the next write creates the store


def test_a_store_whose_catalog_is_lost_says_so(kidx, store):
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    for path in store.glob("catalog.sqlite*"):
        path.unlink()
    objects = files_of(store)
    message = (
        f"error: the store at {store} has object files but its catalog (catalog.sqlite) is missing, so its names, "
        "labels and history cannot be read (nothing was changed); run `kidx fsck --repair` to rebuild what can be "
        "rebuilt: names and history come back only from a bundle made by `kidx export`\n"
    )
    for command in (("get", "runs"), ("get", "all"), ("describe", "runs"), ("get", "run", SEED_RUN_NAME),
                    ("history", "run", SEED_RUN_NAME)):
        assert kidx(*command) == Result(1, "", message), command
    (store / "catalog.sqlite").write_bytes(b"")
    assert kidx("get", "runs") == Result(1, "", message.replace("is missing", "is empty"))
    assert files_of(store) == {**objects, "catalog.sqlite": hashlib.sha256(b"").hexdigest()}


def test_a_catalog_from_a_newer_kidx_is_refused(kidx_process, store, seed_bundle, tmp_path):
    assert kidx_process("apply", "-f", str(SEED_BUNDLE)).code == 0
    connection = sqlite3.connect(store / "catalog.sqlite")
    connection.execute("UPDATE info SET value='4' WHERE key='schema'")
    connection.commit()
    connection.close()
    before = files_of(store)
    message = (
        f"error: the store's catalog {store / 'catalog.sqlite'} has schema version '4', but this kidx knows only "
        "versions up to '3': a newer kidx wrote it; use that one (nothing was changed)\n"
    )
    for command in (("get", "runs"), ("describe", "runs"), ("apply", "-f", str(renamed_protocol(seed_bundle, tmp_path))),
                    ("delete", "runs", "--all")):
        assert kidx_process(*command) == Result(1, "", message), command
    assert files_of(store) == before


# --- a read-only store -------------------------------------------------------------------


def _read_only_copy(store: Path, tmp_path: Path, keep_wal_files: bool) -> Path:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="kidx-read-only-"))
    copy = folder / "store"
    shutil.copytree(store, copy)
    if not keep_wal_files:
        for path in copy.glob("catalog.sqlite-*"):
            path.unlink()
    for path in [copy, *copy.rglob("*")]:
        mode = 0o555 if path.is_dir() else 0o444
        path.chmod(mode)
    folder.chmod(0o755)
    return copy


@pytest.mark.parametrize("keep_wal_files", [True, False])
def test_a_read_only_store_answers_reads_and_refuses_writes(kidx_process, store, seed_bundle, tmp_path, keep_wal_files,
                                                            other_user):
    assert kidx_process("apply", "-f", str(SEED_BUNDLE)).code == 0
    copy = _read_only_copy(store, tmp_path, keep_wal_files)
    protocol = renamed_protocol(seed_bundle, copy.parent)  # where the other user can read it
    protocol.chmod(0o644)
    before = files_of(copy)

    def run(*args):
        completed = subprocess.run(
            other_user.command(*args, "--store", str(copy)), capture_output=True, text=True, cwd="/",
            env=other_user.env,
        )
        return Result(completed.returncode, completed.stdout, completed.stderr)

    try:
        assert run("get", "runs", "-o", "name") == Result(0, f"{RUN}\n", "")
        assert run("get", "runs", "-l", "liger_version", "-o", "name").code == 0
        assert run("describe", "env", "liger-bench-nvidia-h100-80gb-hbm3").out.startswith(
            "Name:         liger-bench-nvidia-h100-80gb-hbm3\n")
        assert run("history", "run", SEED_RUN_NAME).code == 0
        assert run("diff", "-f", str(protocol)).code == 1  # differences found
        message = (
            f"error: the store at {copy} is read-only (no permission to write): nothing was changed; "
            "reading it still works\n"
        )
        assert run("apply", "-f", str(protocol)) == Result(1, "", message)
        assert run("delete", "runs", "--all") == Result(1, "", message)
        assert files_of(copy) == before
    finally:
        for path in [copy, *copy.rglob("*")]:
            path.chmod(stat.S_IRWXU)
        shutil.rmtree(copy.parent)
