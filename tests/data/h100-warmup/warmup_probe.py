"""One process of the warm-up probe: a GEGLU MLP's forward (three bf16 GEMMs of Llama 3 8B's
MLP, 2,048 tokens, hidden 4,096, intermediate 14,336, with the tanh GELU), timed once by
kidx.measure (cuda_graph, cold L2) with the warm-up and budget named on the command line.

usage: python3 warmup_probe.py VARIANT WARMUP_MS REP_MS
Prints one JSON line: the variant, the samples (ms, in the order taken) and the SM clock
NVML reads before and after (MHz; null without NVML).
"""
import json
import sys

import torch

import kidx

variant, warmup_ms, rep_ms = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])


def sm_clock():
    try:
        import pynvml
        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetClockInfo(pynvml.nvmlDeviceGetHandleByIndex(0), pynvml.NVML_CLOCK_SM)
    except Exception:
        return None


torch.manual_seed(0)
x = torch.randn(2048, 4096, device="cuda", dtype=torch.bfloat16)
gate, up = (torch.randn(4096, 14336, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(2))
down = torch.randn(14336, 4096, device="cuda", dtype=torch.bfloat16) * 0.02


def mlp():
    return (torch.nn.functional.gelu(x @ gate, approximate="tanh") * (x @ up)) @ down


before = sm_clock()
timings = kidx.measure(mlp, timer="cuda_graph", cache="cold", warmup_ms=warmup_ms, rep_ms=rep_ms)
after = sm_clock()
samples = [value / 1e6 for value in timings.samples]
print(json.dumps({"variant": variant, "warmupMs": warmup_ms, "repMs": rep_ms, "smClockBefore": before,
                  "smClockAfter": after, "samplesMs": samples}))
