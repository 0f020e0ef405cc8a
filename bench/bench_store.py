#!/usr/bin/env python3
"""Store benchmark for kidx: apply throughput, cold-process query cost, Liger import.

Run from the repository root:

    .venv/bin/python bench/bench_store.py [--runs 10000 100000] [--out bench/out]

For each size it generates a realistic store (7 protocols, 8 environments, ~300
workloads, ~100 implementations, N BenchmarkRuns that refer to them by digest, specs
of the seed's shape and size), writes it once as a JSON ``kind: List`` and once as
multi-document YAML, and then measures, in this one run:

* ``kidx apply -f FILE --store EMPTY`` wall time for the JSON and the YAML file
  (a subprocess each), as runs/s;
* kidx's own stages (parse, validate, digest, objects, flush, catalog, commit), timed
  inside kidx on one in-process apply of each file, and kidx's YAML parse stage against
  the fastest standard loader installed (PyYAML's CSafeLoader with the ``bench`` extra)
  on the same text;
* a plain-Python baseline creating and syncing as many files, for what the disk charges;
* cold-process wall time (median of --repeats, interleaved) of
  ``kidx get runs -l suite=s042``, ``kidx describe run NAME`` and ``python -c pass``,
  and each kidx command as a multiple of the bare interpreter;

and once: ``kidx import liger`` of the Liger CSVs versus ``kidx apply`` of the same
objects as JSON. A summary table compares everything with the targets from the
project's performance goals. The script always exits 0: it is a report.

Temporary stores live under ``--out`` and are removed at the end unless ``--keep``.
The generated YAML is cached in ``--out`` keyed by the hash of the generated data, so a
second run skips the slow emission.
"""

from __future__ import annotations

import argparse
import gc
import glob
import hashlib
import io
import json
import os
import platform
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from kidx.formats.liger import GPUS as LIGER_GPUS  # noqa: E402
from kidx.formats.liger import KERNEL_TITLES  # noqa: E402
from kidx.identity import digest_of  # noqa: E402
from kidx.store.objects import syncfs  # noqa: E402

API_VERSION = "kernelindex.dev/v1alpha1"
GENERATOR_VERSION = "4"  # bump when the generated data changes shape (part of the cache key)
SELECTOR_KEY = "suite"
SELECTOR_BUCKETS = 100  # suite=s000..s099, assigned round-robin: each matches exactly 1%
SELECTOR = f"{SELECTOR_KEY}=s042"
PAGE_KEY = "page"  # page=p0042: runs 42,000..42,999, exactly 1,000 at any size past 43,000
PAGE_SIZE = 1000

# --- realistic vocabulary (modelled on kidx/formats/liger.py and the seed) -------------

# the kernels the generated runs use, in this order, titled as the importer titles them
KERNELS = {name: KERNEL_TITLES[name] for name in (
    "cross_entropy",
    "distill_jsd_loss",
    "dyt",
    "embedding",
    "fused_add_rms_norm",
    "fused_linear_cpo_loss",
    "fused_linear_cross_entropy",
    "fused_linear_grpo_loss_token",
    "fused_linear_jsd",
    "fused_linear_orpo_loss",
    "fused_linear_simpo_loss",
    "fused_moe",
    "geglu",
    "group_norm",
    "jsd",
    "kl_div",
    "kto_loss",
    "layer_norm",
    "llama4_rope",
    "multi_token_attention",
    "poly_norm",
    "qwen2vl_mrope",
    "relu_squared",
    "rms_norm",
    "rope",
    "softmax",
    "sparsemax",
    "swiglu",
    "tiled_geglu",
    "tiled_swiglu",
    "tvd",
    "megatron_rms_norm",
    "megatron_swiglu",
    "megatron_cross_entropy",
)}

# gpu_name -> (product, formFactor, architecture): the 8 environments the importer knows
GPUS = LIGER_GPUS
# Liger-Kernel's published CSVs, kept in the repository as test data
DEFAULT_LIGER_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "liger"

# (provider, library, backend, variant)
PROVIDERS = [
    ("liger", "liger-kernel", "triton", None),
    ("torch", "torch", "eager", None),
    ("torch_compile", "torch", "inductor", None),
    ("huggingface", "transformers", "eager", None),
    ("liger_cutile", "liger-kernel", "cutile", None),
    ("liger_cutedsl", "liger-kernel", "cutedsl", None),
    ("liger-fp8", "liger-kernel", "triton", "fp8"),
]
REPOSITORIES = {
    "liger-kernel": "https://github.com/linkedin/Liger-Kernel",
    "torch": "https://github.com/pytorch/pytorch",
    "transformers": "https://github.com/huggingface/transformers",
}

# 7 protocols like Liger's: 4 timed passes, 3 peak-memory passes
SPEED_MODES = {
    "forward": "the forward pass of the module on fixed inputs",
    "backward": "the backward pass of the module output given a random upstream gradient",
    "full": "a forward pass followed by the backward pass of its output given a random "
            "upstream gradient, timed together as one call",
    "no-grad-forward": "the forward pass under torch.no_grad(), so no autograd graph is recorded",
}
MEMORY_MODES = {
    "forward": "the forward pass of the module on fixed inputs",
    "backward": "the backward pass of the module output given a random upstream gradient",
    "full": "a forward pass followed by the backward pass of its output",
}

LIGER_VERSIONS = [  # weights roughly as in Liger's CSV
    ("0.8.0", 16), ("0.5.10", 5), ("0.7.0", 4), ("0.2.1", 4), ("0.6.3", 2), ("0.5.8", 2),
    ("0.6.1", 1), ("0.8.1", 1), ("0.3.1", 1), ("0.4.2", 1), ("0.4.0", 1), ("0.4.1", 1),
    ("0.1.1", 1), ("0.6.0", 1), ("0.5.4", 1),
]

PARAMETER_CHOICES = {
    "batch": [1, 2, 4, 8, 16, 32],
    "seq": [512, 1024, 2048, 4096, 8192, 16384],
    "hidden": [1024, 2048, 4096, 8192, 16384],
    "q_heads": [8, 16, 32, 64],
    "kv_heads": [1, 4, 8],
    "vocab": [32000, 65536, 128256, 151936],
    "tokens": [1024, 4096, 16384, 65536],
    "inter": [11008, 14336, 28672],
}
PARAMETER_SETS = [
    ("hidden", "kv_heads", "q_heads", "seq"),
    ("batch", "seq", "vocab"),
    ("hidden", "tokens"),
    ("batch", "hidden", "inter", "seq"),
    ("hidden", "tokens", "vocab"),
]
DTYPES = ["bf16", "fp32", "fp16"]


def slug(text: str) -> str:
    out, dash = [], False
    for ch in text.lower():
        if "a" <= ch <= "z" or "0" <= ch <= "9":
            out.append(ch)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    return "".join(out).strip("-")


def hashed_name(base: str, seed: str, limit: int = 100) -> str:
    suffix = hashlib.sha256(seed.encode("utf-8")).hexdigest()[:10]
    return base[: limit - 11].rstrip("-._") + "-" + suffix


def manifest(kind: str, name: str, title: str, spec: dict, labels=None, annotations=None) -> dict:
    metadata: dict = {"name": name, "title": title}
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


@dataclass
class Dataset:
    shared: list[dict]
    runs: list[dict]
    selector_matches: int
    sample_run: dict  # one run to describe
    counts: dict = field(default_factory=dict)

    @property
    def documents(self) -> list[dict]:
        return self.shared + self.runs


def generate(n_runs: int, seed: int, n_workloads: int = 300, n_impls: int = 100, first: int = 0) -> Dataset:
    """The shared objects (the same for every `first`) and runs number first .. first+n_runs-1,
    so that a large store can be generated and applied in chunks."""
    rng = random.Random(seed)
    kernels = list(KERNELS)

    protocols = []  # (digest, metric, mode)
    shared: list[dict] = []
    for metric, modes in (("speed", SPEED_MODES), ("memory", MEMORY_MODES)):
        for mode, what in modes.items():
            if metric == "speed":
                name = f"liger-bench-do-bench-{slug(mode)}"
                title = f"Liger benchmark harness · {mode} pass"
                measurement = {"timer": "cuda_events", "primaryStatistic": "median"}
                notes = (f"Timed: {what}, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 "
                         "(median with p20/p80 spread). The upstream CSV records no CUDA, driver, "
                         "or torch version; the Liger release rides each run's labels. Comparable "
                         "only within one kernel, workload, timed pass, and GPU.")
            else:
                name = f"liger-bench-peak-memory-{slug(mode)}"
                title = f"Liger benchmark harness · peak memory · {mode} pass"
                measurement = {"metric": "peak_memory", "primaryStatistic": "median", "repetitions": 10}
                notes = (f"Measured: peak allocated device memory while running {what}, 10 times, "
                         "median with p20/p80 spread. Upstream records MiB; kidx stores bytes.")
            spec = {
                "harness": {"name": "Liger-Kernel benchmark scripts",
                            "repository": REPOSITORIES["liger-kernel"]},
                "measurement": measurement,
                "comparability": {"notes": notes, "family": "liger_kernel_bench"},
            }
            body = manifest("BenchmarkProtocol", name, title, spec)
            shared.append(body)
            protocols.append((digest_of(body), metric, mode))

    environments = []  # (digest, gpu_name, gpu_slug)
    for gpu, (product, form, arch) in GPUS.items():
        hardware = {"vendor": "nvidia", "product": product}
        if form:
            hardware["formFactor"] = form
        hardware["architecture"] = arch
        body = manifest("ExecutionEnvironment", "liger-bench-" + slug(gpu),
                        f"Liger benchmark host · {gpu.removeprefix('NVIDIA ')}",
                        {"hardware": hardware, "software": {}})
        shared.append(body)
        environments.append((digest_of(body), gpu, slug(gpu)))

    # implementations: (kernel, provider) pairs, each kernel first with liger, then others
    impls = []  # (digest, kernel, provider)
    pairs = [(k, PROVIDERS[0]) for k in kernels]
    others = [(k, p) for k in kernels for p in PROVIDERS[1:]]
    rng.shuffle(others)
    pairs += others[: max(0, n_impls - len(pairs))]
    for kernel, (provider, library, backend, variant) in pairs[:n_impls]:
        spec = {"library": library, "operation": kernel, "backend": backend}
        if variant:
            spec["variant"] = variant
        spec["repository"] = REPOSITORIES[library]
        name = slug(f"liger-{kernel}-{library.split('-')[0]}-{backend}" + (f"-{variant}" if variant else ""))
        body = manifest("Implementation", name, f"{KERNELS[kernel]} · {library} ({backend})", spec,
                        annotations={"liger.kernelindex.dev/providers": provider})
        shared.append(body)
        impls.append((digest_of(body), kernel, provider))

    # workloads: round-robin over kernels, distinct parameters
    workloads_by_kernel: dict[str, list] = {k: [] for k in kernels}
    seen = set()
    j = 0
    while sum(len(v) for v in workloads_by_kernel.values()) < n_workloads:
        kernel = kernels[j % len(kernels)]
        j += 1
        names = PARAMETER_SETS[kernels.index(kernel) % len(PARAMETER_SETS)]
        parameters = {p: rng.choice(PARAMETER_CHOICES[p]) for p in names}
        dtype = rng.choice(DTYPES)
        key = "-".join(f"{k}{v}" for k, v in sorted(parameters.items())) + "-" + dtype
        if (kernel, key) in seen:
            continue
        seen.add((kernel, key))
        spec = {"family": "liger_kernel_bench", "operation": kernel, "parameters": parameters,
                "dtype": dtype, "key": key}
        title = " · ".join([KERNELS[kernel], *(f"{k} {v}" for k, v in sorted(parameters.items())), dtype])
        body = manifest("Workload", "liger-" + slug(f"{kernel}-{key}"), title, spec)
        shared.append(body)
        workloads_by_kernel[kernel].append((digest_of(body), key, parameters, dtype))

    versions = [v for v, _ in LIGER_VERSIONS]
    weights = [w for _, w in LIGER_VERSIONS]
    base = 1_700_000_000  # 2023-11-14
    runs: list[dict] = []
    selector_matches = 0
    rng = random.Random(seed * 1_000_003 + first)  # runs of one chunk do not depend on earlier chunks
    for i in range(first, first + n_runs):
        impl_digest, kernel, provider = impls[rng.randrange(len(impls))]
        wl_digest, key, parameters, dtype = rng.choice(workloads_by_kernel[kernel])
        env_digest, gpu, gpu_slug = environments[rng.randrange(len(environments))]
        # ~80% timed runs, ~20% peak-memory runs (as in Liger's CSVs)
        proto_digest, metric, mode = protocols[rng.randrange(4)] if rng.random() < 0.8 \
            else protocols[4 + rng.randrange(3)]
        version = rng.choices(versions, weights)[0]
        t = time.gmtime(base + i * 37)
        stamp = time.strftime("%Y-%m-%d-%H-%M-%S", t)
        observed = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", t)
        benchmark = f"{kernel}/{mode}" + ("/memory" if metric == "memory" else "")
        external_id = f"{benchmark}/{provider}/{gpu_slug}/{key}/{stamp}"
        if metric == "speed":
            ms50 = rng.uniform(0.01, 50.0)
            ms20, ms80 = ms50 * rng.uniform(0.97, 1.0), ms50 * rng.uniform(1.0, 1.04)
            qs = {"20": ms20, "50": ms50, "80": ms80}
            values = {q: round(v * 1e6) for q, v in qs.items()}
            primary = {"timing": {"latencyNs": {"median": values["50"]}, "primaryStatistic": "median"}}
            measured, unit, native_unit = "latency", "ns", "ms"
        else:
            mib = {q: rng.randrange(64, 80_000) + rng.randrange(4) / 4 for q in ("20", "50", "80")}
            qs = mib
            values = {q: int(v * 1048576) for q, v in mib.items()}
            primary = {"memory": {"peakAllocatedBytes": {"median": values["50"]}, "primaryStatistic": "median"}}
            measured, unit, native_unit = "peak_memory", "bytes", "MB"
        spec = {
            "status": "passed",
            **primary,
            "observedAt": observed,
            "measurements": [
                {"metric": measured, "statistic": "p20", "unit": unit, "value": values["20"]},
                {"metric": measured, "statistic": "p80", "unit": unit, "value": values["80"]},
            ],
            "sourceNative": {
                "source": "liger-kernel-bench",
                "metrics": {f"{native_unit}_{q}": qs[q] for q in ("20", "50", "80")},
                "benchmark": benchmark,
                "externalId": external_id,
            },
            "protocolDigest": proto_digest,
            "workloadDigest": wl_digest,
            "environmentDigest": env_digest,
            "implementationDigest": impl_digest,
        }
        suite = f"s{i % SELECTOR_BUCKETS:03d}"
        if f"{SELECTOR_KEY}={suite}" == SELECTOR:
            selector_matches += 1
        config = json.dumps({**parameters, "dtype": {"bf16": "torch.bfloat16", "fp32": "torch.float32",
                                                     "fp16": "torch.float16"}[dtype]})
        row = ",".join([
            kernel, provider, mode, metric, native_unit, "T", "sequence length",
            str(next(iter(parameters.values()))), repr(qs["50"]), repr(qs["20"]), repr(qs["80"]),
            '"' + config.replace('"', '""') + '"', gpu, stamp[:10] + " " + stamp[11:].replace("-", ":"),
            version,
        ])
        title = f"{KERNELS[kernel]} · {provider} · {mode}" + (" · peak memory" if metric == "memory" else "")
        runs.append(manifest(
            "BenchmarkRun", hashed_name(slug("liger/" + external_id), external_id), title, spec,
            labels={"liger_version": version, "gpu": gpu_slug, "kernel": kernel.replace("_", "-"),
                    SELECTOR_KEY: suite, PAGE_KEY: f"p{i // PAGE_SIZE:04d}"},
            annotations={"kernelindex.dev/source-file": "all_benchmark_data.csv",
                         "kernelindex.dev/source-line": str(i + 2),
                         "liger.kernelindex.dev/row": row},
        ))
    counts = {"BenchmarkProtocol": len(protocols), "ExecutionEnvironment": len(environments),
              "Workload": sum(len(v) for v in workloads_by_kernel.values()),
              "Implementation": len(impls), "BenchmarkRun": len(runs)}
    return Dataset(shared, runs, selector_matches, runs[len(runs) // 2], counts)


# --- writing the files ---------------------------------------------------------------------

def _yaml_dumper():
    from ruamel.yaml import YAML

    dumper = YAML(typ="safe", pure=False)
    dumper.default_flow_style = False
    dumper.allow_unicode = True
    dumper.explicit_start = True
    return dumper


def _emit_yaml_chunk(docs: list[dict]) -> str:
    stream = io.StringIO()
    _yaml_dumper().dump_all(docs, stream)
    return stream.getvalue()


def write_yaml(docs: list[dict], path: Path, workers: int) -> float:
    """Multi-document YAML through ruamel's C emitter, in `workers` processes; seconds."""
    start = time.perf_counter()
    n_chunks = max(1, workers * 4)
    size = -(-len(docs) // n_chunks)
    chunks = [docs[i:i + size] for i in range(0, len(docs), size)]
    if workers > 1 and len(docs) > 2000:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_emit_yaml_chunk, chunks)
    else:
        parts = [_emit_yaml_chunk(c) for c in chunks]
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for part in parts:
            f.write(part)
    os.replace(tmp, path)
    return time.perf_counter() - start


# --- measuring -----------------------------------------------------------------------------

def kidx_command() -> list[str]:
    script = Path(sys.executable).parent / "kidx"
    return [str(script)] if script.exists() else [sys.executable, "-m", "kidx"]


# Environment of every measured subprocess (set in main): with PYTHONDONTWRITEBYTECODE=1
# inherited, kidx would recompile its ~30 modules from source on every start, which an
# installed kidx never does; so by default bytecode is cached under OUT/pycache instead.
SUBPROCESS_ENV: dict[str, str] | None = None


def bytecode_cached_environment(out: Path) -> dict[str, str]:
    """The inherited environment with bytecode cached under ``out/pycache``, as an installed
    kidx has its .pyc: with PYTHONDONTWRITEBYTECODE=1 inherited, every cold command would
    compile each module changed since its .pyc was last written, and time that instead."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(out / "pycache")
    return env
LAST_CPU = (0.0, 0.0)  # (user, system) CPU seconds of the last timed_run's child


def timed_run(argv: list[str], stdout=subprocess.DEVNULL, timeout: float | None = None,
              env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """(wall seconds, exit status, stderr); a command past `timeout` is killed: status -9."""
    global LAST_CPU
    env = env if env is not None else SUBPROCESS_ENV
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        elapsed = time.perf_counter() - start
        return elapsed, -9, f"killed after the --apply-timeout of {timeout:.0f} s"
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU = (after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime)
    return elapsed, proc.returncode, proc.stderr


def file_baseline(folder: Path, count: int, name: str = "file-baseline", remove: bool = True) -> float:
    """Seconds to write `count` 1.8 KB files as kidx writes objects (256 fan-out folders,
    temporary name, rename) and then make them durable with one syncfs(), as kidx does
    before its catalog commit: what this disk charges for durable file creation now.
    The files are removed afterwards unless not `remove` (see bench_liger)."""
    root = folder / name
    shutil.rmtree(root, ignore_errors=True)
    settle()
    payload = b"x" * 1800
    start = time.perf_counter()
    for i in range(256):
        os.makedirs(f"{root}/{i:02x}", exist_ok=True)
    for i in range(count):
        name = hashlib.sha256(str(i).encode()).hexdigest()
        temporary = f"{root}/{name[:2]}/.tmp-{i}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(descriptor, payload)
        os.close(descriptor)
        os.replace(temporary, f"{root}/{name[:2]}/{name[2:]}")
    syncfs(root)
    elapsed = time.perf_counter() - start
    if remove:
        shutil.rmtree(root, ignore_errors=True)
    return elapsed


def settle() -> None:
    """Flush dirty pages (earlier writes, removed stores) so they do not land inside the next timing."""
    if hasattr(os, "sync"):
        os.sync()


def cold_times(commands: dict[str, list[str] | tuple[list[str], dict]], repeats: int) -> dict[str, list[float]]:
    """Interleaved rounds (one warm-up, not counted) so that drift hits every command alike."""
    times: dict[str, list[float]] = {k: [] for k in commands}
    for round_ in range(repeats + 1):
        for label, command in commands.items():
            argv, env = command if isinstance(command, tuple) else (command, None)
            elapsed, rc, err = timed_run(argv, env=env)
            if rc != 0:
                raise RuntimeError(f"{label}: exit {rc}: {err.strip()[:500]}")
            if round_:
                times[label].append(elapsed)
    return times


STAGES = ("parse", "validate", "digest", "objects", "flush", "catalog", "commit")


def stage_times(path: Path, work: Path, label: str) -> dict[str, float]:
    """kidx's own stages, timed inside kidx (ApplyReport.timings) on one apply of `path`
    into an empty store, in this process, with the cyclic GC off as kidx's console script
    runs: read+parse (the manifest reader), validate, digest, write objects, flush them
    (one syncfs), catalog rows, commit."""
    from kidx.kinds.registry import registry
    from kidx.manifests.reader import read_sources
    from kidx.operations.maintain.apply import apply_documents
    from kidx.store.store import Store

    store_dir = work / f"stages-{label}"
    shutil.rmtree(store_dir, ignore_errors=True)
    kinds = registry()
    gc.collect()
    settle()
    gc.disable()
    try:
        start = time.perf_counter()
        result = read_sources([str(path)])
        parsed = time.perf_counter()
        if result.problems:
            raise RuntimeError(f"{path.name}: {result.problems[0]}")
        report = apply_documents(Store(store_dir), result.documents, kinds, result.texts)
        total = time.perf_counter() - start
    finally:
        gc.enable()
    store = Store(store_dir)
    store.close()
    del result, report.outcomes
    shutil.rmtree(store_dir, ignore_errors=True)
    return {"parse": parsed - start, **report.timings, "total": total}


def standard_loader_rate(path: Path) -> tuple[float, str]:
    """docs/s of the fastest standard YAML loader here on the same text (PyYAML's
    CSafeLoader when installed -- the `bench` extra -- else ruamel.yaml's C safe loader),
    parse only, GC off as in kidx's stage."""
    text = path.read_text(encoding="utf-8")
    try:
        import yaml

        loader = getattr(yaml, "CSafeLoader", None)
        name = "PyYAML CSafeLoader" if loader else "PyYAML SafeLoader (no libyaml)"
        load_all = lambda: yaml.load_all(text, Loader=loader or yaml.SafeLoader)  # noqa: E731
    except ImportError:
        from ruamel.yaml import YAML

        ruamel = YAML(typ="safe", pure=False)
        name = f"ruamel.yaml {ruamel.Parser.__name__} (install kidx[bench] for PyYAML)"
        load_all = lambda: ruamel.load_all(text)  # noqa: E731
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        count = sum(1 for _ in load_all())
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    return count / elapsed, name


def median(values: list[float]) -> float:
    return statistics.median(values)


class Report:
    def __init__(self, path: Path):
        self.lines: list[str] = []
        self.path = path
        self.summary: list[tuple[str, str, str, str]] = []
        self.data: dict = {"tables": []}
        self.section = ""

    def say(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.append(text)

    def table(self, header: list[str], rows: list[list[str]]) -> None:
        self.data["tables"].append({"section": self.section, "header": header,
                                    "rows": [[str(c) for c in r] for r in rows]})
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

        def fmt(r: list) -> str:
            return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True)))

        self.say(fmt(header))
        self.say("  ".join("-" * w for w in widths))
        for row in rows:
            self.say(fmt(row))

    def check(self, metric: str, measured: str, target: str, ok: bool | None) -> None:
        self.summary.append((metric, measured, target, "info" if ok is None else ("PASS" if ok else "FAIL")))

    def save(self) -> None:
        self.path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")

    def finish(self, started: float, summary_table: bool = True, **meta) -> None:
        """Close the report: the summary table (unless the script printed its own), the text
        file, and beside it the JSON that docs/performance.md is rendered from, its ``meta``
        holding ``meta`` and the facts every report records."""
        if summary_table:
            self.section = "summary"
            self.table(["metric", "measured", "target", "result"], [list(r) for r in self.summary])
        self.save()
        self.data["summary"] = [list(r) for r in self.summary]
        self.data["meta"] = {
            **meta, "date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "python": platform.python_version(),
            "code": code_version(), "total_s": round(time.perf_counter() - started),
        }
        self.path.with_suffix(".json").write_text(json.dumps(self.data, indent=1, default=str))
        print(f"report saved to {self.path}")


def generated_store_benchmark(doc: str, name: str, repeats: int = 7,
                              options=None) -> tuple[argparse.Namespace, Report]:
    """The options every benchmark over a generated store takes (--runs, --repeats, --seed,
    --store, --out; ``options(parser)`` adds a script's own), parsed, and its report opened
    in --out as NAME-<time>.txt."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if options is not None:
        options(parser)
    parser.add_argument("--runs", type=int, default=100_000, help="runs in the generated store")
    parser.add_argument("--repeats", type=int, default=repeats, help=f"rounds (default {repeats})")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--store", help="an existing store to reuse (else a temporary one)")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="report folder (default bench/out)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    return args, Report(args.out / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.txt")


def bench_size(n: int, args, report: Report, work: Path, kidx: list[str], is_target_size: bool) -> None:
    say = report.say
    say(f"\n=== {n:,} runs " + "=" * 60)
    report.section = f"{n:,} runs"
    t0 = time.perf_counter()
    data = generate(n, args.seed)
    gen_s = time.perf_counter() - t0
    docs = data.documents
    body_sizes = sorted(len(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()) for r in data.runs)
    spec_sizes = sorted(len(json.dumps(r["spec"], ensure_ascii=False, separators=(",", ":")).encode())
                        for r in data.runs[:2000])
    say(f"generated {len(docs):,} objects in {gen_s:.1f} s: " +
        ", ".join(f"{v} {k}" for k, v in data.counts.items()))
    say(f"run manifest size (compact JSON): median {body_sizes[len(body_sizes) // 2]:,} B, "
        f"spec alone {spec_sizes[len(spec_sizes) // 2]:,} B; "
        f"selector -l {SELECTOR} matches {data.selector_matches:,} runs "
        f"({100 * data.selector_matches / n:.2f}%)")

    t0 = time.perf_counter()
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, ensure_ascii=False, indent=1)
    key = hashlib.sha256(text.encode()).hexdigest()[:12]
    json_path = args.out / f"store-{n}-{key}.json"
    json_path.write_text(text, encoding="utf-8")
    del text
    say(f"JSON  {json_path.relative_to(REPO) if json_path.is_relative_to(REPO) else json_path}: "
        f"{json_path.stat().st_size / 1e6:.1f} MB, written in {time.perf_counter() - t0:.1f} s")
    yaml_path = args.out / f"store-{n}-{key}.yaml"
    if yaml_path.exists() and not args.no_cache:
        say(f"YAML  {yaml_path.name}: {yaml_path.stat().st_size / 1e6:.1f} MB (cached, same data hash)")
    else:
        for old in args.out.glob(f"store-{n}-*.yaml"):
            old.unlink()
        secs = write_yaml(docs, yaml_path, workers=os.cpu_count() or 1)
        say(f"YAML  {yaml_path.name}: {yaml_path.stat().st_size / 1e6:.1f} MB, emitted with "
            f"{_yaml_dumper().Emitter.__name__} in {secs:.1f} s")
    stream_path = args.out / f"store-{n}-{key}.stream.json"
    with open(stream_path, "w", encoding="utf-8") as f:
        for doc in docs:
            f.write(json.dumps(doc, ensure_ascii=False, indent=1))
            f.write("\n")
    for old in args.out.glob(f"store-{n}-*.json"):
        if old not in (json_path, stream_path):
            old.unlink()
    n_docs = len(docs)
    sample_name = data.sample_run["metadata"]["name"]
    sample_digest = digest_of(data.sample_run)
    del docs, data.runs
    gc.collect()

    # -- apply throughput ------------------------------------------------------------
    stores = {}
    rates = {}
    errors = {}
    cpu: dict[str, list[tuple[float, float]]] = {}
    plan = [("json", json_path), ("yaml", yaml_path)]
    if args.json_stream:
        plan.append(("json-stream", stream_path))
    # an apply slower than 200 runs/s is not worth waiting for (unless --apply-timeout says so)
    apply_timeout = args.apply_timeout if args.apply_timeout is not None else max(60.0, n / 200)
    apply_timeout = apply_timeout or None
    i = 0
    while i < len(plan):
        fmt, path = plan[i]
        i += 1
        results = []
        for rep in range(args.apply_repeats if n <= 20000 else 1):
            store = work / f"{fmt}-{n}-{rep}"
            shutil.rmtree(store, ignore_errors=True)
            settle()
            elapsed, rc, err = timed_run([*kidx, "apply", "-f", str(path), "--store", str(store)],
                                         timeout=apply_timeout)
            if rc != 0:
                errors[fmt] = err.strip().splitlines()[0][:400] if err.strip() else f"exit {rc}"
                say(f"!! kidx apply -f {path.name} failed (exit {rc}) after {elapsed:.1f} s: {errors[fmt]}")
                shutil.rmtree(store, ignore_errors=True)
                if fmt == "json" and not args.json_stream:
                    say("   measuring the same objects as a JSON stream (one document per object) instead")
                    plan.append(("json-stream", stream_path))
                break
            results.append(elapsed)
            cpu.setdefault(fmt, []).append(LAST_CPU)
            if rep == 0:
                stores[fmt] = store
            else:
                shutil.rmtree(store, ignore_errors=True)
        if results:
            rates[fmt] = (median(results), len(results))

    say("timing kidx's own stages in process, and the fastest standard YAML loader on the same text...")
    stages = {}
    for fmt, path in (("json", json_path), ("yaml", yaml_path)):
        try:
            stages[fmt] = stage_times(path, work, f"{fmt}-{n}")
        except Exception as exc:  # a report: say what failed, go on
            say(f"!! stage timing of {path.name}: {type(exc).__name__}: {exc}")
    standard_rate, standard_name = standard_loader_rate(yaml_path)

    rows = []
    labels = {"json": "JSON List", "yaml": "YAML multi-doc", "json-stream": "JSON stream"}
    for fmt, _ in plan:
        if fmt in rates:
            secs, reps = rates[fmt]
            user = median([c[0] for c in cpu[fmt]])
            system = median([c[1] for c in cpu[fmt]])
            rows.append([f"kidx apply -f {labels[fmt]} (empty store)", f"{secs:.1f} s",
                         f"{n / secs:,.0f} runs/s", f"median of {reps}; CPU user {user:.1f} s, sys {system:.1f} s"])
        else:
            rows.append([f"kidx apply -f {labels[fmt]} (empty store)", "failed", "-", "see error above"])
    base_files = file_baseline(work, n_docs)
    rows.append([f"file baseline: {n_docs:,} files, tmp+rename+syncfs", f"{base_files:.1f} s",
                 f"{n_docs / base_files:,.0f} files/s", "plain Python, no kidx: what the disk charges now"])
    report.table(["apply", "wall", "rate", "note"], rows)

    if stages:
        say(f"kidx's stages, in process ({n_docs:,} objects; seconds and objects/s):")
        stage_rows = []
        for stage in (*STAGES, "total"):
            cells = [stage]
            for fmt in ("json", "yaml"):
                secs = stages.get(fmt, {}).get(stage)
                cells += ["-", "-"] if secs is None else [f"{secs:.2f} s", f"{n_docs / secs:,.0f}/s" if secs else "-"]
            stage_rows.append(cells)
        report.table(["stage", "JSON", "JSON rate", "YAML", "YAML rate"], stage_rows)
    yaml_pct = None
    if "yaml" in stages:
        kidx_parse_rate = n_docs / stages["yaml"]["parse"]
        yaml_pct = 100 * kidx_parse_rate / standard_rate
        report.table(["YAML parse of the same text", "docs/s"], [
            ["kidx parse stage (reader: libyaml events to data, YAML 1.2 core schema)", f"{kidx_parse_rate:,.0f}"],
            [f"{standard_name}, load_all", f"{standard_rate:,.0f}"],
            ["kidx / standard loader", f"{yaml_pct:.0f} %"],
        ])

    tag = f"{n // 1000}k" if n % 1000 == 0 else f"{n:,}"
    if "json" in rates:
        r = n / rates["json"][0]
        report.check(f"apply JSON List, {tag} runs", f"{r:,.0f} runs/s", ">= 3,000 runs/s", r >= 3000)
        report.check(f"  file baseline (same disk, same run), {tag}", f"{n_docs / base_files:,.0f} files/s",
                     "info", None)
    else:
        report.check(f"apply JSON List, {tag} runs", "rejected (error above)",
                     ">= 3,000 runs/s", False)
    if "json-stream" in rates:
        r = n / rates["json-stream"][0]
        report.check(f"  apply JSON stream, {tag} runs", f"{r:,.0f} runs/s", ">= 3,000 runs/s", r >= 3000)
    if yaml_pct is not None:
        report.check(f"YAML parse stage / {standard_name.split(' (')[0]}, {tag}", f"{yaml_pct:.0f} %", ">= 70 %",
                     yaml_pct >= 70)
    else:
        report.check(f"YAML parse stage, {tag}", "failed", ">= 70 %", False)
    report.data[n] = {"rates": rates, "stages": stages, "standard_loader": [standard_name, standard_rate],
                      "yaml_parse_pct": yaml_pct, "file_baseline_s": base_files}

    # -- both formats must give the same objects ----------------------------------------
    if stores:
        digests = {}
        for fmt, store in stores.items():
            proc = subprocess.run([*kidx, "get", "run", sample_name, "-o", "json", "--store", str(store)],
                                  capture_output=True, text=True, env=SUBPROCESS_ENV)
            digests[fmt] = (json.loads(proc.stdout)["metadata"]["digest"] if proc.returncode == 0
                            else proc.stderr.strip()[:200])
        same = all(d == sample_digest for d in digests.values())
        say(f"digest of run {sample_name[:40]}… in the {' and '.join(digests)} stores equals the generator's: "
            f"{'yes' if same else 'NO: ' + str(digests)}")

    # -- cold-process queries ----------------------------------------------------------
    store = stores.get("json") or stores.get("yaml")
    if store is None:
        say("!! no store to query")
        return
    sizes = {name: (store / name).stat().st_size / 1e6 if (store / name).exists() else None
             for name in ("catalog.sqlite", "catalog.sqlite-wal")}
    wal = sizes["catalog.sqlite-wal"]
    say(f"store after apply: catalog.sqlite {sizes['catalog.sqlite']:.0f} MB, "
        + ("no WAL file" if wal is None else f"catalog.sqlite-wal {wal:.0f} MB")
        + " (a WAL left un-checkpointed is re-read by every later process that opens the catalog)")
    proc = subprocess.run([*kidx, "get", "runs", "-l", SELECTOR, "--store", str(store)],
                          capture_output=True, text=True, env=SUBPROCESS_ENV)
    lines = proc.stdout.count("\n")
    say(f"kidx get runs -l {SELECTOR}: {lines - 1:,} rows + header "
        f"(expected {n // SELECTOR_BUCKETS:,}), {len(proc.stdout.encode()) / 1e3:.0f} kB of table")
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "kidx describe run NAME": [*kidx, "describe", "run", sample_name, "--store", str(store)],
        f"kidx get runs -l {SELECTOR}": [*kidx, "get", "runs", "-l", SELECTOR, "--store", str(store)],
    }
    system_python = shutil.which("python3")
    extra_python = system_python and os.path.realpath(system_python) != os.path.realpath(sys.executable)
    if extra_python:
        commands["python3 -c pass (PATH)"] = [system_python, "-c", "pass"]
    if SUBPROCESS_ENV is not None and os.environ.get("PYTHONDONTWRITEBYTECODE"):
        # the same two commands as the environment gives them: no bytecode cache
        for label in ("kidx describe run NAME", f"kidx get runs -l {SELECTOR}"):
            commands[label + " (no .pyc)"] = (commands[label], dict(os.environ))
    settle()
    try:
        times = cold_times(commands, args.repeats)
    except RuntimeError as exc:
        say(f"!! {exc}")
        return
    base = median(times["python -c pass"])
    rows = []
    for label, values in times.items():
        m = median(values)
        rows.append([label, f"{m * 1000:.0f} ms", f"{min(values) * 1000:.0f}", f"{max(values) * 1000:.0f}",
                     f"{m / base:.2f}x"])
    say(f"cold process, median of {args.repeats} interleaved rounds (stdout to /dev/null); "
        f"baseline: {sys.executable} -c pass")
    if extra_python:
        say(f"(python3 on PATH is {system_python} -> {os.path.realpath(system_python)}; info only)")
    report.table(["command", "median", "min", "max", "x python"], rows)
    describe = median(times["kidx describe run NAME"]) / base
    get = median(times[f"kidx get runs -l {SELECTOR}"]) / base
    report.check(f"describe run, {tag}",
                 f"{describe:.2f}x python ({median(times['kidx describe run NAME']) * 1000:.0f} ms)",
                 "<= 4x", describe <= 4 if is_target_size else None)
    report.check(f"get runs -l (1%), {tag}",
                 f"{get:.2f}x python ({median(times[f'kidx get runs -l {SELECTOR}']) * 1000:.0f} ms)",
                 "<= 5x", get <= 5 if is_target_size else None)
    report.data[n]["cold_ms"] = {k: median(v) * 1000 for k, v in times.items()}

    if not args.keep:
        for s in stores.values():
            shutil.rmtree(s, ignore_errors=True)


def bench_liger(args, report: Report, work: Path, kidx: list[str]) -> None:
    say = report.say
    say("\n=== Liger import " + "=" * 60)
    report.section = "Liger import"
    files = sorted(glob.glob(str(Path(args.liger_dir) / "*.csv")))
    if not files:
        say(f"skipped: no Liger CSVs in {args.liger_dir} (use --liger-dir)")
        report.check("import liger", "skipped", "<= 3 s", None)
        return
    json_path = args.out / "liger.json"
    with open(json_path, "w", encoding="utf-8") as f:
        proc = subprocess.run([*kidx, "import", "liger", *files, "-o", "json"], stdout=f,
                              stderr=subprocess.PIPE, text=True, env=SUBPROCESS_ENV)
    if proc.returncode != 0:
        say(f"!! kidx import liger -o json failed: {proc.stderr.strip()[:800]}")
        report.check("import liger", "failed", "<= 3 s", False)
        return
    n_docs = len(json.loads(json_path.read_text(encoding="utf-8"))["items"])
    say(f"{len(files)} CSVs -> {n_docs:,} objects ({json_path.stat().st_size / 1e6:.1f} MB as JSON)")
    times = {"import": [], "apply": [], "baseline": []}
    cpus = {"import": [], "apply": []}
    # Interleaved, each into a fresh empty store. Nothing is removed until every round is
    # done: on a file system that skips recently freed inodes (ext4 without a journal, as
    # here) the files a removal frees make the next few seconds of file creation slower,
    # so a removal between timings would charge one command for the one before it.
    kept: list[Path] = []
    for rep in range(args.liger_repeats):
        times["baseline"].append(file_baseline(work, n_docs, name=f"liger-baseline-{rep}", remove=False))
        kept.append(work / f"liger-baseline-{rep}")
        for what in ("import", "apply"):
            store = work / f"liger-{what}-{rep}"
            shutil.rmtree(store, ignore_errors=True)
            argv = ([*kidx, "import", "liger", *files] if what == "import"
                    else [*kidx, "apply", "-f", str(json_path)]) + ["--store", str(store)]
            settle()
            elapsed, rc, err = timed_run(argv)
            if rc != 0:
                say(f"!! {' '.join(argv[-4:])}: exit {rc}: {err.strip()[:800]}")
                report.check("import liger", "failed", "<= 3 s", False)
                return
            times[what].append(elapsed)
            cpus[what].append(LAST_CPU)
            kept.append(store)
    if not args.keep:
        for folder in kept:
            shutil.rmtree(folder, ignore_errors=True)
    imp, app = median(times["import"]), median(times["apply"])
    base_files = median(times["baseline"])
    per_round = [i / b for i, b in zip(times["import"], times["baseline"], strict=True)]
    cpu = {w: (median([c[0] for c in cpus[w]]), median([c[1] for c in cpus[w]])) for w in cpus}
    report.table(["command (empty store)", "median", "min", "max", "CPU user", "CPU sys"], [
        ["kidx import liger CSVs", f"{imp:.2f} s", f"{min(times['import']):.2f}", f"{max(times['import']):.2f}",
         f"{cpu['import'][0]:.2f}", f"{cpu['import'][1]:.2f}"],
        ["kidx apply -f liger.json", f"{app:.2f} s", f"{min(times['apply']):.2f}", f"{max(times['apply']):.2f}",
         f"{cpu['apply'][0]:.2f}", f"{cpu['apply'][1]:.2f}"],
        ["import / apply", f"{imp / app:.2f}x", "", "", "", ""],
        [f"file baseline: {n_docs:,} files, tmp+rename+syncfs", f"{base_files:.2f} s", f"{min(times['baseline']):.2f}",
         f"{max(times['baseline']):.2f}", "", ""],
        ["import / file baseline", f"{imp / base_files:.2f}x", f"{min(per_round):.2f}x", f"{max(per_round):.2f}x",
         "", ""],
    ])
    say(f"(median of {args.liger_repeats}, interleaved; the import / file baseline row: ratio of the medians, "
        f"min and max of the rounds' own ratios; the baseline writes {n_docs / base_files:,.0f} files/s)")
    report.check("import liger (3 CSVs)", f"{imp:.2f} s", "<= 3 s", imp <= 3)
    report.check("import / apply same JSON", f"{imp / app:.2f}x", "<= 1.5x", imp / app <= 1.5)
    report.check("import liger / file baseline", f"{imp / base_files:.2f}x ({n_docs / base_files:,.0f} files/s)",
                 "<= 1.3x", imp / base_files <= 1.3)
    report.data["liger"] = {"import_s": imp, "apply_s": app, "cpu": cpu, "file_baseline_s": base_files,
                            "import_over_baseline": imp / base_files, "rounds": times}


def code_version(folders: tuple[str, ...] = ("kidx", "crds")) -> str:
    """The commit of the kidx tree and how many tracked files under ``folders`` differ from
    it (read-only git)."""
    def git(*argv):
        proc = subprocess.run(["git", "--no-optional-locks", "-C", str(REPO), *argv],
                              capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else None
    head = git("rev-parse", "--short", "HEAD")
    if head is None:
        return "unknown (not a git checkout)"
    changed = git("status", "--porcelain", "--untracked-files=no", "--", *folders)
    count = len(changed.splitlines()) if changed else 0
    named = " ".join(f"{folder}/" for folder in folders)
    return f"{head}" + (f" + {count} modified files under {named}" if count else f" (clean {named})")


def columns_text(header: list[str], rows: list[list[str]]) -> list[str]:
    """A plain-text table: the header and the rows, each column as wide as its widest cell."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    return ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
            for row in [header, *rows]]


def save_table_report(name: str, text: str, header: list[str], rows: list[list[str]]) -> None:
    """bench/reports/NAME-STAMP.txt (the text) and .json (header and rows), stamped now (UTC)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = HERE / "reports"
    (out / f"{name}-{stamp}.txt").write_text(text + "\n", encoding="utf-8")
    (out / f"{name}-{stamp}.json").write_text(json.dumps({"header": header, "rows": rows}, indent=1) + "\n",
                                             encoding="utf-8")


def _terminate(signum, frame):
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[10000, 100000], help="store sizes (runs)")
    parser.add_argument("--only", choices=["liger"],
                        help="liger: only the Liger import part (no generated store sizes)")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="output folder (default bench/out)")
    parser.add_argument("--liger-dir", default=str(DEFAULT_LIGER_DIR), help="folder of Liger CSVs")
    parser.add_argument("--repeats", type=int, default=11, help="cold-process rounds (default 11)")
    parser.add_argument("--apply-repeats", type=int, default=3,
                        help="apply repetitions for sizes <= 20,000 (larger sizes: 1)")
    parser.add_argument("--apply-timeout", type=float, default=None,
                        help="kill an apply that runs longer than this many seconds "
                             "(0: never; default: max(60, runs/200), i.e. below 200 runs/s)")
    parser.add_argument("--liger-repeats", type=int, default=5, help="import/apply repetitions (default 5)")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--no-cache", action="store_true", help="re-emit the YAML even if cached")
    parser.add_argument("--json-stream", action="store_true",
                        help="also apply the objects as a JSON stream (one document per object); "
                             "done anyway when the JSON List is rejected")
    parser.add_argument("--no-pycache", action="store_true",
                        help="run kidx with the inherited environment (default: cache bytecode in OUT/pycache)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary stores")
    args = parser.parse_args()
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    report = Report(args.out / f"bench_store-{stamp}.txt")
    work = args.out / f"stores-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    kidx = kidx_command()
    global SUBPROCESS_ENV
    if not args.no_pycache:
        SUBPROCESS_ENV = bytecode_cached_environment(args.out)

    import ruamel.yaml
    from ruamel.yaml import YAML

    probe = YAML(typ="safe", pure=False)
    c_parser = "clib" in probe.Parser.__module__ or probe.Parser.__name__.startswith("C")
    load_at_start = os.getloadavg()[0]
    report.say(f"kidx bench_store  {time.strftime('%Y-%m-%d %H:%M:%S')}  host {platform.node()}  "
               f"{os.cpu_count()} CPUs  load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    report.say(f"python {platform.python_version()} ({sys.executable}); kidx: {' '.join(kidx)}; "
               f"code: {code_version()}")
    report.say(f"ruamel.yaml {ruamel.yaml.__version__}: YAML(typ='safe', pure=False).Parser = "
               f"{probe.Parser.__module__}.{probe.Parser.__name__} "
               f"({'C parser' if c_parser else 'NOT the C parser: pure Python'}), "
               f"Emitter = {probe.Emitter.__name__}")
    if SUBPROCESS_ENV is None:
        report.say("subprocesses: the environment as inherited (--no-pycache)"
                   + ("; PYTHONDONTWRITEBYTECODE is set, so kidx compiles its modules on every start"
                      if os.environ.get("PYTHONDONTWRITEBYTECODE") else ""))
    else:
        report.say(f"subprocesses: bytecode cached in {SUBPROCESS_ENV['PYTHONPYCACHEPREFIX']} "
                   "(PYTHONPYCACHEPREFIX; PYTHONDONTWRITEBYTECODE unset), as an installed kidx has its .pyc"
                   + ("; the inherited environment sets PYTHONDONTWRITEBYTECODE=1: '(no .pyc)' rows show it"
                      if os.environ.get("PYTHONDONTWRITEBYTECODE") else ""))
    started = time.perf_counter()
    signal.signal(signal.SIGTERM, _terminate)  # clean up the stores on kill, too
    sizes = [] if args.only == "liger" else sorted(args.runs)
    try:
        for n in sizes:
            bench_size(n, args, report, work, kidx, is_target_size=(n == max(sizes) and n >= 100000))
        bench_liger(args, report, work, kidx)
    except KeyboardInterrupt:
        report.say("\ninterrupted")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            report.say(f"stores kept in {work}")

    report.say("\n=== summary " + "=" * 60)
    report.section = "summary"
    if sizes:
        report.say("(targets on describe / get -l apply at 100,000 runs; smaller sizes are info)")
    report.table(["metric", "measured", "target", "result"], [list(r) for r in report.summary])
    fails = sum(1 for r in report.summary if r[3] == "FAIL")
    report.say(f"\n{fails} of {sum(1 for r in report.summary if r[3] in ('PASS', 'FAIL'))} targets missed; "
               f"total {time.perf_counter() - started:.0f} s; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
               f"code at the end: {code_version()}")
    meta = {"title": "Store benchmark, Liger import only"} if not sizes else {}
    report.finish(started, summary_table=False, sizes=sizes, repeats=args.repeats,
                  load=f"{load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end", **meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
