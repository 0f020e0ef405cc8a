"""kidx record end to end, as a user runs it: in a git checkout, with real harnesses on the
CPU (pytest-benchmark, Google Benchmark), a stand-in for Liger's harness that appends to
its CSV as Liger's does, a failing harness, a harness that writes nothing, and Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

BENCHMARKS = REPO / "tests" / "benchmarks"
H200_CSV = REPO / "tests" / "data" / "h200" / "all_benchmark_data.csv"
PYTEST_OPTIONS = ["-q", "-p", "no:cacheprovider", "--noconftest", "-o", "addopts=", "--benchmark-min-rounds=5",
                  "--benchmark-max-time=0.0005", "--benchmark-warmup=off"]


def git(folder: Path, *arguments: str) -> str:
    completed = subprocess.run(["git", "-C", str(folder), "-c", "user.name=kidx", "-c", "user.email=kidx@example.org",
                                *arguments], capture_output=True, text=True, check=True)
    return completed.stdout.strip()


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A git checkout on branch feature/fast-rope with the sample benchmarks committed."""
    folder = tmp_path / "checkout"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "feature/fast-rope")
    shutil.copy(BENCHMARKS / "pytest_benchmark_sample.py", folder / "test_sample.py")
    shutil.copy(BENCHMARKS / "google_benchmark_sample.py", folder / "gbench.py")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "benchmarks")
    return folder


def kidx_in(folder: Path, store: Path, *arguments: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kidx", *arguments], cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1"}, timeout=timeout)


def stored_runs(store: Path) -> list[dict]:
    completed = kidx_in(REPO, store, "get", "runs", "-o", "json")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)["items"]


def test_pytest_benchmark_recorded_with_the_commit_and_a_captured_environment(checkout, tmp_path):
    store = tmp_path / "store"
    head = git(checkout, "rev-parse", "HEAD")
    done = kidx_in(checkout, store, "record", "pytest-benchmark", "--", sys.executable, "-m", "pytest",
                   "test_sample.py", *PYTEST_OPTIONS)
    assert done.returncode == 0, done.stderr
    # standard output holds kidx's result lines only; the harness's output went to stderr
    assert all(line.split("/")[0].endswith(".kernelindex.dev") and line.endswith(" created")
               for line in done.stdout.splitlines())
    assert "3 passed" in done.stderr
    assert re.search(f"labels: commit={head}, branch=feature-fast-rope, recording=\\d{{8}}T\\d{{6}}Z-[0-9a-f]{{6}}\n",
                     done.stderr)
    assert "BenchmarkRun 3 created; runs refer to ExecutionEnvironment cpu-" in done.stderr
    runs = stored_runs(store)
    assert len(runs) == 3
    for run in runs:
        labels, annotations = run["metadata"]["labels"], run["metadata"]["annotations"]
        assert labels["commit"] == head and labels["branch"] == "feature-fast-rope" and "dirty" not in labels
        assert annotations["kernelindex.dev/git-branch"] == "feature/fast-rope"
        assert annotations["kernelindex.dev/recorded-command"].endswith(".json")
        assert "--benchmark-json=" in annotations["kernelindex.dev/recorded-command"]
    [environment] = json.loads(kidx_in(REPO, store, "get", "environments", "-o", "json").stdout)["items"]
    assert environment["metadata"]["name"].startswith("cpu-")
    assert {run["spec"]["environmentDigest"] for run in runs} == {environment["metadata"]["digest"]}

    # an uncommitted change to a tracked file: the next runs say so
    with open(checkout / "test_sample.py", "a") as handle:
        handle.write("\n# tuning\n")
    done = kidx_in(checkout, store, "record", "pytest-benchmark", "--no-capture", "--label", "suite=nightly", "--",
                   sys.executable, "-m", "pytest", "test_sample.py", *PYTEST_OPTIONS)
    assert done.returncode == 0, done.stderr
    newer = [run for run in stored_runs(store) if run["metadata"]["labels"].get("dirty") == "true"]
    assert len(newer) == 3 and all(run["metadata"]["labels"]["suite"] == "nightly" for run in newer)


def test_library_names_the_implementations_of_pytest_benchmark_runs(checkout, tmp_path):
    store = tmp_path / "store"
    done = kidx_in(checkout, store, "record", "pytest-benchmark", "--no-capture", "--library", "fastrope", "--",
                   sys.executable, "-m", "pytest", "test_sample.py", *PYTEST_OPTIONS)
    assert done.returncode == 0, done.stderr
    assert "(pass --library NAME)" not in done.stderr  # no guess to warn about
    implementations = json.loads(kidx_in(REPO, store, "get", "implementations", "-o", "json").stdout)["items"]
    assert implementations and {item["spec"]["library"] for item in implementations} == {"fastrope"}
    assert all(item["metadata"]["name"].startswith("pytest-fastrope-") for item in implementations)


def test_google_benchmark_recorded(checkout, tmp_path):
    pytest.importorskip("google_benchmark")
    store = tmp_path / "store"
    done = kidx_in(checkout, store, "record", "google-benchmark", "--no-capture", "--label", "suite=ci", "--",
                   sys.executable, "gbench.py", "--benchmark_repetitions=2", "--benchmark_min_time=0.001s",
                   "--benchmark_filter=sum_list|sort_list")
    assert done.returncode == 0, done.stderr
    assert "import google-benchmark (1 file): 3 benchmarks read;" in done.stderr
    runs = stored_runs(store)
    assert sorted(run["spec"]["sourceNative"]["benchmark"] for run in runs) == [
        "sort_list/100", "sort_list/1000", "sum_list"]
    for run in runs:
        assert run["metadata"]["labels"]["suite"] == "ci"
        assert run["metadata"]["labels"]["commit"] == git(checkout, "rev-parse", "HEAD")
        assert len(run["spec"]["samples"]["values"]) == 2
    assert not list(checkout.glob("*.json"))  # kidx's own output file went to a scratch folder, now removed


def test_liger_rows_the_harness_added_are_imported(tmp_path):
    """Liger's harness appends to <scripts>/../data/all_benchmark_data.csv: only the rows a
    run added are its runs. Outside a git checkout, the runs carry no commit label."""
    rows = H200_CSV.read_text().splitlines()
    scripts, data = tmp_path / "benchmark" / "scripts", tmp_path / "benchmark" / "data"
    scripts.mkdir(parents=True)
    data.mkdir()
    (data / "all_benchmark_data.csv").write_text("\n".join(rows[:2]) + "\n")
    (scripts / "benchmark_stand_in.py").write_text(
        "import os\n"
        "here = os.path.dirname(os.path.abspath(__file__))\n"
        "with open(os.path.join(here, '..', 'data', 'all_benchmark_data.csv'), 'a') as f:\n"
        f"    f.write({rows[2]!r} + '\\n' + {rows[3]!r} + '\\n')\n"
        "print('two rows appended')\n"
    )
    store = tmp_path / "store"
    done = kidx_in(scripts, store, "record", "liger", "--no-capture", "--", sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    assert "import liger (1 file): 2 rows read;" in done.stderr and "BenchmarkRun 2 created" in done.stderr
    assert "is not in a git checkout: the runs carry no commit label" in done.stderr
    runs = stored_runs(store)
    assert sorted(run["metadata"]["annotations"]["kernelindex.dev/source-line"] for run in runs) == ["3", "4"]
    assert {run["spec"]["sourceNative"]["metrics"]["ms_50"] for run in runs} == {
        float(rows[2].split(",")[8]), float(rows[3].split(",")[8])}
    assert all("commit" not in run["metadata"]["labels"] for run in runs)

    # run from elsewhere: the script's folder, which has Liger's utils.py, says where the CSV is
    (scripts / "utils.py").write_text("")
    done = kidx_in(tmp_path, store, "record", "liger", "--no-capture", "--", sys.executable,
                   "benchmark/scripts/benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    assert f"importing {data / 'all_benchmark_data.csv'};" in done.stderr
    # the same two rows again, now at lines 5 and 6: a second recording, whose runs are its own
    # (never the first recording's runs relabelled, though their figures are the same)
    assert "import liger (1 file): 2 rows read;" in done.stderr and "BenchmarkRun 2 created" in done.stderr
    runs = stored_runs(store)
    assert sorted(run["metadata"]["annotations"]["kernelindex.dev/source-line"] for run in runs) == [
        "3", "4", "5", "6"]
    assert len({run["metadata"]["labels"]["recording"] for run in runs}) == 2

    # a run that adds no row imports nothing
    done = kidx_in(scripts, store, "record", "liger", "--no-capture", "--", sys.executable, "-c", "pass")
    assert done.returncode == 1
    assert done.stderr.endswith(f"error: the command added no rows to {data / 'all_benchmark_data.csv'}; "
                                "nothing was imported\n")


def test_a_harness_that_writes_bmf(checkout, tmp_path):
    """A custom harness that writes Bencher Metric Format: the file is named with --results."""
    store = tmp_path / "store"
    writer = ("import json, sys\n"
              "json.dump({'copy/4096': {'latency': {'value': 1250.0, 'lower_value': 1200.0, 'upper_value': 1300.0}}},"
              " open(sys.argv[1], 'w'))\n")
    done = kidx_in(checkout, store, "record", "bmf", "--no-capture", "--results", "out.bmf.json", "--",
                   sys.executable, "-c", writer, "out.bmf.json")
    assert done.returncode == 0, done.stderr
    [run] = stored_runs(store)
    assert run["spec"]["timing"]["latencyNs"]["median"] == 1250.0
    assert run["metadata"]["labels"]["commit"] == git(checkout, "rev-parse", "HEAD")
    done = kidx_in(checkout, store, "record", "bmf", "--no-capture", "--", sys.executable, "-c", "pass")
    assert done.returncode == 1 and "kidx record cannot find the output of bmf: give --results FILE" in done.stderr


def test_a_failing_harness_imports_nothing(checkout, tmp_path):
    store = tmp_path / "store"
    done = kidx_in(checkout, store, "record", "pytest-benchmark", "--no-capture", "--", sys.executable, "-m",
                   "pytest", "no_such_test.py", *PYTEST_OPTIONS)
    assert done.returncode == 1
    assert done.stdout == ""
    assert " exited with status 4; nothing was imported\n" in done.stderr
    assert not store.exists()


def test_a_harness_that_writes_nothing_imports_nothing(checkout, tmp_path):
    store = tmp_path / "store"
    (checkout / "old.json").write_text("{}")
    done = kidx_in(checkout, store, "record", "google-benchmark", "--no-capture", "--results", "old.json", "--",
                   sys.executable, "-c", "pass")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith(f"error: the command did not write {checkout / 'old.json'} (it is unchanged); "
                                "nothing was imported\n")
    done = kidx_in(checkout, store, "record", "google-benchmark", "--no-capture", "--results", "new.json", "--",
                   sys.executable, "-c", "pass")
    assert done.returncode == 1
    assert done.stderr.endswith(f"error: the command wrote no results to {checkout / 'new.json'}; nothing was imported\n")
    assert not store.exists()


def test_ctrl_c_stops_the_harness_and_imports_nothing(checkout, tmp_path):
    store = tmp_path / "store"
    marker = tmp_path / "stopped"
    harness = ("import signal, sys, time\n"
               f"signal.signal(signal.SIGINT, lambda *a: (open({str(marker)!r}, 'w').close(), sys.exit(3)))\n"
               "print('har' + 'ness ready', flush=True)\n"
               # short sleeps: an interrupt that comes between two bytecodes is handled at the next
               # (one that came just before a single long sleep began would wait for its end)
               "for _ in range(2400): time.sleep(0.05)\n")
    process = subprocess.Popen([sys.executable, "-m", "kidx", "record", "google-benchmark", "--no-capture", "--",
                                sys.executable, "-c", harness], cwd=checkout, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "KIDX_STORE": str(store)})
    assert process.stderr is not None
    started = time.monotonic()
    while process.stderr.readline() != "harness ready\n":
        assert time.monotonic() - started < 120
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert out == ""
    assert err.endswith("error: interrupted: the command was stopped; nothing was imported\n")
    assert marker.exists()  # the harness got the interrupt and ended
    assert not store.exists()


def test_a_failing_command_is_said_as_a_shell_would_write_it(checkout, tmp_path):
    """The command in an error reads as it would be typed: each argument quoted only when
    it needs it, nothing quoted twice."""
    store, python = tmp_path / "store", shlex.quote(sys.executable)

    def recorded(*command: str) -> tuple[int, str]:
        done = kidx_in(checkout, store, "record", "google-benchmark", "--no-capture", "--results", "out.json", "--",
                       *command)
        return done.returncode, done.stderr.splitlines()[-1]

    assert recorded(sys.executable, "-c", "import sys; sys.exit(3)") == (
        1, f"error: {python} -c 'import sys; sys.exit(3)' exited with status 3; nothing was imported")
    assert recorded(sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)", "it's") == (
        1, f"error: {python} -c 'import os, signal; os.kill(os.getpid(), signal.SIGTERM)' 'it'\"'\"'s' was killed by "
           "SIGTERM; nothing was imported")
    assert recorded(str(tmp_path / "no such harness"), "--fast") == (
        1, f"error: cannot run '{tmp_path}/no such harness': No such file or directory; nothing was imported")
    assert not store.exists()


def test_bad_command_lines(checkout, tmp_path):
    store = tmp_path / "store"
    done = kidx_in(checkout, store, "record", "pytest-benchmark", "--label", "bad key=x", "--", "pytest")
    assert done.returncode == 1 and "--label bad key=x: Invalid value: \"bad key\"" in done.stderr
    done = kidx_in(checkout, store, "record", "pytest-benchmark", "--no-capture", "--", "make", "bench")
    assert done.returncode == 1
    assert done.stderr == ("error: cannot tell where make bench writes pytest-benchmark JSON: run pytest directly, "
                           "or give --results FILE\n")
    done = kidx_in(checkout, store, "record", "nosuch", "--", "true")
    assert done.returncode == 1 and "unknown format 'nosuch'" in done.stderr
    done = kidx_in(checkout, store, "record", "liger", "--environment", "e.yaml", "--capture", "--", "true")
    assert done.returncode == 1 and "--environment and --capture exclude each other" in done.stderr
    done = kidx_in(checkout, store, "record", "nvbench", "--library", "x", "--", "true")
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", "error: --library applies to pytest-benchmark (the nvbench format names its implementations itself)\n")
    assert not store.exists()


def test_tritonbench_is_given_output_json_and_format_options_reach_the_import(checkout, tmp_path):
    """A tritonbench command that names no --output-json gets one; --op and --mode, which a
    tritonbench CSV does not carry, reach its importer; a format that takes no --op refuses it."""
    stand_in = checkout / "run.py"
    stand_in.write_text(
        "import shutil, sys\n"
        f"shutil.copy({str(REPO / 'tests' / 'data' / 'tritonbench' / 'layer_norm.json')!r}, "
        "sys.argv[sys.argv.index('--output-json') + 1])\n")
    store = tmp_path / "store"
    done = kidx_in(checkout, store, "record", "tritonbench", "--no-capture", "--", sys.executable, "run.py", "--op",
                   "layer_norm")
    assert done.returncode == 0, done.stderr
    assert "--output-json /tmp/kidx-record-" in done.stderr.splitlines()[0]
    runs = stored_runs(store)
    assert runs and all(run["metadata"]["labels"]["branch"] == "feature-fast-rope" for run in runs)
    refused = kidx_in(checkout, store, "record", "liger", "--op", "softmax", "--", sys.executable, "run.py")
    assert refused.returncode == 1
    assert refused.stderr.endswith("error: --op applies to tritonbench, not liger\n")


@pytest.mark.parametrize("where", ["file", "under-file", "unreachable"])
def test_a_store_that_cannot_be_written_is_refused_before_the_harness_runs(checkout, tmp_path, where):
    """An hour of measurements must not be run only to find the store unusable afterwards."""
    (tmp_path / "a-file").write_text("not a store\n")
    store = {"file": str(tmp_path / "a-file"), "under-file": str(tmp_path / "a-file" / "store"),
             "unreachable": f"postgresql://kidx:secret@/db?host={tmp_path}&connect_timeout=2"}[where]
    ran = tmp_path / "harness-ran"
    done = kidx_in(checkout, store, "record", "google-benchmark", "--no-capture", "--results", "out.json", "--",
                   sys.executable, "-c", f"open({str(ran)!r}, 'w').close()")
    assert (done.returncode, done.stdout) == (1, "")
    assert not ran.exists()
    expected = {"file": f"error: cannot open the store at {store}: {store} is a file, not a folder\n",
                "under-file": f"error: cannot open the store at {store}: {tmp_path / 'a-file'} is a file, not a folder\n",
                "unreachable": f"error: cannot connect to the store at postgresql://kidx:***@/db?host={tmp_path}"
                               "&connect_timeout=2: "}[where]
    assert done.stderr.startswith(expected) if where == "unreachable" else done.stderr == expected
    assert "secret" not in done.stderr and "Traceback" not in done.stderr


def test_a_read_only_postgres_role_is_refused_before_the_harness_runs(checkout, tmp_path, postgres_store):
    import psycopg

    done = kidx_in(checkout, postgres_store, "apply", "-f", str(REPO / "docs" / "examples" / "seed-bundle.json"))
    assert done.returncode == 0, done.stderr
    with psycopg.connect(postgres_store.url, autocommit=True) as connection:
        role = f"{postgres_store.database}_reader"
        connection.execute(f"CREATE ROLE {role} LOGIN")
        connection.execute(f"GRANT USAGE ON SCHEMA kidx TO {role}")
        connection.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA kidx TO {role}")
    reader = re.sub(r"//[^@/]*@", f"//{role}@", postgres_store.url, count=1)
    ran = tmp_path / "harness-ran"
    done = kidx_in(checkout, reader, "record", "google-benchmark", "--no-capture", "--results", "out.json", "--",
                   sys.executable, "-c", f"open({str(ran)!r}, 'w').close()")
    assert (done.returncode, done.stdout) == (1, "")
    assert not ran.exists()
    assert done.stderr.startswith("error: the store at ") and " is read-only (the role may not write the tables kidx." \
        in done.stderr, done.stderr
    assert kidx_in(checkout, reader, "get", "runs", "-o", "name").returncode == 0  # reading it still works


def test_a_daemon_the_harness_started_does_not_hold_record(checkout, tmp_path):
    """The harness ends; a background child it left holds the output pipe open for ever.
    kidx waits for the harness, not for its descendants' pipes."""
    store, pid_file = tmp_path / "store", tmp_path / "daemon.pid"
    harness = ("import json, subprocess, sys\n"
               "json.dump({'copy': {'latency': {'value': 1250.0}}}, open('out.bmf.json', 'w'))\n"
               f"daemon = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
               f"open({str(pid_file)!r}, 'w').write(str(daemon.pid))\n"
               "print('harness done', flush=True)\n")
    try:
        done = kidx_in(checkout, store, "record", "bmf", "--no-capture", "--results", "out.bmf.json", "--",
                       sys.executable, "-c", harness, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "harness done\n" in done.stderr
        [run] = stored_runs(store)
        assert run["spec"]["timing"]["latencyNs"]["median"] == 1250.0
    finally:
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_output_without_newlines_is_passed_on_in_bounded_pieces(checkout, tmp_path):
    store = tmp_path / "store"
    harness = ("import json, sys\n"
               "sys.stdout.write('x' * (3 * 65536 + 5)); sys.stdout.flush()\n"
               "json.dump({'copy': {'latency': {'value': 1250.0}}}, open('out.bmf.json', 'w'))\n")
    done = kidx_in(checkout, store, "record", "bmf", "--no-capture", "--results", "out.bmf.json", "--",
                   sys.executable, "-c", harness)
    assert done.returncode == 0, done.stderr
    pieces = [line for line in done.stderr.splitlines() if line.startswith("x")]
    assert [len(piece) for piece in pieces] == [65536, 65536, 65536, 5]
    assert set("".join(pieces)) == {"x"}


def _live_in_group(group: int) -> list[int]:
    """The processes of process group ``group`` still alive (zombies, about to be reaped, are not)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            state, _, pgrp = stat[stat.rindex(")") + 2:].split()[:3]
            if int(pgrp) == group and state != "Z":
                alive.append(int(entry.name))
    return alive


def _kill_left(*pid_files: Path) -> None:
    for pid_file in pid_files:
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


def _started(process: subprocess.Popen, line: str) -> None:
    assert process.stderr is not None
    started = time.monotonic()
    while process.stderr.readline() != line:
        assert process.poll() is None and time.monotonic() - started < 120


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process groups from /proc")
def test_ctrl_c_to_kidx_alone_stops_a_wrapper_scripts_children(checkout, tmp_path):
    """The harness runs in a process group of its own, and an interrupt to kidx alone (a
    terminal's reaches kidx's group only) is passed on to the whole group: the python a
    wrapper script started is stopped with it, not left running."""
    store, shell_pid, child_pid = tmp_path / "store", tmp_path / "shell.pid", tmp_path / "child.pid"
    (checkout / "child.py").write_text("import os, sys, time\n"
                                       "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
                                       "print('harness ready', flush=True)\n"
                                       "for _ in range(2400): time.sleep(0.05)\n")
    (checkout / "bench.sh").write_text(f"echo $$ > {shlex.quote(str(shell_pid))}\n"
                                       f"{shlex.quote(sys.executable)} child.py {shlex.quote(str(child_pid))}\n")
    process = subprocess.Popen([sys.executable, "-m", "kidx", "record", "bmf", "--no-capture", "--results",
                                "out.json", "--", "sh", "bench.sh"], cwd=checkout, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "KIDX_STORE": str(store)})
    try:
        _started(process, "harness ready\n")
        stopping = time.monotonic()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        assert (process.returncode, out) == (130, "")
        assert err.endswith("error: interrupted: the command was stopped; nothing was imported\n")
        assert time.monotonic() - stopping < 8  # the interrupt itself ended them, not a later termination
        group = int(shell_pid.read_text())
        assert group != os.getpgid(0)  # the harness had a group of its own, not kidx's (this test's)
        assert _live_in_group(group) == []
        assert not store.exists()
    finally:
        process.kill()
        _kill_left(child_pid, shell_pid)


def test_sigterm_stops_the_harness_keeps_what_was_measured_and_exits_143(checkout, tmp_path):
    """SIGTERM (CI cancellation, timeout, docker stop) is handled as Ctrl-C: the harness is
    stopped, not orphaned; what the earlier process measured is kept and named."""
    store, marker, count = tmp_path / "store", tmp_path / "stopped", tmp_path / "count"
    harness = ("import json, os, signal, sys, time\n"
               f"runs = int(open({str(count)!r}).read()) + 1 if os.path.exists({str(count)!r}) else 1\n"
               f"open({str(count)!r}, 'w').write(str(runs))\n"
               "if runs == 1:\n"
               "    json.dump({'copy': {'latency': {'value': 1250.0}}}, open('out.bmf.json', 'w'))\n"
               "    sys.exit(0)\n"
               f"signal.signal(signal.SIGINT, lambda *a: (open({str(marker)!r}, 'w').close(), sys.exit(3)))\n"
               "print('har' + 'ness ready', flush=True)\n"
               "for _ in range(2400): time.sleep(0.05)\n")
    process = subprocess.Popen([sys.executable, "-m", "kidx", "record", "bmf", "--no-capture", "--processes", "2",
                                "--results", "out.bmf.json", "--", sys.executable, "-c", harness], cwd=checkout,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1"})
    try:
        _started(process, "harness ready\n")
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert (process.returncode, out) == (143, ""), err
    assert err.endswith("error: terminated: the command was stopped; nothing was imported\n")
    assert marker.exists()  # the harness was passed an interrupt, and ended
    [kept] = [line for line in err.splitlines() if "the results measured so far (1 file) are kept in" in line]
    scratch = Path(re.search(r"kept in (\S+?):? ", kept)[1])
    assert scratch.is_dir() and list(scratch.rglob("out.bmf.json"))
    assert not store.exists()
    # what the first process measured is stored as the recording would have stored it
    recovered = kidx_in(checkout, store, "record", "bmf", "--recover", str(scratch))
    assert recovered.returncode == 0, recovered.stderr
    assert [run["metadata"]["labels"]["repetition"] for run in stored_runs(store)] == ["1"]
    shutil.rmtree(scratch)
