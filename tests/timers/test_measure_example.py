"""docs/measuring.md's kidx.measure example runs as written: on the stand-in GPU
(fake_gpu/README.md), with PyTorch's few calls it makes stood in, it times the call with
kidx's timer and stores the run, its protocol and what it refers to."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from conftest import REPO
from stand_in_gpu import stand_in_gpu  # noqa: F401 - the fixture fake_gpu

import kidx

PAGE = REPO / "docs" / "measuring.md"
KERNEL_MS = 0.005  # the stood-in RMSNorm: one 5 µs kernel


def example() -> str:
    """The python block of the page's section on kidx.measure."""
    section = PAGE.read_text(encoding="utf-8").split("## In a benchmark script: `kidx.measure`", 1)[1]
    [code] = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    return code


def test_the_kidx_measure_example_runs_as_written_and_stores_its_run(fake_gpu, monkeypatch, tmp_path, capsys):
    made = []

    def tensor(*shape, device=None, dtype=None):
        assert (device, dtype) == ("cuda", fake_gpu.bfloat16)
        made.append(shape)
        return SimpleNamespace(shape=shape)

    def rms_norm(x, normalized_shape, weight, eps):
        assert (x.shape, normalized_shape, weight.shape, eps) == ((1024, 4096), (4096,), (4096,), 1e-6)
        fake_gpu.fake_kernel(KERNEL_MS)

    monkeypatch.setattr(fake_gpu, "randn", tensor, raising=False)
    monkeypatch.setattr(fake_gpu, "ones", tensor, raising=False)
    monkeypatch.setattr(fake_gpu, "nn", SimpleNamespace(functional=SimpleNamespace(rms_norm=rms_norm)), raising=False)
    store = tmp_path / "store"
    monkeypatch.setenv("KIDX_STORE", str(store))
    exec(compile(example(), "docs/measuring.md", "exec"), {"__name__": "measure_rms_norm"})

    printed = capsys.readouterr().out.splitlines()
    assert made == [(1024, 4096), (4096,)]
    assert printed[0] == "ApplyResult(created 5)"
    assert re.fullmatch(r"median 5\.00 µs over \d+ samples", printed[1]), printed
    with kidx.open_store(str(store)) as opened:
        [run] = opened.get("runs", selector="suite=measure-example,kernel=rms_norm,operation=forward")
        assert run.spec["timing"]["latencyNs"]["median"] == pytest.approx(KERNEL_MS * 1e6)
        assert run.spec["sourceNative"]["source"] == "kidx.measure"
        assert run.workload.spec["parameters"] == {"hidden": 4096, "seq": 1024, "eps": 1e-6}
        measurement = run.protocol.spec["measurement"]
        assert (measurement["timer"], measurement["cache"], measurement["warmupMs"], measurement["repetitionMs"]) == (
            "cuda_graph", "cold", 25.0, 100.0)
