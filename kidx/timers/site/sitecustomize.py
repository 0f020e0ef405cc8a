"""kidx record --timer: give the harness kidx's do_bench (kidx/timers/do_bench.py).

Python imports this file at start-up because kidx record puts its folder first on the
harness's PYTHONPATH. It changes nothing until the harness imports ``triton.testing``;
then, right after that module has run, its ``do_bench`` becomes kidx's. kidx itself is
loaded from the folder ``KIDX_TIMER_PACKAGE`` names, without adding anything to
``sys.path``, so the harness keeps its own packages. The ``sitecustomize`` this file
hides (a distribution's, a virtual environment's, the harness's) is run afterwards, and
is the module ``import sitecustomize`` gives the harness.

This runs in the harness's Python, which may be as old as 3.9 (docs/measuring.md), and
so must what it loads of kidx (tests/timers/test_harness_python.py).
"""

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_TARGET = "triton.testing"


def _kidx_timers():
    if "kidx" not in sys.modules:
        package = os.environ["KIDX_TIMER_PACKAGE"]
        spec = importlib.util.spec_from_file_location("kidx", os.path.join(package, "__init__.py"),
                                                      submodule_search_locations=[package])
        module = importlib.util.module_from_spec(spec)
        sys.modules["kidx"] = module
        spec.loader.exec_module(module)
    from kidx.timers.do_bench import do_bench

    return do_bench


class _ReplacingLoader(importlib.abc.Loader):
    """triton.testing's own loader, then do_bench replaced."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        module.do_bench = _kidx_timers()

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _TritonTestingFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _ReplacingLoader(spec.loader)
                return spec
        return None


def _run_hidden_sitecustomize():
    """Run the ``sitecustomize`` this file hides, as ``import sitecustomize`` would have:
    registered as ``sys.modules["sitecustomize"]`` (the import machinery that is loading
    this file hands that entry on, so the harness's ``import sitecustomize`` gets its
    own), and taken out again if it fails (Python then reports ``Error in
    sitecustomize``, as it would without kidx). Without one, this module stays."""
    paths = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", paths)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["sitecustomize"]
        raise


if os.environ.get("KIDX_TIMER_PACKAGE"):
    sys.meta_path.insert(0, _TritonTestingFinder())
_run_hidden_sitecustomize()
