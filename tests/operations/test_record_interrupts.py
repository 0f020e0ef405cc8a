"""kidx record's wait for a harness sees every Ctrl-C.

Python runs a signal's handler in the main thread between bytecodes: a Ctrl-C that comes
while the main thread is not in a call the signal interrupts (just before a blocking read
has begun, or when another thread takes the signal) is seen only when that call returns.
Here the main thread blocks SIGINT and another thread takes it, which reaches that moment
every time: the harness, silent, would keep the read waiting until it ends.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from kidx.operations.ingest import record_harness, record_steps


def test_a_ctrl_c_the_read_did_not_see_stops_the_harness(tmp_path):
    marker = tmp_path / "stopped"
    harness = ("import signal, sys, time\n"
               "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"  # the mask is inherited
               f"signal.signal(signal.SIGINT, lambda *a: (open({str(marker)!r}, 'w').close(), sys.exit(3)))\n"
               "print('ready', flush=True)\n"
               "for _ in range(600): time.sleep(0.05)\n")
    ready, over = threading.Event(), threading.Event()

    def press_ctrl_c() -> None:  # this thread does not block SIGINT: the signal comes here
        if ready.wait(120) and not over.is_set():
            os.kill(os.getpid(), signal.SIGINT)

    lines: list[str] = []

    def echo(line: str) -> None:
        lines.append(line)
        if line == "ready":
            ready.set()

    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    started = time.monotonic()
    try:
        with pytest.raises(record_steps.HarnessInterrupted, match="^interrupted: the command was stopped; nothing was "
                                                            "imported$"):
            record_steps.run_harness([sys.executable, "-c", harness], tmp_path, echo)
    finally:
        over.set()
        ready.set()
        presser.join()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    assert lines == ["ready"]
    assert marker.exists()  # the harness was passed the interrupt, and ended
    assert time.monotonic() - started < 25  # not the harness's 30 s: it was stopped


def test_the_harness_output_is_passed_on_line_by_line_as_text(tmp_path):
    """What a text stream would read: universal newlines, a last line without one, bytes
    that do not decode replaced."""
    script = ("import sys, time\n"
              "sys.stdout.buffer.write(b'one\\r\\ntwo\\rthree\\n'); sys.stdout.flush(); time.sleep(0.3)\n"
              "sys.stdout.buffer.write(b'bad \\xff byte\\nlast')\n")
    lines: list[str] = []
    result = record_steps.run_harness([sys.executable, "-c", script], tmp_path, lines.append)
    assert (result.returncode, lines) == (0, ["one", "two", "three", "bad \ufffd byte", "last"])


def test_sigterm_stops_a_harness_that_ignores_signals_and_the_handler_is_restored(tmp_path, monkeypatch):
    """SIGTERM is handled as Ctrl-C while the harness runs: its group gets SIGINT, then
    SIGTERM, then SIGKILL, each after the patience before; the error says 143. The SIGTERM
    handler kidx set is the caller's again afterwards."""
    monkeypatch.setattr(record_harness, "STOP_PATIENCE", (0.5, 0.5, 5.0))
    pid_file = tmp_path / "harness.pid"
    harness = ("import os, signal, time\n"
               "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
               "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
               f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
               "print('ready', flush=True)\n"
               "for _ in range(600): time.sleep(0.05)\n")
    ready = threading.Event()

    def echo(line: str) -> None:
        if line == "ready":
            ready.set()

    def terminate() -> None:
        if ready.wait(120):
            os.kill(os.getpid(), signal.SIGTERM)

    def callers_handler(signum, frame):
        raise AssertionError("kidx's handler is in force while the harness runs")

    previous = signal.signal(signal.SIGTERM, callers_handler)
    sender = threading.Thread(target=terminate)
    sender.start()
    started = time.monotonic()
    try:
        with pytest.raises(record_steps.HarnessInterrupted, match="^terminated: the command was stopped; nothing was "
                                                            "imported$") as raised:
            record_steps.run_harness([sys.executable, "-c", harness], tmp_path, echo)
        assert signal.getsignal(signal.SIGTERM) is callers_handler
    finally:
        ready.set()
        sender.join()
        signal.signal(signal.SIGTERM, previous)
    assert raised.value.exit_code == 143
    assert time.monotonic() - started < 20
    with pytest.raises(ProcessLookupError):  # killed, and reaped
        os.kill(int(pid_file.read_text()), 0)
