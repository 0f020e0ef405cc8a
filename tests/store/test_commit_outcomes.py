"""The outcome reported is the outcome that happened, around the commit itself.

- Ctrl-C just after the commit (folder store and PostgreSQL, apply and push): the
  command reports what it committed and exits 0, never 130 "interrupted"; Ctrl-C before
  the commit still is 130 with nothing stored.
- PostgreSQL with a synchronous standby that never answers: kidx says, after a few
  seconds, that it waits for the commit; Ctrl-C then stops the wait, and the server keeps
  the commit, which kidx reports.
- The connection lost while COMMIT is in flight: exit 3, "may or may not have been
  committed", and how to check; the driver's own log lines never reach stderr.

Each moment is reached by a pause point (``KIDX_TEST_PAUSE_AT``) or by a server state
that holds the commit (``synchronous_standby_names`` naming a standby that does not
exist), never by timing.
"""

from __future__ import annotations

import contextlib
import hashlib
import signal
import time

import pytest
from cli.test_push import state
from conftest import SEED_BUNDLE, SEED_RUN_NAME
from operations.test_transfer_races import Started, kidx, paused, resume

RUN = "benchmarkrun.kernelindex.dev"
COMMITTED_NOTE = "interrupted after the write was committed: the outcome above is what the store holds\n"
PUSH_LINES = (
    "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward created\n"
    f"{RUN}/{SEED_RUN_NAME} created\n"
    "executionenvironment.kernelindex.dev/liger-bench-nvidia-h100-80gb-hbm3 created\n"
)
SEED_LINES = (  # apply's order: the manifests' order
    f"{RUN}/{SEED_RUN_NAME} created\n"
    "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward created\n"
    "executionenvironment.kernelindex.dev/liger-bench-nvidia-h100-80gb-hbm3 created\n"
)


def said(err: str) -> list[str]:
    """stderr without apply's warnings about the seed's references to objects not stored."""
    return [line for line in err.splitlines() if not line.startswith("Warning: ")]


@pytest.fixture
def target(folder_or_postgres):
    return folder_or_postgres


def seed_file(tmp_path):
    path = tmp_path / "seed.json"
    path.write_text(SEED_BUNDLE.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def names(store) -> set:
    return set(state(store)["entries"])


def interrupted_at(tmp_path, stage: str, args) -> tuple[int, str, str]:
    """Run kidx to ``stage``, press Ctrl-C there, let it go on; its exit code and output."""
    started, folder = paused(tmp_path, "command", stage, args)
    started.process.send_signal(signal.SIGINT)
    delivered(started.process.pid, signal.SIGINT)  # to a held handler, or as KeyboardInterrupt
    resume(folder)
    return started.finish()


def delivered(pid: int, signum: int, limit: float = 120) -> None:
    """Block until process ``pid`` has taken signal ``signum`` sent to it: it is no longer
    pending (Linux lists a process's pending signals in /proc; elsewhere, a pause). The
    paused process checks for its resume file only after its handler has run."""
    status = f"/proc/{pid}/status"
    try:
        open(status).close()
    except OSError:
        time.sleep(1.0)
        return
    bit = 1 << (signum - 1)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with open(status) as lines:
            pending = [int(line.split()[1], 16) for line in lines if line.startswith(("SigPnd:", "ShdPnd:"))]
        if not any(mask & bit for mask in pending):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never took signal {signum}")


def writing(tmp_path, target, command: str) -> list:
    """The command line that writes the seed's three names into ``target``: an apply, or
    a push from a folder store holding them."""
    if command == "apply":
        return ["apply", "-f", seed_file(tmp_path), "--store", target]
    source = tmp_path / "source"
    assert kidx("apply", "-f", seed_file(tmp_path), "--store", source).returncode == 0
    return ["push", target, "--store", source]


@pytest.mark.parametrize("command", ["apply", "push"])
def test_ctrl_c_just_after_the_commit_reports_the_commit(tmp_path, target, command):
    code, out, err = interrupted_at(tmp_path, "commit", writing(tmp_path, target, command))
    assert (code, out) == (0, SEED_LINES if command == "apply" else PUSH_LINES), err
    assert said(err)[-1:] == [COMMITTED_NOTE.strip()] and "error" not in err
    assert len(names(target)) == 3


@pytest.mark.parametrize("command", ["apply", "push"])
def test_ctrl_c_before_the_commit_is_interrupted_and_nothing_is_stored(tmp_path, target, command):
    code, out, err = interrupted_at(tmp_path, "catalog", writing(tmp_path, target, command))
    assert (code, out, said(err)) == (130, "", ["error: interrupted"])
    assert not target.exists() or names(target) == set()


def test_without_the_command_layer_a_held_ctrl_c_is_raised_once_committed(tmp_path):
    """kidx as a library: the hold ends with the write; Ctrl-C pressed during the commit
    comes as KeyboardInterrupt after it, with the write committed."""
    import os

    from kidx.store import interrupts
    from kidx.store.store import Store

    before = signal.getsignal(signal.SIGINT)
    store = Store(tmp_path / "lib")
    original = store.backend.open_catalog

    def pressing_during_commit(write):
        catalog = original(write)
        commit = catalog.commit

        def commit_with_ctrl_c():
            os.kill(os.getpid(), signal.SIGINT)  # delivered to the held handler: nothing raised here
            commit()

        catalog.commit = commit_with_ctrl_c
        return catalog

    store.backend.open_catalog = pressing_during_commit
    digest = "sha256:" + hashlib.sha256(b"{}").hexdigest()
    with pytest.raises(KeyboardInterrupt):
        with store.write() as transaction:
            transaction.add_object(digest, b"{}")
    assert signal.getsignal(signal.SIGINT) is before
    assert store.exists() and store.objects.exists(digest)  # the write went through first
    store.close()
    interrupts.keep_until_released()
    interrupts.hold()
    os.kill(os.getpid(), signal.SIGINT)
    interrupts.after_commit()  # the command layer keeps the hold: nothing raised
    assert interrupts.release() is True
    assert signal.getsignal(signal.SIGINT) is before


# --- PostgreSQL: a commit the server holds -------------------------------------------------------


def superuser(postgres_store):
    import psycopg

    connection = psycopg.connect(postgres_store.url, autocommit=True)
    connection.execute("SET synchronous_commit = local")  # this connection never waits for a standby
    return connection


@contextlib.contextmanager
def absent_synchronous_standby(postgres_store):
    """Every commit in the test's database waits for a standby that does not exist (until
    the block ends). The test cluster runs with ``synchronous_commit=off``; the database's
    own setting overrides that for its new sessions, so other databases never wait."""
    database = postgres_store.database
    with superuser(postgres_store) as connection:
        connection.execute(f'ALTER DATABASE "{database}" SET synchronous_commit = on')
        connection.execute("ALTER SYSTEM SET synchronous_standby_names = 'kidx_absent_standby'")
        connection.execute("SELECT pg_reload_conf()")
        time.sleep(0.3)  # the server's processes re-read their configuration
        try:
            yield connection
        finally:
            connection.execute("ALTER SYSTEM RESET synchronous_standby_names")
            connection.execute("SELECT pg_reload_conf()")
            connection.execute(f'ALTER DATABASE "{database}" RESET synchronous_commit')
            time.sleep(0.3)


WAITS_FOR_COMMIT = "to confirm the commit"


@pytest.mark.slow
def test_a_commit_held_by_a_standby_is_announced_and_ctrl_c_keeps_it(tmp_path, postgres_store):
    with absent_synchronous_standby(postgres_store):
        applying = Started(tmp_path, "apply", ["apply", "-f", seed_file(tmp_path), "--store", postgres_store])
        assert applying.waits_or_ends(saying=WAITS_FOR_COMMIT) == "waiting"
        applying.process.send_signal(signal.SIGINT)
        code, out, err = applying.finish()
    assert (code, out) == (0, SEED_LINES), err
    lines = said(err)
    assert lines[0] == (f"waiting for the store at {postgres_store} to confirm the commit (a synchronous standby "
                        "may not be answering); Ctrl-C asks the server to stop waiting and keep the commit, a "
                        "second Ctrl-C gives up with the outcome unknown…")
    assert any(line.startswith(f"the store at {postgres_store} says: canceling wait for synchronous replication")
               for line in lines), err
    assert err.endswith(COMMITTED_NOTE)
    assert len(names(postgres_store)) == 3


@pytest.mark.slow
def test_a_commit_held_by_a_standby_completes_when_the_standby_is_no_longer_needed(tmp_path, postgres_store):
    with absent_synchronous_standby(postgres_store) as connection:
        applying = Started(tmp_path, "apply", ["apply", "-f", seed_file(tmp_path), "--store", postgres_store])
        assert applying.waits_or_ends(saying=WAITS_FOR_COMMIT) == "waiting"
        connection.execute("ALTER SYSTEM RESET synchronous_standby_names")
        connection.execute("SELECT pg_reload_conf()")
        code, out, err = applying.finish()
    assert (code, out) == (0, SEED_LINES), err
    assert len(said(err)) == 1 and WAITS_FOR_COMMIT in err


def server_now(connection):
    """The server's clock now: the sessions a test starts after this began after it."""
    (now,) = connection.execute("SELECT clock_timestamp()").fetchone()
    return now


def kidx_sessions(connection, postgres_store, since) -> list[int]:
    """The server processes of the kidx sessions in the test's database that began after
    ``since``: the test's own. A database is reused from test to test, and the session of
    an earlier test's kidx, ended, may still be listed while its server process exits."""
    rows = connection.execute(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'kidx' AND datname = %s AND backend_start > %s",
        (postgres_store.database, since)).fetchall()
    return [pid for (pid,) in rows]


def _terminate_kidx(connection, postgres_store, since) -> int:
    ended = [pid for pid in kidx_sessions(connection, postgres_store, since)
             if connection.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]]
    return len(ended)


@pytest.mark.slow
def test_the_connection_lost_during_commit_is_an_unknown_outcome(tmp_path, postgres_store):
    """The server ends the session while COMMIT waits (here for the standby; the commit is
    then on the server's disk): exit 3, saying it may or may not be committed and how to
    check, no driver internals. Running the command again settles it. An earlier kidx
    session in the database (as one of a test before may still be listed) is not the
    test's to end."""
    import psycopg

    with absent_synchronous_standby(postgres_store) as connection, \
            psycopg.connect(postgres_store.url, application_name="kidx") as earlier:
        since = server_now(connection)
        applying = Started(tmp_path, "apply", ["apply", "-f", seed_file(tmp_path), "--store", postgres_store])
        assert applying.waits_or_ends(saying=WAITS_FOR_COMMIT) == "waiting"
        assert _terminate_kidx(connection, postgres_store, since) == 1
        code, out, err = applying.finish()
        assert earlier.execute("SELECT 1").fetchone() == (1,)
    assert (code, out) == (3, "")
    last = err.splitlines()[-1]
    assert last.startswith(f"error: lost the connection to the store at {postgres_store} while it committed (")
    assert last.endswith("): the write may or may not have been committed. Check with 'kidx get' or 'kidx history' "
                         "on that store, or run the command again: what is stored already is reported unchanged")
    assert "psycopg" not in err and "error ignored" not in err and "Traceback" not in err
    again = kidx("apply", "-f", seed_file(tmp_path), "--store", postgres_store)
    assert (again.returncode, again.stdout) == (0, SEED_LINES.replace(" created", " unchanged"))


@pytest.mark.slow
def test_a_second_ctrl_c_while_the_server_does_not_answer_gives_up_with_the_outcome_unknown(tmp_path, postgres_store):
    """The session's server process stopped (SIGSTOP) while COMMIT waits: the first Ctrl-C's
    cancel request cannot be served, so kidx would wait for ever; the second Ctrl-C gives
    up: exit 3, the outcome unknown, said so; no driver log lines."""
    import os

    with absent_synchronous_standby(postgres_store) as connection:
        since = server_now(connection)
        applying = Started(tmp_path, "apply", ["apply", "-f", seed_file(tmp_path), "--store", postgres_store])
        assert applying.waits_or_ends(saying=WAITS_FOR_COMMIT) == "waiting"
        (backend,) = kidx_sessions(connection, postgres_store, since)
        os.kill(backend, signal.SIGSTOP)
        try:
            applying.process.send_signal(signal.SIGINT)
            time.sleep(1.0)
            assert applying.process.poll() is None  # still waiting: the server could not be asked
            applying.process.send_signal(signal.SIGINT)
            code, out, err = applying.finish()
        finally:
            os.kill(backend, signal.SIGCONT)
    assert (code, out) == (3, ""), err
    assert said(err)[-1] == (
        f"error: interrupted while the store at {postgres_store} had not confirmed the commit: the write may or may "
        "not have been committed. Check with 'kidx get' or 'kidx history' on that store, or run the command again: "
        "what is stored already is reported unchanged")
    assert "psycopg" not in err and "Traceback" not in err and "interrupted after the write" not in err


def test_a_second_ctrl_c_is_raised_only_while_a_commit_is_unanswered():
    import os
    import threading

    from kidx.store import interrupts

    before = signal.getsignal(signal.SIGINT)
    interrupts.keep_until_released()
    interrupts.hold()
    asked = threading.Event()
    with interrupts.on_press(asked.set):
        os.kill(os.getpid(), signal.SIGINT)  # the first: recorded, the commit's callback called
        assert asked.wait(5)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)  # the second: raised
            time.sleep(5)
    os.kill(os.getpid(), signal.SIGINT)  # no commit in flight: recorded again, nothing raised
    assert interrupts.release() is False  # nothing committed: no "after the commit" note
    assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.parametrize("stage", ["objects", "catalog"])
def test_the_server_gone_before_the_commit_is_nothing_written_without_driver_internals(tmp_path, postgres_store,
                                                                                        stage):
    """The session ended while apply holds its write, before its objects are sent
    (``objects``) or once everything but COMMIT is (``catalog``): exit 1, nothing stored,
    and no "error ignored terminating <psycopg.Pipeline …>" from the driver."""
    with superuser(postgres_store) as connection:
        since = server_now(connection)
        applying, folder = paused(tmp_path, "apply", stage, ["apply", "-f", seed_file(tmp_path), "--store",
                                                                postgres_store])
        assert _terminate_kidx(connection, postgres_store, since) == 1
    resume(folder)
    code, out, err = applying.finish()
    assert (code, out) == (1, "")
    assert len(said(err)) == 1, err
    assert said(err)[0].startswith(f"error: lost the connection to the store at {postgres_store}: "), err
    assert "psycopg" not in err and "error ignored" not in err and "Pipeline" not in err
    assert not postgres_store.exists()

