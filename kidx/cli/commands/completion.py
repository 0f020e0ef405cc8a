"""kidx completion bash|zsh|fish"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import output


def completion(shell: Annotated[str, typer.Argument(help="bash, zsh or fish")]) -> None:
    """Print a shell completion script (kinds, names from the store, -o values, label keys).

    bash: source <(kidx completion bash)   zsh: source <(kidx completion zsh)
    fish: kidx completion fish | source
    """
    from kidx.cli.completion import script

    output().data(script(shell))


def register(app: typer.Typer) -> None:
    app.command("completion")(completion)
