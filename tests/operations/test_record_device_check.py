"""kidx record --timer asks the harness's Python, before anything runs, whether its torch
has a CUDA device (and whether it is new enough for kidx's do_bench): in a child process,
so kidx never imports torch itself. Stand-ins here: the CPU stand-in torch of
tests/timers/fake_gpu, and shell scripts named ``python`` that answer as an old or a
hung Python would."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest
from conftest import REPO

from kidx.errors import DeviceUnavailable
from kidx.operations.ingest.record_device import check_timer_device, harness_python

FAKE_GPU = REPO / "tests" / "timers" / "fake_gpu"


def environment(*, torch: bool, gpu: bool = True) -> dict[str, str]:
    paths = [str(FAKE_GPU), str(REPO)] if torch else [str(REPO)]
    variables = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    variables.pop("FAKE_GPU_ABSENT", None)
    if not gpu:
        variables["FAKE_GPU_ABSENT"] = "1"
    return variables


def stand_in(folder: Path, name: str, body: str) -> str:
    program = folder / name
    program.write_text("#!/bin/sh\n" + body)
    program.chmod(0o755)
    return str(program)


def test_the_harness_python_is_its_program_or_the_one_its_first_line_names(tmp_path):
    console_script = stand_in(tmp_path, "torchrun", "")
    Path(console_script).write_text("#!/opt/venv/bin/python3.12\nimport sys\n")
    env_script = tmp_path / "bench"
    env_script.write_text("#!/usr/bin/env -S python3 -u\n")
    shell_script = tmp_path / "run.sh"
    shell_script.write_text("#!/bin/sh\nexec python3 bench.py\n")
    assert harness_python(["python3", "bench.py"], tmp_path) == "python3"
    assert harness_python([".venv/bin/python3.11", "-m", "pytest"], tmp_path) == ".venv/bin/python3.11"
    assert harness_python(["pypy3", "bench.py"], tmp_path) == "pypy3"
    assert harness_python([console_script, "--nproc-per-node=1"], tmp_path) == "/opt/venv/bin/python3.12"
    assert harness_python(["torchrun"], tmp_path, {"PATH": str(tmp_path)}) == "/opt/venv/bin/python3.12"
    assert harness_python(["./bench"], tmp_path) == "python3"
    assert harness_python(["./run.sh"], tmp_path) is None
    assert harness_python(["sh", "run.sh"], tmp_path) is None  # a program, not a script with a first line
    assert harness_python(["no-such-program"], tmp_path) is None


def test_a_python_with_a_cuda_device_is_not_refused(tmp_path):
    check_timer_device("cuda_graph", [[sys.executable, "bench.py"]], tmp_path, environment(torch=True))


def test_a_torch_without_a_device_is_refused_naming_the_timer(tmp_path):
    with pytest.raises(DeviceUnavailable) as refused:
        check_timer_device("cupti", [[sys.executable, "bench.py"]], tmp_path, environment(torch=True, gpu=False))
    assert str(refused.value) == (
        f"--timer cupti needs a CUDA device, and the harness's Python ({sys.executable}) has none: "
        "torch.cuda.is_available() is False (no GPU, or a CPU-only build of PyTorch); nothing was run")


def test_a_command_that_is_no_python_is_judged_by_kidxs_own(tmp_path):
    """A shell script's Python cannot be told: kidx's own is asked. Where it has torch
    without a device the timer is refused; where it has no torch at all nothing can be
    told, and the command runs (its own run says what it lacks)."""
    with pytest.raises(DeviceUnavailable) as refused:
        check_timer_device("cuda_graph", [["sh", "run.sh"]], tmp_path, environment(torch=True, gpu=False))
    assert str(refused.value) == (
        f"--timer cuda_graph needs a CUDA device, and kidx's own Python ({sys.executable}; sh is not a Python "
        "program) has none: torch.cuda.is_available() is False (no GPU, or a CPU-only build of PyTorch); "
        "nothing was run")
    check_timer_device("cuda_graph", [["sh", "run.sh"]], tmp_path, environment(torch=False))


def test_an_old_python_is_refused(tmp_path):
    old = stand_in(tmp_path, "python", "echo 'import warnings'; echo '{\"python\": [3, 8]}'\n")
    with pytest.raises(DeviceUnavailable) as refused:
        check_timer_device("cuda_graph", [[old, "bench.py"]], tmp_path, environment(torch=True))
    assert str(refused.value) == (f"--timer cuda_graph: the harness's Python ({old}) is Python 3.8, and kidx's "
                                  "do_bench needs Python 3.9 or newer; nothing was run")


def test_each_python_is_asked_once(tmp_path):
    """Both sides of --interleave, run by one Python: one question."""
    asked = tmp_path / "asked"
    answering = stand_in(tmp_path, "python3", f"echo once >> {shlex.quote(str(asked))}\n"
                                              "echo '{\"python\": [3, 9], \"torch\": \"2.5.1\", \"cuda\": true}'\n")
    check_timer_device("cuda_graph", [[answering, "base.py"], [answering, "head.py"]], tmp_path)
    assert asked.read_text() == "once\n"


def test_a_hang_is_refused_in_time(tmp_path, monkeypatch):
    hung = stand_in(tmp_path, "python3", "exec sleep 30\n")
    monkeypatch.setenv("KIDX_PROBE_TIMEOUT", "0.5")
    with pytest.raises(DeviceUnavailable) as refused:
        check_timer_device("cuda_graph", [[hung, "bench.py"]], tmp_path, environment(torch=True))
    assert str(refused.value) == (
        f"--timer cuda_graph: the harness's Python ({hung}) did not say within 0.5 s whether torch has a CUDA "
        "device (torch.cuda.is_available() hung: a broken driver?); nothing was run (set KIDX_PROBE_TIMEOUT to "
        "wait longer)")


def test_a_python_that_cannot_start_is_left_to_the_run(tmp_path):
    check_timer_device("cuda_graph", [[str(tmp_path / "no-such" / "python"), "bench.py"]], tmp_path)
