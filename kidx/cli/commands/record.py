"""kidx record [--environment NAME|FILE | --capture] [--label k=v…] [--results FILE] [--library NAME] FORMAT -- COMMAND…

Runs a benchmark harness and imports what it wrote, labelled with the commit it ran; the
steps are kidx.operations.record's, the import is kidx import's.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.commands.import_ import EnvironmentOption, LibraryOption, OutputOption
from kidx.cli.common import DryRunOption, StoreOption, output
from kidx.errors import UsageError
from kidx.importers.framework import IMPORTERS

EXAMPLES = """\b
Examples:
  kidx record pytest-benchmark -- pytest bench/
  kidx record google-benchmark --label suite=nightly -- ./build/my_benchmark --benchmark_repetitions=10
  cd Liger-Kernel/benchmark/scripts && kidx record liger -- python benchmark_rms_norm.py
  kidx record nvbench --environment environment.yaml -- ./my_nvbench_binary
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
    dry_run: DryRunOption = "none",
    output_format: OutputOption = None,
    store: StoreOption = None,
) -> None:
    """Run a benchmark harness, then import what it wrote, its runs labelled with the git
    commit and branch of this folder (and dirty=true when it had uncommitted changes).

    The environment is captured first unless given. The harness's output goes to
    standard error; standard output carries kidx's result lines only. When the command
    fails or is interrupted, nothing is imported and kidx exits 1 (130 on Ctrl-C).
    """
    import shlex
    import tempfile
    from pathlib import Path

    from kidx.cli.commands.import_ import import_files
    from kidx.operations import record as recording
    from kidx.output.formats import checked_output

    if format_name not in IMPORTERS:
        raise UsageError(f"unknown format {format_name!r}; formats: {', '.join(IMPORTERS)}")
    if environment is not None and capture:
        raise UsageError("--environment and --capture exclude each other")
    if library is not None and not IMPORTERS[format_name].library_option:
        takes = ", ".join(name for name, info in IMPORTERS.items() if info.library_option)
        raise UsageError(f"--library applies to {takes} (the {format_name} format names its implementations itself)")
    checked_output(output_format, ("json", "name", "yaml"))
    labels = recording.parse_labels(label or [])
    command = list(command or [])
    out = output()
    folder = Path.cwd()
    state = recording.git_state(folder)
    with tempfile.TemporaryDirectory(prefix="kidx-record-") as scratch_name:
        scratch = Path(scratch_name)
        plan = recording.plan_output(format_name, command, results, folder, scratch)
        if environment is None and capture is not False:
            environment = _capture(out, scratch)
        plan.snapshot()
        out.notice(f"record {format_name}: running {shlex.join(plan.command)}")
        result = recording.run_harness(plan.command, folder, out.notice)
        if result.returncode != 0:
            raise recording.HarnessFailed(recording.failure_message(plan.command, result))
        files = plan.collect(scratch)
        run_labels, annotations = recording.recording_metadata(state, plan.command, labels)
        shown = ", ".join(f"{key}={value}" for key, value in run_labels.items()) or "none"
        out.notice(f"record {format_name}: the command ended in {result.seconds:.1f} s; importing "
                   f"{plan.path}; labels: {shown}")
        if state is None:
            out.warning(f"{folder} is not in a git checkout: the runs carry no commit label")

        def adjust(conversion):
            return recording.label_runs(plan.restore_lines(conversion), run_labels, annotations)

        import_files(format_name, files, environment, dry_run, output_format, store, adjust=adjust,
                     options={"library": library} if library else None)


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
