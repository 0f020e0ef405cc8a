"""kidx record [--environment NAME|FILE | --capture] [--label k=v…] [--results FILE] [--library NAME]
[--timer T [--cache C]] [--processes N] [--interleave] [--gpus all|LIST] FORMAT -- COMMAND… [-- HEAD-COMMAND…]

Runs a benchmark harness and imports what it wrote, labelled with the commit it ran: the
operation is kidx.operations.ingest.record's (its steps kidx.operations.ingest.record_steps's), the
import and what it prints are kidx import's.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.commands.import_ import EnvironmentOption, LibraryOption, OutputOption
from kidx.cli.common import kind_registry, open_store, output, parse_dry_run
from kidx.cli.options import DryRunOption, StoreOption
from kidx.errors import UsageError
from kidx.formats.framework import IMPORTERS
from kidx.output.to_printer import to_printer
from kidx.timers.settings import CACHES, DEFAULT_CACHE, DEFAULT_MAX_TIME_MS, TIMERS, Sampling

EXAMPLES = """\b
Examples:
  kidx record pytest-benchmark -- pytest bench/
  kidx record google-benchmark --label suite=nightly -- ./build/my_benchmark --benchmark_repetitions=10
  cd Liger-Kernel/benchmark/scripts && kidx record liger -- python benchmark_rms_norm.py
  kidx record nvbench --environment environment.yaml -- ./my_nvbench_binary
  kidx record liger --timer cuda_graph --processes 8 -- python benchmark_rms_norm.py
  kidx record liger --timer cuda_graph --interleave --processes 4 -- \\
      python ../base/benchmark_rms_norm.py -- python benchmark_rms_norm.py
  kidx record liger --timer cuda_graph --interleave --processes 8 --gpus all -- \\
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
    ] = DEFAULT_CACHE,
    max_noise: Annotated[
        float | None,
        typer.Option("--max-noise", metavar="PCT",
                     help="With --timer: take samples until the relative standard error of their median is under PCT "
                          "percent (0.5 = 0.5 %), or --max-time has passed, in place of do_bench's budget.",
                     show_default=False),
    ] = None,
    max_time: Annotated[
        float,
        typer.Option("--max-time", metavar="SECONDS", help="With --max-noise: the most time spent sampling one call."),
    ] = DEFAULT_MAX_TIME_MS / 1000,
    min_time: Annotated[
        float | None,
        typer.Option("--min-time", metavar="SECONDS",
                     help="With --timer: sample each call for at least SECONDS (do_bench's budget raised to it; "
                          "--max-noise stops no sooner). For GEMM-heavy calls, whose clock the power cap steps "
                          "down while they are sampled.", show_default=False),
    ] = None,
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
    gpus: Annotated[
        str | None,
        typer.Option("--gpus", metavar="all|LIST", help="Run the processes on these GPUs at once (all, or indices "
                                                        "such as 0,2), one process a GPU at a time, both sides of "
                                                        "a repetition on one GPU; every run is labelled "
                                                        "gpu-index=INDEX.",
                     show_default=False),
    ] = None,
    recover: Annotated[
        str | None,
        typer.Option("--recover", metavar="FOLDER",
                     help="Run nothing: store what a failed or interrupted kidx record kept in FOLDER (the folder "
                          "its warning names), exactly as that recording would have.", show_default=False),
    ] = None,
    dry_run: DryRunOption = "none",
    output_format: OutputOption = None,
    store: StoreOption = None,
) -> None:
    """Run a benchmark harness, then import what it wrote, its runs labelled with the git
    commit and branch of this folder (and dirty=true when it had uncommitted changes).

    The environment is captured first unless given. The harness's output goes to
    standard error; standard output carries kidx's result lines only. When a command
    fails or is interrupted, kidx exits 1 (130 on Ctrl-C, 143 on SIGTERM: the command's
    whole process group is stopped) and imports nothing; what the processes before it
    wrote is kept, and kidx says where, and the --recover command that stores it as the
    recording would have. --timer is refused before anything runs where the harness's
    Python has no torch with a CUDA device.

    Every process's runs are runs of their own, named by where they came from (the
    recording, the side, the repetition and the harness's key), never by their figures;
    each carries the label recording=ID, the same for all runs of one kidx record.
    """
    from kidx.cli.commands.import_ import import_progress, print_import
    from kidx.operations.ingest import record_harness
    from kidx.operations.ingest import record_steps as recording
    from kidx.operations.ingest.importing import format_options
    from kidx.operations.ingest.record import RecordRequest
    from kidx.operations.ingest.record import record as recorded
    from kidx.output.events import stderr_reporter
    from kidx.output.serialize import to_yaml
    from kidx.timers.settings import checked_cache, checked_timer

    _check_arguments(format_name, environment, capture, library, output_format)
    options = format_options(format_name, library, op, mode, level)
    if timer is None and cache != DEFAULT_CACHE:
        raise UsageError("--cache applies with --timer: the harness's own timer treats the cache as it does")
    timing = (checked_timer(timer, "--timer"), checked_cache(cache, "--cache")) if timer is not None else None
    labels = recording.parse_labels(label or [])
    command = list(command or [])
    if recover is not None:
        given = [option for option, value in (("a command", command), ("--label", label), ("--timer", timer),
                                              ("--max-noise", max_noise is not None),
                                              ("--min-time", min_time is not None),
                                              ("--environment", environment), ("--capture", capture),
                                              ("--results", results), ("--interleave", interleave),
                                              ("--processes", processes != 1), ("--gpus", gpus)) if value]
        if given:
            raise UsageError(f"--recover stores a kept recording as it was: it takes no {', '.join(given)}")
    sampling = _sampling(max_noise, max_time, min_time, timer)
    commands = list(recording.split_interleaved(command)) if interleave and recover is None else [command]
    suffix = parse_dry_run(dry_run)
    printing = to_printer("record", output_format)
    request = RecordRequest(
        format_name=format_name, commands=commands, interleave=interleave, results=results, environment=environment,
        capture=capture is not False, labels=labels, options=options, timing=timing, processes=processes,
        dry_run=suffix is not None, keep=not printing.prints_manifests, recover=recover,
        store_hint=store if store and "://" not in store else None, sampling=sampling, gpus=gpus)
    with record_harness.terminate_as_interrupt():  # SIGTERM stops the harness as Ctrl-C does
        try:
            result = recorded(request, kind_registry(), lambda: open_store(store), stderr_reporter(output()), to_yaml,
                              import_progress())
        except record_harness.Terminated:  # between two processes, or during the import
            raise record_harness.RecordTerminated("terminated; nothing was imported") from None
    print_import(format_name, result, printing, suffix)


def _sampling(max_noise: float | None, max_time: float, min_time: float | None, timer: str | None) -> Sampling | None:
    """--max-noise PCT, --max-time SECONDS and --min-time SECONDS as a fraction and
    milliseconds, checked; None where none was given. --max-time is at least --min-time,
    as the timer samples, so the protocol records the time limit that held."""
    from kidx.timers.settings import checked_noise

    if max_noise is None and max_time != DEFAULT_MAX_TIME_MS / 1000:
        raise UsageError("--max-time applies with --max-noise")
    for option, value in (("--max-noise", max_noise), ("--min-time", min_time)):
        if value is not None and timer is None:
            raise UsageError(f"{option} applies with --timer: the harness's own timer samples as it does")
    if max_noise is None and min_time is None:
        return None
    least_ms = None if min_time is None else _milliseconds(min_time, "--min-time")
    if max_noise is None:
        return Sampling(None, None, least_ms)
    noise = checked_noise(max_noise / 100, f"--max-noise {max_noise:g}")
    limit_ms = _milliseconds(max_time, "--max-time", positive=True)
    return Sampling(noise, max(limit_ms, least_ms or 0.0), least_ms)


def _milliseconds(seconds: float, option: str, *, positive: bool = False) -> float:
    """An option's SECONDS as milliseconds: finite and not negative (above 0 where
    ``positive``: a time limit of 0 would stop sampling before it started)."""
    if positive and not 0 < seconds * 1000 < float("inf"):
        raise UsageError(f"{option} {seconds:g}: not a finite, positive number of seconds")
    if not 0 <= seconds * 1000 < float("inf"):
        raise UsageError(f"{option} {seconds:g}: not a finite, non-negative number of seconds")
    return seconds * 1000


def _check_arguments(format_name: str, environment: str | None, capture: bool | None, library: str | None,
                     output_format: str | None) -> None:
    from kidx.operations.ingest.importing import check_format, format_options
    from kidx.output.printers import check_output

    check_format(format_name)
    if environment is not None and capture:
        raise UsageError("--environment and --capture exclude each other")
    format_options(format_name, library)
    check_output("record", output_format)


def register(app: typer.Typer) -> None:
    app.command("record", epilog=EXAMPLES)(record)
