"""The stand-in GPU (fake_gpu/README.md) as the fixture ``fake_gpu``: ``from stand_in_gpu import stand_in_gpu``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

FAKE_GPU = Path(__file__).parent / "fake_gpu"


@pytest.fixture(name="fake_gpu")
def stand_in_gpu(monkeypatch):
    """``torch`` (and ``triton``) are the stand-ins for the length of a test."""
    for name in [name for name in sys.modules if name.split(".")[0] in ("torch", "triton")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(FAKE_GPU))
    import torch

    from kidx.timers import cuda

    monkeypatch.setattr(cuda, "_FLUSH_BUFFERS", {})  # buffers of an earlier test's stand-in
    torch.timeline.__init__()
    torch.cuda.available = True
    yield torch
    for name in [name for name in sys.modules if name.split(".")[0] in ("torch", "triton")]:
        del sys.modules[name]
