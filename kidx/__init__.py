"""kidx: a kubectl-style command-line tool for a kernel benchmark index, and its Python API.

The public API is what ``__all__`` names (and the exceptions of ``kidx.errors``); every
other module is internal. docs/api.md is its reference, generated from these docstrings.

    import kidx

    with kidx.open_store() as store:
        frame = store.frame(selector="kernel=llama4_rope")

Names are imported on first use, so ``import kidx`` (and every ``kidx`` command) stays cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing or any module (kidx.records says why)

__version__ = "0.1.0"

if TYPE_CHECKING:
    from typing import Any

    from kidx.api.analysis import Comparison, SeriesResult
    from kidx.api.measuring import measure
    from kidx.api.objects import Environment, Implementation, Protocol, Run, StoredObject, Workload
    from kidx.api.recording import Recording, Timings, capture_environment, record_run
    from kidx.api.store import ApplyOutcome, ApplyResult, ImportResult, Store, open_store

#: public name -> the module that defines it
_PUBLIC = {
    "open_store": "kidx.api.store",
    "Store": "kidx.api.store",
    "ApplyResult": "kidx.api.store",
    "ApplyOutcome": "kidx.api.store",
    "ImportResult": "kidx.api.store",
    "StoredObject": "kidx.api.objects",
    "Run": "kidx.api.objects",
    "Workload": "kidx.api.objects",
    "Implementation": "kidx.api.objects",
    "Protocol": "kidx.api.objects",
    "Environment": "kidx.api.objects",
    "Comparison": "kidx.api.analysis",
    "SeriesResult": "kidx.api.analysis",
    "record_run": "kidx.api.recording",
    "Recording": "kidx.api.recording",
    "Timings": "kidx.api.recording",
    "capture_environment": "kidx.api.recording",
    "measure": "kidx.api.measuring",
}

__all__ = [
    "ApplyOutcome",
    "ApplyResult",
    "Comparison",
    "Environment",
    "Implementation",
    "ImportResult",
    "Protocol",
    "Recording",
    "Run",
    "SeriesResult",
    "Store",
    "StoredObject",
    "Timings",
    "Workload",
    "__version__",
    "capture_environment",
    "measure",
    "open_store",
    "record_run",
]


def __getattr__(name: str) -> Any:
    import importlib

    if name == "errors":  # ``kidx.errors.KidxError`` after a bare ``import kidx``
        return importlib.import_module("kidx.errors")
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'kidx' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
