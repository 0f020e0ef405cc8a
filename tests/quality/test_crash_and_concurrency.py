"""The store under concurrent writers and under SIGKILL (docs/design.md §3).

- Two ``kidx apply`` processes writing at once must both succeed, or one must fail cleanly
  having written nothing.
- A write is objects first, then one catalog transaction: a process killed at any moment
  leaves a store that every command can still use, holding either none or all of the
  batch, and whose catalog refers only to object files that re-hash to their names.
- Concurrent applies of one name serialise: the final state is one of them and the other
  is kept as a revision.

Everything here runs kidx as real processes (``python -m kidx``), as a shell would.
"""

from __future__ import annotations

import copy
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

from kidx.identity import digest_of
from kidx.store.store import Store

SEED = json.loads((REPO / "docs" / "examples" / "seed-bundle.json").read_text(encoding="utf-8"))
RUN_KIND = "BenchmarkRun"
TEMPORARY = re.compile(r"^\.")  # object writers' temporary files are hidden (".tmp-…")


# --- processes ---------------------------------------------------------------------------


def _environment(store: Path) -> dict:
    return {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1"}


def kidx_run(store: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kidx", *args],
        capture_output=True,
        text=True,
        env=_environment(store),
        cwd=REPO,
        timeout=timeout,
    )


class Background:
    """``python -m kidx …`` started now; output goes to files, so a full pipe never blocks it
    (a writer blocked on stderr while holding the catalog's lock would stall the other one)."""

    def __init__(self, store: Path, folder: Path, label: str, *args: str):
        self.out_path, self.err_path = folder / f"{label}.out", folder / f"{label}.err"
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kidx", *args], stdout=out, stderr=err, env=_environment(store), cwd=REPO
            )

    def wait(self, timeout: float = 120) -> tuple[int, str, str]:
        code = self.process.wait(timeout=timeout)
        return code, self.out_path.read_text(encoding="utf-8"), self.err_path.read_text(encoding="utf-8")


def assert_ok(completed: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in completed.stderr, completed.stderr
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


# --- batches -----------------------------------------------------------------------------


def make_run(name: str, median: int) -> dict:
    run = copy.deepcopy(SEED["run"])
    run["metadata"]["name"] = name
    run["metadata"]["labels"] = {"batch": name.rsplit("-", 1)[0]}
    run["spec"]["timing"]["latencyNs"]["median"] = median
    run["spec"]["sourceNative"]["externalId"] = name
    return run


def write_batch(path: Path, prefix: str, count: int, extra: list[dict] = ()) -> list[str]:
    """A List of the seed's protocol and environment (shared by every batch) and ``count`` runs."""
    runs = [make_run(f"{prefix}-{index:05d}", 1000 + index) for index in range(count)]
    items = [SEED["protocol"], SEED["environment"], *extra, *runs]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return [run["metadata"]["name"] for run in runs]


def run_names(store: Path) -> list[str]:
    out = assert_ok(kidx_run(store, "get", "runs", "-o", "name"))
    prefix = "benchmarkrun.kernelindex.dev/"
    lines = out.splitlines()
    assert all(line.startswith(prefix) for line in lines), lines[:5]
    return [line[len(prefix) :] for line in lines]


# --- the consistency check ---------------------------------------------------------------


def assert_consistent(store_path: Path) -> None:
    """The catalog is intact, refers only to objects (files or packed) that re-hash to their
    names, and every object file is complete; temporary files are never taken for objects."""
    connection = sqlite3.connect(store_path / "catalog.sqlite")
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        connection.close()
    store = Store(store_path)
    catalog = store.catalog()
    try:
        as_text = catalog.dialect.digest_text  # the catalog's stored form of a digest as "sha256:…"
        referenced = {as_text(row[0]) for row in catalog.connection.execute("SELECT digest FROM objects")}
        referenced |= {
            as_text(row[0])
            for row in catalog.connection.execute("SELECT digest FROM revisions WHERE digest IS NOT NULL")
        }
    finally:
        store.close()
    listed = set(store.objects.digests())
    for digest in referenced:
        assert store.objects.exists(digest), f"catalog refers to a missing object {digest}"
        assert store.objects.verify(digest), f"object {digest} does not hash to its name"
    assert referenced <= listed
    files = [path for path in store.objects.backend.root.rglob("*") if path.is_file()]
    for path in files:
        if TEMPORARY.match(path.name):
            continue  # a killed writer's leftover: never a digest, never listed
        digest = "sha256:" + path.parent.name + path.name
        assert digest in listed, f"stray file {path}"
        assert store.objects.verify(digest), f"{path} is incomplete or corrupt"
    # what digests() lists are exactly the well-formed object files and the packed objects
    pack = store_path / "objects" / "packed.sqlite"
    packed: set[str] = set()
    if pack.exists():
        connection = sqlite3.connect(pack)
        try:  # a pack whose creation the kill cut short has no table yet: it holds nothing
            if connection.execute("SELECT 1 FROM sqlite_master WHERE name='objects'").fetchone():
                packed = {"sha256:" + row[0].hex() for row in connection.execute("SELECT digest FROM objects")}
        finally:
            connection.close()
    loose = {"sha256:" + path.parent.name + path.name for path in files if not TEMPORARY.match(path.name)}
    assert listed == loose | packed


@pytest.fixture
def seeded_store(tmp_path) -> Path:
    """A store holding the seed bundle, made by a real ``kidx apply``."""
    store = tmp_path / "seeded"
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    assert_ok(kidx_run(store, "apply", "-f", str(seed)))
    return store


# --- two writers at once -----------------------------------------------------------------


@pytest.mark.parametrize("start", ["fresh-store", "existing-store"])
def test_two_writers_at_once_both_land(start, tmp_path, seeded_store):
    count = 300
    rounds = 2
    for round_number in range(rounds):
        folder = tmp_path / f"round{round_number}"
        folder.mkdir()
        store = folder / "store"
        if start == "existing-store":
            shutil.copytree(seeded_store, store)
        batches = {}
        for label in ("alpha", "beta"):
            batch = folder / f"{label}.json"
            batches[label] = (batch, write_batch(batch, f"{label}{round_number}", count))
        writers = {
            label: Background(store, folder, label, "apply", "-f", str(batch)) for label, (batch, _) in batches.items()
        }
        results = {label: writer.wait() for label, writer in writers.items()}

        present = set(run_names(store))
        succeeded = []
        for label, (code, out, err) in results.items():
            names = batches[label][1]
            assert "Traceback" not in err, err
            if code == 0:
                succeeded.append(label)
                assert set(names) <= present
                lines = out.splitlines()
                assert len(lines) == count + 2
                assert sum(line.endswith(" created") for line in lines) >= count
            else:  # allowed: a clean failure that wrote nothing
                assert code == 1 and err.startswith("error: "), err
                assert not set(names) & present
        assert succeeded, results
        # the shared protocol was created by exactly one of them (the other saw it unchanged)
        protocol_lines = [
            line
            for code, out, _ in results.values()
            if code == 0
            for line in out.splitlines()
            if line.startswith("benchmarkprotocol.")
        ]
        if start == "fresh-store" and len(succeeded) == 2:
            assert sorted(line.rsplit(" ", 1)[1] for line in protocol_lines) == ["created", "unchanged"]
        expected = sum(len(batches[label][1]) for label in succeeded) + (1 if start == "existing-store" else 0)
        assert len(present) == expected
        assert_consistent(store)
        # both batches' labels are indexed: a selector finds each batch whole
        for label in succeeded:
            out = assert_ok(kidx_run(store, "get", "runs", "-l", f"batch={label}{round_number}", "-o", "name"))
            assert len(out.splitlines()) == count


def test_same_name_applied_concurrently_keeps_both_as_revisions(tmp_path):
    rounds = 3
    for round_number in range(rounds):
        folder = tmp_path / f"round{round_number}"
        folder.mkdir()
        store = folder / "store"
        contested = {label: make_run("contested-run", median) for label, median in (("alpha", 111), ("beta", 222))}
        digests = {label: digest_of(run) for label, run in contested.items()}
        assert digests["alpha"] != digests["beta"]
        writers = {}
        for label, run in contested.items():
            batch = folder / f"{label}.json"
            # padding runs with names of their own, so that both processes are busy at once
            write_batch(batch, f"{label}-pad", 100, extra=[run])
            writers[label] = Background(store, folder, label, "apply", "-f", str(batch))
        results = {label: writer.wait() for label, writer in writers.items()}
        actions = {}
        for label, (code, out, err) in results.items():
            assert code == 0 and "Traceback" not in err, err
            (line,) = [line for line in out.splitlines() if "/contested-run " in line]
            actions[label] = line.rsplit(" ", 1)[1]
        assert sorted(actions.values()) == ["configured", "created"], actions
        first = next(label for label, action in actions.items() if action == "created")
        last = next(label for label, action in actions.items() if action == "configured")

        store_object = Store(store)
        try:
            catalog = store_object.catalog()
            entry = catalog.get(RUN_KIND, "contested-run")
            revisions = catalog.revisions(RUN_KIND, "contested-run")
        finally:
            store_object.close()
        # the final state is the later writer's; the earlier one is kept as a revision
        assert entry.digest == digests[last]
        assert entry.generation == 2
        assert [(r.revision, r.event, r.digest, r.generation) for r in revisions] == [
            (1, "applied", digests[first], 1),
            (2, "applied", digests[last], 2),
        ]
        shown = json.loads(assert_ok(kidx_run(store, "get", "run", "contested-run", "-o", "json")))
        assert shown["spec"]["timing"]["latencyNs"]["median"] == contested[last]["spec"]["timing"]["latencyNs"]["median"]
        assert len(run_names(store)) == 201
        assert_consistent(store)


# --- SIGKILL during apply ----------------------------------------------------------------

BIG = 2500  # runs in the batch that gets killed
TRIALS = 10


@pytest.mark.slow
def test_sigkill_during_apply_leaves_a_usable_all_or_nothing_store(tmp_path, seeded_store):
    started = time.monotonic()
    big = tmp_path / "big.json"
    names = write_batch(big, "big", BIG)
    small = tmp_path / "small.json"
    small_names = write_batch(small, "small", 5)

    # calibrate: how long an uninterrupted apply of the batch takes here
    reference = tmp_path / "reference"
    shutil.copytree(seeded_store, reference)
    begin = time.monotonic()
    assert_ok(kidx_run(reference, "apply", "-f", str(big)))
    duration = time.monotonic() - begin
    assert len(run_names(reference)) == BIG + 1
    assert_consistent(reference)

    # kill from just after the start to just past the end of an uninterrupted apply
    latest = min(max(0.3, 1.15 * duration), 3.0)
    generator = random.Random(20250807)
    # stratified: one random moment in each tenth of the window, so every phase gets hit
    delays = [0.05 + (latest - 0.05) * (trial + generator.random()) / TRIALS for trial in range(TRIALS)]
    outcomes, orphans = [], []  # all or nothing; object files the catalog does not refer to
    for trial, delay in enumerate(delays):
        store = tmp_path / f"trial{trial}"
        shutil.copytree(seeded_store, store)
        writer = Background(store, tmp_path, f"trial{trial}", "apply", "-f", str(big))
        time.sleep(delay)
        writer.process.send_signal(signal.SIGKILL)
        code = writer.process.wait(timeout=60)
        assert code in (-signal.SIGKILL, 0), code  # 0: it finished before the signal

        present = run_names(store)
        assert len(present) in (1, BIG + 1), f"trial {trial} (kill at {delay:.2f}s): {len(present)} runs"
        outcomes.append(len(present) == BIG + 1)
        if code == 0:
            assert outcomes[-1], "an apply that exited 0 must have stored the whole batch"
        assert_consistent(store)
        orphans.append(len(set(Store(store).objects.digests())) - (len(present) + 2))
        assert_ok(kidx_run(store, "get", "all"))
        described = names[BIG // 2] if outcomes[-1] else present[0]
        assert described in assert_ok(kidx_run(store, "describe", "run", described))
        # the store still takes writes; nothing is left locked
        out = assert_ok(kidx_run(store, "apply", "-f", str(small), timeout=30))
        assert sum(line.endswith(" created") for line in out.splitlines()) == len(small_names)
        assert len(run_names(store)) == len(present) + len(small_names)
        assert_consistent(store)

    print(f"apply of {BIG} runs: {duration:.2f}s; kills at", ", ".join(
        f"{delay:.2f}s:{'all' if whole else 'none'}+{orphan}" for delay, whole, orphan in zip(delays, outcomes, orphans, strict=True)))
    assert not all(outcomes), f"no kill landed before the commit (delays {delays}, apply {duration:.2f}s)"
    assert time.monotonic() - started < 90


def test_processes_creating_one_new_store_at_once_all_succeed(tmp_path):
    """Switching a new catalog to WAL takes a lock SQLite does not wait for: kidx must."""
    failures = []
    for round_ in range(8):
        store = tmp_path / f"store-{round_}"
        processes = [
            subprocess.Popen(
                [sys.executable, "-m", "kidx", "apply", "-f", str(REPO / "docs" / "examples" / "seed-bundle.json"), "--store", str(store)],
                cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )
            for _ in range(3)
        ]
        for process in processes:
            out, err = process.communicate(timeout=120)
            if process.returncode != 0:
                failures.append(err.decode())
    assert failures == []


def test_ctrl_c_during_apply_says_interrupted_and_keeps_all_or_nothing(tmp_path, seeded_store):
    batch = tmp_path / "big.json"
    names = write_batch(batch, "interrupted", 6000)
    before = run_names(seeded_store)
    process = subprocess.Popen(
        [sys.executable, "-m", "kidx", "apply", "-f", str(batch)],
        cwd=REPO, env=_environment(seeded_store), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in an interactive shell
    )
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert (process.returncode, err.decode()) == (130, "error: interrupted\n")
    after = run_names(seeded_store)
    assert after == before or sorted(after) == sorted(before + names)
    assert_consistent(seeded_store)
