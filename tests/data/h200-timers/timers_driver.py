"""Liger-Kernel's harness, unmodified, for rms_norm, llama4_rope and swiglu: speed of the
forward and backward passes of providers liger and huggingface, written by Liger's own
utils (which time with triton.testing.do_bench) to ../data/all_benchmark_data*.csv,
relative to the scripts folder, the working directory. kidx record runs this script;
with --timer, the do_bench the harness calls is kidx's.

usage: python3 timers_driver.py default|step [KERNEL ...]

default: the harness's default model shape (Llama 3 8B, hidden 4096) at its first
sequence lengths, and one large shape; step: the default shapes at 1.1 times the rows,
a real change of about 10 % in the work, for the power test.
"""
import os
import sys

sys.path.insert(0, os.getcwd())  # Liger's scripts folder: the harness imports its siblings

import torch
from utils import build_speed_bench_fn, run_benchmarks

SHAPES = sys.argv[1]
KERNELS = sys.argv[2:] or ["rms_norm", "llama4_rope", "swiglu"]
BF16 = torch.bfloat16
STEP = 1.1


def rows(values):
    return values if SHAPES == "default" else [int(round(value * STEP)) for value in values]


for kernel in KERNELS:
    if kernel == "rms_norm":
        import benchmark_rms_norm as script
        setup, x_label = script.setup_rms_norm, "Sequence length"
        default = {"hidden_size": 4096, "dtype": BF16, "eps": 1e-6}
        shapes = [(default, rows([1024, 4096]))]
        if SHAPES == "default":
            shapes.append(({"hidden_size": 8192, "dtype": BF16, "eps": 1e-6}, [32768]))
    elif kernel == "llama4_rope":
        import benchmark_llama4_rope as script
        setup, x_label = script.setup_llama4_rope, "sequence length"
        default = {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "dtype": BF16}
        shapes = [(default, rows([1024, 4096]))]
        if SHAPES == "default":
            shapes.append(({"hidden_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8,
                            "dtype": BF16}, [16384]))
    elif kernel == "swiglu":
        import benchmark_swiglu as script
        setup, x_label = script.setup_swiglu, "total tokens"
        default = {"hidden_size": 4096, "intermediate_size": 14336, "dtype": BF16, "bsz": 1, "hidden_act": "silu"}
        shapes = [(default, rows([1024]))]
        if SHAPES == "default":
            shapes.append((default, [16384]))
    else:
        raise SystemExit(f"unknown kernel {kernel}")
    for config, x_values in shapes:
        run_benchmarks(
            bench_test_fn=build_speed_bench_fn(setup), kernel_name=kernel, metric_name="speed", metric_unit="ms",
            x_name="T", x_label=x_label, x_values=x_values, kernel_providers=["liger", "huggingface"],
            kernel_operation_modes=["forward", "backward"], extra_benchmark_configs=[config], overwrite=False,
        )
