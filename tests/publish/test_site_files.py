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
    # (the first, the site's list, empty, written before the first page; the last, the list
    # written after the failure)
    assert len(replaced) == 5 and all(
        re.fullmatch(rf"\.(index|[0-9a-f]{{16}}|regressions)\.html\.{os.getpid()}-[0-9a-f]{{8}}\.tmp", name)
        for name in replaced[1:4]), replaced
    assert all(re.fullmatch(rf"\.\.kidx-site\.{os.getpid()}-[0-9a-f]{{8}}\.tmp", replaced[index])
               for index in (0, 4)), replaced
    assert _hidden(site) == []
    written = ["index.html", "kernels/" + replaced[2][1:].partition(".tmp")[0].rsplit(".", 1)[0]]
    assert sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file()) == [".kidx-site", *written]
    # the list names the pages written, so the folder is still a site that the next publish finishes
    assert (site / ".kidx-site").read_text() == "".join(f"{path}\n" for path in written)


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


def _files(site) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _in_workers(monkeypatch, processes: int = 2) -> None:
    """kidx publish shares the pages out among worker processes however small the site."""
    from kidx.publish import site

    monkeypatch.setattr(site, "processes_for", lambda runs: processes)


def test_worker_processes_write_the_same_bytes_as_one_process(kidx, history_store, tmp_path, monkeypatch):
    one, several = tmp_path / "one", tmp_path / "several"
    options = ["--baseline", "transformers", "--release-label", "liger_version"]
    first = kidx("publish", str(one), *options, store_path=history_store)
    assert first.code == 0, first.err
    _in_workers(monkeypatch)
    assert kidx("publish", str(several), *options, store_path=history_store) == first._replace(
        err=first.err.replace(str(one), str(several)))
    assert _files(several) == _files(one)
    assert _hidden(several) == []
    code, _, err = kidx("publish", str(several), *options, store_path=history_store)
    assert (code, err) == (0, f"{several}: 3017 files (4421 runs, 314 group families, 178 series); "
                              "wrote 0, 3017 unchanged, removed 0\n")


def test_a_system_that_cannot_fork_the_workers_gets_the_site_from_one_process(kidx, history_store, tmp_path,
                                                                              monkeypatch):
    import multiprocessing.context

    one, unforked = tmp_path / "one", tmp_path / "unforked"
    first = kidx("publish", str(one), store_path=history_store)
    assert first.code == 0, first.err
    forks = []

    def cannot_fork(self, *args, **kwargs):
        forks.append(os.getpid())
        raise BlockingIOError(11, "Resource temporarily unavailable")  # fork's EAGAIN: out of processes

    monkeypatch.setattr(multiprocessing.context.ForkContext, "Pool", cannot_fork)
    _in_workers(monkeypatch)
    assert kidx("publish", str(unforked), store_path=history_store) == first._replace(
        err=first.err.replace(str(one), str(unforked)))
    assert len(forks) == 2  # the process beside the model, then the page workers: each done here instead
    assert _files(unforked) == _files(one)
    assert _hidden(unforked) == []


def test_a_page_that_fails_in_a_worker_stops_the_publish_with_its_error(kidx, tmp_path, seed_bundle, monkeypatch):
    assert kidx("apply", "-f", "-", stdin=json.dumps(seed_bundle))[0] == 0
    site = tmp_path / "site"
    real = os.replace
    tests_process = os.getpid()

    def failing(source, target):
        if str(target).endswith("regressions.html"):
            # written by a worker, not by the test's process (the temporary file's name says which)
            assert os.getpid() != tests_process
            assert re.fullmatch(rf"\.regressions\.html\.{os.getpid()}-[0-9a-f]{{8}}\.tmp", os.path.basename(source))
            raise OSError(28, "No space left on device", source)
        return real(source, target)

    monkeypatch.setattr(os, "replace", failing)  # the workers are forked: they have it too
    _in_workers(monkeypatch)
    code, out, err = kidx("publish", str(site))
    assert (code, out) == (1, "")
    assert err == f"error: No space left on device: {site / 'regressions.html'}\n"  # the page, never a traceback
    assert _hidden(site) == []  # no temporary file left, and no list: the next publish finishes the site
    assert not (site / "regressions.html").exists()
    monkeypatch.setattr(os, "replace", real)
    code, _, err = kidx("publish", str(site))
    assert code == 0, err
    assert kidx("publish", str(tmp_path / "fresh"))[0] == 0
    assert _files(site) == _files(tmp_path / "fresh")  # the next publish makes the whole site


def test_workers_are_forked_only_where_forking_is_safe(monkeypatch):
    from kidx.publish import workers

    assert workers.processes_for(workers.PARALLEL_RUNS - 1) == 1  # a small site: no workers
    monkeypatch.setattr(workers.multiprocessing, "get_all_start_methods", lambda: ["fork", "spawn", "forkserver"])
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr(workers.sys, "platform", "linux")
    assert workers.processes_for(workers.PARALLEL_RUNS) == 3
    monkeypatch.setattr(workers.sys, "platform", "darwin")  # fork exists, but Python calls it unsafe there
    assert workers.processes_for(workers.PARALLEL_RUNS) == 1
    monkeypatch.setattr(workers.sys, "platform", "linux")
    monkeypatch.setattr(workers.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert workers.processes_for(workers.PARALLEL_RUNS) == 1
