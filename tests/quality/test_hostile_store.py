"""Hostile files in a folder store's object places: a FIFO, a link to /dev/zero, a folder.
No command waits on them or reads them forever; apply and fsck --repair put the object
back where that is safe, and say so where it is not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SEED_BUNDLE, SEED_PROTOCOL_DIGEST, SEED_RUN_DIGEST, SEED_RUN_NAME

from kidx.identity.canonical import digest_bytes


def object_path(store: Path, digest: str) -> Path:
    return store / "objects" / "sha256" / digest[7:9] / digest[9:]


def relative(digest: str) -> str:
    return f"objects/sha256/{digest[7:9]}/{digest[9:]}"


def run_kidx(*args: str, store: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """kidx as a process, killed (and the test failed) if it hangs."""
    environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "kidx", *args], capture_output=True, text=True, env=environment,
                          cwd=REPO, timeout=timeout)


@pytest.fixture
def seeded(kidx, store, tmp_path) -> tuple[Path, Path]:
    """The seed in a folder store, and a bundle exported from it."""
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    bundle = tmp_path / "backup.kidx.json"
    assert kidx("export", "-o", str(bundle)).code == 0
    return store, bundle


def test_apply_replaces_a_link_to_dev_zero_without_reading_it(seeded):
    store, _ = seeded
    place = object_path(store, SEED_RUN_DIGEST)
    place.unlink()
    place.symlink_to("/dev/zero")
    result = run_kidx("apply", "-f", str(SEED_BUNDLE), store=store, timeout=30)
    assert result.returncode == 0, result.stderr
    assert f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME} repaired" in result.stdout.splitlines()
    assert not place.is_symlink() and digest_bytes(place.read_bytes()) == SEED_RUN_DIGEST


def test_get_refuses_a_fifo_in_an_object_s_place_without_waiting(seeded):
    store, _ = seeded
    place = object_path(store, SEED_RUN_DIGEST)
    place.unlink()
    os.mkfifo(place)
    result = run_kidx("get", "run", SEED_RUN_NAME, "-o", "json", store=store, timeout=30)
    assert (result.returncode, result.stdout) == (1, "")
    assert "not a regular file (a FIFO)" in result.stderr and "Traceback" not in result.stderr


def test_fsck_repair_from_a_bundle_replaces_a_fifo(seeded):
    store, bundle = seeded
    place = object_path(store, SEED_PROTOCOL_DIGEST)
    place.unlink()
    os.mkfifo(place)
    result = run_kidx("fsck", "--repair", "--from-bundle", str(bundle), store=store, timeout=30)
    assert result.stdout.splitlines()[0] == (
        f"repaired missing-object {relative(SEED_PROTOCOL_DIGEST)}: written from {bundle}")
    assert "no problems found" in result.stdout.splitlines()
    assert result.returncode == 0, result.stdout + result.stderr
    assert digest_bytes(place.read_bytes()) == SEED_PROTOCOL_DIGEST


def test_fsck_repair_moves_a_folder_in_an_object_s_place_aside_and_writes_the_object(seeded):
    """A folder where an object file belongs is repaired as any damaged object is: the
    folder, with what it holds, goes to lost+found/, and the object is written from the bundle."""
    store, bundle = seeded
    place = object_path(store, SEED_PROTOCOL_DIGEST)
    place.unlink()
    place.mkdir()
    (place / "kept.txt").write_text("someone's file")
    result = run_kidx("fsck", "--repair", "--from-bundle", str(bundle), store=store, timeout=30)
    assert "Traceback" not in result.stderr
    kept = Path(store) / "lost+found" / (SEED_PROTOCOL_DIGEST.partition(":")[2] + ".folder")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == (
        f"repaired missing-object {relative(SEED_PROTOCOL_DIGEST)}: written from {bundle}; the folder in its place, "
        f"with everything in it, was moved to lost+found/{kept.name}")
    assert (kept / "kept.txt").read_text() == "someone's file"
    assert place.is_file()
    again = run_kidx("fsck", store=store, timeout=30)
    assert again.returncode == 0, again.stdout + again.stderr


def test_apply_over_a_folder_in_an_object_s_place_is_a_clear_error(seeded):
    store, _ = seeded
    place = object_path(store, SEED_PROTOCOL_DIGEST)
    place.unlink()
    place.mkdir()
    result = run_kidx("apply", "-f", str(SEED_BUNDLE), store=store, timeout=30)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"error: cannot write object {SEED_PROTOCOL_DIGEST}: {place} is a folder, not an object file (move it "
        "away; 'kidx fsck' lists it as a stray file)\n"
    )


def test_a_fifo_in_a_folder_of_manifests_is_passed_over(tmp_path, store):
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "seed.json").write_bytes(SEED_BUNDLE.read_bytes())
    os.mkfifo(folder / "waiting.yaml")
    result = run_kidx("apply", "-f", str(folder), "-o", "name", store=store, timeout=30)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == [
        "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward",
        f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME}",
        "executionenvironment.kernelindex.dev/liger-bench-nvidia-h100-80gb-hbm3",
    ]


@pytest.mark.parametrize("file", ["catalog.sqlite", "catalog.sqlite-wal"])
def test_a_fifo_in_the_catalog_s_place_is_refused_without_waiting(seeded, file):
    store, _ = seeded
    place = store / file
    if place.exists():
        place.unlink()
    os.mkfifo(place)
    expected = (f"error: cannot open the store at {store}: {place} is a FIFO, not a catalog file (nothing was read "
                "or changed)\n")
    for command in (("get", "runs"), ("apply", "-f", str(SEED_BUNDLE)), ("fsck",), ("export", "-o", "-")):
        result = run_kidx(*command, store=store, timeout=30)
        assert (result.returncode, result.stdout, result.stderr) == (1, "", expected), command
