"""Liger-Kernel's harness, unmodified, for layer_norm and softmax: speed of the forward and
backward passes of Liger's kernel and torch's, at one shape of the harness's default
model (hidden 4096, bf16, 16384 rows), written by Liger's own utils (which time with
triton.testing.do_bench) to ../data/all_benchmark_data*.csv, relative to the scripts
folder, the working directory. kidx record runs this script in many processes (an A/A:
nothing changes between them); with --timer, the do_bench the harness calls is kidx's.

usage: python3 aa_driver.py [KERNEL ...]
"""
import os
import sys

sys.path.insert(0, os.getcwd())  # Liger's scripts folder: the harness imports its siblings

import torch
from utils import build_speed_bench_fn, run_benchmarks

KERNELS = sys.argv[1:] or ["layer_norm", "softmax"]
BF16 = torch.bfloat16

for kernel in KERNELS:
    if kernel == "layer_norm":
        import benchmark_layer_norm as script
        setup, x_label, config = script.setup_layer_norm, "Sequence length", {"hidden_size": 4096, "dtype": BF16,
                                                                              "eps": 1e-6}
    elif kernel == "softmax":
        import benchmark_softmax as script
        setup, x_label, config = script.setup_softmax, "B*T", {"hidden_size": 4096, "dtype": BF16}
    else:
        raise SystemExit(f"unknown kernel {kernel}")
    run_benchmarks(
        bench_test_fn=build_speed_bench_fn(setup), kernel_name=kernel, metric_name="speed", metric_unit="ms",
        x_name="T", x_label=x_label, x_values=[16384], kernel_providers=["liger", "torch"],
        kernel_operation_modes=["forward", "backward"], extra_benchmark_configs=[config], overwrite=False,
    )
