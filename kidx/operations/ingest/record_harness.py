"""kidx record's harness process: run in a process group of its own, its output passed on
line by line, stopped as a whole on Ctrl-C or SIGTERM (which ``terminate_as_interrupt``
turns into an interrupt while it runs), and the errors that say what happened to it."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kidx.errors import KidxError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class HarnessFailed(KidxError):
    """The harness failed or wrote nothing: nothing was imported."""


class HarnessInterrupted(HarnessFailed):
    """Ctrl-C (or SIGTERM: ``exit_code`` 143) while the harness ran: it was stopped, and
    nothing was imported."""

    exit_code = 130  # 128 + SIGINT, as for any interrupted kidx command

    @classmethod
    def by(cls, interrupt: KeyboardInterrupt) -> HarnessInterrupted:
        """The error for ``interrupt`` (a Ctrl-C, or a ``Terminated``)."""
        word = "terminated" if isinstance(interrupt, Terminated) else "interrupted"
        error = cls(f"{word}: the command was stopped; nothing was imported")
        error.exit_code = getattr(interrupt, "exit_code", cls.exit_code)
        return error


class Terminated(KeyboardInterrupt):
    """SIGTERM (what CI cancellation, ``timeout`` and ``docker stop`` send) while kidx
    record runs: raised where the signal comes, and handled as Ctrl-C is."""

    exit_code = 143  # 128 + SIGTERM


class RecordTerminated(KidxError):
    """SIGTERM outside the harness's run: what was measured is kept, nothing imported."""

    exit_code = Terminated.exit_code


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM raises ``Terminated`` (a KeyboardInterrupt) in the
    main thread, so it stops a harness as Ctrl-C does; the previous handler is restored
    afterwards. Nothing changes outside the main thread (no handler can be set there) or
    where SIGTERM is ignored (``trap '' TERM``)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_IGN:
        yield
        return

    def terminated(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


@dataclass(frozen=True)
class HarnessResult:
    returncode: int
    seconds: float


def run_harness(command: list[str], folder: Path, echo: Callable[[str], None],
                environment: dict[str, str] | None = None,
                on_start: Callable[[subprocess.Popen], None] | None = None) -> HarnessResult:
    """Run ``command`` in ``folder`` (with ``environment``, else kidx's own), its output
    (stdout and stderr) passed to ``echo`` line by line. The command runs in a process
    group of its own: a Ctrl-C or a SIGTERM to kidx (``terminate_as_interrupt``, in force
    while it runs) stops the whole group, a wrapper script's children too (``_stop``), and
    raises HarnessInterrupted (exit status 130, or 143 for SIGTERM): nothing is imported
    from a stopped run. A terminal's Ctrl-C, sent to its foreground group, no longer
    reaches the harness directly: kidx passes it on."""
    started = time.monotonic()
    with terminate_as_interrupt():
        try:
            process = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env=environment, process_group=0)
        except OSError as exc:
            raise HarnessFailed(
                f"cannot run {shlex.quote(command[0])}: {exc.strerror or exc}; nothing was imported") from None
        if on_start is not None:  # record --gpus: so that an interrupt can stop it from another thread
            on_start(process)
        try:
            assert process.stdout is not None
            _pass_lines(process.stdout.fileno(), echo, lambda: process.poll() is not None)
            process.stdout.close()  # a daemon still writing to it gets EPIPE, never a full pipe
            returncode = _waited(process)
        except KeyboardInterrupt as interrupt:  # Ctrl-C, or SIGTERM (Terminated)
            stop_harness(process)
            raise HarnessInterrupted.by(interrupt) from None
    return HarnessResult(returncode, time.monotonic() - started)


# Python runs a signal's handler between bytecodes: a Ctrl-C that arrives just before a
# blocking read or wait has begun is only seen when that call returns, which for a harness
# that says nothing more is never. Every wait below is therefore bounded by _TICK, after
# which the interrupt, if any, is raised.
_TICK = 0.1


_MAX_LINE = 65536  # characters of one line of the harness's output passed on at once
_DRAIN_READS = 1024  # reads of what the harness's children still write after it ended


def _pass_lines(fd: int, echo: Callable[[str], None], ended: Callable[[], bool] = lambda: False) -> None:
    """Each line read from ``fd`` until its end, passed to ``echo``: decoded as a text
    stream reads it (universal newlines, undecodable bytes replaced). A line longer than
    ``_MAX_LINE`` is passed on in pieces of that length, so memory and time stay linear in
    the output. Once the harness has ended (``ended``), what is already in the pipe is
    passed on and no more is waited for: a daemon the harness started may hold the pipe
    open for ever."""
    import codecs
    import locale
    import select

    text = codecs.getincrementaldecoder(locale.getpreferredencoding(False))(errors="replace")
    decoder = io.IncrementalNewlineDecoder(text, translate=True)
    pending = ""
    drained: int | None = None  # reads since the harness ended
    while True:
        if not select.select([fd], [], [], _TICK if drained is None else 0)[0]:
            if drained is not None:
                pending += decoder.decode(b"", final=True)
                break
            if ended():
                drained = 0
            continue
        chunk = os.read(fd, 65536)
        pending += decoder.decode(chunk, final=not chunk)
        *lines, pending = pending.split("\n")
        for line in lines:
            echo(line)
        while len(pending) >= _MAX_LINE:
            echo(pending[:_MAX_LINE])
            pending = pending[_MAX_LINE:]
        if not chunk:
            break
        if drained is not None:
            drained += 1
            if drained >= _DRAIN_READS:
                pending += decoder.decode(b"", final=True)
                break
    if pending:
        echo(pending)


def _waited(process: subprocess.Popen) -> int:
    """The harness's exit status, once it has ended."""
    while True:
        try:
            return process.wait(timeout=_TICK)
        except subprocess.TimeoutExpired:
            continue


#: how long the harness's group is given after each of SIGINT, SIGTERM and SIGKILL (seconds)
STOP_PATIENCE = (10.0, 5.0, 5.0)


def stop_harness(process: subprocess.Popen) -> None:
    """Stop the harness's process group after Ctrl-C or SIGTERM: an interrupt (a signal to
    kidx alone, or a terminal's Ctrl-C, which reaches kidx's group only, has not reached
    it), then a termination, then a kill, each given ``STOP_PATIENCE`` for every process
    of the group to end. Another Ctrl-C or SIGTERM meanwhile moves on to the next step."""
    import signal

    for number, patience in zip((signal.SIGINT, signal.SIGTERM, signal.SIGKILL), STOP_PATIENCE, strict=True):
        try:
            os.killpg(process.pid, number)
        except ProcessLookupError:  # no process of the group is left
            break
        except OSError:  # not ours to signal (it cannot be: the group is the harness's)
            break
        try:
            if _group_ended(process, patience):
                break
        except KeyboardInterrupt:
            continue
    try:
        process.wait(timeout=0)  # the harness itself reaped, whatever its children do
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        pass


def _group_ended(process: subprocess.Popen, patience: float) -> bool:
    """Whether every process of the harness's group ended within ``patience`` seconds
    (the harness itself reaped; a child already a zombie counts as ended)."""
    deadline = time.monotonic() + patience
    while True:
        process.poll()
        if process.returncode is not None and not _group_members(process.pid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(min(_TICK, max(0.0, deadline - time.monotonic())))


def _group_members(group: int) -> bool:
    """Whether a live (not zombie) process is left in process group ``group``."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True  # no way to tell a zombie, reaped by its new parent soon, from a process
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, pgrp, …
        if len(fields) > 2 and fields[2] == str(group) and fields[0] != "Z":
            return True
    return False


def failure_message(command: list[str], result: HarnessResult) -> str:
    if result.returncode < 0:
        import signal

        try:
            name = signal.Signals(-result.returncode).name
        except ValueError:
            name = f"signal {-result.returncode}"
        return f"{shlex.join(command)} was killed by {name}; nothing was imported"
    return f"{shlex.join(command)} exited with status {result.returncode}; nothing was imported"
