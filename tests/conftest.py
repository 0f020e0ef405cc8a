"""Shared fixtures: a fresh store per test, and the CLI run in process or as a process."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
LIGER_DATA = REPO / "tests" / "data" / "liger"
LIGER_HISTORY = LIGER_DATA / "history"
SEED_BUNDLE = REPO / "docs" / "examples" / "seed-bundle.json"
# the verdict rule as compare and series print it last, without --threshold (kidx.analysis.significance)
RULE = ("rule: the threshold follows the evidence: a change counts when it exceeds 0.5% (a kernel timer's "
        "runs; 5% for others) and a two-sided t-test on the logs of the runs' statistics gives p < 0.05 and "
        "|t| >= 4 (5 for others), with the spread between runs from repeated runs or the series' history; a "
        "kernel timer's runs with samples are judged on their floors (fastest samples) instead where the floors' "
        "spread between runs is under 0.5 times the statistics' (each from 4 degrees of freedom or more), unless "
        "the statistics confirm a change themselves; a change is confirmed by 2 runs a side, more than half of "
        "the pairs of runs beyond that its way, else unconfirmed; same when the 95% interval of the ratio lies within the larger of that and the change "
        "the runs would detect 95% of the time, at most 5%; with only within-run evidence (Mann-Whitney U on "
        "samples, else p20-p80 bands apart, else a 5% threshold) at most unconfirmed\n")
SEED_RUN_NAME = "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-"
SEED_PROTOCOL_DIGEST = "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8"
SEED_ENVIRONMENT_DIGEST = "sha256:2750ae381d6de582f1eb6b9008e0987463d19ede8af127d97d76c5ae09121393"
SEED_RUN_DIGEST = "sha256:6e70abf28bfccdbc8dde69ec6347a8f22a416952374d02a065d78a2cb9973cba"


class Result(NamedTuple):
    code: int
    out: str
    err: str


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory, monkeypatch):
    cache = tmp_path_factory.getbasetemp() / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("KIDX_STORE", raising=False)
    # under pytest-xdist: a pytest a test starts (the harness kidx record runs) is no worker,
    # and pytest-benchmark would disable itself there if it inherited a worker's variables
    for name in XDIST_VARIABLES:
        monkeypatch.delenv(name, raising=False)


XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


def environment_without_xdist() -> dict[str, str]:
    """This process's environment without pytest-xdist's worker variables: for a pytest
    that a module- or session-scoped fixture starts, before the autouse fixture above runs."""
    import os

    return {name: value for name, value in os.environ.items() if name not in XDIST_VARIABLES}


BACKENDS = ("sqlite", "postgresql")


# Property tests judge what kidx does, not how fast the machine is: a CI machine shared with
# other work must not fail them on a timing health check or a per-example deadline.
settings.register_profile("kidx", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kidx")


def pytest_configure(config):
    config.addinivalue_line("markers", "both_backends: run each test on a folder store and on a PostgreSQL store")
    config.addinivalue_line("markers", "sqlite_only: a test of the folder store's files, in a both_backends module")


def pytest_generate_tests(metafunc):
    """Tests of a ``both_backends`` module that use ``store`` run once per backend."""
    if "store" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_backends") is not None:
        metafunc.parametrize("store", BACKENDS, indirect=True)


def pytest_collection_modifyitems(config, items):
    """``sqlite_only`` tests (or parameter sets) of a ``both_backends`` module: the folder store only."""
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_postgres = callspec is not None and callspec.params.get("store") == "postgresql"
        (dropped if on_postgres and item.get_closest_marker("sqlite_only") else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL cluster for the whole session (tests/pg_server.py)."""
    from pg_server import PostgresServer, server_binaries

    binaries = server_binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin")
    server = PostgresServer(binaries)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def other_user():
    """kidx as another user (nobody, as root), from a copy that user can read (tests/other_user.py)."""
    from other_user import other_user as make

    user = make()
    if isinstance(user, str):
        pytest.skip(user)
    try:
        yield user
    finally:
        user.remove()


class PostgresStore:
    """A PostgreSQL store for one test: an empty database on the session's server.

    ``str()`` is its URL (what ``--store`` takes); ``exists()`` says whether kidx has
    created its tables there, as a folder store's ``exists()`` says whether it was created.
    """

    backend = "postgresql"

    def __init__(self, server, database: str):
        self.server, self.database = server, database
        self.url = server.url(database)

    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r})"

    def exists(self) -> bool:
        import psycopg

        with psycopg.connect(self.url) as connection:
            (found,) = connection.execute("SELECT to_regnamespace('kidx') IS NOT NULL").fetchone()
        return found

    def empty(self) -> None:
        """Remove everything kidx made, so the next test gets an empty database again
        (much cheaper than a new database: the server has two cores to share)."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute("DROP SCHEMA IF EXISTS kidx CASCADE")


_databases = iter(range(1, 1 << 30))
_emptied: list[str] = []  # databases of finished tests, emptied, ready for the next


@pytest.fixture
def store(request, tmp_path):
    """The test's store, empty: a folder (Path) that does not exist yet, or a PostgreSQL database."""
    if getattr(request, "param", "sqlite") == "sqlite":
        yield tmp_path / "store"
        return
    yield from _postgres_store(request.getfixturevalue("postgres_server"))


@pytest.fixture(params=["folder", "postgresql"])
def folder_or_postgres(request, tmp_path):
    """A second store, empty: a folder that does not exist yet, or a PostgreSQL database."""
    if request.param == "folder":
        yield tmp_path / "other-store"
    else:
        yield from _postgres_store(request.getfixturevalue("postgres_server"))


@pytest.fixture
def postgres_store(postgres_server):
    """An empty PostgreSQL store (a fresh database), for tests of that backend alone."""
    yield from _postgres_store(postgres_server)


def _postgres_store(server):
    if _emptied:
        location = PostgresStore(server, _emptied.pop())
    else:
        location = PostgresStore(server, f"kidx_test_{next(_databases)}")
        server.create_database(location.database)
    yield location
    try:
        location.empty()
    except Exception:  # a test left it unusable: drop it instead of reusing it
        server.drop_database(location.database)
    else:
        _emptied.append(location.database)


@pytest.fixture
def seed_bundle() -> dict:
    return json.loads(SEED_BUNDLE.read_text(encoding="utf-8"))


@pytest.fixture
def kidx(store, monkeypatch):
    """Run kidx in this process against the test's store: kidx("get", "runs", stdin=…)."""
    from kidx.cli.app import run

    def invoke(*args: str, stdin: str | bytes = b"", store_path: Path | None = None) -> Result:
        data = stdin.encode() if isinstance(stdin, str) else stdin
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        code = run([*args, "--store", str(store_path or store)] if _takes_store(args) else list(args))
        return Result(code, out.getvalue(), err.getvalue())

    return invoke


def _takes_store(args) -> bool:
    return bool(args) and args[0] not in ("--help", "-h", "api-resources", "explain", "completion", "version")


@pytest.fixture
def kidx_process(store):
    """Run kidx as a separate process, as a user's shell would."""

    def invoke(*args: str, stdin: str | bytes | None = None, env: dict | None = None) -> Result:
        environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1", **(env or {})}
        completed = subprocess.run(
            [sys.executable, "-m", "kidx", *args],
            input=stdin.encode() if isinstance(stdin, str) else stdin,
            capture_output=True,
            env=environment,
            cwd=REPO,
        )
        return Result(completed.returncode, completed.stdout.decode(), completed.stderr.decode())

    return invoke


# Stores holding the Liger data, imported once per test session and only read by tests.
# ``head``: the three CSVs at HEAD; ``history``: every distinct row of their git history.


def _import_liger(root: Path, files: list[Path]) -> Path:
    from kidx.cli.app import run

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = run(["import", "liger", *map(str, files), "--store", str(root)])
    assert code == 0, err.getvalue()
    return root


@pytest.fixture(scope="session")
def head_store(tmp_path_factory) -> Path:
    return _import_liger(
        tmp_path_factory.mktemp("liger-head") / "store", sorted(LIGER_DATA.glob("all_benchmark_data*.csv"))
    )


@pytest.fixture(scope="session")
def history_store(tmp_path_factory) -> Path:
    return _import_liger(
        tmp_path_factory.mktemp("liger-history") / "store", sorted(LIGER_HISTORY.glob("*.history.csv"))
    )
