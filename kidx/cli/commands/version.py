"""kidx version: the version of this kidx (``kidx --version`` says the same)."""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import output
from kidx.output.printers import output_help
from kidx.output.to_printer import to_printer


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
    printing = to_printer("version", output_format)
    out.data(printing.render({"kidxVersion": __version__, "pythonVersion": platform.python_version()}))


def register(app: typer.Typer) -> None:
    app.command("version")(version)
