"""kidx in real shell pipelines: what one command prints, the next one reads."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LIGER_DATA, REPO, SEED_BUNDLE, SEED_RUN_NAME

BIN = Path(sys.executable).parent
LIGER = LIGER_DATA / "all_benchmark_data.csv"
ANSI = re.compile(r"\x1b|\x9b")

MANIFESTS = """\
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkProtocol
metadata:
  name: proto-a
spec:
  harness: {name: Harness A}
  measurement: {timer: cuda_events}
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: web-2
  labels: {app: web}
spec:
  status: passed
  timing: {latencyNs: {median: 200}}
  protocolRef: {name: proto-a}
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: web-10
  title: "Ten · ten"
spec:
  status: failed
"""
RUNS = sorted([SEED_RUN_NAME, "web-2", "web-10"])


def shell(command: str, store: Path, extra: dict | None = None, drop: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1",
                   "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **(extra or {})}
    for name in drop:
        environment.pop(name, None)
    environment.pop("KIDX_DEBUG", None)
    return subprocess.run([bash, "-o", "pipefail", "-c", command], capture_output=True, text=True,
                          env=environment, cwd=REPO)


@pytest.fixture
def filled(kidx, store, tmp_path):
    assert shutil.which("kidx", path=str(BIN)), "the venv's kidx script is needed"
    path = tmp_path / "m.yaml"
    path.write_text(MANIFESTS, encoding="utf-8")
    for source in (SEED_BUNDLE, path):
        code, _, err = kidx("apply", "-f", str(source))
        assert code == 0, err
    return store


def liger_rows(folder: Path, rows: int) -> Path:
    """The header and the first rows of the real CSV, as published (CRLF)."""
    with open(LIGER, "rb") as handle:
        lines = handle.read().split(b"\r\n")
    path = folder / f"first-{rows}.csv"
    path.write_bytes(b"\r\n".join(lines[: rows + 1]) + b"\r\n")
    return path


@pytest.fixture(scope="module")
def liger_subset(tmp_path_factory) -> Path:
    return liger_rows(tmp_path_factory.mktemp("liger"), 300)


@pytest.fixture(scope="module")
def big_store(liger_subset, tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("big") / "store"
    environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1",
                   "XDG_CACHE_HOME": str(tmp_path_factory.getbasetemp() / "cache")}
    done = subprocess.run([sys.executable, "-m", "kidx", "import", "liger", str(liger_subset)],
                          capture_output=True, env=environment, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return store


def test_jsonpath_names_into_describe(filled):
    done = shell("kidx get runs -o jsonpath='{.items[*].metadata.name}' | xargs kidx describe run", filled)
    assert (done.returncode, done.stderr) == (0, "")
    described = re.findall(r"^Name:\s+(\S+)$", done.stdout, flags=re.M)
    assert described == RUNS


def test_get_all_yaml_applies_back_unchanged(filled):
    done = shell("kidx get all -o yaml | kidx apply -f -", filled)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 6
    assert all(line.endswith(" unchanged") for line in lines), lines
    assert "error" not in done.stderr


def test_get_all_json_applies_back_unchanged(filled):
    done = shell("kidx get all -o json | kidx apply -f -", filled)
    assert done.returncode == 0, done.stderr
    assert [line.rsplit(" ", 1)[1] for line in done.stdout.splitlines()] == ["unchanged"] * 6


def test_names_into_delete(filled):
    done = shell("kidx get runs -o name | xargs kidx delete", filled)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [f'benchmarkrun.kernelindex.dev "{name}" deleted' for name in RUNS]
    after = shell("kidx get runs -o name; kidx get protocols -o name", filled)
    assert after.stdout == ("benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward\n"
                            "benchmarkprotocol.kernelindex.dev/proto-a\n")


def test_import_yaml_through_apply_equals_import(tmp_path):
    liger_subset = liger_rows(tmp_path, 80)
    piped, direct = tmp_path / "piped", tmp_path / "direct"
    done = shell(f"kidx import liger '{liger_subset}' -o yaml | kidx apply -f - >/dev/null", piped)
    assert done.returncode == 0, done.stderr
    assert not done.stderr.startswith("error")
    done = shell(f"kidx import liger '{liger_subset}' >/dev/null", direct)
    assert done.returncode == 0, done.stderr

    def everything(store: Path) -> list[dict]:
        out = shell("kidx get all -o json", store)
        assert out.returncode == 0, out.stderr
        items = json.loads(out.stdout)["items"]
        for item in items:
            del item["metadata"]["creationTimestamp"]
        return items

    left, right = everything(piped), everything(direct)
    assert sum(item["kind"] == "BenchmarkRun" for item in left) == 80
    assert {item["kind"] for item in left} == {
        "BenchmarkProtocol", "ExecutionEnvironment", "Implementation", "Workload", "BenchmarkRun"}
    assert left == right


def test_stdout_and_stderr_have_no_ansi_escapes_without_a_terminal(filled):
    # NO_COLOR unset and a colour-capable TERM: only a terminal may get colour
    commands = [
        "kidx get all", "kidx get runs -o wide --show-labels", "kidx get all -o yaml", "kidx describe runs",
        "kidx history run web-2", f"kidx apply -f '{SEED_BUNDLE}'", "kidx get run nope",
        "kidx get runs -l 'a b'", "kidx get runs --bogus",
    ]
    done = shell("; ".join(commands), filled, extra={"TERM": "xterm-256color"}, drop=("NO_COLOR",))
    assert "Warning: " in done.stderr and "error: " in done.stderr  # there was something to colour
    assert "Error (NotFound)" in done.stderr
    assert not ANSI.search(done.stdout), done.stdout
    assert not ANSI.search(done.stderr), done.stderr


def run_with_terminal_stderr(
    args: list[str], store: Path, no_color: bool, term: str = "xterm-256color"
) -> tuple[int, bytes, bytes]:
    """stdout a pipe, stderr a terminal."""
    environment = {**os.environ, "KIDX_STORE": str(store), "TERM": term}
    environment.pop("NO_COLOR", None)
    if no_color:
        environment["NO_COLOR"] = "1"
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "kidx", *args], stdout=subprocess.PIPE, stderr=terminal,
                              env=environment, cwd=REPO)
    finally:
        os.close(terminal)
    received = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:
            break
        if not chunk:
            break
        received += chunk
    os.close(controller)
    return done.returncode, done.stdout, received


def test_no_color_is_respected_on_a_terminal(filled):
    args = ["apply", "--dry-run", "-f", str(SEED_BUNDLE)]
    code, out, err = run_with_terminal_stderr(args, filled, no_color=False)
    assert code == 0
    assert b"\x1b[" in err  # the Warning: prefix is coloured on a terminal …
    assert b"\x1b" not in out  # … never the data
    code, out, err = run_with_terminal_stderr(args, filled, no_color=True)
    assert code == 0
    assert b"Warning: " in err
    assert b"\x1b" not in err and b"\x1b" not in out


def test_term_dumb_means_no_colour(filled):
    code, out, err = run_with_terminal_stderr(
        ["apply", "--dry-run", "-f", str(SEED_BUNDLE)], filled, no_color=False, term="dumb"
    )
    assert code == 0
    assert b"Warning: " in err and b"\x1b" not in err


@pytest.mark.parametrize("output", ["yaml", "json", "wide"])
def test_head_closing_the_pipe_is_not_an_error(big_store, output):
    done = shell(f"kidx get runs -o {output} | head -1; echo \"kidx=${{PIPESTATUS[0]}}\"", big_store)
    assert done.stderr == ""
    assert "Traceback" not in done.stdout
    first, status = done.stdout.splitlines()
    assert status == "kidx=0"
    assert first


def test_a_big_output_really_is_bigger_than_a_pipe(big_store):
    done = shell("kidx get runs -o yaml | wc -c", big_store)
    assert int(done.stdout) > 1 << 18
