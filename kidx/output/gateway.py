"""The one output gateway: data to stdout, everything else to stderr.

Standard output carries data only (tables, manifests, names, apply and delete lines);
errors, warnings and notices go to standard error. Colour is used only for the
``Warning:`` prefix, only when stderr is a terminal, ``TERM`` is not ``dumb`` and
``NO_COLOR`` is unset, as kubectl does.
"""

from __future__ import annotations

import os
import sys

from kidx.output.terminal import escape_control
from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

    from rich.progress import Progress


class OutputClosed(Exception):
    """The reader of standard output went away (``kidx get … | head``): not an error of
    ours. Deliberately not an OSError, so that nothing between the write and the entry
    point (the argument parser exits 1 on EPIPE) takes it for a failure."""


class Output:
    def __init__(self, stdout: TextIO | None = None, stderr: TextIO | None = None, environ=None):
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.environ = os.environ if environ is None else environ

    def colour_allowed(self, stream: TextIO) -> bool:
        if self.environ.get("NO_COLOR") or self.environ.get("TERM") == "dumb":  # no-color.org: set and not empty
            return False
        isatty = getattr(stream, "isatty", None)
        return bool(isatty and isatty())

    def stderr_is_terminal(self) -> bool:
        isatty = getattr(self.stderr, "isatty", None)
        return bool(isatty and isatty())

    # data -------------------------------------------------------------------------------
    def data(self, text: str) -> None:
        """Write data exactly as given (the caller decides about the final newline)."""
        if text:
            self._write(text)

    def line(self, text: str) -> None:
        self._write(text + "\n")

    def _write(self, text: str) -> None:
        # a buffered stream raises when its buffer fills, an unbuffered one on the first write
        try:
            self.stdout.write(text)
        except BrokenPipeError:
            raise OutputClosed from None

    def flush(self) -> None:
        self.stdout.flush()
        self.stderr.flush()

    # diagnostics: one line each, control characters escaped (names, paths and values in
    # messages come from users and must not reach the terminal raw) ---------------------
    def error(self, message: str) -> None:
        message = escape_control(message)
        self.stderr.write(message if message.startswith("error: ") else f"error: {message}")
        self.stderr.write("\n")

    def reason_error(self, reason: str, message: str) -> None:
        """kubectl's API-status form, without a server: ``Error (NotFound): …``."""
        self.stderr.write(f"Error ({reason}): {escape_control(message)}\n")

    def warning(self, message: str) -> None:
        prefix = "Warning:"
        if self.colour_allowed(self.stderr):
            prefix = "\x1b[1;33mWarning:\x1b[0m"
        self.stderr.write(f"{prefix} {escape_control(message)}\n")

    def notice(self, message: str) -> None:
        self.stderr.write(escape_control(message) + "\n")

    # progress ---------------------------------------------------------------------------
    def progress(self, size: int, minimum: int) -> _ProgressBar:
        """A context giving a ``(phase, done, total)`` callback that draws a rich progress
        bar on stderr, or None: only on a terminal, and only for work of ``size`` at least
        ``minimum`` (elsewhere nothing is drawn, and rich is not imported)."""
        return _ProgressBar(self, self.stderr_is_terminal() and size >= minimum)


class _ProgressBar:
    """A rich progress bar, one task per phase, gone when the work ends."""

    def __init__(self, out: Output, enabled: bool):
        self.out, self.enabled = out, enabled
        self._bar: Progress | None = None

    def __enter__(self) -> Callable[[str, int, int], None] | None:
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

        bar = self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            console=Console(file=self.out.stderr), transient=True,
        )
        bar.start()
        tasks: dict[str, TaskID] = {}

        def advance(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done)

        return advance

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
