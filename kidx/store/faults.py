"""Crash points for the fault-injection tests, and nothing else.

``KIDX_TEST_CRASH_AT=STAGE`` makes kidx kill itself with SIGKILL (no clean-up, as a
power cut or ``kill -9`` would) when it reaches that stage of a write:

- ``objects``: just after the first object file of the command was written (or, for gc,
  removed);
- ``catalog``: every catalog change is made, the transaction not yet committed;
- ``commit``: the transaction has just committed, nothing after it has run;
- ``after-commit``: the command's work is done, its outcome not yet printed;
- ``export-written``: an export's bundle is written to its temporary file, not yet
  renamed into place.

Read once per process; a stage that is not reached does nothing.
"""

from __future__ import annotations

import os

CRASH_ENV = "KIDX_TEST_CRASH_AT"
_STAGE = os.environ.get(CRASH_ENV) or None


def crash_point(stage: str) -> None:
    if _STAGE == stage:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
