"""push and pull against concurrent writers on the destination, made to interleave every time.

A race is reproduced deterministically, not by timing: the first command is stopped at a
named stage (``KIDX_TEST_PAUSE_AT``, kidx/store/faults.py) holding whatever it holds
there, the second command is started in that gap and runs until it either finishes or
says that it waits for the store's write lock, and only then does the first go on. So
each test checks the interleaving the adversarial round found (gc between push's
objects and its names; an apply between push's decision and its write; a second push
deciding before the first has written), on a folder destination and on PostgreSQL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli.test_push import SEED_CREATED, SEED_UNCHANGED, state
from conftest import LIGER_DATA, REPO, SEED_BUNDLE, SEED_RUN_NAME

RUN = "benchmarkrun.kernelindex.dev"
CUTEDSL = str(LIGER_DATA / "all_benchmark_data_cutedsl.csv")
WAITING = "waiting for another writer to finish with the store…"
PUSH_CONFIGURED = SEED_UNCHANGED.replace(f"{SEED_RUN_NAME} unchanged", f"{SEED_RUN_NAME} configured")
APPLY_CONFIGURED = (f"{RUN}/{SEED_RUN_NAME} configured\n"
                    "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward unchanged\n"
                    "executionenvironment.kernelindex.dev/liger-bench-nvidia-h100-80gb-hbm3 unchanged\n")


@pytest.fixture
def destination(folder_or_postgres):
    return folder_or_postgres


def environment(**extra: str) -> dict:
    found = {**os.environ, "NO_COLOR": "1", **extra}
    for name in ("KIDX_STORE", "KIDX_TEST_CRASH_AT", "KIDX_TEST_PAUSE_AT", "KIDX_TEST_PAUSE_DIR"):
        if name not in extra:
            found.pop(name, None)
    return found


def kidx(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kidx", *map(str, args)], input=stdin, capture_output=True,
                          text=True, cwd=REPO, env=environment(), timeout=300)


class Started:
    """A kidx process running in the background, its output in files (read while it runs)."""

    def __init__(self, tmp_path: Path, label: str, args, **env: str):
        self.out, self.err = tmp_path / f"{label}.out", tmp_path / f"{label}.err"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kidx", *map(str, args)], stdout=out, stderr=err, cwd=REPO,
                env=environment(**env),
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # Ctrl-C as in a shell
            )

    def finish(self) -> tuple[int, str, str]:
        code = self.process.wait(timeout=300)
        return code, self.out.read_text(), self.err.read_text()

    def waits_or_ends(self, limit: float = 120, saying: str = WAITING) -> str:
        """Block until the process says it waits for the write lock (``saying`` on stderr:
        "waiting") or ends ("ended")."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if saying in self.err.read_text():
                return "waiting"
            if self.process.poll() is not None:
                return "ended"
            time.sleep(0.02)
        raise AssertionError(f"neither waited nor ended: {self.err.read_text()}")


def paused(tmp_path: Path, label: str, stage: str, args) -> tuple[Started, Path]:
    """Start kidx stopped at ``stage``; returns once it is there (and the folder to resume it)."""
    folder = tmp_path / f"pause-{label}"
    folder.mkdir()
    started = Started(tmp_path, label, args, KIDX_TEST_PAUSE_AT=stage, KIDX_TEST_PAUSE_DIR=str(folder))
    deadline = time.monotonic() + 120
    while not (folder / stage).exists():
        if started.process.poll() is not None:
            raise AssertionError(f"ended before {stage}: {started.finish()}")
        assert time.monotonic() < deadline, f"never reached {stage}"
        time.sleep(0.02)
    return started, folder


def resume(folder: Path) -> None:
    (folder / "resume").touch()


def fsck_is_clean(store) -> None:
    completed = kidx("fsck", "-o", "json", "--store", store)
    report = json.loads(completed.stdout)
    assert (completed.returncode, report["problems"]) == (0, []), report["problems"]


def seed_manifests(median: int | None = None) -> str:
    bundle = json.loads(SEED_BUNDLE.read_text(encoding="utf-8"))
    if median is not None:
        bundle["run"]["spec"]["timing"]["latencyNs"]["median"] = median
    return json.dumps(bundle)


def applied(store, median: int | None = None) -> None:
    completed = kidx("apply", "-f", "-", "--store", store, stdin=seed_manifests(median))
    assert completed.returncode == 0, completed.stderr


def generations(store, name: str = SEED_RUN_NAME) -> list[int]:
    revisions = state(store)["revisions"][("BenchmarkRun", name)]
    return [revision.generation for revision in revisions]


def medians(store, name: str = SEED_RUN_NAME) -> int:
    completed = kidx("get", "run", name, "-o", "jsonpath={.spec.timing.latencyNs.median}", "--store", store)
    return int(completed.stdout)


@pytest.fixture
def source(tmp_path) -> Path:
    """A folder store with the seed and the CuTe DSL Liger runs (about 300 names)."""
    path = tmp_path / "source"
    applied(path)
    completed = kidx("import", "liger", CUTEDSL, "--store", path)
    assert completed.returncode == 0, completed.stderr
    return path


# --- gc on the destination while push copies into it ------------------------------------------


@pytest.mark.parametrize("stage", ["objects", "commit"])
def test_gc_during_a_push_never_leaves_a_name_without_its_object(tmp_path, source, destination, stage):
    """Push stopped just after writing its first object (``objects``), or just after its
    first commit (``commit``: where the objects alone used to be committed): a gc run then
    either waits for push's write lock or finds every object named; push then ends, and
    the destination holds every name with its object."""
    applied(destination)  # the destination exists and has something of its own for gc to look at
    pushing, folder = paused(tmp_path, "push", stage, ["push", destination, "--store", source])
    collecting = Started(tmp_path, "gc", ["gc", "--store", destination])
    seen = collecting.waits_or_ends()
    assert seen == ("waiting" if stage == "objects" else "ended")
    resume(folder)
    code, _, err = pushing.finish()
    assert code == 0, err
    code, _, err = collecting.finish()
    assert code == 0, err
    fsck_is_clean(destination)
    assert names(destination) == names(source)
    assert kidx("push", destination, "--store", source).stderr.endswith(" 0 names changed, 187 unchanged\n")


def names(store) -> dict:
    return {key: (entry.digest, entry.labels) for key, entry in state(store)["entries"].items()}


# --- an apply on the destination while push decides ---------------------------------------------


def test_an_apply_holding_the_lock_makes_the_push_a_conflict_not_a_lost_update(tmp_path, destination):
    """apply stopped with its change made but not committed (holding the write lock); a push
    of another change to the same name waits for the lock, then sees the apply's change:
    a conflict, and nothing of the push is written. The apply's value stays on top."""
    source = tmp_path / "source"
    applied(source)
    assert kidx("push", destination, "--store", source).returncode == 0
    applied(source, median=111)
    _write(tmp_path, 222)
    applying, folder = paused(tmp_path, "apply", "catalog",
                              ["apply", "-f", tmp_path / "mine.json", "--store", destination])
    pushing = Started(tmp_path, "push", ["push", destination, "--store", source])
    seen = pushing.waits_or_ends()
    resume(folder)
    code, out, err = applying.finish()
    assert (code, out) == (0, APPLY_CONFIGURED), err
    code, out, err = pushing.finish()
    assert code == 1 and out == ""
    assert f"{RUN}/{SEED_RUN_NAME} changed in both stores since they last agreed" in err
    assert "nothing was copied" in err
    assert medians(destination) == 222
    assert generations(destination) == [1, 2]
    fsck_is_clean(destination)
    assert seen == "waiting"  # the push decided only once it held the lock


def test_a_push_holding_the_lock_makes_the_apply_wait_and_land_on_top(tmp_path, destination):
    """push stopped once it has decided, holding the destination's write lock; an apply of
    another value waits, then lands as the next generation: both changes are kept, in order."""
    source = tmp_path / "source"
    applied(source)
    assert kidx("push", destination, "--store", source).returncode == 0
    applied(source, median=111)
    pushing, folder = paused(tmp_path, "push", "planned", ["push", destination, "--store", source])
    _write(tmp_path, 222)
    applying = Started(tmp_path, "apply", ["apply", "-f", tmp_path / "mine.json", "--store", destination])
    seen = applying.waits_or_ends()
    resume(folder)
    code, out, err = pushing.finish()
    assert (code, out) == (0, PUSH_CONFIGURED), err
    code, out, err = applying.finish()
    assert (code, out) == (0, APPLY_CONFIGURED), err
    assert medians(destination) == 222
    assert generations(destination) == [1, 2, 3]
    fsck_is_clean(destination)
    assert seen == "waiting"


def _write(tmp_path: Path, median: int) -> None:
    (tmp_path / "mine.json").write_text(seed_manifests(median), encoding="utf-8")


# --- two pushes of one source at once -----------------------------------------------------------


def test_two_pushes_at_once_serialise_and_record_each_revision_once(tmp_path, destination):
    source = tmp_path / "source"
    applied(source)
    applied(source, median=111)  # two revisions to copy
    first, folder = paused(tmp_path, "first", "planned", ["push", destination, "--store", source])
    second = Started(tmp_path, "second", ["push", destination, "--store", source])
    seen = second.waits_or_ends()
    resume(folder)
    code, out, err = first.finish()
    assert (code, out) == (0, SEED_CREATED), err
    code, out, err = second.finish()
    assert (code, out) == (0, SEED_UNCHANGED), err
    assert err.endswith(": copied 0 objects; 0 names changed, 3 unchanged\n")
    assert generations(destination) == [1, 2]
    assert state(destination)["revisions"] == state(source)["revisions"]
    fsck_is_clean(destination)
    assert seen == "waiting"
