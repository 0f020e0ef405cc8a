"""kidx diff: a native unified diff of YAML, LIVE against MERGED, exit 0/1/2 (conventions §7)."""

from __future__ import annotations

import pytest

from kidx.identity import digest_of

# every test here runs on a folder store and on a PostgreSQL store (conftest.py)
pytestmark = pytest.mark.both_backends

NOW = "2025-01-02T03:04:05Z"
API = "kernelindex.dev/v1alpha1"
FILE = "kernelindex.dev.v1alpha1.BenchmarkRun..r1"
HEADER = f"diff -u -N LIVE/{FILE} MERGED/{FILE}\n--- LIVE/{FILE}\n+++ MERGED/{FILE}\n"


def run_yaml(median: int = 200, tier: str = "fe", name: str = "r1") -> str:
    return f"""\
apiVersion: {API}
kind: BenchmarkRun
metadata:
  name: {name}
  labels:
    app: web
    tier: {tier}
spec:
  status: passed
  timing:
    latencyNs:
      median: {median}
    primaryStatistic: median
"""


def run_digest(median: int = 200) -> str:
    return digest_of({"apiVersion": API, "kind": "BenchmarkRun", "spec": {
        "status": "passed", "timing": {"latencyNs": {"median": median}, "primaryStatistic": "median"}}})


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch):
    import kidx.operations.maintain.apply as apply_module

    monkeypatch.setattr(apply_module, "utc_now", lambda: NOW)


OTHER = f"""\
apiVersion: {API}
kind: BenchmarkProtocol
metadata:
  name: other
spec:
  harness: {{name: h}}
  measurement: {{timer: cuda_events}}
"""


@pytest.fixture
def existing_store(kidx, tmp_path):
    """The test's store, made to exist (holding one protocol the tests do not diff): diff
    of a store named that does not exist is an error."""
    path = tmp_path / "other.yaml"
    path.write_text(OTHER, encoding="utf-8")
    assert kidx("apply", "-f", str(path))[0] == 0


@pytest.fixture
def write(tmp_path):
    def write(text: str, name: str = "r1.yaml"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


def test_new_object_is_all_additions(kidx, write, existing_store):
    assert kidx("diff", "-f", write(run_yaml())) == (
        1,
        HEADER
        + "@@ -0,0 +1,16 @@\n"
        + "+apiVersion: kernelindex.dev/v1alpha1\n"
        + "+kind: BenchmarkRun\n"
        + "+metadata:\n"
        + f"+  creationTimestamp: '{NOW}'\n"
        + f"+  digest: {run_digest()}\n"
        + "+  generation: 1\n"
        + "+  labels:\n"
        + "+    app: web\n"
        + "+    tier: fe\n"
        + "+  name: r1\n"
        + "+spec:\n"
        + "+  status: passed\n"
        + "+  timing:\n"
        + "+    latencyNs:\n"
        + "+      median: 200\n"
        + "+    primaryStatistic: median\n",
        "",
    )


def test_diff_writes_nothing(kidx, write, store):
    assert kidx("diff", "-f", write(run_yaml()))[0] == 2  # the store named does not exist
    assert kidx("get", "runs", "-o", "name").err.startswith(f"error: no store at {store} (--store)")
    assert not store.exists()


def test_several_new_objects_each_get_a_diff(kidx, write, existing_store):
    code, out, err = kidx("diff", "-f", write(run_yaml(name="r1") + "---\n" + run_yaml(name="r2")))
    assert (code, err) == (1, "")
    assert [line for line in out.splitlines() if line.startswith("diff ")] == [
        "diff -u -N LIVE/kernelindex.dev.v1alpha1.BenchmarkRun..r1 MERGED/kernelindex.dev.v1alpha1.BenchmarkRun..r1",
        "diff -u -N LIVE/kernelindex.dev.v1alpha1.BenchmarkRun..r2 MERGED/kernelindex.dev.v1alpha1.BenchmarkRun..r2",
    ]
    body = [line for line in out.splitlines() if not line.startswith(("diff ", "--- ", "+++ ", "@@ "))]
    assert body and all(line.startswith("+") for line in body)


def test_unchanged_gives_no_output_and_exit_0(kidx, write):
    path = write(run_yaml())
    assert kidx("apply", "-f", path)[0] == 0
    assert kidx("diff", "-f", path) == (0, "", "")


def test_own_get_output_diffs_clean(kidx, write):
    assert kidx("apply", "-f", write(run_yaml()))[0] == 0
    _, listing, _ = kidx("get", "runs", "-o", "yaml")
    assert kidx("diff", "-f", "-", stdin=listing) == (0, "", "")


def test_spec_change(kidx, write):
    assert kidx("apply", "-f", write(run_yaml()))[0] == 0
    assert kidx("diff", "-f", write(run_yaml(median=250), "changed.yaml")) == (
        1,
        HEADER
        + "@@ -2,8 +2,8 @@\n"
        + " kind: BenchmarkRun\n"
        + " metadata:\n"
        + f"   creationTimestamp: '{NOW}'\n"
        + f"-  digest: {run_digest(200)}\n"
        + "-  generation: 1\n"
        + f"+  digest: {run_digest(250)}\n"
        + "+  generation: 2\n"
        + "   labels:\n"
        + "     app: web\n"
        + "     tier: fe\n"
        + "@@ -12,5 +12,5 @@\n"
        + "   status: passed\n"
        + "   timing:\n"
        + "     latencyNs:\n"
        + "-      median: 200\n"
        + "+      median: 250\n"
        + "     primaryStatistic: median\n",
        "",
    )


def test_label_change_keeps_the_digest(kidx, write):
    assert kidx("apply", "-f", write(run_yaml()))[0] == 0
    assert kidx("diff", "-f", write(run_yaml(tier="be"), "changed.yaml")) == (
        1,
        HEADER
        + "@@ -3,10 +3,10 @@\n"
        + " metadata:\n"
        + f"   creationTimestamp: '{NOW}'\n"
        + f"   digest: {run_digest(200)}\n"
        + "-  generation: 1\n"
        + "+  generation: 2\n"
        + "   labels:\n"
        + "     app: web\n"
        + "-    tier: fe\n"
        + "+    tier: be\n"
        + "   name: r1\n"
        + " spec:\n"
        + "   status: passed\n",
        "",
    )


def test_only_changed_objects_are_shown(kidx, write):
    both = run_yaml(name="r1") + "---\n" + run_yaml(name="r2")
    assert kidx("apply", "-f", write(both))[0] == 0
    code, out, err = kidx("diff", "-f", write(run_yaml(name="r1") + "---\n" + run_yaml(name="r2", tier="x"), "c.yaml"))
    assert (code, err) == (1, "")
    assert out.startswith("diff -u -N LIVE/kernelindex.dev.v1alpha1.BenchmarkRun..r2 ")
    assert "..r1" not in out


def test_invalid_input_exits_2_and_says_why(kidx, write):
    code, out, err = kidx("diff", "-f", write("kind: [\n", "bad.yaml"))
    assert (code, out) == (2, "")
    assert err.startswith("error: ") and "bad.yaml" in err and "invalid YAML" in err


def test_schema_invalid_object_exits_2(kidx, write):
    code, out, err = kidx("diff", "-f", write(run_yaml().replace("status: passed", "status: great"), "bad.yaml"))
    assert (code, out) == (2, "")
    assert err.startswith("error: ") and "great" in err


def test_missing_file_exits_2(kidx, tmp_path):
    missing = tmp_path / "nope.yaml"
    assert kidx("diff", "-f", str(missing)) == (2, "", f'error: the path "{missing}" does not exist\n')


def test_unknown_flag_exits_2(kidx):
    assert kidx("diff", "--bogus") == (2, "", "error: unknown flag: --bogus\nSee 'kidx diff --help' for usage.\n")


def test_no_file_exits_2(kidx):
    assert kidx("diff") == (2, "", "error: must specify -f\n")


def test_diff_as_a_process_keeps_the_exit_codes(kidx_process, tmp_path, existing_store):
    path = tmp_path / "r1.yaml"
    path.write_text(run_yaml(), encoding="utf-8")
    code, out, err = kidx_process("diff", "-f", str(path))
    assert (code, err) == (1, "")
    assert out.startswith(HEADER)
    assert kidx_process("apply", "-f", str(path)).code == 0
    assert kidx_process("diff", "-f", str(path)) == (0, "", "")
    assert kidx_process("diff", "-f", str(tmp_path / "nope.yaml")).code == 2
    assert kidx_process("diff", "--bogus").code == 2


def test_a_store_named_that_does_not_exist_is_an_error_exit_2(kidx, kidx_process, write, store):
    """As for get: --store or $KIDX_STORE naming no store is exit 2, not "everything is
    new"; the input's own problems come first, and a by-name reference the batch lacks is
    said to have no store to be looked in."""
    missing = (f"error: no store at {store} (--store): nothing has been written there (check the path, or write to "
               "it first, e.g. kidx apply -f)\n")
    path = write(run_yaml())
    assert kidx("diff", "-f", path) == (2, "", missing)
    assert kidx_process("diff", "-f", path) == (2, "", missing.replace("(--store)", "($KIDX_STORE)"))
    by_name = write(run_yaml().replace("  status: passed\n", "  status: passed\n  protocolRef: {name: p9}\n"), "r.yaml")
    assert kidx("diff", "-f", by_name) == (2, "", (
        f"error: {by_name}, document 1, line 10: spec.protocolRef.name: Not found: BenchmarkProtocol \"p9\" is not in "
        f"this batch, and there is no store at {store} (--store) to look in\n"))
    code, out, err = kidx("diff", "-f", write(run_yaml().replace("status: passed", "status: great"), "bad.yaml"))
    assert (code, out) == (2, "") and "great" in err and "no store" not in err
    assert not store.exists()
