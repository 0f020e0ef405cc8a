"""The words of the events operations report (``kidx.operations.events``): the one place
their sentences live, and where it is said which of them are warnings.

``worded(event)`` gives an event's line; ``stderr_reporter(out)`` is the command line's
Reporter, printing each line through the output gateway (a warning as ``Warning: …``,
control characters escaped), as uv's reporters print its typed progress events;
``progress_reporter`` draws ``Progressed`` events as the gateway's progress bar. A new
event type gets its function here, registered with ``@worded.register``.
"""

from __future__ import annotations

import shlex
from contextlib import contextmanager
from functools import singledispatch
from typing import TYPE_CHECKING, NamedTuple

from kidx.operations.events import (
    CaptureNote,
    Event,
    HarnessOutput,
    MeasuredKept,
    NotInCheckout,
    PassedOn,
    PeaksKept,
    PeaksMeasured,
    PeaksNotCarried,
    PlotWritten,
    PointsRepeated,
    ProcessEnded,
    ProcessStarted,
    Progressed,
    RecordingStarted,
    RecoveredStored,
    Retimed,
    RunsFlagged,
    RunsLeftOut,
    SitePublished,
    TimerUnused,
    Transferred,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kidx.operations.reporting import Reporter
    from kidx.output.gateway import Output


class Worded(NamedTuple):
    text: str
    warning: bool = False  # said as ``Warning: …``; else a plain line


def stderr_reporter(out: Output) -> Reporter:
    """The command line's Reporter: each event's words on standard error."""

    def report(event: Event) -> None:
        said = worded(event)
        (out.warning if said.warning else out.notice)(said.text)

    return report


@contextmanager
def progress_reporter(out: Output, size: int, minimum: int) -> Iterator[Reporter | None]:
    """A Reporter that draws ``Progressed`` events as a progress bar on standard error, one
    task per phase, gone when the work ends; None where no bar is drawn (not a terminal, or
    work of ``size`` below ``minimum``)."""
    with out.progress(size, minimum) as advance:
        if advance is None:
            yield None
            return

        def report(event: Event) -> None:
            if isinstance(event, Progressed):
                advance(event.phase, event.done, event.total)

        yield report


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


@singledispatch
def worded(event: Event) -> Worded:
    raise TypeError(f"no words for the event {type(event).__name__}")


@worded.register
def _(event: Progressed) -> Worded:
    return Worded(f"{event.phase} {event.done}/{event.total}")


# what a lower layer wrote (a timer's log, a probe, the bundle reader) -----------------
@worded.register
def _(event: PassedOn) -> Worded:
    return Worded(event.text, warning=True)


# recording ------------------------------------------------------------------------------
@worded.register
def _(event: NotInCheckout) -> Worded:
    return Worded(f"{event.folder} is not in a git checkout: the runs carry no commit label", warning=True)


@worded.register
def _(event: RecordingStarted) -> Worded:
    sampling, stopping = event.sampling, ""
    if sampling.max_noise is not None and sampling.max_time_ms is not None:
        stopping = (f", sampled until the median's relative standard error is under {sampling.max_noise * 100:g}% "
                    f"or {sampling.max_time_ms / 1000:g} s have passed")
    if sampling.min_time_ms:
        stopping += f", each call sampled for at least {sampling.min_time_ms / 1000:g} s"
    return Worded(f"record {event.format_name}: running {shlex.join(event.command)}"
                  + (f" ({event.processes} processes)" if event.processes > 1 else "")
                  + (f" on GPUs {event.gpus}" if event.gpus is not None else "")
                  + (f", timed with {event.timer} ({event.cache} L2) in place of do_bench{stopping}" if event.timer
                     else ""))


@worded.register
def _(event: ProcessStarted) -> Worded:
    return Worded(f"process {event.repetition} of {event.processes}" + (f", {event.side}" if event.side else "")
                  + (f", gpu {event.gpu}" if event.gpu is not None else "") + f": {shlex.join(event.command)}")


@worded.register
def _(event: HarnessOutput) -> Worded:
    return Worded(event.line if event.gpu is None else f"[gpu {event.gpu}] {event.line}")


@worded.register
def _(event: ProcessEnded) -> Worded:
    shown = ", ".join(f"{key}={value}" for key, value in event.labels.items()) or "none"
    return Worded(f"record {event.format_name}: the command ended in {event.seconds:.1f} s; importing "
                  f"{event.path}; labels: {shown}")


@worded.register
def _(event: TimerUnused) -> Worded:
    return Worded("--timer had no effect: the command never called triton.testing.do_bench, so its runs keep the "
                  "harness's own timer", warning=True)


@worded.register
def _(event: Retimed) -> Worded:
    return Worded(f"record: {_counted(event.runs, 'run')} timed by kidx's timer "
                  f"({_counted(event.calls, 'do_bench call')})")


_FLAGGED = {
    "unmatched": "matched no do_bench call and keep the harness's own protocol",
    "low-clock": "measured while the SM clock was well below the GPU's maximum (annotation "
                 "kernelindex.dev/clock-warning)",
    "low-clock-samples": "had samples taken while the SM clock was below 75% of its default (dropped, or kept "
                         "where no other was taken; annotation kernelindex.dev/low-clock-samples)",
    "kernel-count": "timed with cupti launched another number of kernels in a timed call than in the untimed one: "
                    "work missing from a capture is not timed (annotation kernelindex.dev/kernel-count-warning)",
}


@worded.register
def _(event: RunsFlagged) -> Worded:
    return Worded(f"{_counted(event.count, 'run')} {_FLAGGED[event.flag]}", warning=True)


@worded.register
def _(event: MeasuredKept) -> Worded:
    store = f" --store {shlex.quote(event.store)}" if event.store else ""
    return Worded(f"the results measured so far ({_counted(event.files, 'file')}) are kept in {event.folder}: "
                  f"store them as this recording would have with kidx record {event.format_name} --recover "
                  f"{shlex.quote(event.folder)}{store}", warning=True)


@worded.register
def _(event: RecoveredStored) -> Worded:
    return Worded(f"record: the {_counted(event.files, 'result file')} kept in {event.folder} are stored "
                  f"(recording {event.recording}); the folder may be removed")


# capturing an environment -----------------------------------------------------------------
@worded.register
def _(event: CaptureNote) -> Worded:
    return Worded(event.text, warning=True) if event.warning else Worded(f"note: {event.text}")


@worded.register
def _(event: PeaksMeasured) -> Worded:
    return Worded(event.summary)


@worded.register
def _(event: PeaksKept) -> Worded:
    return Worded(f"note: kept the peaks measured at {event.at} on executionenvironment {event.name} "
                  "(--measure-peaks measures them again)")


@worded.register
def _(event: PeaksNotCarried) -> Worded:
    return Worded(f"note: the stored executionenvironment {event.name} has peaks measured at {event.at} for another "
                  f"spec: they are not carried over (its history keeps them: kidx history environment {event.name})")


# a command's outcome lines ----------------------------------------------------------------------
@worded.register
def _(event: PlotWritten) -> Worded:
    return Worded(f"wrote {event.file}: {_counted(event.panels, 'panel')}, {_counted(event.lines, 'line')}, "
                  f"{event.points} points")


@worded.register
def _(event: PointsRepeated) -> Worded:
    return Worded(f"{event.count} points were measured more than once: the latest observation is drawn")


@worded.register
def _(event: RunsLeftOut) -> Worded:
    figure = "figure" if event.y == "statistic" else "figure (no cost, or no peak for --y sol)"
    return Worded(f"{event.count} runs left out: no {figure}, or no value at {event.x}")


@worded.register
def _(event: SitePublished) -> Worded:
    verb, removal = ("would write", "would remove") if event.dry_run else ("wrote", "removed")
    return Worded(f"{event.folder}: {event.pages} files ({event.runs} runs, {event.families} group families, "
                  f"{event.series} series); {verb} {event.written}, {event.unchanged} unchanged, "
                  f"{removal} {event.removed}")


@worded.register
def _(event: Transferred) -> Worded:
    verb = "would copy" if event.dry_run else "copied"
    return Worded(f"{event.destination}: {verb} {_counted(event.objects, 'object')}; "
                  f"{_counted(event.changed, 'name')} changed, {event.unchanged} unchanged")


__all__ = ["Worded", "stderr_reporter", "worded"]
