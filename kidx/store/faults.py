"""Crash and pause points for the fault-injection and race tests, and nothing else.

``KIDX_TEST_CRASH_AT=STAGE`` makes kidx kill itself with SIGKILL (no clean-up, as a
power cut or ``kill -9`` would) when it reaches that stage of a write:

- ``objects``: just after the first object file of the command was written (or, for gc,
  removed);
- ``planned``: a push or pull has decided what to write, holding the destination's write
  lock, and has written nothing yet;
- ``catalog``: every catalog change is made, the transaction not yet committed;
- ``commit``: the transaction has just committed, nothing after it has run;
- ``after-commit``: the command's work is done, its outcome not yet printed;
- ``export-written``: an export's bundle is written to its temporary file, not yet
  renamed into place.
- ``publish-written``: a publish has written its pages, not yet its list of pages nor
  removed what it no longer writes.

``KIDX_TEST_PAUSE_AT=STAGE`` with ``KIDX_TEST_PAUSE_DIR=FOLDER`` makes kidx stop at that
stage instead: it creates ``FOLDER/STAGE`` (the test's sign that the stage is reached)
and waits, holding whatever it holds there (a write lock, say), until ``FOLDER/resume``
exists. A race test runs a second command in that gap, so that the interleaving it
checks happens every time, not by luck of timing. (It waits two minutes at most, so a
broken test cannot leave a process behind.)

Read once per process; a stage that is not reached does nothing.
"""

from __future__ import annotations

import os
import time

CRASH_ENV = "KIDX_TEST_CRASH_AT"
PAUSE_ENV = "KIDX_TEST_PAUSE_AT"
PAUSE_DIR_ENV = "KIDX_TEST_PAUSE_DIR"
PAUSE_LIMIT_S = 120.0
_STAGE = os.environ.get(CRASH_ENV) or None
_PAUSE = os.environ.get(PAUSE_ENV) or None
_PAUSE_DIR = os.environ.get(PAUSE_DIR_ENV) or None


def crash_point(stage: str) -> None:
    if _STAGE == stage:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
    if _PAUSE == stage and _PAUSE_DIR:
        _pause(stage, _PAUSE_DIR)


def _pause(stage: str, folder: str) -> None:
    with open(os.path.join(folder, stage), "w"):
        pass
    resume = os.path.join(folder, "resume")
    deadline = time.monotonic() + PAUSE_LIMIT_S
    while not os.path.exists(resume) and time.monotonic() < deadline:
        time.sleep(0.01)
