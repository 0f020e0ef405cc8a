"""The error hierarchy: every failure kidx reports to a user is a KidxError.

The command layer turns these into ``error: …`` lines and exit codes; nothing below it
prints. Each error carries where it happened when that is known. The Python API
(``kidx.open_store`` and the rest) raises the same classes with the same message text
as the command line prints for the same bad input; it never exits the interpreter.

- ``KidxError``: the root; catch it to catch everything kidx reports.
- ``UsageError``: an argument is wrong (a selector that does not parse, an unknown
  resource type, a bad ``--by`` or ``--threshold`` value).
- ``NotFoundError``: a named object is not in the store.
- ``InvalidInputError``: manifests that cannot be applied; ``problems`` lists each
  (``Problem``: its ``Location`` and message). Nothing was written.
- ``StoreError``: the store cannot be opened, read or written (``StoreBusy``: its
  write lock was not had in time; ``StoreReadOnly``: it can only be read;
  ``OutcomeUnknown``: the connection was lost during a commit, which may or may not
  have happened).
- ``MissingDependencyError``: an optional extra is needed (``install_hint`` says how to
  install it: kidx is not on the package index, so from a checkout of kidx).
- ``DeviceUnavailable``: a GPU timer (``kidx.measure``, ``kidx record --timer``) needs
  PyTorch with a CUDA device, and this process has none.
- ``MeasurementFailed``: a GPU timer ran but could not time the call (it launched no GPU
  work, or timing it failed); the message says which timer and why.

Not an error: ``EmptySelection``, a warning (``warnings.warn``) the Python API gives when
a label selector selects no run, saying which part matched nothing and what the store
has instead (``no run has the label kernal (labels present: kernel, …)``), as ``kidx
compare`` explains it; the result is still the empty list or frame. Turn it into an
error with ``warnings.simplefilter("error", kidx.errors.EmptySelection)``.

Nor is ``NothingJudged``, the warning ``Store.compare`` and ``Store.series`` give for each
thing that kept them from judging, with the words the commands print (a ``baseline`` no
selected run has: ``no selected run's implementation is transformer (--baseline: …);
implementations present: transformers, …``; a selection that selects nothing; nothing
compared). The result is still returned; ``kidx compare --fail-on-regression`` exits 2 on
these, and ``warnings.simplefilter("error", kidx.errors.NothingJudged)`` raises them.
"""

from __future__ import annotations

from kidx.records import NamedTuple


class KidxError(Exception):
    """Root of every error kidx reports to a user."""

    exit_code = 1


class UsageError(KidxError):
    """The command line itself is wrong (flags, argument shapes)."""


class NotFoundError(KidxError):
    """A named object does not exist: ``<plural>.<group> "<name>" not found``."""


class MissingDependencyError(KidxError):
    """An optional dependency is not installed; the message names the extra to install."""


class DeviceUnavailable(KidxError):
    """A GPU timer was asked for where there is no PyTorch with a CUDA device."""


class MeasurementFailed(KidxError):
    """A GPU timer could not time the call it was given."""


class EmptySelection(UserWarning):
    """A label selector selected no run: which part matched nothing, and what there is."""


class NothingJudged(UserWarning):
    """compare or series could not judge something asked of it (a baseline no run has)."""


def install_hint(extra: str) -> str:
    """How to install kidx with an optional extra. kidx is not on the package index, so
    ``pip install 'kidx[extra]'`` would fail: it is installed from a checkout of kidx."""
    return f"pip install '.[{extra}]' from a checkout of kidx"


class StoreError(KidxError):
    """The store cannot be opened, read or written."""


class StoreBusy(StoreError):
    """The store's write lock (or a lock needed to open it) was not had in time."""


class OutcomeUnknown(StoreError):
    """The connection to the store was lost while it committed: the write may or may not
    have been committed, and kidx cannot tell. Its own exit code, so a script checks."""

    exit_code = 3


class StoreReadOnly(StoreError):
    """The store cannot be written (permissions, a read-only file system); it can be read."""


class Location(NamedTuple):
    """Where in the input a problem is: file, document number, line, field path."""

    source: str
    document: int | None = None
    line: int | None = None
    path: str | None = None

    def __str__(self) -> str:
        parts = [self.source]
        if self.document is not None:
            parts.append(f"document {self.document}")
        if self.line is not None:
            parts.append(f"line {self.line}")
        text = ", ".join(parts)
        if self.path:
            text += f": {self.path}"
        return text


class Problem(NamedTuple):
    """One thing wrong with one input document."""

    location: Location
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class InvalidInputError(KidxError):
    """One or more input documents are invalid; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
