"""The store: where it lives, content-addressed object files, and reads that create nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest
from conftest import (
    REPO,
    SEED_BUNDLE,
    SEED_ENVIRONMENT_DIGEST,
    SEED_PROTOCOL_DIGEST,
    SEED_RUN_DIGEST,
    SEED_RUN_NAME,
)

from kidx.identity import canonical_json, identity_of
from kidx.store.catalog import CatalogQuery
from kidx.store.objects import FileObjectBackend, ObjectDB
from kidx.store.store import Store, default_store_path

SEED_DIGESTS = {SEED_RUN_DIGEST, SEED_PROTOCOL_DIGEST, SEED_ENVIRONMENT_DIGEST}
RUN_LINE = f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME}"


def object_files(store_root: Path) -> FileObjectBackend:
    return FileObjectBackend(Path(store_root) / "objects" / "sha256")


def object_db(store_root: Path) -> ObjectDB:
    """The object database of a folder store, as the SQLite backend builds it."""
    return ObjectDB(object_files(store_root))


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG paths are Linux's")


def run_cli(capsys, *args):
    """kidx in process with exactly these arguments (no --store added)."""
    from kidx.cli.app import run

    code = run(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def all_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# ---------------------------------------------------------------- location


@linux_only
def test_default_location_follows_xdg_data_home(monkeypatch, capsys, tmp_path):
    import platformdirs

    monkeypatch.delenv("KIDX_STORE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    expected = tmp_path / "xdg" / "kidx"
    assert default_store_path() == expected == Path(platformdirs.user_data_dir("kidx"))
    code, out, _ = run_cli(capsys, "apply", "-f", str(SEED_BUNDLE), "-o", "name")
    assert code == 0
    assert out.splitlines()[0] == RUN_LINE
    assert (expected / "catalog.sqlite").is_file()
    assert set(object_db(expected).digests()) == SEED_DIGESTS
    assert not (tmp_path / "home").exists()
    assert run_cli(capsys, "get", "runs", "-o", "name") == (0, RUN_LINE + "\n", "")


@linux_only
def test_default_location_without_xdg_is_under_home(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("KIDX_STORE", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / ".local" / "share" / "kidx"
    assert default_store_path() == expected
    assert run_cli(capsys, "apply", "-f", str(SEED_BUNDLE), "-o", "name")[0] == 0
    assert (expected / "catalog.sqlite").is_file()


@linux_only
def test_default_location_in_a_real_process(kidx_process, tmp_path, store):
    data_home = tmp_path / "xdg"
    env = {"KIDX_STORE": "", "XDG_DATA_HOME": str(data_home), "HOME": str(tmp_path / "home")}
    code, out, _ = kidx_process("apply", "-f", str(SEED_BUNDLE), "-o", "name", env=env)
    assert code == 0
    assert out.splitlines()[0] == RUN_LINE
    assert (data_home / "kidx" / "catalog.sqlite").is_file()
    assert not store.exists()


def test_kidx_store_is_read_in_one_place():
    """$KIDX_STORE is read by kidx.store.store.configured_store_location alone: every other
    part asks it, and nothing writes the variable."""
    reads = []
    for path in sorted((REPO / "kidx").rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if "environ" in line and ("STORE_ENV" in line or "KIDX_STORE" in line):
                reads.append((str(path.relative_to(REPO)), line.strip()))
    assert reads == [("kidx/store/store.py", "return os.environ.get(STORE_ENV) or None")]


def test_kidx_store_is_honoured(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("KIDX_STORE", str(tmp_path / "from-env"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_store_path() == tmp_path / "from-env"
    assert run_cli(capsys, "apply", "-f", str(SEED_BUNDLE), "-o", "name")[0] == 0
    assert (tmp_path / "from-env" / "catalog.sqlite").is_file()
    assert not (tmp_path / "xdg").exists()
    assert run_cli(capsys, "get", "runs", "-o", "name") == (0, RUN_LINE + "\n", "")


def test_kidx_store_in_a_real_process(kidx_process, store):
    assert kidx_process("apply", "-f", str(SEED_BUNDLE), "-o", "name")[0] == 0
    assert (store / "catalog.sqlite").is_file()
    assert kidx_process("get", "runs", "-o", "name") == (0, RUN_LINE + "\n", "")


def test_store_option_beats_kidx_store(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("KIDX_STORE", str(tmp_path / "from-env"))
    option = tmp_path / "from-option"
    assert run_cli(capsys, "apply", "-f", str(SEED_BUNDLE), "--store", str(option))[0] == 0
    assert (option / "catalog.sqlite").is_file()
    assert not (tmp_path / "from-env").exists()
    assert run_cli(capsys, "get", "runs", "-o", "name", "--store", str(option)) == (0, RUN_LINE + "\n", "")
    assert run_cli(capsys, "get", "runs", "-o", "name") == (
        1, "", f"error: no store at {tmp_path / 'from-env'} ($KIDX_STORE): nothing has been written there (check the "
               "path, or write to it first, e.g. kidx apply -f)\n")


# ---------------------------------------------------------------- object files


def test_object_files_are_named_by_digest_and_rehash_to_their_names(kidx, store, seed_bundle):
    assert kidx("apply", "-f", str(SEED_BUNDLE))[0] == 0
    objects = object_db(store)
    assert set(objects.digests()) == SEED_DIGESTS
    for manifest in seed_bundle.values():
        identity = identity_of(manifest)
        digest = {"BenchmarkRun": SEED_RUN_DIGEST, "BenchmarkProtocol": SEED_PROTOCOL_DIGEST,
                  "ExecutionEnvironment": SEED_ENVIRONMENT_DIGEST}[manifest["kind"]]
        hexdigest = digest.split(":")[1]
        path = store / "objects" / "sha256" / hexdigest[:2] / hexdigest[2:]
        assert object_files(store).path_of(digest) == path
        assert path.read_bytes() == canonical_json(identity)
        assert objects.verify(digest)
    assert sorted(all_files(store / "objects")) == sorted(
        f"sha256/{d[7:9]}/{d[9:]}" for d in SEED_DIGESTS
    )


def test_the_object_file_layout_is_written_once(tmp_path):
    """Every file operation of the folder object backend reaches an object through
    ``where``: the fan-out layout (``ab/cdef…``) is spelled in one place."""
    import inspect

    source = inspect.getsource(FileObjectBackend)
    assert (source.count("hexdigest[:2]"), source.count("hexdigest[2:]")) == (1, 1)
    files = object_files(tmp_path)
    hexdigest = SEED_RUN_DIGEST.split(":")[1]
    assert files.write(hexdigest, b"{}") == "written"
    assert files.where(hexdigest) == f"{tmp_path}/objects/sha256/{hexdigest[:2]}/{hexdigest[2:]}"
    assert str(files.path_of(SEED_RUN_DIGEST)) == files.where(hexdigest)
    assert (files.exists(hexdigest), files.read(hexdigest), files.size(hexdigest)) == (True, b"{}", 2)
    files.remove(hexdigest)
    assert not os.path.exists(files.where(hexdigest)) and files.size(hexdigest) is None


def test_store_layout_and_names_are_not_paths(kidx, store):
    manifest = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload",
                "metadata": {"name": "x..y_z-name"}, "spec": {"operation": "op"}}
    assert kidx("apply", "-f", "-", stdin=json.dumps(manifest))[0] == 0
    files = all_files(store)
    assert all("x..y_z-name" not in f for f in files)
    assert "catalog.sqlite" in files
    assert all(f.startswith(("objects/sha256/", "catalog.sqlite")) for f in files), files


def test_objects_are_written_once(kidx, store):
    kidx("apply", "-f", str(SEED_BUNDLE))
    objects = object_db(store)
    path = object_files(store).path_of(SEED_RUN_DIGEST)
    os.utime(path, (1_000_000_000, 1_000_000_000))
    assert objects.write(SEED_RUN_DIGEST, b"something else") == "present"  # the intact file is kept
    kidx("apply", "-f", str(SEED_BUNDLE))
    kidx("apply", "-f", "-", stdin=SEED_BUNDLE.read_text().replace("0.6.1", "0.6.2"))  # labels only
    assert path.stat().st_mtime == 1_000_000_000
    assert objects.verify(SEED_RUN_DIGEST)


def test_verify_detects_a_corrupt_object(kidx, store):
    kidx("apply", "-f", str(SEED_BUNDLE))
    objects = object_db(store)
    path = object_files(store).path_of(SEED_PROTOCOL_DIGEST)
    path.chmod(0o644)
    path.write_bytes(path.read_bytes() + b" ")
    assert objects.verify(SEED_PROTOCOL_DIGEST) is False
    assert objects.verify(SEED_ENVIRONMENT_DIGEST) is True


def test_write_and_read_a_new_object(tmp_path):
    from kidx.identity.canonical import digest_bytes

    objects = object_db(tmp_path / "s")
    data = canonical_json({"apiVersion": "v", "kind": "K", "spec": {"é": 1}})
    digest = digest_bytes(data)
    assert objects.write(digest, data) == "written"
    assert objects.exists(digest)
    assert objects.read(digest) == data
    assert objects.verify(digest)
    assert list(objects.digests()) == [digest]
    assert all_files(tmp_path / "s") == [f"objects/sha256/{digest[7:9]}/{digest[9:]}"]


def _objects_written_by(backend: FileObjectBackend, count: int) -> dict[str, bytes]:
    from kidx.identity.canonical import digest_bytes

    objects = ObjectDB(backend)
    written = {}
    for number in range(count):
        data = canonical_json({"apiVersion": "v", "kind": "K", "spec": {"n": number, "é": "x" * number}})
        written[digest_bytes(data)] = data
        assert objects.write(digest_bytes(data), data) == "written"
        assert objects.write(digest_bytes(data), data) == "present"
    return written


@pytest.mark.parametrize("anonymous", [True, False], ids=["linked", "renamed"])
def test_new_objects_are_whole_files_with_nothing_left_beside_them(tmp_path, monkeypatch, anonymous):
    """New objects go through a nameless file linked into place where the platform has
    one (O_TMPFILE), else a temporary name renamed: either way the same files, modes and
    outcomes, and no temporary file left."""
    from kidx.store import objects as module

    if anonymous and not module._ANONYMOUS_FLAGS:
        pytest.skip("no O_TMPFILE here")
    if not anonymous:
        monkeypatch.setattr(module, "_ANONYMOUS_FLAGS", 0)
    backend = FileObjectBackend(tmp_path / "s")
    written = _objects_written_by(backend, 40)
    assert backend._anonymous is anonymous
    umask = os.umask(0)
    os.umask(umask)
    assert all_files(tmp_path / "s") == sorted(f"{d[7:9]}/{d[9:]}" for d in written)
    for digest, data in written.items():
        path = tmp_path / "s" / digest[7:9] / digest[9:]
        assert path.read_bytes() == data
        assert path.stat().st_mode & 0o777 == 0o644 & ~umask


def test_a_file_system_without_nameless_files_falls_back_to_renaming(tmp_path, monkeypatch):
    from kidx.store import objects as module

    real_open = os.open

    def refusing(path, flags, *args, **kwargs):
        if module._ANONYMOUS_FLAGS and flags & os.O_TMPFILE == os.O_TMPFILE:
            raise OSError(95, "Operation not supported")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(module.os, "open", refusing)
    backend = FileObjectBackend(tmp_path / "s")
    written = _objects_written_by(backend, 3)
    assert backend._anonymous is False
    assert all_files(tmp_path / "s") == sorted(f"{d[7:9]}/{d[9:]}" for d in written)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_process_links_its_own_files(tmp_path):
    """The open /proc/PID/fd folder a process links through is its own: a forked child
    opens its own, so its objects hold its bytes, not whatever the parent had open."""
    from kidx.store import objects as module

    _objects_written_by(FileObjectBackend(tmp_path / "parent"), 1)  # the parent's folder is open
    backend = FileObjectBackend(tmp_path / "s")
    child = os.fork()
    if child == 0:
        ok = False
        try:
            written = _objects_written_by(backend, 5)
            ok = backend._anonymous == bool(module._ANONYMOUS_FLAGS) and all(
                (tmp_path / "s" / d[7:9] / d[9:]).read_bytes() == data for d, data in written.items())
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sorted(ObjectDB(backend).digests()) == sorted(_objects_written_by(FileObjectBackend(tmp_path / "t"), 5))


def test_a_verified_write_refuses_bytes_that_do_not_hash_to_the_digest(tmp_path):
    from kidx.errors import StoreError
    from kidx.identity.canonical import digest_bytes

    objects = object_db(tmp_path / "s")
    data = canonical_json({"apiVersion": "v", "kind": "K", "spec": {}})
    with pytest.raises(StoreError, match="do not hash to its digest"):
        objects.write(digest_bytes(data), data + b" ", verify=True)
    assert list(objects.digests()) == []
    assert objects.write(digest_bytes(data), data, verify=True) == "written"


@pytest.mark.parametrize("bad", ["sha256:abc", "md5:" + "0" * 64, "0" * 64, "sha256:" + "G" * 64, "sha256:../../x"])
def test_path_of_refuses_non_digests(tmp_path, bad):
    with pytest.raises(ValueError):
        object_files(tmp_path).path_of(bad)


def test_stray_files_are_not_objects(kidx, store):
    kidx("apply", "-f", str(SEED_BUNDLE))
    fan = store / "objects" / "sha256" / SEED_RUN_DIGEST[7:9]
    (fan / ".tmp-leftover").write_bytes(b"partial")
    (store / "objects" / "sha256" / "zz").mkdir()
    assert set(object_db(store).digests()) == SEED_DIGESTS


def test_missing_object_is_a_store_error(kidx, store):
    from kidx.errors import StoreError

    kidx("apply", "-f", str(SEED_BUNDLE))
    path = object_files(store).path_of(SEED_PROTOCOL_DIGEST)
    path.unlink()
    with pytest.raises(StoreError):
        Store(store).identity(SEED_PROTOCOL_DIGEST)
    code, out, err = kidx("get", "bp", "-o", "yaml")
    assert (code, out) == (1, "")
    assert err.startswith("error: object sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8 is missing")


def test_catalog_uses_wal(kidx, store):
    kidx("apply", "-f", str(SEED_BUNDLE))
    connection = sqlite3.connect(store / "catalog.sqlite")
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        connection.close()


# ---------------------------------------------------------------- reading never creates


@pytest.fixture
def deep_store(tmp_path):
    return tmp_path / "not" / "yet" / "store"


@pytest.mark.parametrize(
    "args",
    [
        ("get", "runs"),
        ("get", "all", "-o", "yaml"),
        ("get", "run", "nope"),
        ("get", "run", "-l", "a=b"),
        ("describe", "runs"),
        ("describe", "run", "nope"),
        ("delete", "runs", "--all"),
        ("delete", "runs", "-l", "a"),
        ("delete", "run", "nope"),
        ("apply", "-f", str(SEED_BUNDLE), "--dry-run"),
        ("digest", "-f", str(SEED_BUNDLE)),
    ],
)
def test_reading_a_store_that_does_not_exist_creates_nothing(kidx, tmp_path, deep_store, args):
    code, _, _ = kidx(*args, store_path=deep_store)
    assert code in (0, 1)
    assert not (tmp_path / "not").exists()


def test_opening_a_missing_store_for_reading_creates_nothing(deep_store, tmp_path):
    store = Store(deep_store)
    catalog = store.catalog()
    assert catalog.list(CatalogQuery(kind="BenchmarkRun")) == []
    assert catalog.get("BenchmarkRun", "x") is None
    assert catalog.revisions("BenchmarkRun", "x") == []
    store.close()
    assert list(object_db(deep_store).digests()) == []
    assert not (tmp_path / "not").exists()


def test_first_write_creates_the_store(kidx, tmp_path, deep_store):
    assert kidx("apply", "-f", str(SEED_BUNDLE), store_path=deep_store)[0] == 0
    assert (deep_store / "catalog.sqlite").is_file()
    assert set(object_db(deep_store).digests()) == SEED_DIGESTS


def test_catalog_opening_waits_out_locks_sqlite_reports_at_once(tmp_path, monkeypatch):
    """Creating a store while another process switches it to WAL can report 'database is
    locked' without SQLite waiting; the catalog retries until the lock is gone."""
    import sqlite3

    from kidx.store import sqlite_catalog as catalog_module

    real_connect = sqlite3.connect
    failures = {"left": 2}

    class FlakyConnection:
        def __init__(self, connection):
            self._connection = connection

        def execute(self, sql, *args):
            if sql.startswith("PRAGMA journal_mode") and failures["left"]:
                failures["left"] -= 1
                raise sqlite3.OperationalError("database is locked")
            return self._connection.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self._connection, name)

    monkeypatch.setattr(catalog_module.sqlite3, "connect", lambda *a, **k: FlakyConnection(real_connect(*a, **k)))
    catalog = catalog_module.SQLiteCatalog(tmp_path / "catalog.sqlite")
    assert failures["left"] == 0
    assert catalog.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert catalog.list(CatalogQuery(kind="BenchmarkRun")) == []


def test_a_table_is_built_from_the_catalogs_cached_columns_without_reading_objects(kidx, store):
    """The catalog row caches the printer columns under the fingerprint of the kind's
    columns, so `get` as a table reads no object file; only output that needs the whole
    object (here -o yaml) does."""
    from kidx.kinds.registry import registry
    from kidx.store.column_cache import fingerprint

    assert kidx("apply", "-f", str(SEED_BUNDLE))[0] == 0
    info = registry().by_kind("BenchmarkRun")
    (entry,) = Store(store).catalog().list(CatalogQuery(kind="BenchmarkRun"))
    assert entry.columns is not None and entry.columns.startswith(fingerprint(info) + ":")
    object_files(store).path_of(SEED_RUN_DIGEST).unlink()  # a table must not need it
    code, out, err = kidx("get", "runs", "--no-headers", "-o", "wide")
    assert (code, err) == (0, "")
    assert out.startswith(SEED_RUN_NAME + " ") and "417.5µs" in out
    assert kidx("get", "runs", "-o", "yaml")[0] == 1


@pytest.mark.sqlite_only
def test_the_sqlite_catalog_sorts_a_selection_of_one_kind_by_name_after_its_sql(kidx, store):
    """The names of one kind, selected without a limit, are sorted by Python after the SQL
    (SQLite would sort the whole rows through a temporary B-tree): the same order as
    SQLite's ORDER BY name, which still sorts a selection with a limit or of every kind."""
    sys.path.append(str(REPO / "bench"))
    from bench_store import generate

    from kidx.api.arguments import parse_selector
    from kidx.store.sqlite_catalog import SQLiteCatalog

    data = generate(30, 20261207, n_workloads=3, n_impls=2)
    listing = json.dumps({"apiVersion": "v1", "kind": "List", "items": data.shared + data.runs[::-1]})
    assert kidx("apply", "-f", "-", stdin=listing).code == 0
    catalog = SQLiteCatalog(store / "catalog.sqlite", write=False)
    try:
        statements: list[str] = []
        catalog.connection.set_trace_callback(statements.append)
        labels = tuple(parse_selector("liger_version").requirements)
        selected = catalog.list(CatalogQuery(kind="BenchmarkRun", labels=labels))
        limited = catalog.list(CatalogQuery(kind="BenchmarkRun", labels=labels, limit=len(selected)))
        every = catalog.list(CatalogQuery(kind="BenchmarkRun"))
        by_sqlite = [row[0] for row in catalog.connection.execute(
            "SELECT name FROM objects WHERE kind='BenchmarkRun' ORDER BY name")]
    finally:
        catalog.close()
    assert [e.name for e in selected] == [e.name for e in limited] == [e.name for e in every] == by_sqlite
    assert len(by_sqlite) == 30 and by_sqlite != [run["metadata"]["name"] for run in data.runs[::-1]]
    listed = [statement for statement in statements if statement.startswith("SELECT id, kind, name")]
    assert ["ORDER BY" in statement for statement in listed] == [False, True, False]
