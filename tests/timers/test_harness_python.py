"""What kidx record --timer runs inside the harness's own Python.

That Python may be as old as 3.9 (docs/measuring.md), though kidx needs 3.11: the code
that ``site/sitecustomize.py`` loads there (the replacement do_bench, the timers, and the
modules of kidx they import, found here by following their imports) must be what 3.9 can
compile and run. No Python 3.9 is at hand, so the rules 3.9 enforces are checked on the
source: its grammar (``ast.parse(feature_version=(3, 9))``), annotations left unevaluated
(``from __future__ import annotations`` wherever there is one), no ``X | Y`` of types
evaluated at run time (``isinstance(v, int | float)``), and none of the standard
library's names that came in 3.10 or later.

And the harness's own ``sitecustomize`` stays itself: it runs after kidx's, and it is
what ``import sitecustomize`` gives the harness.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import REPO

from kidx.operations.ingest.record_timers import timer_environment

KIDX = REPO / "kidx"
FAKE_GPU = REPO / "tests" / "timers" / "fake_gpu"
#: where the harness's process starts loading kidx (sitecustomize runs kidx/__init__.py itself)
ENTRY = ["kidx/timers/site/sitecustomize.py", "kidx/__init__.py", "kidx/timers/__init__.py",
         "kidx/timers/do_bench.py"]
#: names of the standard library (and builtins) that Python 3.9 does not have
NEWER_NAMES = {"pairwise", "bit_count", "TypeAlias", "ParamSpec", "Concatenate", "TypeGuard", "Self", "StrEnum",
               "tomllib", "ExceptionGroup", "BaseExceptionGroup", "add_note", "UTC", "chdir", "get_annotations",
               "aiter", "anext", "EllipsisType", "NoneType", "NotImplementedType", "packages_distributions",
               "stdlib_module_names", "orig_argv", "KW_ONLY", "LiteralString", "Never", "assert_never",
               "reveal_type", "dataclass_transform", "TaskGroup", "timeout", "override", "batched", "TypeVarTuple",
               "Unpack", "Required", "NotRequired", "is_typeddict", "exception"}
#: keyword arguments 3.9 does not take, by the function's name
NEWER_KEYWORDS = {"zip": {"strict"}, "bisect": {"key"}, "bisect_left": {"key"}, "bisect_right": {"key"},
                  "insort": {"key"}, "insort_left": {"key"}, "insort_right": {"key"},
                  "dataclass": {"slots", "kw_only", "match_args"}}
TYPE_NAMES = {"int", "float", "str", "bytes", "bool", "list", "dict", "tuple", "set", "frozenset", "type",
              "object", "complex"}


def _module_file(name: str) -> Path | None:
    path = REPO.joinpath(*name.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (imports there never run)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                hidden.update(id(inner) for inner in ast.walk(statement))
    return hidden


def harness_modules() -> list[Path]:
    """Every file of kidx the harness's process may load: the entry points and what they
    import (at any depth, in functions too), with the packages above each."""
    found: dict[Path, None] = {}
    pending = [REPO / entry for entry in ENTRY]
    while pending:
        path = pending.pop()
        if path in found:
            continue
        found[path] = None
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hidden = _type_checking_only(tree)
        names: list[str] = []
        for node in ast.walk(tree):
            if id(node) in hidden:
                continue
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            if name.split(".")[0] != "kidx":
                continue
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):  # a package's __init__ runs before its modules
                module = _module_file(".".join(parts[:depth]))
                if module is not None:
                    pending.append(module)
    return sorted(found)


def _annotations(tree: ast.Module) -> list[ast.expr]:
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                             arguments.vararg, arguments.kwarg]:
                if argument is not None and argument.annotation is not None:
                    found.append(argument.annotation)
            if node.returns is not None:
                found.append(node.returns)
    return found


def _is_type(node: ast.expr) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _is_type(node.left) or _is_type(node.right)
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, ast.Name):
        return node.id in TYPE_NAMES or _class_name(node.id)
    if isinstance(node, ast.Subscript):  # list[int], Sequence[float]
        return True
    return isinstance(node, ast.Attribute) and _class_name(node.attr)  # abc.Callable, not os.O_APPEND


def _class_name(name: str) -> bool:
    return name[:1].isupper() and not name.isupper()


def problems_for_python_3_9(source: str, where: str) -> list[str]:
    """What Python 3.9 could not compile or run in ``source``."""
    try:
        tree = ast.parse(source, feature_version=(3, 9))
    except SyntaxError as exc:
        return [f"{where}:{exc.lineno}: not Python 3.9's grammar: {exc.msg}"]
    problems = []
    annotations = _annotations(tree)
    future = any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
                 and any(alias.name == "annotations" for alias in node.names) for node in tree.body)
    if annotations and not future:
        problems.append(f"{where}:{annotations[0].lineno}: annotations are evaluated at import without "
                        "'from __future__ import annotations'")
    in_annotation = {id(inner) for annotation in (annotations if future else []) for inner in ast.walk(annotation)}
    for node in ast.walk(tree):
        if id(node) in in_annotation:
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr) and _is_type(node):
            problems.append(f"{where}:{node.lineno}: '{ast.unparse(node)}': a union of types with | is Python 3.10")
        elif isinstance(node, ast.Name | ast.alias | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.name if isinstance(node, ast.alias) else node.attr
            if name.split(".")[-1] in NEWER_NAMES:
                problems.append(f"{where}:{node.lineno}: '{name}' is not in Python 3.9")
        elif isinstance(node, ast.Call):
            function = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            for keyword in node.keywords:
                if keyword.arg in NEWER_KEYWORDS.get(function, ()):
                    problems.append(f"{where}:{node.lineno}: {function}({keyword.arg}=…) is Python 3.10")
    return problems


def test_the_modules_the_harness_loads_are_found():
    modules = {str(path.relative_to(REPO)) for path in harness_modules()}
    assert {"kidx/timers/do_bench.py", "kidx/timers/settings.py", "kidx/timers/summaries.py", "kidx/timers/cuda.py",
            "kidx/timers/profiler_trace.py", "kidx/errors.py", "kidx/records.py", "kidx/__init__.py",
            "kidx/timers/site/sitecustomize.py"} <= modules
    assert "kidx/api/store.py" not in modules  # imported under TYPE_CHECKING only


def test_what_the_harness_loads_is_python_3_9():
    problems = [problem for path in harness_modules()
                for problem in problems_for_python_3_9(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))]
    assert problems == []


@pytest.mark.parametrize(("source", "problem"), [
    ("from __future__ import annotations\nok = isinstance(1, int | float)\n",
     "m.py:2: 'int | float': a union of types with | is Python 3.10"),
    ("def f(x: int | None) -> None:\n    pass\n",
     "m.py:1: annotations are evaluated at import without 'from __future__ import annotations'"),
    ("Alias = list[int] | None\n", "m.py:1: 'list[int] | None': a union of types with | is Python 3.10"),
    ("match x:\n    case 1:\n        pass\n", "m.py:3: not Python 3.9's grammar: Pattern matching"),
    ("import itertools\npairs = itertools.pairwise([1, 2])\n", "m.py:2: 'pairwise' is not in Python 3.9"),
    ("pairs = list(zip([1], [2], strict=True))\n", "m.py:1: zip(strict=…) is Python 3.10"),
])
def test_the_check_finds_what_python_3_9_refuses(source, problem):
    found = problems_for_python_3_9(source, "m.py")
    assert [text for text in found if text.startswith(problem)] == found[:1]


def test_what_is_fine_on_python_3_9_passes():
    source = textwrap.dedent("""\
        from __future__ import annotations
        import os
        from collections.abc import Callable

        def f(x: int | None, g: Callable[[], float | None]) -> list[int] | None:
            flags = os.O_WRONLY | os.O_APPEND
            return [flags] if isinstance(x, (int, float)) else None
        """)
    assert problems_for_python_3_9(source, "m.py") == []


def _harness(tmp_path: Path, script: str, own_site: bool) -> subprocess.CompletedProcess:
    """``script`` run as kidx record --timer runs a harness: kidx's sitecustomize first on
    its PYTHONPATH, then (``own_site``) a folder with the harness's own sitecustomize."""
    paths = [str(FAKE_GPU)]
    if own_site:
        own = tmp_path / "own-site"
        own.mkdir()
        (own / "sitecustomize.py").write_text("import sys\nOWN = 'the harness own'\nsys.ran_own_sitecustomize = True\n")
        paths.insert(0, str(own))
    base = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    base.pop("FAKE_GPU_ABSENT", None)
    environment = timer_environment("cuda_graph", "cold", tmp_path / "log.jsonl", base)
    return subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env=environment, timeout=120)


WHICH = ("import sys, sitecustomize, triton.testing\n"
         "print(getattr(sitecustomize, 'OWN', 'kidx'), getattr(sys, 'ran_own_sitecustomize', False))\n"
         "print(triton.testing.do_bench.__module__)\n")


def test_the_harness_own_sitecustomize_is_what_it_imports(tmp_path):
    done = _harness(tmp_path, WHICH, own_site=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the harness own True\nkidx.timers.do_bench\n"  # and kidx's do_bench is in place


def test_without_a_sitecustomize_of_its_own_the_harness_still_gets_kidx_do_bench(tmp_path):
    done = _harness(tmp_path, WHICH, own_site=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "kidx False\nkidx.timers.do_bench\n"


def test_a_failing_own_sitecustomize_is_reported_as_python_reports_it(tmp_path):
    """Python says ``Error in sitecustomize`` and goes on; kidx's do_bench is in place."""
    own = tmp_path / "own-site"
    own.mkdir()
    (own / "sitecustomize.py").write_text("raise RuntimeError('broken on purpose')\n")
    base = {**os.environ, "PYTHONPATH": os.pathsep.join([str(own), str(FAKE_GPU)])}
    base.pop("FAKE_GPU_ABSENT", None)
    environment = timer_environment("cuda_graph", "cold", tmp_path / "log.jsonl", base)
    done = subprocess.run([sys.executable, "-c", "import sys, triton.testing\n"
                           "print('sitecustomize' in sys.modules, triton.testing.do_bench.__module__)"],
                          cwd=tmp_path, capture_output=True, text=True, env=environment, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "RuntimeError: broken on purpose" in done.stderr and "Error in sitecustomize" in done.stderr
    assert done.stdout == "False kidx.timers.do_bench\n"  # as when it fails without kidx
