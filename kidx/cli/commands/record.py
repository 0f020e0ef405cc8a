"""kidx record [--environment NAME|FILE | --capture] [--label k=v…] [--results FILE] [--library NAME]
[--timer T [--cache C]] [--processes N] [--interleave] FORMAT -- COMMAND… [-- HEAD-COMMAND…]

Runs a benchmark harness and imports what it wrote, labelled with the commit it ran; the
steps are kidx.operations.record's, the import is kidx import's.
"""

from __future__ import annotations

import shlex
from typing import Annotated

import typer

from kidx.cli.commands.import_ import EnvironmentOption, LibraryOption, OutputOption
from kidx.cli.common import DryRunOption, StoreOption, open_store, output, parse_dry_run
from kidx.errors import UsageError
from kidx.importers.framework import IMPORTERS
from kidx.timers.settings import CACHES, TIMERS

EXAMPLES = """\b
Examples:
  kidx record pytest-benchmark -- pytest bench/
  kidx record google-benchmark --label suite=nightly -- ./build/my_benchmark --benchmark_repetitions=10
  cd Liger-Kernel/benchmark/scripts && kidx record liger -- python benchmark_rms_norm.py
  kidx record nvbench --environment environment.yaml -- ./my_nvbench_binary
  kidx record liger --timer cuda_graph --processes 8 -- python benchmark_rms_norm.py
  kidx record liger --timer cuda_graph --interleave --processes 4 -- \\
      python ../base/benchmark_rms_norm.py -- python benchmark_rms_norm.py
"""


def record(
    format_name: Annotated[str, typer.Argument(metavar="FORMAT", help=f"The harness's format: {', '.join(IMPORTERS)}.",
                                               show_default=False)],
    command: Annotated[list[str] | None, typer.Argument(metavar="-- COMMAND…", help="The harness command, after --.",
                                                        show_default=False)] = None,
    environment: EnvironmentOption = None,
    capture: Annotated[
        bool | None,
        typer.Option("--capture/--no-capture", help="Capture this machine (kidx env capture) before the command "
                                                    "runs; the default unless --environment is given. --no-capture: "
                                                    "the environment the results imply."),
    ] = None,
    label: Annotated[
        list[str] | None, typer.Option("--label", help="KEY=VALUE label for every run (repeatable).")
    ] = None,
    results: Annotated[
        str | None,
        typer.Option("--results", help="The file the command writes its results to (default: found per format)."),
    ] = None,
    library: LibraryOption = None,
    op: Annotated[str | None, typer.Option("--op", help="The operator, for formats whose files do not name it "
                                                        "(tritonbench).", show_default=False)] = None,
    mode: Annotated[str | None, typer.Option("--mode", help="The mode, for formats whose files do not name it "
                                                            "(tritonbench: fwd, bwd, fwd_bwd, fwd_no_grad).",
                                             show_default=False)] = None,
    level: Annotated[int | None, typer.Option("--level", min=1, help="The KernelBench level, where the file does "
                                                                     "not say.", show_default=False)] = None,
    timer: Annotated[
        str | None,
        typer.Option("--timer", help=f"Time with kidx's timer in place of the harness's triton.testing.do_bench: "
                                     f"{', '.join(TIMERS)}. Default: the harness's own timer.",
                     show_default=False),
    ] = None,
    cache: Annotated[
        str,
        typer.Option("--cache", help=f"The L2 cache with --timer: {', '.join(CACHES)} (flushed before each sample, "
                                     "or not)."),
    ] = "cold",
    processes: Annotated[
        int,
        typer.Option("--processes", min=1, help="Run the command this many times, each a fresh process; every "
                                                "run is labelled repetition=N."),
    ] = 1,
    interleave: Annotated[
        bool,
        typer.Option("--interleave", help="Two commands, BASE… -- HEAD…, run alternately (A B A B …), each run "
                                          "labelled side=base or side=head."),
    ] = False,
    dry_run: DryRunOption = "none",
    output_format: OutputOption = None,
    store: StoreOption = None,
) -> None:
    """Run a benchmark harness, then import what it wrote, its runs labelled with the git
    commit and branch of this folder (and dirty=true when it had uncommitted changes).

    The environment is captured first unless given. The harness's output goes to
    standard error; standard output carries kidx's result lines only. When a command
    fails or is interrupted, kidx exits 1 (130 on Ctrl-C) and imports nothing; what the
    processes before it wrote is kept, and kidx says where and how to import it.
    """
    import shutil
    import tempfile
    from pathlib import Path

    from kidx.cli.commands.import_ import import_files
    from kidx.operations import record as recording
    from kidx.timers.settings import checked_cache, checked_timer

    _check_arguments(format_name, environment, capture, library, output_format)
    format_options = _format_options(format_name, library, op, mode, level)
    timing = (checked_timer(timer, "--timer"), checked_cache(cache, "--cache")) if timer is not None else None
    labels = recording.parse_labels(label or [])
    command = list(command or [])
    commands = list(recording.split_interleaved(command)) if interleave else [command]
    out = output()
    folder = Path.cwd()
    scratch = Path(tempfile.mkdtemp(prefix="kidx-record-"))
    collected = recording.Collected()
    try:
        sides = _sides(out, format_name, commands, interleave, results, folder, scratch, labels)
        _check_store_writable(store, output_format, dry_run)
        if environment is None and capture is not False:
            environment = _capture(out, scratch)
        _announce(out, format_name, sides, processes, timing)

        def ended(plan, result, run_labels):
            shown = ", ".join(f"{key}={value}" for key, value in run_labels.items()) or "none"
            out.notice(f"record {format_name}: the command ended in {result.seconds:.1f} s; importing "
                       f"{plan.path}; labels: {shown}")

        from kidx.capture.gpu_state import gpu_states

        recording.run_processes(sides, processes, folder, scratch, out.notice, timing, collected, ended, gpu_states)
        for note in collected.notes:
            out.warning(note)

        def adjust(conversion):
            conversion = recording.restore_lines(conversion, collected.line_maps)
            if timing:
                conversion = _retimed(out, conversion, collected)
            return recording.label_runs(conversion, collected.metadata)

        import_files(format_name, collected.files, environment, dry_run, output_format, store, adjust=adjust,
                     options=format_options or None)
    except BaseException:
        _keep_measured(out, format_name, scratch, collected.files)
        raise
    shutil.rmtree(scratch, ignore_errors=True)


def _check_arguments(format_name: str, environment: str | None, capture: bool | None, library: str | None,
                     output_format: str | None) -> None:
    from kidx.operations.importing import check_format, format_options
    from kidx.output.printers import check_output

    check_format(format_name)
    if environment is not None and capture:
        raise UsageError("--environment and --capture exclude each other")
    format_options(format_name, library)
    check_output("record", output_format)


def _format_options(format_name: str, library: str | None, op: str | None, mode: str | None,
                    level: int | None) -> dict[str, object]:
    from kidx.operations.importing import format_options

    return format_options(format_name, library, op, mode, level)


def _check_store_writable(store: str | None, output_format: str | None, dry_run: str) -> None:
    """Before the harness runs: its results need somewhere to go (not for -o yaml|json or
    a dry run, which store nothing)."""
    if output_format in ("yaml", "json") or parse_dry_run(dry_run) is not None:
        return
    probe = open_store(store)
    try:
        probe.check_writable()
    finally:
        probe.close()
        probe.backend.close()


def _sides(out, format_name: str, commands: list, interleave: bool, results, folder, scratch, labels) -> list:
    """Each side's plan (one side, or base and head with --interleave), its checkout's git
    state and its labels."""
    from kidx.operations import record as recording

    sides = []
    for index, side_command in enumerate(commands):
        name = ("base", "head")[index] if interleave else None
        side_scratch = scratch / name if name else scratch
        side_scratch.mkdir(exist_ok=True)
        plan = recording.plan_output(format_name, side_command, results, folder, side_scratch)
        state = recording.git_state(recording.command_folder(side_command, folder) if interleave else folder)
        if state is None:
            out.warning(f"{folder} is not in a git checkout: the runs carry no commit label")
        sides.append(recording.Side(name, plan, state, recording.recording_metadata(state, plan.command, labels)[0]))
    return sides


def _announce(out, format_name: str, sides: list, processes: int, timing) -> None:
    for side in sides:
        out.notice(f"record {format_name}: running {shlex.join(side.plan.command)}"
                   + (f" ({processes} processes)" if processes > 1 else "")
                   + (f", timed with {timing[0]} ({timing[1]} L2) in place of do_bench" if timing else ""))


def _keep_measured(out, format_name: str, scratch, files: list[str]) -> None:
    """After a failure: the results measured so far kept (and said where), else the scratch removed."""
    import shutil

    if files:
        out.warning(f"the results measured so far are kept in {scratch}: import them with kidx import "
                    f"{format_name} {shlex.join(files)}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)


def _retimed(out, conversion, collected):
    from kidx.operations.record_timers import retimed

    calls = sum(len(entries) for entries in collected.timer_calls.values())
    if not calls:
        out.warning("--timer had no effect: the command never called triton.testing.do_bench, so its runs keep "
                    "the harness's own timer")
        return conversion
    result = retimed(conversion, collected.timer_calls, collected.max_sm_mhz)
    out.notice(f"record: {result.retimed} run{'s' if result.retimed != 1 else ''} timed by kidx's timer ({calls} "
               f"do_bench call{'s' if calls != 1 else ''})")
    if result.kept:
        out.warning(f"{result.kept} run{'s' if result.kept != 1 else ''} matched no do_bench call and keep the "
                    "harness's own protocol")
    if result.low_clock:
        out.warning(f"{result.low_clock} run{'s' if result.low_clock != 1 else ''} measured while the SM clock was "
                    "well below the GPU's maximum (annotation kernelindex.dev/clock-warning)")
    return result.conversion


def _capture(out, scratch) -> str:
    """This machine's environment, written to a file in ``scratch`` for the import."""
    from kidx.api.recording import captured_environment
    from kidx.output.serialize import to_yaml

    manifest, facts = captured_environment()  # what env capture and kidx.capture_environment() build
    for note in facts.notes:
        out.notice(f"note: {note}")
    path = scratch / "environment.yaml"
    path.write_text(to_yaml(manifest), encoding="utf-8")
    return str(path)


def register(app: typer.Typer) -> None:
    app.command("record", epilog=EXAMPLES)(record)
