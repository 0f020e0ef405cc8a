"""What a command leaves for the end of the console script's process.

``kidx.cli.app.main`` ends the process with ``os._exit``, which skips the interpreter's
teardown; it says so here (``ends_with_exit``) before it runs the command. A command done
with a large batch (every parsed document of an apply) hands it to ``keep_until_exit``,
which holds it until then, so it is never freed object by object (0.46 s, measured, for
the documents and report of a 100,000-run apply). Run any other way (tests, a Python
caller of ``kidx.cli.app.run``) nothing is held.
"""

from __future__ import annotations

_KEPT_UNTIL_EXIT: list[tuple[object, ...]] = []
_ENDS_WITH_EXIT = False


def ends_with_exit() -> None:
    """The process ends with os._exit once the command is done (main() says so)."""
    global _ENDS_WITH_EXIT
    _ENDS_WITH_EXIT = True


def keep_until_exit(*values: object) -> None:
    """Hold ``values`` until the process ends, where it ends with os._exit; else nothing."""
    if _ENDS_WITH_EXIT:
        _KEPT_UNTIL_EXIT.append(values)
