"""The reporting seam holds: operations report typed events, and only kidx/output/events.py
words them (docs/extending.md, "Reporting").

An operation module that hands its reporter a sentence (a string, an f-string, a string
built with + or %, ``.format`` or ``.join``), or still says something through
``notice``/``warning``, fails here; so does an event type without its words."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from pathlib import Path

import kidx.operations
from kidx.operations import events
from kidx.operations.reporting import Reporter
from kidx.output.events import worded

OPERATIONS = Path(kidx.operations.__file__).parent
REPORTING_CALLS = {"reporter", "report", "say"}  # what operations call their Reporter


def _event_types() -> list[type]:
    return [value for _, value in inspect.getmembers(events, inspect.isclass)
            if issubclass(value, events.Event) and value is not events.Event]


def _sentence(node: ast.expr) -> bool:
    """Whether ``node`` builds text: a string, an f-string, text joined, formatted or added."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _sentence(node.left) or _sentence(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in {"format", "join"}
    if isinstance(node, ast.IfExp):
        return _sentence(node.body) or _sentence(node.orelse)
    return False


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _worded_by_operations(source: str, path: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _called_name(node)
        if name in {"notice", "warning"} and isinstance(node.func, ast.Attribute):
            found.append(f"{path}:{node.lineno}: .{name}(…): report an event instead")
        elif name in REPORTING_CALLS and any(_sentence(argument) for argument in node.args):
            found.append(f"{path}:{node.lineno}: {name}(…) given a sentence: report an event instead")
    return found


def test_no_operation_words_what_it_reports():
    found = []
    for path in sorted(OPERATIONS.rglob("*.py")):
        found += _worded_by_operations(path.read_text(encoding="utf-8"), str(path.relative_to(OPERATIONS.parent)))
    assert found == []


def test_the_guard_sees_a_sentence_given_to_a_reporter():
    worded_here = ("def f(reporter, notes, out, runner):\n"
                   "    reporter(f'{len(notes)} notes')\n"
                   "    reporter('note: ' + notes[0])\n"
                   "    runner.say('process {} of {}'.format(1, 2))\n"
                   "    out.warning(notes[0])\n"
                   "    reporter(events.Retimed(1, 2))\n")
    assert [line.split(": ", 1)[0] for line in _worded_by_operations(worded_here, "m.py")] == [
        "m.py:2", "m.py:3", "m.py:4", "m.py:5"]


def test_a_reporter_takes_an_event():
    assert typing.get_args(Reporter) == ([events.Event], None)


def test_every_event_is_frozen_data_with_its_words():
    kinds = _event_types()
    for kind in kinds:
        assert dataclasses.is_dataclass(kind) and kind.__dataclass_params__.frozen, kind.__name__  # type: ignore[attr-defined]
        assert worded.dispatch(kind) is not worded.dispatch(events.Event), f"no words for {kind.__name__}"
    assert sorted(kind.__name__ for kind in kinds) == sorted(
        name for name in events.__all__ if name not in {"Event", "RunFlag"})
