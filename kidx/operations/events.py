"""What an operation tells while it runs, as typed events: the facts, never a sentence.

An operation that runs a while calls the ``Reporter`` its caller gives
(``kidx.operations.reporting``) with one of these; ``kidx.output.events`` words each
type (the one place the sentences live, and where it is said whether an event is a
warning); the command line prints the words on standard error, the Python API keeps
the warnings in a result's ``warnings``. A command reports its own outcome lines (a
file written, a site published, a transfer) through the same words. A new event is a
class here and its wording there; ``tests/quality/test_reporting_seam.py`` fails when one has
no wording, or when an operation hands the reporter anything but an event.

Text an event carries (``text``, ``line``) is a lower layer's or a file's, passed on
as it came; each field is data the wording shows, escaped where it is printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from kidx.timers.settings import Sampling


@dataclass(frozen=True, slots=True)
class Event:
    """What every event is; a Reporter takes any of them."""


@dataclass(frozen=True, slots=True)
class PassedOn(Event):
    """A warning a lower layer (a timer's log, a probe, the bundle reader) wrote, passed on
    as it came; its subclasses say whose."""

    text: str


# storing (kidx apply, import and record) ------------------------------------------------
@dataclass(frozen=True, slots=True)
class Progressed(Event):
    """How far a long step has got: ``done`` of ``total`` documents validated, or objects stored."""

    phase: Literal["validating", "storing"]
    done: int
    total: int


# recording (kidx record) ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NotInCheckout(Event):
    """The folder a command runs in is not in a git checkout: its runs carry no commit label."""

    folder: str


@dataclass(frozen=True, slots=True)
class RecordingStarted(Event):
    """One side's command is about to run (``processes`` times, on ``gpus``, retimed by ``timer``)."""

    format_name: str
    command: tuple[str, ...]
    processes: int
    gpus: str | None  # as --gpus gave them
    timer: str | None  # --timer, with its L2 ``cache``
    cache: str | None
    # with --timer: --max-noise (the fraction) and --max-time, --min-time (ms); Sampling(): none asked
    sampling: Sampling


@dataclass(frozen=True, slots=True)
class ProcessStarted(Event):
    """One process of a repeated (or interleaved, or --gpus) recording starts."""

    repetition: int
    processes: int
    side: str | None  # base or head, with --interleave
    gpu: int | None  # the GPU's index, under --gpus
    command: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HarnessOutput(Event):
    """A line the harness printed (stdout or stderr); ``gpu`` set while processes run on several GPUs at once."""

    line: str
    gpu: int | None = None


@dataclass(frozen=True, slots=True)
class ProcessEnded(Event):
    """A process ended well; what it wrote is imported with ``labels``."""

    format_name: str
    seconds: float
    path: str
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class TimerLogNote(PassedOn):
    """A line of a timer's log that could not be read (its do_bench call is not matched)."""


@dataclass(frozen=True, slots=True)
class TimerUnused(Event):
    """--timer was given, but the command never called do_bench."""


@dataclass(frozen=True, slots=True)
class Retimed(Event):
    """``runs`` runs were timed by kidx's timer, from ``calls`` do_bench calls."""

    runs: int
    calls: int


RunFlag = Literal["unmatched", "low-clock", "low-clock-samples", "kernel-count"]


@dataclass(frozen=True, slots=True)
class RunsFlagged(Event):
    """``count`` retimed runs carry a caution: ``unmatched`` (no do_bench call: the harness's
    own protocol kept), ``low-clock`` (measured below the GPU's maximum SM clock),
    ``low-clock-samples`` (samples below 75 % of the default clock), ``kernel-count``
    (cupti saw another number of kernels timed than untimed)."""

    count: int
    flag: RunFlag


@dataclass(frozen=True, slots=True)
class MeasuredKept(Event):
    """A recording failed: the ``files`` result files measured so far are kept in ``folder``
    for ``kidx record FORMAT --recover FOLDER``."""

    files: int
    folder: str
    format_name: str
    store: str | None  # the --store to name in the command, where one was given


@dataclass(frozen=True, slots=True)
class RecoveredStored(Event):
    """``kidx record --recover``: the ``files`` files kept in ``folder`` are stored."""

    files: int
    folder: str
    recording: str


# capturing an environment ------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CaptureNote(Event):
    """What a probe could not read; ``warning`` for a probe that hung (env capture says it louder)."""

    text: str
    warning: bool = False


@dataclass(frozen=True, slots=True)
class PeaksRefused(PassedOn):
    """A figure --measure-peaks measured outside physical bounds, left out."""


@dataclass(frozen=True, slots=True)
class PeaksMeasured(Event):
    """What --measure-peaks measured, as ``kidx.speed_of_light.measure`` sums it up."""

    summary: str


@dataclass(frozen=True, slots=True)
class PeaksKept(Event):
    """The stored environment ``name``'s peaks, measured at ``at``, carried over to its new capture."""

    name: str
    at: str


@dataclass(frozen=True, slots=True)
class PeaksNotCarried(Event):
    """The stored environment ``name`` has peaks measured at ``at`` for another spec: not carried over."""

    name: str
    at: str


# restoring a bundle ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BundleNote(PassedOn):
    """What the bundle reader could not check."""


# a command's outcome lines ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PlotWritten(Event):
    file: str
    panels: int
    lines: int
    points: int


@dataclass(frozen=True, slots=True)
class PointsRepeated(Event):
    """Points measured more than once: the latest observation is drawn."""

    count: int


@dataclass(frozen=True, slots=True)
class RunsLeftOut(Event):
    """Runs with no figure for ``y``, or no value at ``x``."""

    count: int
    y: str
    x: str


@dataclass(frozen=True, slots=True)
class SitePublished(Event):
    folder: str
    pages: int
    runs: int
    families: int
    series: int
    written: int
    unchanged: int
    removed: int
    dry_run: bool


@dataclass(frozen=True, slots=True)
class Transferred(Event):
    """push or pull: ``objects`` copied to ``destination``, ``changed`` names changed."""

    destination: str
    objects: int
    changed: int
    unchanged: int
    dry_run: bool


__all__ = [
    "BundleNote", "CaptureNote", "Event", "HarnessOutput", "MeasuredKept", "NotInCheckout", "PassedOn", "PeaksKept",
    "PeaksMeasured", "PeaksNotCarried", "PeaksRefused", "PlotWritten", "PointsRepeated", "ProcessEnded",
    "ProcessStarted", "Progressed", "RecordingStarted", "RecoveredStored", "Retimed", "RunFlag", "RunsFlagged",
    "RunsLeftOut", "SitePublished", "TimerLogNote", "TimerUnused", "Transferred",
]
