"""Time one kernel on a CUDA GPU and record it through kidx's Python API.

Run from the repository root on a machine with a CUDA GPU, torch and (optionally)
triton installed, and only kidx's runtime dependencies besides (kidx itself need not be
installed: the repository is put on the path):

    python3 -P tests/data/h200-api/record_measurement.py [--store FOLDER]

It times ``torch.softmax`` over a (4096, 8192) bf16 tensor twice: with
``torch.utils.benchmark.Timer.blocked_autorange`` (a ``Measurement``) and with
``triton.testing.do_bench(..., quantiles=[0.5, 0.2, 0.8])``; records each run with
``kidx.record_run`` (the environment from ``kidx.capture_environment()``) into a folder
store (default ``h200-api-store`` in the current folder, created if needed); applies the
recordings twice (the second apply must report every object unchanged); and prints
``kidx get runs``, the runs' rows as ``Store.records`` gives them, and every stored
manifest as YAML.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# the repository this script is part of: the nearest folder above it that holds kidx/
REPO = next(folder for folder in Path(__file__).resolve().parents if (folder / "kidx" / "__init__.py").is_file())
sys.path.insert(0, str(REPO))
# kidx's runtime dependencies (pyproject.toml), by import name
RUNTIME = ("typer", "ruamel.yaml", "jsonschema", "rich", "platformdirs")


def missing_runtime() -> list[str]:
    import importlib.util

    return [name for name in RUNTIME if importlib.util.find_spec(name.split(".")[0]) is None
            or importlib.util.find_spec(name) is None]


if missing_runtime():
    sys.stderr.write(f"error: kidx's runtime dependencies are not importable: {', '.join(missing_runtime())} "
                     "(pip install typer 'ruamel.yaml[oldlibyaml]' jsonschema rich platformdirs, or put a folder "
                     "holding them on PYTHONPATH)\n")
    sys.exit(1)

import kidx  # noqa: E402
from kidx.cli.app import run as kidx_command  # noqa: E402

IMPLEMENTATION = {"library": "torch", "operation": "softmax", "backend": "eager",
                  "entryPoint": "torch:softmax"}
LABELS = {"kernel": "softmax", "suite": "h200-api"}


def do_bench_quantiles(torch, x, device: str) -> list[float] | None:
    """do_bench's median, p20 and p80 in ms, or None (no triton, or no GPU)."""
    if device != "cuda":
        print("no do_bench run on the CPU")
        return None
    try:
        import triton.testing
    except ImportError:
        print("triton is not installed: no do_bench run")
        return None
    return list(triton.testing.do_bench(lambda: torch.softmax(x, dim=-1), quantiles=[0.5, 0.2, 0.8]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="h200-api-store", help="the folder store to record into")
    parser.add_argument("--min-run-time", type=float, default=1.0, help="seconds for blocked_autorange")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="cpu: a check of the script itself without a GPU (no do_bench run)")
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--columns", type=int, default=8192)
    args = parser.parse_args()

    import torch
    from torch.utils.benchmark import Timer

    if args.device == "cuda" and not torch.cuda.is_available():
        sys.stderr.write("error: no CUDA device (torch.cuda.is_available() is False)\n")
        return 1
    name = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    print(f"device: {name}; torch {torch.__version__}, CUDA {torch.version.cuda}")
    x = torch.randn(args.rows, args.columns, device=args.device, dtype=torch.bfloat16)
    workload = {"operation": "softmax", "parameters": {"rows": args.rows, "columns": args.columns, "dim": -1},
                "dtype": "bf16"}
    environment = kidx.capture_environment()
    print(f"environment: {environment['metadata']['name']} ({environment['metadata']['title']})")

    recordings = []
    timer = Timer("torch.softmax(x, dim=-1)", globals={"torch": torch, "x": x}, label="softmax",
                  sub_label=f"{args.rows}x{args.columns} bf16", description="torch eager")
    measurement = timer.blocked_autorange(min_run_time=args.min_run_time)
    print(measurement)
    recordings.append(kidx.record_run(implementation=IMPLEMENTATION, workload=workload, environment=environment,
                                      timings=measurement, labels={**LABELS, "harness": "torch-utils-benchmark"}))
    quantiles = do_bench_quantiles(torch, x, args.device)
    if quantiles is not None:
        print(f"do_bench (ms, quantiles 0.5 0.2 0.8): {quantiles}")
        recordings.append(kidx.record_run(implementation=IMPLEMENTATION, workload=workload,
                                          environment=environment, timings=kidx.Timings.from_do_bench(quantiles),
                                          labels={**LABELS, "harness": "do-bench"}))

    with kidx.open_store(args.store) as store:
        first = store.apply(recordings)
        again = store.apply(recordings)
        print(f"apply: {first}; again: {again}")
        if again.count("unchanged") != len(again.outcomes):
            sys.stderr.write("error: applying the same recordings again changed the store\n")
            return 1
        for row in store.records(selector="suite=h200-api"):
            print({key: row[key] for key in ("name", "statistic", "value", "low", "high", "unit",
                                             "protocol.spec.harness.name", "environment.spec.hardware.product")})
    print(f"\n$ kidx get runs -l suite=h200-api --store {args.store}", flush=True)
    code = kidx_command(["get", "runs", "-l", "suite=h200-api", "--store", args.store])
    print(f"\n$ kidx get all -o yaml --store {args.store}", flush=True)
    code = code or kidx_command(["get", "all", "-o", "yaml", "--store", args.store])
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
