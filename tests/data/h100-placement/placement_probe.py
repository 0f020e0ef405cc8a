"""One process of the placement probe: Liger's and torch's LayerNorm backward (Liger-Kernel's
harness set-up: 16,384 x 4,096 bf16, eps 1e-6, ``y.backward(dy, retain_graph=True)`` with the
input's gradient cleared before each call), timed by kidx.measure (cuda_graph, cold L2, a
100 ms budget) five times in each of three ways:

- ``repeat``: the same tensors and the same L2 flush buffer each time (the timer's own noise);
- ``flush``: the same tensors, a new flush buffer each time, placed after a spacer of a
  different size (where the buffer the timer writes between samples lies);
- ``inputs``: new tensors and layers each time, after a spacer of a different size (where
  the kernel's own operands lie).

usage: python3 placement_probe.py PROCESS
Prints one JSON line per timing: the process, the way, the turn, the provider and the median (µs).
"""
import json
import statistics
import sys

import torch
from liger_kernel.transformers.layer_norm import LigerLayerNorm

import kidx
from kidx.timers import cuda as kidx_cuda

process = int(sys.argv[1])
ROWS, HIDDEN, DTYPE = 16384, 4096, torch.bfloat16
kept = []  # spacers and earlier tensors stay allocated, so each turn gets new memory


def operands(provider):
    x = torch.randn(ROWS, HIDDEN, device="cuda", dtype=DTYPE, requires_grad=True)
    layer = (LigerLayerNorm(hidden_size=HIDDEN, eps=1e-6) if provider == "liger"
             else torch.nn.LayerNorm(HIDDEN, eps=1e-6)).to("cuda").to(DTYPE)
    y = layer(x)
    dy = torch.randn_like(y)
    return x, layer, y, dy


def spacer(turn):
    kept.append(torch.empty((turn * 37 + process * 11 + 3) * 2**20, dtype=torch.int8, device="cuda"))


def timed(x, y, dy):
    timings = kidx.measure(lambda: y.backward(dy, retain_graph=True), timer="cuda_graph", cache="cold",
                           rep_ms=100, grad_to_none=[x])
    return statistics.median(timings.samples) / 1000


same = {provider: operands(provider) for provider in ("liger", "torch")}
for way in ("repeat", "flush", "inputs"):
    for turn in range(5):
        if way == "flush":
            spacer(turn)
            kidx_cuda._FLUSH_BUFFERS.clear()
        for provider in ("liger", "torch"):
            if way == "inputs":
                spacer(turn)
                tensors = operands(provider)
                kept.append(tensors)
            else:
                tensors = same[provider]
            x, _, y, dy = tensors
            print(json.dumps({"process": process, "way": way, "turn": turn, "provider": provider,
                              "medianUs": round(timed(x, y, dy), 3)}), flush=True)
