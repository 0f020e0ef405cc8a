"""kidx env capture [-o yaml|json] [--apply] [--name NAME]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import kind_registry, open_store, output, parse_dry_run
from kidx.cli.options import DryRunOption, StoreOption
from kidx.errors import UsageError
from kidx.output.printers import output_help
from kidx.output.to_printer import to_printer

env_app = typer.Typer(
    name="env",
    help="Describe the machine kidx runs on as an ExecutionEnvironment.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@env_app.command(
    "capture",
    epilog="""\b
Examples:
  kidx env capture > environment.yaml
  kidx env capture --apply
  kidx env capture --measure-peaks -o yaml > environment.yaml
  kidx import liger all_benchmark_data.csv --environment environment.yaml
""",
)
def capture(
    output_format: Annotated[
        str | None,
        typer.Option("--output", "-o", help=output_help("env capture")),
    ] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Store the environment instead of printing it.")] = False,
    name: Annotated[
        str | None,
        typer.Option("--name", help="metadata.name to use instead of the one derived from the spec."),
    ] = None,
    measure_peaks: Annotated[
        bool,
        typer.Option(
            "--measure-peaks",
            help="Also time a device-to-device copy and large matrix products with torch on GPU 0, "
            "and record what they reached in annotations (not part of the digest).",
        ),
    ] = False,
    dry_run: DryRunOption = "none",
    store: StoreOption = None,
) -> None:
    """Read this machine's GPUs, driver, CUDA, libraries, CPU and OS into an
    ExecutionEnvironment, and print it or store it.

    GPUs come from NVML (the nvml extra), else nvidia-smi, else torch. What
    could not be read is listed on stderr and kept in an annotation. Only what makes
    results comparable is in the spec (the digest); host name, GPU UUIDs and clocks are
    annotations.
    """
    from kidx.operations.ingest.env_capture import capture_environment
    from kidx.output.events import stderr_reporter

    printing = to_printer("env capture", output_format)
    if printing.names_only and not apply:
        raise UsageError("-o name needs --apply")
    suffix = parse_dry_run(dry_run)
    if suffix is not None and not apply:
        raise UsageError("--dry-run needs --apply")
    captured = capture_environment(stderr_reporter(output()), name, measure_peaks,
                                   (lambda: open_store(store)) if apply else None, kind_registry() if apply else None,
                                   dry_run=suffix is not None)
    if captured.report is None:
        output().data(printing.render(captured.manifest))
        return
    from kidx.cli.common import print_outcomes

    print_outcomes(captured.report, printing, suffix)


def register(app: typer.Typer) -> None:
    app.add_typer(env_app, name="env")
