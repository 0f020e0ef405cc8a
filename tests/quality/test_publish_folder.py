"""kidx publish and the folder it writes into: links, hidden files, a killed publish, two
publishers. Publish never writes or removes outside the folder, never removes a path its
own layout could not have written, and a later publish removes what a killed one left."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import SEED_RUN_NAME

pytest.importorskip("jinja2")

SEED_PAGE = "runs/6e7.html"


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


@pytest.fixture
def seeded(kidx, seed_bundle):
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    return kidx


def test_a_folder_of_the_layout_that_is_a_link_out_is_refused_before_anything_is_written(seeded, tmp_path):
    site, outside = tmp_path / "site", tmp_path / "outside"
    assert seeded("publish", str(site))[0] == 0
    outside.mkdir()
    (outside / "6e7.html").write_text("someone else's\n")
    (outside / "abc.html").write_text("someone else's too\n")
    for page in (site / "runs").iterdir():
        page.unlink()
    (site / "runs").rmdir()
    (site / "runs").symlink_to(outside, target_is_directory=True)
    before = files_under(site)
    code, out, err = seeded("publish", str(site))
    assert (code, out) == (1, "")
    assert err == (f"error: {site / 'runs'} is a symbolic link: kidx publish never writes or removes through a "
                   "link; remove the link (or publish into another folder)\n")
    assert files_under(outside) == {"6e7.html": b"someone else's\n", "abc.html": b"someone else's too\n"}
    assert files_under(site) == before


def test_a_page_that_is_a_link_is_replaced_and_its_target_left_alone(seeded, tmp_path):
    site, outside = tmp_path / "site", tmp_path / "precious.txt"
    assert seeded("publish", str(site))[0] == 0
    outside.write_text("precious\n")
    (site / "index.html").unlink()
    (site / "index.html").symlink_to(outside)
    (site / "runs" / "abc.html").symlink_to(outside)  # a page of the layout no publish wrote
    code, _, err = seeded("publish", str(site))
    assert code == 0, err
    assert outside.read_text() == "precious\n"
    assert not (site / "index.html").is_symlink() and "<html" in (site / "index.html").read_text()
    assert not os.path.lexists(site / "runs" / "abc.html")  # the link removed, not its target


def test_the_list_never_removes_hidden_or_foreign_paths(seeded, tmp_path):
    site = tmp_path / "site"
    (site / ".git").mkdir(parents=True)
    (site / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    (site / ".git" / "config").write_text("[core]\n")
    assert seeded("publish", str(site))[0] == 0
    (site / "CNAME").write_text("bench.example.org\n")
    (site / "runs" / "notes.md").write_text("mine\n")
    with (site / ".kidx-site").open("a") as listing:
        listing.write(".git/HEAD\n.git/config\nCNAME\nruns/notes.md\n../outside\n/etc/passwd\n")
    code, _, err = seeded("publish", str(site))
    assert code == 0, err
    assert err.endswith("removed 0\n")
    assert (site / ".git" / "HEAD").read_text() == "ref: refs/heads/gh-pages\n"
    assert (site / ".git" / "config").read_text() == "[core]\n"
    assert (site / "CNAME").read_text() == "bench.example.org\n"
    assert (site / "runs" / "notes.md").read_text() == "mine\n"


def test_pages_a_killed_publish_left_are_removed_by_the_next(seeded, tmp_path):
    site = tmp_path / "site"
    assert seeded("publish", str(site))[0] == 0
    listed = (site / ".kidx-site").read_text()
    # a publish killed after writing its pages, before its list: pages no list names
    stray = ["runs/abc.html", "groups/0123456789abcdef.json", "environments/" + "f" * 64 + ".html"]
    for path in stray:
        (site / path).parent.mkdir(exist_ok=True)
        (site / path).write_text("a run that must not be public\n")
    assert (site / ".kidx-site").read_text() == listed
    code, _, err = seeded("publish", str(site))
    assert code == 0, err
    assert err.endswith("removed 3\n")
    assert not any((site / path).exists() for path in stray)
    # and a deleted run's page, written by a killed publish and listed by none, goes as well
    assert seeded("delete", "run", SEED_RUN_NAME)[0] == 0
    (site / ".kidx-site").write_text("index.html\n")
    code, _, err = seeded("publish", str(site))
    assert code == 0, err
    assert not (site / SEED_PAGE).exists()


def test_a_second_publish_into_the_folder_is_refused_while_one_writes(seeded, tmp_path):
    fcntl = pytest.importorskip("fcntl")
    site = tmp_path / "site"
    assert seeded("publish", str(site))[0] == 0
    (site / "index.html").unlink()
    handle = os.open(site, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another publisher holds the folder
        before = files_under(site)
        code, out, err = seeded("publish", str(site))
        assert (code, out) == (1, "")
        assert err == (f"error: {site}: another kidx publish is writing into this folder; "
                       "try again when it is done\n")
        assert files_under(site) == before
    finally:
        os.close(handle)
    assert seeded("publish", str(site))[0] == 0
    assert (site / "index.html").is_file()


def test_a_first_publish_killed_before_its_list_leaves_a_site_the_next_finishes(seeded, kidx_process, tmp_path):
    """SIGKILL after the first publish wrote its pages, before its list, and a temporary page
    a killed write left: the next publish takes the folder, finishes it and removes that page."""
    site = tmp_path / "site"
    killed = kidx_process("publish", str(site), env={"KIDX_TEST_CRASH_AT": "publish-written"})
    assert killed.code == -9
    assert (site / "index.html").is_file() and (site / ".kidx-site").is_file()
    leftover = site / ".index.html.4242-0badc0de.tmp"
    leftover.write_text("half a page\n")
    code, _, err = seeded("publish", str(site))
    assert code == 0, err
    assert not leftover.exists()
    listed = (site / ".kidx-site").read_text().splitlines()
    assert "index.html" in listed and SEED_PAGE in listed
    assert sorted(str(path.relative_to(site)) for path in site.rglob("*") if path.is_file()) == sorted(
        [*listed, ".kidx-site"])
