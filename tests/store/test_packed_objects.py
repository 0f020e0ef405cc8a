"""Objects of a folder store, loose and packed: a command that writes PACK_THRESHOLD
objects or more puts them in ``objects/packed.sqlite``, fewer stay one file each."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SEED_BUNDLE

from kidx.identity import canonical_json, identity_of
from kidx.identity.canonical import digest_bytes
from kidx.store.packed_objects import PACK_FILE, PACK_THRESHOLD
from kidx.store.store import Store

RUN_TYPE = "benchmarkrun.kernelindex.dev"


def runs(count: int, first: int = 0) -> list[dict]:
    """``count`` runs of the seed's shape, each its own object (no references: no warnings)."""
    seed = json.loads(SEED_BUNDLE.read_text(encoding="utf-8"))["run"]
    made = []
    for number in range(first, first + count):
        run = json.loads(json.dumps(seed))
        del run["spec"]["workloadDigest"], run["spec"]["implementationDigest"]
        del run["spec"]["protocolDigest"], run["spec"]["environmentDigest"]
        run["metadata"] = {"name": f"run-{number:05d}"}
        run["spec"]["timing"]["latencyNs"]["median"] = 1_000 + number
        made.append(run)
    return made


def as_list(manifests: list[dict], path: Path) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests}), encoding="utf-8")
    return path


def digests_of(manifests: list[dict]) -> set[str]:
    return {digest_bytes(canonical_json(identity_of(manifest))) for manifest in manifests}


def loose_digests(store: Path) -> set[str]:
    folder = store / "objects" / "sha256"
    return {"sha256:" + path.parent.name + path.name for path in folder.glob("*/*") if path.is_file()}


def packed(store: Path) -> dict[str, bytes]:
    connection = sqlite3.connect(store / "objects" / PACK_FILE)
    try:
        return {"sha256:" + digest.hex(): data for digest, data in connection.execute("SELECT digest, data FROM objects")}
    finally:
        connection.close()


def pack_sql(store: Path, statement: str, *parameters) -> None:
    connection = sqlite3.connect(store / "objects" / PACK_FILE)
    try:
        connection.execute(statement, parameters)
        connection.commit()
    finally:
        connection.close()


def created(manifests: list[dict]) -> str:
    return "".join(f"{RUN_TYPE}/{manifest['metadata']['name']} created\n" for manifest in manifests)


def test_a_bulk_apply_puts_its_objects_in_the_pack_and_reads_them_back(kidx, store, tmp_path):
    bulk = runs(PACK_THRESHOLD)
    assert kidx("apply", "-f", str(as_list(bulk, tmp_path / "bulk.json"))) == (0, created(bulk), "")
    assert loose_digests(store) == set()
    stored = packed(store)
    assert set(stored) == digests_of(bulk)
    assert all(digest_bytes(data) == digest for digest, data in stored.items())
    shown = json.loads(kidx("get", "run", "run-00007", "-o", "json").out)
    assert shown["spec"] == {key: value for key, value in bulk[7]["spec"].items()}
    assert kidx("get", "runs", "-o", "name").out.count("\n") == PACK_THRESHOLD
    assert kidx("fsck").code == 0


def test_a_small_apply_stays_loose_and_makes_no_pack(kidx, store, tmp_path):
    small = runs(PACK_THRESHOLD - 1)
    assert kidx("apply", "-f", str(as_list(small, tmp_path / "small.json"))).code == 0
    assert loose_digests(store) == digests_of(small)
    assert not (store / "objects" / PACK_FILE).exists()
    assert json.loads(kidx("get", "run", "run-00003", "-o", "json").out)["spec"] == small[3]["spec"]


def test_loose_and_packed_objects_are_read_and_listed_together(kidx, store, tmp_path):
    bulk, small = runs(PACK_THRESHOLD), runs(3, first=PACK_THRESHOLD)
    assert kidx("apply", "-f", str(as_list(bulk, tmp_path / "bulk.json"))).code == 0
    assert kidx("apply", "-f", str(as_list(small, tmp_path / "small.json"))).code == 0
    assert (loose_digests(store), set(packed(store))) == (digests_of(small), digests_of(bulk))
    opened = Store(store)
    listed = list(opened.objects.digests())
    assert listed == sorted(digests_of(bulk) | digests_of(small))
    everything = opened.objects.read_many(listed)
    assert all(digest_bytes(everything[digest]) == digest for digest in listed) and len(everything) == len(listed)
    packed_one, loose_one = min(digests_of(bulk)), min(digests_of(small))
    assert opened.objects.where(packed_one) == str(store / "objects" / PACK_FILE)
    assert opened.objects.where(loose_one) == str(store / "objects" / "sha256" / loose_one[7:9] / loose_one[9:])
    assert opened.objects.size(packed_one) == len(everything[packed_one])
    assert opened.objects.missing([packed_one, loose_one, "sha256:" + "0" * 64]) == {"sha256:" + "0" * 64}
    # applying them all again writes nothing: every object is found where it is
    again = kidx("apply", "-f", str(as_list(bulk + small, tmp_path / "all.json")))
    assert again.out.count(" unchanged\n") == len(bulk) + len(small)
    assert (loose_digests(store), set(packed(store))) == (digests_of(small), digests_of(bulk))


def test_reading_a_store_without_a_pack_never_opens_one(kidx, store, tmp_path):
    assert kidx("apply", "-f", str(as_list(runs(2), tmp_path / "two.json"))).code == 0
    opened = Store(store)
    for entry in opened.catalog().all_entries():
        assert opened.identity(entry.digest)["kind"] == "BenchmarkRun"
    assert opened.objects.backend._db is None
    assert not (store / "objects" / PACK_FILE).exists()


def test_a_damaged_packed_object_is_found_by_fsck_and_repaired_by_apply(kidx, store, tmp_path):
    bulk = runs(PACK_THRESHOLD)
    bulk_file = as_list(bulk, tmp_path / "bulk.json")
    assert kidx("apply", "-f", str(bulk_file)).code == 0
    digest = digest_bytes(canonical_json(identity_of(bulk[5])))
    edited = b'{"edited":1}'
    pack_sql(store, "UPDATE objects SET data = ? WHERE digest = ?", edited, bytes.fromhex(digest[7:]))
    result = kidx("fsck")
    assert result.code == 1
    assert result.out == (f"damaged-object objects/{PACK_FILE}: packed object {digest}: content hashes to "
                          f"{digest_bytes(edited)}, not to its name\n"
                          f"checked {PACK_THRESHOLD} objects, {PACK_THRESHOLD} names, {PACK_THRESHOLD} revisions\n"
                          "1 problem: damaged-object 1\n")
    assert (f"error: object {digest} is damaged: {store}/objects/{PACK_FILE} does not hash to its name "
            "(run 'kidx fsck')\n") == kidx("get", "run", "run-00005", "-o", "json").err
    again = kidx("apply", "-f", str(bulk_file))
    assert again.out == "".join(f"{RUN_TYPE}/{run['metadata']['name']} {'repaired' if run is bulk[5] else 'unchanged'}\n"
                                for run in bulk)
    assert again.err == (f"Warning: {RUN_TYPE}/run-00005: object {store}/objects/{PACK_FILE} was damaged (it did not "
                         "hash to its name); written again\n")
    assert kidx("fsck").code == 0
    assert packed(store)[digest] == canonical_json(identity_of(bulk[5]))  # replaced in the pack, not shadowed
    assert loose_digests(store) == set()


def test_fsck_repairs_a_damaged_packed_object_from_a_bundle_and_keeps_its_bytes(kidx, store, tmp_path):
    bulk = runs(PACK_THRESHOLD)
    assert kidx("apply", "-f", str(as_list(bulk, tmp_path / "bulk.json"))).code == 0
    bundle = tmp_path / "backup.kidx.json"
    assert kidx("export", "-o", str(bundle)).code == 0
    digest = digest_bytes(canonical_json(identity_of(bulk[0])))
    pack_sql(store, "UPDATE objects SET data = ? WHERE digest = ?", b"{}", bytes.fromhex(digest[7:]))
    result = kidx("fsck", "--repair", "--from-bundle", str(bundle))
    assert (result.code, result.err) == (0, "")
    assert result.out.splitlines()[0] == (f"repaired damaged-object objects/{PACK_FILE}: written from {bundle}; "
                                          f"the damaged bytes were copied to lost+found/{digest[7:]}")
    assert (store / "lost+found" / digest[7:]).read_bytes() == b"{}"
    assert packed(store)[digest] == canonical_json(identity_of(bulk[0]))
    assert loose_digests(store) == set()


def test_something_else_in_the_packs_place_is_an_error_not_a_wait(kidx, store, tmp_path):
    assert kidx("apply", "-f", str(as_list(runs(1), tmp_path / "one.json"))).code == 0
    (store / "objects").mkdir(exist_ok=True)
    os.mkfifo(store / "objects" / PACK_FILE)
    message = (f"error: the store's object pack {store}/objects/{PACK_FILE} is a FIFO, not a file "
               "(nothing was read or changed)\n")
    assert kidx("apply", "-f", str(as_list(runs(PACK_THRESHOLD, first=1), tmp_path / "bulk.json"))) == (1, "", message)
    assert kidx("get", "runs", "-o", "name") == (0, f"{RUN_TYPE}/run-00000\n", "")


def test_gc_removes_an_unused_packed_object(kidx, store, tmp_path):
    bulk = runs(PACK_THRESHOLD)
    assert kidx("apply", "-f", str(as_list(bulk, tmp_path / "bulk.json"))).code == 0
    orphan = canonical_json(identity_of(runs(1, first=99_999)[0]))
    digest = digest_bytes(orphan)
    pack_sql(store, "INSERT INTO objects (digest, data) VALUES (?, ?)", bytes.fromhex(digest[7:]), orphan)
    assert kidx("gc") == (0, f"objects/{PACK_FILE} ({digest}) removed\n",
                          f"1 unused object and 0 temporary files removed ({len(orphan)} bytes), {PACK_THRESHOLD} objects kept\n")
    assert set(packed(store)) == digests_of(bulk)
    assert kidx("fsck").code == 0


def _kidx_process(store: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "kidx", *args, "--store", str(store)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "NO_COLOR": "1", **(env or {})})


def test_two_bulk_writers_at_once_both_succeed(kidx, store, tmp_path):
    first, second = runs(PACK_THRESHOLD * 2), runs(PACK_THRESHOLD * 2, first=PACK_THRESHOLD * 2)
    writers = [_kidx_process(store, "apply", "-f", str(as_list(batch, tmp_path / f"{number}.json")))
               for number, batch in enumerate((first, second))]
    outcomes = [(writer.wait(timeout=120), writer.stdout.read(), writer.stderr.read()) for writer in writers]
    for writer in writers:
        writer.stdout.close()
        writer.stderr.close()
    assert outcomes == [(0, created(first), ""), (0, created(second), "")]
    assert set(packed(store)) == digests_of(first) | digests_of(second)
    assert loose_digests(store) == set()
    assert kidx("fsck").code == 0


@pytest.mark.parametrize("stage", ["objects", "catalog"])
def test_a_bulk_apply_killed_before_its_commit_leaves_the_store_as_it_was(kidx, store, tmp_path, stage):
    before = runs(2)
    assert kidx("apply", "-f", str(as_list(before, tmp_path / "before.json"))).code == 0
    bulk = runs(PACK_THRESHOLD + 10, first=2)
    killed = _kidx_process(store, "apply", "-f", str(as_list(bulk, tmp_path / "bulk.json")),
                           env={"KIDX_TEST_CRASH_AT": stage})
    killed.communicate(timeout=120)
    assert killed.returncode == -9
    assert kidx("get", "runs", "-o", "name").out == "".join(f"{RUN_TYPE}/{run['metadata']['name']}\n" for run in before)
    assert not (store / "objects" / PACK_FILE).exists() or set(packed(store)) <= digests_of(bulk)
    assert loose_digests(store) == digests_of(before)
    assert kidx("fsck").code == 0
    assert kidx("apply", "-f", str(tmp_path / "bulk.json")).out == created(bulk)
    assert set(packed(store)) == digests_of(bulk)


def test_a_read_only_packed_store_is_readable(kidx, store, tmp_path, other_user):
    bulk = runs(PACK_THRESHOLD)
    assert kidx("apply", "-f", str(as_list(bulk, tmp_path / "bulk.json"))).code == 0
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="kidx-read-only-"))
    copy = folder / "store"
    shutil.copytree(store, copy)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    folder.chmod(0o755)
    try:
        completed = subprocess.run(other_user.command("get", "run", "run-00009", "-o", "json", "--store", str(copy)),
                                   capture_output=True, text=True, cwd="/", env=other_user.env)
        assert (completed.returncode, completed.stderr) == (0, "")
        assert json.loads(completed.stdout)["spec"] == bulk[9]["spec"]
        fsck = subprocess.run(other_user.command("fsck", "--store", str(copy)),
                              capture_output=True, text=True, cwd="/", env=other_user.env)
        assert fsck.returncode == 0, fsck.stderr
    finally:
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o700)
        shutil.rmtree(folder)


def _objects(count: int, first: int = 0) -> dict[str, bytes]:
    found = {}
    for run in runs(count, first):
        data = canonical_json(identity_of(run))
        found[digest_bytes(data)] = data
    return found


def test_a_write_that_fails_after_filling_the_pack_leaves_nothing_of_it(tmp_path):
    store_path = tmp_path / "store"
    store = Store(store_path)
    kept = _objects(PACK_THRESHOLD)
    with store.write() as transaction:
        for digest, data in kept.items():
            assert transaction.add_object(digest, data) == "written"
    lost = _objects(PACK_THRESHOLD * 2, first=PACK_THRESHOLD)
    with pytest.raises(RuntimeError), store.write() as transaction:
        for digest, data in lost.items():
            transaction.add_object(digest, data)
        assert store.objects.read(next(iter(lost))) == next(iter(lost.values()))  # seen inside the write
        raise RuntimeError("the command failed")
    assert set(packed(store_path)) == set(kept)
    assert list(store.objects.digests()) == sorted(kept)
    assert store.objects.missing(lost) == set(lost)
    with store.write() as transaction:  # the pack is free for the next write
        assert {transaction.add_object(digest, data) for digest, data in lost.items()} == {"written"}
    assert set(packed(store_path)) == set(kept) | set(lost)
    store.close()


def test_a_process_killed_with_its_pack_transaction_open_leaves_the_pack_as_it_was(tmp_path):
    store_path = tmp_path / "store"
    kept = _objects(PACK_THRESHOLD)
    store = Store(store_path)
    with store.write() as transaction:
        for digest, data in kept.items():
            transaction.add_object(digest, data)
    store.close()
    script = (
        "import os, signal, sys\n"
        "from kidx.store.store import Store\n"
        "from store.test_packed_objects import _objects\n"
        "store = Store(sys.argv[1])\n"
        "with store.write() as transaction:\n"
        f"    for digest, data in _objects({PACK_THRESHOLD * 3}, first={PACK_THRESHOLD}).items():\n"
        "        transaction.add_object(digest, data)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run([sys.executable, "-c", script, str(store_path)], cwd=REPO, capture_output=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])})
    assert killed.returncode == -9, killed.stderr
    assert set(packed(store_path)) == set(kept)
    assert list(Store(store_path).objects.digests()) == sorted(kept)


def test_objects_added_together_are_looked_up_together_with_each_ones_own_outcome(tmp_path):
    """add_objects answers as add_object one by one: an intact packed object is present, a
    damaged one replaced, a loose file checked, a new one written, and one that an earlier
    batch holds (then spilled into the pack by this batch's writes) present."""
    store_path = tmp_path / "store"
    store = Store(store_path)
    packed_before = _objects(PACK_THRESHOLD)
    with store.write() as transaction:
        assert set(transaction.add_objects(packed_before).values()) == {"written"}
    damaged, intact = list(packed_before)[:2]
    pack_sql(store_path, "UPDATE objects SET data=? WHERE digest=?", b"{}", bytes.fromhex(damaged[7:]))
    loose = _objects(1, first=PACK_THRESHOLD)
    with store.write() as transaction:
        assert transaction.add_objects(loose) == {digest: "written" for digest in loose}  # one: a loose file
    new = _objects(PACK_THRESHOLD - 1, first=PACK_THRESHOLD + 1)
    first_new = next(iter(new))
    with store.write() as transaction:
        assert transaction.add_objects({first_new: new[first_new]}) == {first_new: "written"}  # held
        # first_new last: the batch's writes before it fill the pack's transaction with it
        batch = {damaged: packed_before[damaged], intact: packed_before[intact], **loose,
                 **{digest: data for digest, data in new.items() if digest != first_new}, first_new: new[first_new]}
        done = transaction.add_objects(batch)
        assert list(done) == list(batch)
        assert done == {damaged: "replaced", intact: "present", **{digest: "present" for digest in loose},
                        first_new: "present", **{digest: "written" for digest in list(new)[1:]}}
    stored = packed(store_path)
    assert stored[damaged] == packed_before[damaged] and set(new) <= set(stored)
    assert loose_digests(store_path) == set(loose)
    store.close()


KILLED_MID_WRITE = """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA cache_size=1")  # changed pages go to the file before the commit: the journal is synced first
db.execute("BEGIN")
db.execute("DELETE FROM objects")  # a write the killed process never committed: its journal is hot
db.execute("CREATE TABLE half_done (x)")
os._exit(9)
"""


def test_a_pack_a_killed_writer_left_with_a_hot_journal_is_read_at_its_committed_state(kidx, store, tmp_path):
    """A writer killed mid-write in rollback-journal mode leaves a hot journal that only a
    connection that may write can roll back; a read-only reader must not fail on it (it
    did: "attempt to write a readonly database")."""
    bulk = runs(PACK_THRESHOLD)
    applied = subprocess.run([sys.executable, "-m", "kidx", "apply", "-f", str(as_list(bulk, tmp_path / "bulk.json")),
                              "--store", str(store)], capture_output=True, cwd=REPO)  # no connection left here
    assert applied.returncode == 0, applied.stderr
    pack = store / "objects" / PACK_FILE
    pack_sql(store, "PRAGMA journal_mode=DELETE")
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(pack)], capture_output=True)
    assert killed.returncode == 9 and (pack.parent / (PACK_FILE + "-journal")).exists()
    listed = list(Store(store).objects.digests())  # a read-only open finds the hot journal
    assert listed == sorted(digests_of(bulk))
    assert kidx("get", "runs", "-o", "name").out.count("\n") == PACK_THRESHOLD
    assert json.loads(kidx("get", "run", "run-00007", "-o", "json").out)["spec"] == bulk[7]["spec"]
    assert set(packed(store)) == digests_of(bulk)
    assert kidx("fsck").code == 0


def test_a_read_only_store_a_writer_left_mid_write_is_refused_not_read_without_its_wal(kidx, store, tmp_path,
                                                                                       other_user):
    assert kidx("apply", "-f", str(as_list(runs(3), tmp_path / "runs.json"))).code == 0
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="kidx-read-only-"))
    copy = folder / "store"
    shutil.copytree(store, copy)
    committed_not_checkpointed = (  # a writer stopped after its commit, before kidx empties the WAL
        "import os, sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA wal_autocheckpoint=0')\n"
        "db.execute('CREATE TABLE committed_in_the_wal(x)')\n"
        "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", committed_not_checkpointed, str(copy / "catalog.sqlite")], check=True)
    assert (copy / "catalog.sqlite-wal").stat().st_size > 0
    (copy / "catalog.sqlite-shm").unlink()  # without it, a reader that may not write cannot read the WAL
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    folder.chmod(0o755)
    try:
        completed = subprocess.run(other_user.command("get", "runs", "-o", "name", "--store", str(copy)),
                                   capture_output=True, text=True, cwd="/", env=other_user.env)
        assert (completed.returncode, completed.stdout) == (1, "")
        assert completed.stderr == (
            f"error: {copy}/catalog.sqlite-wal: a write to this store did not finish (its writer was stopped), and "
            f"this user may not write the folder {copy}, where it must be settled before the store can be read "
            "whole; run any kidx command on the store once as a user who may write that folder\n")
    finally:
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o700)
        shutil.rmtree(folder)


@pytest.mark.parametrize("database", ["catalog.sqlite", f"objects/{PACK_FILE}"])
@pytest.mark.parametrize("left", ["an empty WAL", "a WAL with its shared-memory file"])
def test_a_read_only_store_a_writer_left_settled_is_read_whole(kidx, store, tmp_path, other_user, database, left):
    """What a finished or a settled write leaves beside the catalog or the pack (an empty
    WAL; a WAL whose shared-memory file, readable, says what of it is committed) is no
    unfinished write: the store is read whole by a user who may not write its folder."""
    made = runs(PACK_THRESHOLD + 2)
    assert kidx("apply", "-f", str(as_list(made, tmp_path / "runs.json"))).code == 0
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="kidx-read-only-"))
    copy = folder / "store"
    shutil.copytree(store, copy)
    path = copy / database
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    if left == "an empty WAL":
        wal.write_bytes(b"")
        shm.unlink(missing_ok=True)
    else:
        committed_not_checkpointed = (
            "import os, sqlite3, sys\n"
            "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "db.execute('PRAGMA wal_autocheckpoint=0')\n"
            "db.execute('CREATE TABLE committed_in_the_wal(x)')\n"
            "os._exit(0)\n")
        subprocess.run([sys.executable, "-c", committed_not_checkpointed, str(path)], check=True)
        assert wal.stat().st_size > 0 and shm.exists()
    for each in [copy, *copy.rglob("*")]:
        each.chmod(0o555 if each.is_dir() else 0o444)
    folder.chmod(0o755)
    try:
        def as_other(*arguments: str) -> tuple[int, str, str]:
            done = subprocess.run(other_user.command(*arguments, "--store", str(copy)), capture_output=True,
                                  text=True, cwd="/", env=other_user.env)
            return done.returncode, done.stdout, done.stderr

        code, out, err = as_other("get", "runs", "-o", "name")
        assert (code, err) == (0, "")
        assert out.splitlines() == sorted(f"{RUN_TYPE}/{run['metadata']['name']}" for run in made)
        code, out, err = as_other("get", "run", "run-00001", "-o", "jsonpath={.spec.timing.latencyNs.median}")
        assert (code, out, err) == (0, "1001", "")  # the object itself, from the pack
    finally:
        for each in [copy, *copy.rglob("*")]:
            each.chmod(0o700)
        shutil.rmtree(folder)
