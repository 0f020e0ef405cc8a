"""Limits on the shape of the code that keep it readable: a command function parses,
calls one operation and prints (its body at most 45 lines), no module of kidx/ is
over 700 lines, and no request is built from a long row of positional arguments."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from conftest import REPO

MAX_COMMAND_BODY = 45
MAX_MODULE_LINES = 700
MAX_POSITIONAL_REQUEST = 5  # a request of more arguments than this names each (RecordRequest has 16 fields)
# modules being shrunk below the limit (docs/design.md §7); each must still be over it
OVER_MODULE_LIMIT: set[str] = set()


def _commands() -> dict[str, object]:
    """Every command of the typer app (``import liger``, ``env capture``, …): its function."""
    from kidx.cli.app import COMMANDS, build_app

    found: dict[str, object] = {}

    def walk(app, prefix: str) -> None:
        for command in app.registered_commands:
            found[prefix + (command.name or command.callback.__name__)] = command.callback
        for group in app.registered_groups:
            walk(group.typer_instance, prefix + group.name + " ")

    walk(build_app(list(COMMANDS)), "")
    return found


def body_lines(function) -> int:
    """Lines of a function's body in its source, from its first statement after the
    docstring to the end of its last statement."""
    function = inspect.unwrap(function)
    code = function.__code__
    tree = ast.parse(Path(code.co_filename).read_text(encoding="utf-8"))
    (node,) = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
               and node.name == code.co_name
               and min([node.lineno, *(d.lineno for d in node.decorator_list)]) == code.co_firstlineno]
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


def test_body_lines_counts_the_statements_after_the_docstring():
    def two():
        """A docstring
        of two lines."""
        first = 1
        return (first,
                2)

    def none():
        """Only a docstring."""

    assert (body_lines(two), body_lines(none)) == (3, 0)


def test_every_command_function_is_in_cli_and_its_body_is_short():
    commands = _commands()
    assert {"apply", "get", "record", "export", "env capture", "import liger", "import bundle"} <= set(commands)
    for name, function in commands.items():
        path = Path(inspect.unwrap(function).__code__.co_filename).resolve()
        assert path.is_relative_to(REPO / "kidx" / "cli"), f"kidx {name}: {path} is not in kidx/cli/"
    long = {name: lines for name, function in commands.items() if (lines := body_lines(function)) > MAX_COMMAND_BODY}
    assert long == {}, f"command functions over {MAX_COMMAND_BODY} lines: move the work into an operation"


def test_no_module_is_over_700_lines():
    sizes = {path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in (REPO / "kidx").rglob("*.py")}
    assert len(sizes) > 100
    over = {path for path, lines in sizes.items() if lines > MAX_MODULE_LINES}
    assert over - OVER_MODULE_LIMIT == set(), f"modules over {MAX_MODULE_LINES} lines: split them"
    assert OVER_MODULE_LIMIT - over == set(), "now within the limit: remove it from OVER_MODULE_LIMIT"


def test_no_request_is_built_from_a_long_row_of_positional_arguments():
    """An operation's request (``RecordRequest``, ``ExportRequest`` …) built from many
    positional arguments reads as a row of values whose meaning hangs on their order: past
    MAX_POSITIONAL_REQUEST, each is named."""
    found = []
    for path in sorted((REPO / "kidx").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and len(node.args) > MAX_POSITIONAL_REQUEST:
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name.endswith("Request"):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {name} with {len(node.args)} positional")
    assert found == []
