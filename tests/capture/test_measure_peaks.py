"""kidx env capture --measure-peaks, run as a process on a machine whose torch is a fake
that reports known timings, so the recorded figures are exact; and the refusals when the
peaks cannot be measured."""

from __future__ import annotations

import json

import pytest

from kidx.identity import digest_of

FAKE_TORCH = '''
__version__ = "2.11.0+fake"
uint8, float32, bfloat16, float16 = "uint8", "float32", "bfloat16", "float16"
_durations = []  # milliseconds of each operation, in order
MS = {"float32": 20.0, "tf32": 3.0, "bfloat16": 1.5, "float16": 1.25}

class _Tensor:
    def __init__(self, dtype):
        self.dtype = dtype
    def fill_(self, value):
        return self
    def copy_(self, source):
        _durations.append(1.0)
        return self

def empty(*size, dtype, device):
    return _Tensor(dtype)

def randn(*size, dtype, device):
    return _Tensor(dtype)

def matmul(a, b, out=None):
    key = "tf32" if a.dtype == "float32" and backends.cuda.matmul.allow_tf32 else a.dtype
    _durations.append(MS[key])
    return out

class _Matmul:
    allow_tf32 = False

class backends:
    class cuda:
        matmul = _Matmul()

class cuda:
    @staticmethod
    def is_available():
        return AVAILABLE
    @staticmethod
    def mem_get_info(index):
        return 80 << 30, 141 << 30
    @staticmethod
    def get_device_name(index):
        return "NVIDIA H200"
    @staticmethod
    def synchronize():
        pass
    class Event:
        def __init__(self, enable_timing):
            self.at = None
        def record(self):
            self.at = len(_durations)
        def elapsed_time(self, end):
            return sum(_durations[self.at:end.at])
'''


@pytest.fixture
def capture(tmp_path, kidx_process):
    return capturing(tmp_path, kidx_process)


def capturing(tmp_path, kidx_process):
    """``run(*args, torch=SOURCE, measure=True)``: ``kidx env capture [--measure-peaks]
    ARGS`` where ``import torch`` runs SOURCE (None: it fails), NVML has no driver and
    nvidia-smi is not on PATH."""

    def run(*args: str, torch: str | None, measure: bool = True):
        lib = tmp_path / "lib"
        (lib / "torch").mkdir(parents=True, exist_ok=True)
        (lib / "torch" / "__init__.py").write_text(torch or "raise ImportError('No module named torch')")
        (lib / "pynvml.py").write_text("def nvmlInit():\n    raise RuntimeError('no driver')\n")
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(lib)}
        return kidx_process("env", "capture", *(["--measure-peaks"] if measure else []), *args, env=env)

    return run


def test_measured_peaks_are_annotations_outside_the_identity(capture):
    code, out, err = capture("-o", "json", torch="AVAILABLE = True\n" + FAKE_TORCH)
    assert code == 0, err
    body = json.loads(out)
    annotations = body["metadata"]["annotations"]
    # a 2 GiB copy (an eighth of 80 GiB free is more) read and written in 1 ms
    assert annotations["kernelindex.dev/measured-memory-bandwidth"] == str(2 * 2**31 * 1000) == "4294967296000"
    n3 = 2 * 8192**3  # 1,099,511,627,776 FLOPs per product
    assert annotations["kernelindex.dev/measured-flops-fp32"] == str(round(n3 / 0.020)) == "54975581388800"
    assert annotations["kernelindex.dev/measured-flops-tf32"] == str(round(n3 / 0.003))
    assert annotations["kernelindex.dev/measured-flops-bf16"] == str(round(n3 / 0.0015))
    assert annotations["kernelindex.dev/measured-flops-fp16"] == str(round(n3 / 0.00125)) == "879609302220800"
    assert annotations["kernelindex.dev/measured-peaks-method"] == (
        "torch 2.11.0+fake on GPU 0 (NVIDIA H200): device-to-device copy of 2147483648 bytes, read + write "
        "counted; matmul 8192x8192x8192, 2*n^3 FLOPs, per precision (fp32 with TF32 off); each the median "
        "of 20 calls timed with CUDA events after 3 warm-up calls")
    assert annotations["kernelindex.dev/measured-peaks-at"].endswith("Z")
    assert "measured" not in json.dumps(body["spec"])
    assert body["metadata"]["name"].endswith(digest_of(body).split(":")[1][:10])  # the name follows the spec alone
    assert ("measured peaks: memory 4295 GB/s; matmul TFLOP/s: fp32 55.0, tf32 366.5, bf16 733.0, fp16 879.6"
            in err.splitlines())


def test_the_identity_is_the_same_with_and_without_measured_peaks(capture):
    code, out, _ = capture("-o", "json", torch="AVAILABLE = True\n" + FAKE_TORCH)
    assert code == 0
    measured = json.loads(out)
    code, out, _ = capture("-o", "json", torch="AVAILABLE = True\n" + FAKE_TORCH, measure=False)
    assert code == 0
    plain = json.loads(out)
    assert "kernelindex.dev/measured-memory-bandwidth" not in plain["metadata"]["annotations"]
    assert measured["spec"] == plain["spec"] and measured["metadata"]["name"] == plain["metadata"]["name"]


@pytest.mark.parametrize("torch, message", [
    (None, "error: --measure-peaks needs torch with a CUDA device: torch cannot be imported (No module named torch)"),
    ("AVAILABLE = False\n" + FAKE_TORCH,
     "error: --measure-peaks needs a CUDA device: torch.cuda.is_available() is False"),
    ("AVAILABLE = True\n" + FAKE_TORCH.replace("return 80 << 30, 141 << 30", "raise RuntimeError('CUDA error: out of memory')"),
     "error: --measure-peaks failed: RuntimeError: CUDA error: out of memory"),
])
def test_peaks_that_cannot_be_measured_are_an_error_and_nothing_is_printed(capture, store, torch, message):
    code, out, err = capture(torch=torch)
    assert (code, out) == (1, "")
    assert err.splitlines()[-1] == message and "Traceback" not in err
    code, out, err = capture("--apply", torch=torch)
    assert (code, out) == (1, "") and not store.exists()


@pytest.mark.slow
def test_a_gpu_that_hangs_ends_in_an_error_not_a_hang(tmp_path, monkeypatch):
    from kidx.speed_of_light.measure import PeakMeasurementError, measure_peaks

    lib = tmp_path / "lib"
    (lib / "torch").mkdir(parents=True)
    (lib / "torch" / "__init__.py").write_text(
        "AVAILABLE = True\n" + FAKE_TORCH.replace("    def synchronize():\n        pass",
                                                 "    def synchronize():\n        import time; time.sleep(60)"))
    assert "time.sleep(60)" in (lib / "torch" / "__init__.py").read_text()
    monkeypatch.setenv("PYTHONPATH", str(lib))
    with pytest.raises(PeakMeasurementError) as raised:
        measure_peaks(timeout=3)
    assert str(raised.value) == (
        "--measure-peaks: no answer within 3 s (the GPU or its driver hung); nothing was measured")


def test_applied_the_measured_peaks_are_stored_as_annotations(capture, kidx_process):
    code, out, err = capture("--apply", torch="AVAILABLE = True\n" + FAKE_TORCH)
    assert code == 0, err
    assert out.startswith("executionenvironment.kernelindex.dev/") and out.endswith(" created\n")
    name = out.split("/", 1)[1].split()[0]
    code, out, err = kidx_process("get", "env", name, "-o", "json")
    assert code == 0, err
    annotations = json.loads(out)["metadata"]["annotations"]
    assert annotations["kernelindex.dev/measured-memory-bandwidth"] == "4294967296000"
    assert annotations["kernelindex.dev/measured-flops-bf16"] == str(round(2 * 8192**3 / 0.0015))


def test_a_stray_line_torch_prints_does_not_spoil_the_answer(capture):
    torch = "AVAILABLE = True\nprint('torch: a stray line on stdout')\n" + FAKE_TORCH + "\nprint('{\"peaks\": 1}')\n"
    code, out, err = capture("-o", "json", torch=torch)
    assert code == 0, err
    annotations = json.loads(out)["metadata"]["annotations"]
    assert annotations["kernelindex.dev/measured-memory-bandwidth"] == "4294967296000"


def test_peaks_outside_physical_bounds_are_refused_with_a_warning(capture):
    broken = (FAKE_TORCH.replace("_durations.append(1.0)", "_durations.append(-1.0)")
              .replace('"float32": 20.0, "tf32": 3.0', '"float32": -20.0, "tf32": 1e-9'))
    code, out, err = capture("-o", "json", torch="AVAILABLE = True\n" + broken)
    assert code == 0, err
    annotations = json.loads(out)["metadata"]["annotations"]
    measured = sorted(key for key in annotations if key.startswith("kernelindex.dev/measured-"))
    assert measured == ["kernelindex.dev/measured-flops-bf16", "kernelindex.dev/measured-flops-fp16",
                        "kernelindex.dev/measured-peaks-at", "kernelindex.dev/measured-peaks-method"]
    warnings = [line for line in err.splitlines() if "outside physical bounds" in line]
    assert warnings == [
        "Warning: --measure-peaks: the memory bandwidth measured, -4294967296000 bytes/s, is outside physical bounds "
        "(above 0, at most 1e+14): not recorded (a broken torch or driver timing?)",
        "Warning: --measure-peaks: the fp32 matmul FLOP/s measured, -54975581388800, is outside physical bounds "
        "(above 0, at most 1e+17): not recorded (a broken torch or driver timing?)",
        "Warning: --measure-peaks: the tf32 matmul FLOP/s measured, 1099511627776000000000000, is outside physical "
        "bounds (above 0, at most 1e+17): not recorded (a broken torch or driver timing?)"]
    assert "measured peaks: memory not recorded; matmul TFLOP/s: bf16 733.0, fp16 879.6" in err.splitlines()
