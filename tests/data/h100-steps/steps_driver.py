"""Liger-Kernel's harness, unmodified, for layer_norm, softmax and geglu: speed of the
forward and backward passes of Liger's kernel and the harness's reference provider,
written by Liger's own utils (which time with triton.testing.do_bench) to
../data/all_benchmark_data*.csv, relative to the scripts folder, the working directory.
kidx record runs this script; with --timer, the do_bench the harness calls is kidx's.

usage: python3 steps_driver.py [KERNEL ...]

Each kernel runs at one base shape of the harness's default model (Llama 3 8B: hidden
4096, intermediate 14336, bf16) and at that shape with the rows (tokens) scaled by 1.01,
1.02 and 1.05: real steps in the work, for the verdicts' power test.
"""
import os
import sys

sys.path.insert(0, os.getcwd())  # Liger's scripts folder: the harness imports its siblings

import torch
from utils import build_speed_bench_fn, run_benchmarks

KERNELS = sys.argv[1:] or ["layer_norm", "softmax", "geglu"]
BF16 = torch.bfloat16
STEPS = (1.0, 1.01, 1.02, 1.05)


def stepped(rows):
    return [int(round(rows * step)) for step in STEPS]


for kernel in KERNELS:
    if kernel == "layer_norm":
        import benchmark_layer_norm as script
        setup, x_label, providers = script.setup_layer_norm, "Sequence length", ["liger", "torch"]
        config, x_values = {"hidden_size": 4096, "dtype": BF16, "eps": 1e-6}, stepped(16384)
    elif kernel == "softmax":
        import benchmark_softmax as script
        setup, x_label, providers = script.setup_softmax, "B*T", ["liger", "torch"]
        config, x_values = {"hidden_size": 4096, "dtype": BF16}, stepped(16384)
    elif kernel == "geglu":
        import benchmark_geglu as script
        setup, x_label, providers = script.setup_geglu, "sequence length", ["liger", "huggingface"]
        config = {"hidden_size": 4096, "intermediate_size": 14336, "dtype": BF16, "bsz": 1,
                  "hidden_act": "gelu_pytorch_tanh"}
        x_values = stepped(2048)
    else:
        raise SystemExit(f"unknown kernel {kernel}")
    run_benchmarks(
        bench_test_fn=build_speed_bench_fn(setup), kernel_name=kernel, metric_name="speed", metric_unit="ms",
        x_name="T", x_label=x_label, x_values=x_values, kernel_providers=providers,
        kernel_operation_modes=["forward", "backward"], extra_benchmark_configs=[config], overwrite=False,
    )
