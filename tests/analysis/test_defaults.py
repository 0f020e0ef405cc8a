"""The analysis' defaults are defined once (kidx.analysis.defaults, kidx.api.arguments):
every face that offers ``alpha``, ``threshold`` or ``by`` (the command line, the Python
API, the operations' requests, the site) names the definition instead of repeating its
value, so a change of a default is one edit and no face can drift from the others."""

from __future__ import annotations

import ast
import inspect

import pytest
from conftest import REPO

from kidx.analysis import defaults, significance
from kidx.api import analysis as api_analysis
from kidx.api import arguments
from kidx.api.store import Store
from kidx.cli.commands import compare as compare_command
from kidx.cli.commands import plot as plot_command
from kidx.cli.commands import publish as publish_command
from kidx.cli.commands import series as series_command
from kidx.operations.analyse import aggregate as aggregate_operation
from kidx.operations.analyse.compare import CompareRequest, Comparison
from kidx.operations.analyse.series import SeriesRequest, SeriesResult
from kidx.publish import TITLE
from kidx.publish.context import PublishRequest
from kidx.publish.model import build_model

# parameter -> the name its default must be spelled with, in the faces' modules
NAMED = {"alpha": "ALPHA", "threshold": "DEFAULT_THRESHOLD", "by": "BY_IMPLEMENTATION"}
FACES = ("kidx/api", "kidx/cli", "kidx/operations", "kidx/publish")

SIGNATURES = [
    api_analysis.compare_request, api_analysis.series_request, Store.compare, Store.series,
    compare_command.compare, series_command.series, publish_command.publish, plot_command.plot,
    CompareRequest, Comparison, SeriesRequest, SeriesResult, aggregate_operation.aggregate_rows,
    aggregate_operation.overall, PublishRequest, build_model,
]


def spelled_defaults(path, names=tuple(NAMED)) -> list[tuple[int, str, str]]:
    """(line, parameter, its default's source) of every parameter or record field named in ``names``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True))
            pairs += [(arg, d) for arg, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
            found += [(d.lineno, arg.arg, ast.unparse(d)) for arg, d in pairs if arg.arg in names]
        elif isinstance(node, ast.ClassDef):
            found += [(s.lineno, s.target.id, ast.unparse(s.value)) for s in node.body
                      if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id in names
                      and s.value is not None]
    return found


def test_the_defaults_are_defined_once_and_re_exported_where_the_rule_is():
    assert (significance.ALPHA, significance.DEFAULT_THRESHOLD) == (0.05, None)
    assert significance.ALPHA is defaults.ALPHA and significance.DEFAULT_THRESHOLD is defaults.DEFAULT_THRESHOLD
    assert arguments.parse_by(arguments.BY_IMPLEMENTATION) is None


def test_every_face_spells_a_default_by_its_name():
    literal = [f"{path.relative_to(REPO)}:{line}: {name} = {source} (use {NAMED[name]})"
               for face in FACES for path in sorted((REPO / face).rglob("*.py"))
               for line, name, source in spelled_defaults(path) if source != NAMED[name]]
    assert literal == []


@pytest.mark.parametrize("face", SIGNATURES, ids=lambda face: face.__qualname__)
def test_every_signature_takes_the_defined_default(face):
    parameters = inspect.signature(face).parameters
    offered = [name for name in NAMED if name in parameters and parameters[name].default is not inspect.Parameter.empty]
    assert offered, f"{face.__qualname__} offers no default for {', '.join(NAMED)}"
    for name in offered:
        expected = getattr(defaults if name != "by" else arguments, NAMED[name])
        # the object itself: a literal 0.05 elsewhere is another float, equal but not the definition
        assert parameters[name].default is expected, f"{face.__qualname__}({name}=...)"


def test_the_timers_defaults_are_defined_once():
    from kidx.api.measuring import measure
    from kidx.cli.commands import record as record_command
    from kidx.timers.settings import CACHES, DEFAULT_CACHE, DEFAULT_TIMER, TIMERS, TimerSettings, settings

    assert (DEFAULT_TIMER, DEFAULT_CACHE) == (next(iter(TIMERS)), next(iter(CACHES))) == ("cuda_graph", "cold")
    for face in (measure, settings, TimerSettings):
        parameters = inspect.signature(face).parameters
        assert (parameters["timer"].default, parameters["cache"].default) == (DEFAULT_TIMER, DEFAULT_CACHE)
    assert inspect.signature(record_command.record).parameters["cache"].default == DEFAULT_CACHE
    # a string's value cannot tell its spelling: the source must name the definition
    spelled = [f"{path}:{line}: {name} = {source}"
               for path in ("kidx/api/measuring.py", "kidx/timers/settings.py", "kidx/cli/commands/record.py")
               for line, name, source in spelled_defaults(REPO / path, ("timer", "cache"))
               if source.startswith(("'", '"'))]
    assert spelled == []


def test_the_site_title_is_defined_once():
    assert inspect.signature(publish_command.publish).parameters["title"].default is TITLE
    assert PublishRequest._field_defaults["title"] is TITLE
