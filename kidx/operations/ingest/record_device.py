"""Before a ``kidx record --timer`` recording: the harness's Python is asked, in a process of
its own, whether its torch has a CUDA device, so that --timer is refused before anything
runs where it could not work (kidx itself never imports torch for it)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

#: the oldest Python kidx's do_bench (kidx/timers, injected into the harness) runs on
MIN_HARNESS_PYTHON = (3, 9)
_PYTHON_PROGRAM = re.compile(r"^(python|pypy)[0-9.]*$")
#: run by the harness's Python: its version, and whether torch has a CUDA device (any Python 3)
_DEVICE_PROBE = """\
import json, sys
answer = {"python": list(sys.version_info[:2])}
try:
    import torch
except Exception as exc:
    answer["error"] = "%s: %s" % (type(exc).__name__, exc)
else:
    answer["torch"] = str(getattr(torch, "__version__", ""))
    try:
        answer["cuda"] = bool(torch.cuda.is_available())
    except Exception as exc:
        answer["cuda"] = False
        answer["error"] = "%s: %s" % (type(exc).__name__, exc)
sys.stdout.write("\\n" + json.dumps(answer) + "\\n")
"""


def harness_python(command: list[str], folder: Path, environment: dict[str, str] | None = None) -> str | None:
    """The Python that runs ``command``: its program where that is a Python (``python3``,
    ``.venv/bin/python``), else the interpreter a ``#!`` line names (``pytest``,
    ``torchrun``: console scripts); None where that cannot be told (a shell script, make)."""
    import shutil

    program = command[0]
    if _PYTHON_PROGRAM.match(os.path.basename(program)):
        return program
    if os.sep in program:
        found: str | None = str(Path(program) if Path(program).is_absolute() else folder / program)
    else:
        found = shutil.which(program, path=(os.environ if environment is None else environment).get("PATH"))
    try:
        with open(found or "", "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
    if words and _PYTHON_PROGRAM.match(os.path.basename(words[0])):
        return words[0]
    return None


def check_timer_device(timer: str, commands: list[list[str]], folder: Path,
                       environment: dict[str, str] | None = None) -> None:
    """Refuse ``--timer`` before anything runs where the harness's Python (``harness_python``,
    else kidx's own) is older than MIN_HARNESS_PYTHON, or has no torch with a CUDA device:
    a DeviceUnavailable naming ``--timer``. The question is asked in a child process of
    that Python (kidx itself never imports torch), given ``KIDX_PROBE_TIMEOUT`` seconds
    (a broken driver can hang ``torch.cuda.is_available()``). Where the command is no
    Python and kidx's own Python has no torch, nothing can be told, and nothing is refused."""
    import json
    import sys

    from kidx.capture.probes import PROBE_TIMEOUT_ENV, probe_timeout
    from kidx.errors import DeviceUnavailable

    asked: set[str] = set()
    for command in commands:
        own = harness_python(command, folder, environment)
        python = own or sys.executable
        if python in asked:
            continue
        asked.add(python)
        whose = (f"the harness's Python ({python})" if own else
                 f"kidx's own Python ({python}; {shlex.quote(command[0])} is not a Python program)")
        timeout = probe_timeout()
        try:
            completed = subprocess.run([python, "-c", _DEVICE_PROBE], cwd=folder, env=environment,
                                       stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        except OSError:
            continue  # the command cannot start either: running it says why
        except subprocess.TimeoutExpired:
            raise DeviceUnavailable(
                f"--timer {timer}: {whose} did not say within {timeout:g} s whether torch has a CUDA device "
                f"(torch.cuda.is_available() hung: a broken driver?); nothing was run (set {PROBE_TIMEOUT_ENV} "
                "to wait longer)") from None
        lines = completed.stdout.decode("utf-8", "replace").strip().splitlines()
        try:
            answer = json.loads(lines[-1]) if lines else None
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            continue  # it said nothing kidx can read: the command's own run will say more
        version = tuple(answer.get("python") or ())
        if version and version < MIN_HARNESS_PYTHON:
            raise DeviceUnavailable(
                f"--timer {timer}: {whose} is Python {'.'.join(map(str, version))}, and kidx's do_bench needs "
                f"Python {'.'.join(map(str, MIN_HARNESS_PYTHON))} or newer; nothing was run")
        if "torch" not in answer:
            if own:
                raise DeviceUnavailable(f"--timer {timer} needs torch with a CUDA device, and {whose} has no torch "
                                        f"({answer.get('error')}); nothing was run")
            continue
        if answer.get("cuda") is not True:
            why = answer.get("error") or "no GPU, or a CPU-only build of PyTorch"
            if answer["torch"]:
                why = f"torch {answer['torch']}: {why}"
            raise DeviceUnavailable(f"--timer {timer} needs a CUDA device, and {whose} has none: "
                                    f"torch.cuda.is_available() is False ({why}); nothing was run")
