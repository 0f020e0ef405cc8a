"""One A/A repetition of Liger-Kernel's harness for one kernel: speed (forward, backward,
full) of providers liger and huggingface at the harness's default model shape (Llama 3 8B:
hidden 4096) and at a large shape, written by Liger's own utils to
../data/all_benchmark_data.csv (relative to the scripts folder, the working directory).

usage: python3 aa_driver.py rms_norm|llama4_rope|swiglu
"""
import os
import sys

sys.path.insert(0, os.getcwd())  # Liger's scripts folder: the harness imports its siblings

import torch
from utils import build_speed_bench_fn, run_benchmarks

KERNEL = sys.argv[1]
BF16 = torch.bfloat16

if KERNEL == "rms_norm":
    import benchmark_rms_norm as script
    setup, x_label = script.setup_rms_norm, "Sequence length"
    shapes = [
        ({"hidden_size": 4096, "dtype": BF16, "eps": 1e-6}, [1024, 2048, 4096]),
        ({"hidden_size": 8192, "dtype": BF16, "eps": 1e-6}, [32768]),
    ]
elif KERNEL == "llama4_rope":
    import benchmark_llama4_rope as script
    setup, x_label = script.setup_llama4_rope, "sequence length"
    shapes = [
        ({"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "dtype": BF16}, [1024, 2048, 4096]),
        ({"hidden_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8, "dtype": BF16}, [16384]),
    ]
elif KERNEL == "swiglu":
    import benchmark_swiglu as script
    setup, x_label = script.setup_swiglu, "total tokens"
    shapes = [
        ({"hidden_size": 4096, "intermediate_size": 14336, "dtype": BF16, "bsz": 1, "hidden_act": "silu"}, [1024, 2048]),
        ({"hidden_size": 4096, "intermediate_size": 14336, "dtype": BF16, "bsz": 1, "hidden_act": "silu"}, [16384]),
    ]
else:
    raise SystemExit(f"unknown kernel {KERNEL}")

for config, x_values in shapes:
    run_benchmarks(
        bench_test_fn=build_speed_bench_fn(setup), kernel_name=KERNEL, metric_name="speed", metric_unit="ms",
        x_name="T", x_label=x_label, x_values=x_values, kernel_providers=["liger", "huggingface"],
        kernel_operation_modes=["forward", "backward", "full"], extra_benchmark_configs=[config], overwrite=False,
    )
