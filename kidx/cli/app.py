"""The ``kidx`` entry point.

Only the invoked command's module is imported (and registered with typer), so a command
pays for its own dependencies and nothing else; ``kidx --help`` and unknown commands load
them all. Every KidxError becomes ``error: …`` on stderr and exit 1; usage errors from
the argument parser read as kubectl's, also exit 1; a closed stdout (``| head``) ends
quietly.
"""

from __future__ import annotations

import os
import sys

from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from kidx.output.gateway import Output

COMMANDS: dict[str, str] = {
    "apply": "kidx.cli.commands.apply",
    "get": "kidx.cli.commands.get",
    "describe": "kidx.cli.commands.describe",
    "delete": "kidx.cli.commands.delete",
    "digest": "kidx.cli.commands.digest",
    "import": "kidx.cli.commands.import_",
    "record": "kidx.cli.commands.record",
    "env": "kidx.cli.commands.env",
    "explain": "kidx.cli.commands.explain",
    "api-resources": "kidx.cli.commands.api_resources",
    "diff": "kidx.cli.commands.diff",
    "history": "kidx.cli.commands.history",
    "completion": "kidx.cli.commands.completion",
    "fsck": "kidx.cli.commands.fsck",
    "gc": "kidx.cli.commands.gc",
    "export": "kidx.cli.commands.export",
    "version": "kidx.cli.commands.version",
    "compare": "kidx.cli.commands.compare",
    "series": "kidx.cli.commands.series",
    "plot": "kidx.cli.commands.plot",
    "push": "kidx.cli.commands.push",
    "pull": "kidx.cli.commands.pull",
    "publish": "kidx.cli.commands.publish",
    "summary": "kidx.cli.commands.summary",
}
# what a command's name is mistaken for (kubectl's SuggestFor: get for list and ps): the
# suggestion for an unknown command, before the spelling's nearest (list is nearer digest)
SUGGEST_FOR: dict[str, str] = {"list": "get", "ls": "get", "ps": "get", "show": "describe", "inspect": "describe",
                               "rm": "delete", "remove": "delete", "create": "apply", "log": "history"}
INTERRUPTED = 130  # 128 + SIGINT, the shell's convention
# kubectl diff reports errors with 2, since 1 means "differences found"
USAGE_ERROR_EXIT: dict[str | None, int] = {"diff": 2, "compare": 2, "series": 2}  # by command name

HELP = """kidx records and queries GPU-kernel benchmark results, the way kubectl handles manifests.

Objects (BenchmarkRun, BenchmarkProtocol, ExecutionEnvironment, Workload, Implementation)
live in a content-addressed store: a folder or a PostgreSQL database (--store PATH|postgresql://…
or KIDX_STORE, else the user data folder); push and pull copy between stores."""


def _command_name(argv: list[str]) -> str | None:
    for argument in argv:
        if not argument.startswith("-"):
            return argument
        if argument in ("-h", "--help"):
            return None
    return None


# Short options that take a value: kubectl (pflag) also reads them written ``-o=json``.
_VALUED_SHORT = frozenset({"-o", "-l", "-f", "-L"})


def _normalise(argv: list[str]) -> list[str]:
    """kubectl's habits the parser does not have: a bare ``--dry-run`` means client,
    ``-o=json`` means ``-o json`` (the parser would read the value as ``=json``), and
    the global ``--store`` may come before the command (``kidx --store S get runs``).
    Nothing after ``--`` is touched: it is another program's command line (kidx record)."""
    arguments: list[str] = []
    for position, argument in enumerate(argv):
        if argument == "--":
            arguments += argv[position:]
            break
        if argument == "--dry-run":
            arguments.append("--dry-run=client")
        elif argument[:2] in _VALUED_SHORT and argument[2:3] == "=":
            arguments += [argument[:2], argument[3:]]
        else:
            arguments.append(argument)
    leading: list[str] = []
    while arguments and arguments[0].startswith("--store"):
        take = 1 if "=" in arguments[0] else 2
        leading, arguments = leading + arguments[:take], arguments[take:]
    if leading and arguments:
        return [arguments[0], *leading, *arguments[1:]]
    return arguments


def build_app(names):
    import importlib  # the parser's path: the fast path imports no command module by name

    import typer

    app = typer.Typer(
        name="kidx",
        help=HELP,
        add_completion=False,
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def _root() -> None:
        """kidx: a kernel benchmark index."""

    for name in names:
        importlib.import_module(COMMANDS[name]).register(app)
    return app


def _parser_errors(typer) -> tuple[Any, Any]:  # classes found at run time: no static type
    """click's ``UsageError`` and ``ClickException``, reached through typer's public
    ``BadParameter`` (a ``UsageError``): typer up to 0.25 raises the ``click`` package's
    classes, typer 0.26 on those of a private copy of click, so neither ``import click`` nor
    a typer module names the classes typer raises for every supported version."""
    bases = {cls.__name__: cls for cls in typer.BadParameter.__mro__}
    return bases["UsageError"], bases["ClickException"]


def _is_a(exc: BaseException, name: str) -> bool:
    """Whether ``exc`` is one of click's ``name`` errors (click's public class names)."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def run(argv: list[str]) -> int:
    import warnings

    with warnings.catch_warnings():
        # a warning from below (a missing C parser, say) reaches the user as kubectl's do
        warnings.showwarning = _show_warning
        return _run(argv)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    from kidx.output.gateway import Output

    Output().warning(str(message))


def _run(argv: list[str]) -> int:
    if argv[:1] == ["--version"]:
        from kidx.cli.commands.version import version_text

        sys.stdout.write(version_text())
        return 0
    if argv[:1] == ["__complete"]:
        from kidx.cli.completion import complete

        sys.stdout.write(complete(argv[1:], COMMANDS))
        return 0
    from kidx.output.gateway import Output

    output = Output()
    from kidx.store import notices

    notices.listen(output.notice)  # the store says when it waits for another writer
    from kidx.cli import fast

    simple = fast.parse(_normalise(argv))
    if simple is not None:  # read as the parser would: the command runs without typer
        command_name, keywords = simple
        try:
            return fast.body(command_name)(**keywords)
        except BaseException as exc:
            code = _failure(exc, output)
            if code is None:
                raise
            return code
    name = _command_name(argv)
    names = [name] if name in COMMANDS else list(COMMANDS)
    import typer

    usage_error, click_exception = _parser_errors(typer)
    command = typer.main.get_command(build_app(names))
    from kidx.store import interrupts

    interrupts.keep_until_released()
    try:
        return _invoke(command, argv, name, output, usage_error, click_exception)
    finally:
        if interrupts.release():  # Ctrl-C came once the write was committing: that outcome stands
            output.notice("interrupted after the write was committed: the outcome above is what the store holds")


def _invoke(command, argv: list[str], name: str | None, output, usage_error, click_exception) -> int:
    import typer


    try:
        result = command.main(args=_normalise(argv), prog_name="kidx", standalone_mode=False)
        if result == INTERRUPTED:  # typer returns this for Ctrl-C, silently; no kidx command does
            output.error("interrupted")
        return result if isinstance(result, int) else 0
    except usage_error as exc:
        if _is_a(exc, "NoArgsIsHelpError"):
            output.stdout.write(exc.ctx.get_help() + "\n")
            return 0
        message = exc.format_message()
        if message.startswith("No such command") and name in SUGGEST_FOR:
            message = f"No such command '{name}'. Did you mean '{SUGGEST_FOR[name]}'?"
        if _is_a(exc, "NoSuchOption"):
            message = f"unknown flag: {exc.option_name}"  # kubectl's wording
        output.error(message)
        if exc.ctx is not None and exc.ctx.command_path.startswith("kidx "):  # the sub-command too
            where = f"{exc.ctx.command_path} --help"
        else:
            where = f"kidx {name} --help" if name in COMMANDS else "kidx --help"
        output.notice(f"See '{where}' for usage.")
        return USAGE_ERROR_EXIT.get(name, 1)
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:  # the parser's word for Ctrl-C
        output.error("interrupted")
        return 130
    except click_exception as exc:
        output.error(exc.format_message())
        return 1
    except Exception as exc:
        code = _failure(exc, output)
        if code is None:
            raise
        return code


def _failure(exc: BaseException, output: Output) -> int | None:
    """Report a command's failure as kidx does, whichever way its arguments were read: the
    exit code, or None for what must go on up (a closed stdout, Ctrl-C, KIDX_DEBUG)."""
    from kidx.errors import InvalidInputError, KidxError, NotFoundError
    from kidx.output.gateway import OutputClosed

    if isinstance(exc, InvalidInputError):
        for problem in exc.problems:
            output.error(str(problem))
        if len(exc.problems) > 1:
            output.error(f"{len(exc.problems)} problems found; nothing was changed")
        return exc.exit_code
    if isinstance(exc, NotFoundError):
        output.reason_error("NotFound", str(exc))
        return exc.exit_code
    if isinstance(exc, KidxError):
        output.error(str(exc))
        hint = getattr(exc, "hint", None)  # what to try instead, where the error knows (an unknown type)
        if hint:
            output.notice(hint)
        return exc.exit_code
    if isinstance(exc, OutputClosed) or not isinstance(exc, Exception):  # main() ends quietly, or interrupted
        return None
    if isinstance(exc, OSError):
        output.error(f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""))
        return 1
    if os.environ.get("KIDX_DEBUG"):  # never a traceback unless asked: say what failed, and how to see more
        return None
    output.error(f"unexpected {type(exc).__name__}: {exc} (set KIDX_DEBUG=1 to see where)")
    return 1


def main(argv: list[str] | None = None) -> None:
    """The console script. One short-lived process per command: the cyclic garbage
    collector and the interpreter's teardown (freeing every object one by one) only cost
    time here, about a sixth of a 1,000-row ``get``; every write has been committed and
    every stream is flushed before the process ends."""
    import gc

    from kidx.cli.exiting import ends_with_exit
    from kidx.output.gateway import OutputClosed

    gc.disable()
    ends_with_exit()
    argv = sys.argv[1:] if argv is None else argv
    try:
        code = run(argv)
        sys.stdout.flush()
    except (BrokenPipeError, OutputClosed):
        # the reader went away (``kidx get … | head``): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        code = INTERRUPTED
    try:
        sys.stderr.flush()
    finally:
        os._exit(code)
