"""kidx history: every state a name has had, and any one of them as a manifest."""

from __future__ import annotations

import contextlib
import io
import itertools
import json

import pytest

from kidx.identity import digest_of

# every test here runs on a folder store and on a PostgreSQL store (conftest.py)
pytestmark = pytest.mark.both_backends

API = "kernelindex.dev/v1alpha1"


def run_yaml(status: str = "passed", app: str = "web", title: str | None = None) -> str:
    title_line = f"  title: {title}\n" if title else ""
    return (f"apiVersion: {API}\nkind: BenchmarkRun\nmetadata:\n  name: r1\n{title_line}"
            f"  labels:\n    app: {app}\nspec:\n  status: {status}\n")


def digest(status: str) -> str:
    return digest_of({"apiVersion": API, "kind": "BenchmarkRun", "spec": {"status": status}})


PASSED, FAILED = digest("passed"), digest("failed")


def make_clock(monkeypatch) -> list[str]:
    """Each write gets the next second, so times tell revisions apart."""
    import kidx.operations.maintain.apply as apply_module
    import kidx.operations.maintain.delete as delete_module

    ticks = itertools.count(1)
    times: list[str] = []

    def now() -> str:
        times.append(f"2025-01-01T00:00:{next(ticks):02d}Z")
        return times[-1]

    monkeypatch.setattr(apply_module, "utc_now", now)
    monkeypatch.setattr(delete_module, "utc_now", now)
    return times


@pytest.fixture
def clock(monkeypatch):
    return make_clock(monkeypatch)


def _run_cli(args: list[str]) -> tuple[int, str]:
    from kidx.cli.app import run

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = run(args)
    return code, err.getvalue()


@pytest.fixture
def apply(kidx, tmp_path):
    def apply(text: str) -> None:
        path = tmp_path / "r1.yaml"
        path.write_text(text, encoding="utf-8")
        code, _, err = kidx("apply", "-f", str(path))
        assert code == 0, err

    return apply


@pytest.fixture(scope="module")
def lifecycle_store(tmp_path_factory):
    """create, label change, spec change, delete, re-create; built once, then only read."""
    folder = tmp_path_factory.mktemp("history")
    store = folder / "store"
    path = folder / "r1.yaml"
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
        monkeypatch.delenv("KIDX_STORE", raising=False)
        times = make_clock(monkeypatch)
        for text in (run_yaml(), run_yaml(app="api"), run_yaml(status="failed", app="api"), None, run_yaml()):
            if text is None:
                code, err = _run_cli(["delete", "run", "r1", "--store", str(store)])
            else:
                path.write_text(text, encoding="utf-8")
                code, err = _run_cli(["apply", "-f", str(path), "--store", str(store)])
            assert code == 0, err
    return store, times


@pytest.fixture
def lifecycle(kidx, lifecycle_store):
    """The lifecycle's write times; kidx runs against the lifecycle store."""
    store, times = lifecycle_store

    def invoke(*args, **kwargs):
        return kidx(*args, store_path=store, **kwargs)

    return invoke, times


def rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines()]


def test_history_table(lifecycle):
    kidx, times = lifecycle
    code, out, err = kidx("history", "run", "r1", "--no-headers")
    assert (code, err) == (0, "")
    recorded = [row.pop(4) for row in rows(out)]
    assert rows_without_time(out) == [
        ["1", "applied", "1", PASSED[:19], "created"],
        ["2", "applied", "2", PASSED[:19], "labels"],
        ["3", "applied", "3", FAILED[:19], "spec"],
        ["4", "deleted", "3", FAILED[:19], "deleted"],
        ["5", "applied", "1", PASSED[:19], "re-created"],
    ]
    assert recorded == times == sorted(set(times))


def rows_without_time(out: str) -> list[list[str]]:
    return [row[:4] + row[5:] for row in rows(out)]


def test_history_header(lifecycle):
    kidx, times = lifecycle
    code, out, err = kidx("history", "runs", "r1")
    assert (code, err) == (0, "")
    assert out.splitlines()[0].split() == ["REVISION", "EVENT", "GENERATION", "DIGEST", "RECORDED", "CHANGES"]
    assert len(out.splitlines()) == 6


def test_history_accepts_type_slash_name(lifecycle):
    kidx, times = lifecycle
    assert kidx("history", "run/r1", "--no-headers") == kidx("history", "benchmarkrun", "r1", "--no-headers")


def test_several_changes_at_once_are_all_named(kidx, apply, clock):
    apply(run_yaml())
    apply(run_yaml(status="failed", app="api", title="Renamed"))
    apply(run_yaml(status="failed", app="api", title="Renamed"))  # unchanged: no revision
    code, out, err = kidx("history", "run", "r1", "--no-headers")
    assert (code, err) == (0, "")
    assert rows_without_time(out) == [
        ["1", "applied", "1", PASSED[:19], "created"],
        ["2", "applied", "2", FAILED[:19], "spec,", "title,", "labels"],
    ]


def test_revision_prints_the_old_manifest_as_yaml(lifecycle):
    kidx, times = lifecycle
    assert kidx("history", "run", "r1", "--revision", "1") == (
        0,
        f"""\
apiVersion: {API}
kind: BenchmarkRun
metadata:
  creationTimestamp: '{times[0]}'
  digest: {PASSED}
  generation: 1
  labels:
    app: web
  name: r1
spec:
  status: passed
""",
        "",
    )


def test_revision_prints_the_old_manifest_as_json(lifecycle):
    kidx, times = lifecycle
    code, out, err = kidx("history", "run", "r1", "--revision", "3", "-o", "json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "apiVersion": API,
        "kind": "BenchmarkRun",
        "metadata": {"creationTimestamp": times[0], "digest": FAILED, "generation": 3,
                     "labels": {"app": "api"}, "name": "r1"},
        "spec": {"status": "failed"},
    }
    assert out.endswith("}\n") and out.startswith('{\n    "apiVersion"')
    code, out, _ = kidx("history", "run", "r1", "--revision", "2", "-o", "json")
    assert json.loads(out)["metadata"]["labels"] == {"app": "api"}
    assert json.loads(out)["metadata"]["digest"] == PASSED


def test_the_latest_revision_is_the_live_object(lifecycle):
    kidx, times = lifecycle
    """After a re-create the object is new: its creationTimestamp is the re-creation's."""
    live = kidx("get", "run", "r1", "-o", "yaml")
    assert live.code == 0
    assert f"creationTimestamp: '{times[-1]}'" in live.out
    assert kidx("history", "run", "r1", "--revision", "5") == live


def test_every_revision_before_a_delete_matches_what_get_showed(kidx, apply, clock):
    shown = []
    for text in (run_yaml(), run_yaml(app="api"), run_yaml(status="failed", app="api")):
        apply(text)
        shown.append(kidx("get", "run", "r1", "-o", "json").out)
    for number, expected in enumerate(shown, 1):
        assert kidx("history", "run", "r1", "--revision", str(number), "-o", "json") == (0, expected, "")


def test_revision_out_of_range(lifecycle):
    kidx, times = lifecycle
    assert kidx("history", "run", "r1", "--revision", "9") == (
        1, "", 'Error (NotFound): revision 9 of benchmarkruns.kernelindex.dev "r1" not found (it has 1 to 5)\n')
    code, out, err = kidx("history", "run", "r1", "--revision", "0")
    assert (code, out) == (1, "")
    assert err.startswith("error: ")


def test_unknown_name(lifecycle):
    kidx, times = lifecycle
    assert kidx("history", "run", "nope") == (1, "", 'Error (NotFound): benchmarkruns.kernelindex.dev "nope" not found\n')
    assert kidx("history", "run", "nope", "--revision", "1") == (
        1, "", 'Error (NotFound): benchmarkruns.kernelindex.dev "nope" not found\n')


def test_unknown_name_in_a_missing_store(kidx, store):
    assert kidx("history", "run", "nope") == (
        1, "", f"error: no store at {store} (--store): nothing has been written there (check the path, or write to "
               "it first, e.g. kidx apply -f)\n")
    assert not store.exists()


def test_deleted_names_keep_their_history(kidx, apply, clock):
    apply(run_yaml())
    assert kidx("delete", "run", "r1")[0] == 0
    assert kidx("get", "run", "r1") == (1, "", 'Error (NotFound): benchmarkruns.kernelindex.dev "r1" not found\n')
    code, out, err = kidx("history", "run", "r1", "--no-headers")
    assert (code, err) == (0, "")
    assert rows_without_time(out) == [
        ["1", "applied", "1", PASSED[:19], "created"],
        ["2", "deleted", "1", PASSED[:19], "deleted"],
    ]
    code, out, err = kidx("history", "run", "r1", "--revision", "2", "-o", "json")
    assert (code, err) == (0, "")
    assert json.loads(out)["metadata"]["labels"] == {"app": "web"}


def test_history_of_another_kind_is_separate(kidx, apply, clock):
    apply(run_yaml())
    assert kidx("history", "workload", "r1") == (1, "", 'Error (NotFound): workloads.kernelindex.dev "r1" not found\n')


@pytest.mark.parametrize(
    "args, message",
    [
        (("history", "run"), "error: history needs exactly one object: TYPE NAME or TYPE/NAME\n"),
        (("history", "run", "a", "b"), "error: history needs exactly one object: TYPE NAME or TYPE/NAME\n"),
        (("history", "run", "r1", "-o", "json"), "error: -o needs --revision\n"),
        (("history", "run", "r1", "--revision", "1", "-o", "name"),
         'error: unable to match a printer suitable for the output format "name", allowed formats are: json,yaml\n'),
    ],
)
def test_usage_errors(lifecycle, args, message):
    kidx, times = lifecycle
    assert kidx(*args) == (1, "", message)
