"""kidx.measure on an H200: one small and one large elementwise call, a forward with
autograd, and a retained graph's backward (which a CUDA graph cannot capture), each with
every timer and both cache states; prints one line per measurement and records two runs
with kidx.record_run into the store given as the first argument."""
import sys
import time

import torch

import kidx

results = []


def show(label, timings):
    protocol = timings.protocol["measurement"]
    median = timings.statistics["median"]
    spread = (timings.quantiles["p80"] - timings.quantiles["p20"]) / median if median else 0
    fallback = timings.details.get("timerFallback", "")
    print(f"{label:<34} {protocol['timer']:<11} {protocol['cache']:<5} median {median / 1000:9.3f} us "
          f"p20-p80 {spread * 100:5.1f} % samples {len(timings.samples):5d} {fallback[:90]}", flush=True)
    results.append((label, timings))


small = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
large = torch.randn(64, 4096, 4096, device="cuda", dtype=torch.bfloat16)
weight = torch.nn.Linear(4096, 4096, device="cuda", dtype=torch.bfloat16)
x = torch.randn(1024, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
y = torch.nn.functional.silu(weight(x))
grad = torch.randn_like(y)
calls = {
    "mul 4096x4096 bf16": lambda: small * 2,
    "mul 64x4096x4096 bf16": lambda: large * 2,
    "linear+silu forward (autograd)": lambda: torch.nn.functional.silu(weight(x)),
    "linear+silu backward (retained)": lambda: y.backward(grad, retain_graph=True),
}
for label, call in calls.items():
    for timer in ("cuda_events", "cuda_graph", "cupti"):
        for cache in ("cold", "warm"):
            started = time.perf_counter()
            try:
                timings = kidx.measure(call, timer=timer, cache=cache, rep_ms=50,
                                       grad_to_none=[x] if "backward" in label else None)
            except Exception as exc:  # a failure is reported, and the next one tried
                print(f"{label:<34} {timer:<11} {cache:<5} FAILED {type(exc).__name__}: {exc}", flush=True)
                continue
            show(label, timings)
            print(f"{'':<34} ({time.perf_counter() - started:.2f} s)", flush=True)
            torch.randn(16, device="cuda")  # the random generator is usable after a failed capture

if len(sys.argv) > 1:
    environment = kidx.capture_environment()
    with kidx.open_store(sys.argv[1]) as store:
        for label, timings in results[:2]:
            recording = kidx.record_run(implementation={"library": "torch", "operation": "mul"},
                                        workload={"operation": "mul", "parameters": {"shape": "4096x4096"},
                                                  "dtype": "bf16"},
                                        environment=environment, timings=timings, labels={"suite": "measure"})
            print(store.apply(recording.manifests))
