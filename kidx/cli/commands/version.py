"""kidx version: the version of this kidx (``kidx --version`` says the same)."""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import output
from kidx.output.printers import check_output, output_help


def version_text() -> str:
    from kidx import __version__

    return f"kidx {__version__}\n"


def version(
    output_format: Annotated[str | None, typer.Option("--output", "-o", help=output_help("version"))] = None,
) -> None:
    """Print the version of kidx (and of the Python running it, with -o json|yaml)."""
    import platform

    from kidx import __version__

    out = output()
    if output_format is None:
        out.data(version_text())
        return
    check_output("version", output_format)
    from kidx.output.serialize import to_json, to_yaml

    info = {"kidxVersion": __version__, "pythonVersion": platform.python_version()}
    out.data(to_json(info) if output_format == "json" else to_yaml(info))


def register(app: typer.Typer) -> None:
    app.command("version")(version)
