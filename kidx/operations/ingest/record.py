"""kidx record as one operation: plan each side, capture the environment, run the
harness, retime and label what it wrote, import it (``operations/ingest/importing.py``).

The steps are ``kidx.operations.ingest.record_steps``'s; this module puts them in order, says what it
is doing through the caller's ``Reporter`` (typed events, ``kidx.operations.events``),
and keeps what was measured when a later step fails."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kidx.operations import events
from kidx.operations.ingest import record_steps as recording
from kidx.records import NamedTuple
from kidx.timers.settings import Sampling

if TYPE_CHECKING:
    from kidx.formats.framework import Conversion
    from kidx.kinds.registry import KindRegistry
    from kidx.operations.ingest.importing import ImportResult, Progress
    from kidx.operations.reporting import Reporter
    from kidx.store.store import Store


class RecordRequest(NamedTuple):
    format_name: str
    commands: list[list[str]]  # the harness command; base and head with ``interleave``
    interleave: bool
    results: str | None  # the file the command writes (default: found per format)
    environment: str | None  # a stored name or a manifest file; None: captured, or implied
    capture: bool  # capture this machine first (when no environment is given)
    labels: dict[str, str]  # --label pairs for every run
    options: dict[str, object]  # the format's import options (--library, --op, …)
    timing: tuple[str, str] | None  # (timer, cache) in place of do_bench
    processes: int
    dry_run: bool
    keep: bool  # store the runs (else only convert them: -o yaml|json)
    recover: str | None = None  # a folder a failed recording kept: store what it holds, run nothing
    store_hint: str | None = None  # the --store to name in the recovery command, where one was given
    sampling: Sampling | None = None  # with timing: adaptive stopping, the least time a call
    gpus: str | None = None  # --gpus all|LIST: the processes run on these GPUs at once


def record(request: RecordRequest, registry: KindRegistry, open_store: Callable[[], Store], reporter: Reporter,
           serialize: Callable[[Any], str], progress: Progress | None = None) -> ImportResult:
    """Run the request's harness command(s) in the current folder and import what they
    wrote, its runs labelled with the commit they ran; ``open_store`` opens the store
    (checked writable before the harness runs, when the runs are to be kept);
    ``serialize`` writes the captured environment's manifest as a file's text. When a
    command fails or is interrupted, nothing is imported, and what the processes before
    it wrote is kept in a scratch folder the reporter names, with the command that stores
    it as this recording would have (``--recover``)."""
    import shutil
    import tempfile

    from kidx.capture.gpu_state import gpu_states

    if request.recover is not None:
        return _recovered(request, registry, open_store, reporter, progress)
    folder = Path.cwd()
    scratch = Path(tempfile.mkdtemp(prefix="kidx-record-"))
    collected = recording.Collected()
    try:
        sides = _sides(reporter, request, folder, scratch)
        gpus = _gpus(request, sides, gpu_states)
        if request.keep and not request.dry_run:
            _check_writable(open_store)  # before the harness runs: its results need somewhere to go
        if request.timing:  # refused before anything runs where the harness's Python has no CUDA device
            recording.check_timer_device(request.timing[0], request.commands, folder)
        environment = _kept_environment(request.environment, scratch)
        if environment is None and request.capture:
            environment = _capture(reporter, scratch, serialize)
        _announce(reporter, request, sides)

        def ended(plan, result, run_labels):
            reporter(events.ProcessEnded(request.format_name, result.seconds, str(plan.path), dict(run_labels)))

        def kept_so_far() -> None:
            collected.save(scratch, _saved_request(request, environment, scratch))

        recording.run_processes(sides, request.processes, folder, scratch, reporter, request.timing,
                                collected, ended, gpu_states, gpus, kept_so_far, request.sampling)
        result = _imported(request, collected, environment, registry, open_store, reporter, progress)
    except BaseException:
        _keep_measured(reporter, request, scratch, collected.files)
        raise
    shutil.rmtree(scratch, ignore_errors=True)
    return result


def _imported(request: RecordRequest, collected: recording.Collected, environment: str | None,
              registry: KindRegistry, open_store: Callable[[], Store], reporter: Reporter,
              progress: Progress | None) -> ImportResult:
    """What the processes wrote, imported: each file apart, its runs named by their origin,
    retimed where --timer replaced do_bench, and labelled."""
    import functools

    from kidx.operations.ingest.importing import import_files

    for note in collected.notes:
        reporter(events.TimerLogNote(note))
    timing = request.timing

    def adjust(conversion: Conversion) -> Conversion:
        conversion = recording.restore_lines(conversion, collected.line_maps)
        if timing:
            conversion = _retimed(reporter, conversion, collected)
        return recording.label_runs(conversion, collected.metadata)

    return import_files(request.format_name, collected.files, registry, functools.cache(open_store),
                        environment=environment, dry_run=request.dry_run, keep=request.keep, adjust=adjust,
                        options=request.options or None, progress=progress, origins=collected.origins)


def _saved_request(request: RecordRequest, environment: str | None, scratch: Path) -> dict:
    """What --recover needs of the request besides the files: the format, its options,
    the timing and the environment (a file in ``scratch``, or a stored name)."""
    if environment is not None and Path(environment).is_relative_to(scratch):  # captured, or a given file's copy
        kept: dict | None = {"file": str(Path(environment).relative_to(scratch))}
    else:
        kept = None if environment is None else {"name": environment}
    return {"format": request.format_name, "options": request.options, "timing": request.timing,
            "environment": kept}


def _kept_environment(environment: str | None, scratch: Path) -> str | None:
    """The environment the runs are stored with: a manifest file is copied into ``scratch``
    (so that a recovery finds it wherever the user's file went); a stored name as given."""
    import shutil

    if environment is None or not Path(environment).is_file():
        return environment
    copy = scratch / "given-environment" / Path(environment).name
    copy.parent.mkdir()
    shutil.copyfile(environment, copy)
    return str(copy)


def _recovered(request: RecordRequest, registry: KindRegistry, open_store: Callable[[], Store], reporter: Reporter,
               progress: Progress | None) -> ImportResult:
    """kidx record --recover FOLDER: what a failed or interrupted recording kept, stored as
    it would have been (its origins, labels, timer logs, environment); nothing runs."""
    from kidx.errors import UsageError

    scratch = Path(request.recover or "").resolve()
    collected, saved = recording.Collected.load(scratch, request.recover or "")
    if saved.get("format") != request.format_name:
        raise UsageError(f"--recover {request.recover}: the recording is of format {saved.get('format')!r}, not "
                         f"{request.format_name!r}")
    if not collected.files:
        raise UsageError(f"--recover {request.recover}: the recording kept no results")
    kept = saved.get("environment") or {}
    environment = str(scratch / kept["file"]) if "file" in kept else kept.get("name")
    timing = tuple(saved["timing"]) if saved.get("timing") else None
    request = request._replace(options=saved.get("options") or {}, timing=timing)
    result = _imported(request, collected, environment, registry, open_store, reporter, progress)
    if request.keep and not request.dry_run:
        reporter(events.RecoveredStored(len(collected.files), str(scratch), collected.recording))
    return result


def _check_writable(open_store: Callable[[], Store]) -> None:
    probe = open_store()
    try:
        probe.check_writable()
    finally:
        probe.close()
        probe.backend.close()


def _gpus(request: RecordRequest, sides: list[recording.Side], states: Callable[[], list]) -> list | None:
    """The GPUs --gpus names (None without it), checked before anything runs: processes
    that run at once may not share a results file the command names itself."""
    if request.gpus is None:
        return None
    from kidx.errors import UsageError
    from kidx.operations.ingest.record_gpus import chosen_gpus

    gpus = chosen_gpus(request.gpus, states())
    if len(gpus) > 1 and request.processes > 1:
        for side in sides:
            plan = side.plan
            if not plan.added_option and not plan.appended_csv:
                raise UsageError(f"--gpus {request.gpus}: the processes would run at once and all write "
                                 f"{plan.path}; let kidx name the results file (leave out --results and the "
                                 "command's own output option), or run on one GPU")
    return gpus


def _sides(reporter: Reporter, request: RecordRequest, folder: Path, scratch: Path) -> list[recording.Side]:
    """Each side's plan (one side, or base and head with --interleave), its checkout's git
    state and its labels."""
    sides = []
    for index, side_command in enumerate(request.commands):
        name = ("base", "head")[index] if request.interleave else None
        side_scratch = scratch / name if name else scratch
        side_scratch.mkdir(exist_ok=True)
        plan = recording.plan_output(request.format_name, side_command, request.results, folder, side_scratch)
        state = recording.git_state(recording.command_folder(side_command, folder) if request.interleave else folder)
        if state is None:
            reporter(events.NotInCheckout(str(folder)))
        metadata = recording.recording_metadata(state, plan.command, request.labels)[0]
        sides.append(recording.Side(name, plan, state, metadata))
    return sides


def _announce(reporter: Reporter, request: RecordRequest, sides: list[recording.Side]) -> None:
    timer, cache = request.timing or (None, None)
    sampling = request.sampling if timer and request.sampling else Sampling()
    for side in sides:
        reporter(events.RecordingStarted(request.format_name, tuple(side.plan.command), request.processes,
                                         request.gpus, timer, cache, sampling))


def _keep_measured(reporter: Reporter, request: RecordRequest, scratch: Path, files: list[str]) -> None:
    """After a failure: the results measured so far kept (and said where, with the command
    that stores them as this recording would have), else the scratch removed."""
    import shutil

    if files:
        reporter(events.MeasuredKept(len(files), str(scratch), request.format_name, request.store_hint))
    else:
        shutil.rmtree(scratch, ignore_errors=True)


def _retimed(reporter: Reporter, conversion: Conversion, collected: recording.Collected) -> Conversion:
    from kidx.operations.ingest.record_timers import retimed

    calls = sum(len(entries) for entries in collected.timer_calls.values())
    if not calls:
        reporter(events.TimerUnused())
        return conversion
    result = retimed(conversion, collected.timer_calls, collected.max_sm_mhz)
    reporter(events.Retimed(result.retimed, calls))
    flagged: tuple[tuple[int, events.RunFlag], ...] = (
        (result.kept, "unmatched"), (result.low_clock, "low-clock"), (result.low_clock_samples, "low-clock-samples"),
        (result.kernel_count, "kernel-count"))
    for count, flag in flagged:
        if count:
            reporter(events.RunsFlagged(count, flag))
    return result.conversion


def _capture(reporter: Reporter, scratch: Path, serialize: Callable[[Any], str]) -> str:
    """This machine's environment, written to a file in ``scratch`` for the import."""
    from kidx.operations.ingest.env_capture import captured_environment

    manifest, facts = captured_environment()  # what env capture and kidx.capture_environment() build
    for note in facts.notes:
        reporter(events.CaptureNote(note))  # every note alike, a probe that hung too
    path = scratch / "environment.yaml"
    path.write_text(serialize(manifest), encoding="utf-8")
    return str(path)


__all__ = ["RecordRequest", "record"]
