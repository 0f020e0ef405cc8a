"""kidx publish writes each page through kidx.files' atomic helper: a temporary file of
its own beside the page, removed on failure; the next publish removes the temporary files
a killed one left, and nothing else."""

from __future__ import annotations

import json
import os
import re

import pytest

pytest.importorskip("jinja2")


def _hidden(site) -> list[str]:
    return sorted(str(p.relative_to(site)) for p in site.rglob(".*") if p.name != ".kidx-site")


def test_a_page_that_fails_to_be_written_leaves_no_temporary_file(kidx, tmp_path, seed_bundle, monkeypatch):
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    site = tmp_path / "site"
    replaced: list[str] = []
    real = os.replace

    def failing(source, target):
        replaced.append(os.path.basename(source))
        if str(target).endswith("regressions.html"):
            raise OSError(28, "No space left on device", source)
        return real(source, target)

    monkeypatch.setattr(os, "replace", failing)
    code, out, err = kidx("publish", str(site))
    assert (code, out) == (1, "")
    # the error names the page, never the temporary file
    assert err == f"error: No space left on device: {site / 'regressions.html'}\n"
    # each page had a temporary name of its own: its name, the process and 8 random hex digits
    assert len(replaced) == 3 and all(
        re.fullmatch(rf"\.(index|[0-9a-f]{{16}}|regressions)\.html\.{os.getpid()}-[0-9a-f]{{8}}\.tmp", name)
        for name in replaced), replaced
    assert _hidden(site) == []
    assert sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file()) == [
        "index.html", "kernels/" + replaced[1][1:].partition(".tmp")[0].rsplit(".", 1)[0]]


def test_the_next_publish_removes_what_a_killed_one_left_and_nothing_else(kidx, tmp_path, seed_bundle):
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    site = tmp_path / "site"
    assert kidx("publish", str(site))[0] == 0
    left = [site / ".index.html.4242-0123abcd.tmp", site / "runs" / ".6e7.html.4242-89abcdef.tmp",
            site / "..kidx-site.4242-00ff00ff.tmp"]
    mine = [site / ".notes.4242-0123abcd.tmp", site / "runs" / ".index.html.4242-0123abcd.tmp",
            site / ".index.html.tmp"]
    for path in left + mine:
        path.write_text("partial")
    code, _, err = kidx("publish", str(site))
    assert code == 0, err
    assert err.endswith("wrote 0, 8 unchanged, removed 0\n")
    assert not any(path.exists() for path in left)
    assert all(path.read_text() == "partial" for path in mine)  # not the name of a page where it lies
