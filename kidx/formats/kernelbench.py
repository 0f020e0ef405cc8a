"""Convert KernelBench results (LLM-written GPU kernels against PyTorch references) into
kidx manifests.

KernelBench (github.com/ScalingIntelligence/KernelBench) keeps its problems as files
``KernelBench/level<N>/<id>_<Name>.py`` and writes two kinds of results:

- baseline timings, ``results/timing/<GPU>/baseline_time_torch*.json``: level
  (``level1``) → problem file (``1_Square_matrix_multiplication_.py``) → ``mean``,
  ``std``, ``min``, ``max`` (milliseconds, three significant digits), ``num_trials``,
  ``hardware`` (the GPU's name) and ``device``. The file's name says how the reference
  ran: ``baseline_time_torch.json`` eager, ``baseline_time_torch_compile_<backend>_<mode>``
  under torch.compile.
- eval results, ``runs/<run>/eval_results.json``: problem id → the samples generated for
  it, each ``{sample_id, compiled, correctness, metadata, runtime, runtime_stats}``
  (older versions: one sample object instead of a list). ``runtime_stats`` has the
  baseline's fields; ``metadata`` the GPU (``hardware``), the trials passed
  (``correctness_trials``) and what went wrong (``compilation_error``,
  ``runtime_error``, ``correctness_issue``, or ``error`` when the evaluation itself
  failed). The file names neither the level (``--level N``) nor the run, whose name is
  the folder it is in.

Output: one BenchmarkRun per baseline entry and per sample. A Workload per (level,
problem id: the number that starts the problem file's name), shared by the baseline and
the generated kernels so that they compare; an Implementation per reference (torch eager
or torch.compile, per problem) and per generated sample; one BenchmarkProtocol (the
timing both use); an ExecutionEnvironment per GPU. A sample that did
not compile, raised, or gave wrong output is a failed run with the reason and the
message, never a timing; a failed evaluation (a timeout) is an error run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
from typing import Any

from kidx.errors import UsageError
from kidx.formats.framework import (
    Conversion,
    FormatDoc,
    JsonConverter,
    LineFinder,
    gpu_mismatches,
    hashed_name,
    manifest,
    protocol,
    slug,
)
from kidx.formats.gpus import canonical_gpu_name, gpu_hardware
from kidx.units import TIME_UNITS

SOURCE_NAME = "kernelbench"
FAMILY = "kernelbench"
REPOSITORY = "https://github.com/ScalingIntelligence/KernelBench"
WHAT = "KernelBench results (results/timing/<GPU>/baseline_time_torch*.json, or a run's eval_results.json)"
STATISTICS = (("mean", "mean"), ("std", "stddev"), ("min", "min"), ("max", "max"))
_LEVEL = re.compile(r"level_?([0-9]+)\Z")
_PROBLEM_ID = re.compile(r"[0-9]+\Z")  # str.isdigit() would take "²", which int() refuses
_PROBLEM = re.compile(r"(\d+)_")
_BASELINE = re.compile(r"baseline_time_torch(?:_compile_(?P<backend>[a-z0-9]+)(?:_(?P<mode>.+))?)?\Z")

FORMAT_DOC = FormatDoc(
    reads=(
        "KernelBench's baseline timings `results/timing/<GPU>/baseline_time_torch*.json` and a run's "
        "`eval_results.json` ([kernelbench](#kernelbench))"
    ),
    one_run_per="baseline entry, evaluated sample",
    fields=(
        ("KernelBench", "kidx"),
        ("`mean`, `std`, `min`, `max` (milliseconds) of a baseline entry or of a sample's `runtime_stats`",
         (
             "`spec.timing.latencyNs` `mean` (the headline), `stddev`, `min`, `max`, in ns; the values as written, "
             "with `num_trials`, in `spec.sourceNative.metrics`"
         )),
        ("a sample with `compiled: false`",
         (
             "a run with `spec.status: failed`, `failure.reason: CompilationError` and `metadata.compilation_error` as "
             "the message; never a timing"
         )),
        ("a sample that compiled but is not correct",
         (
             "a failed run: `RuntimeError` with `metadata.runtime_error`, else `IncorrectResult` with "
             "`metadata.correctness_issue` and the trials passed (`correctness_trials`); never a timing, even where "
             "the file has one"
         )),
        ("a sample whose evaluation failed (`metadata.error`, as a timeout writes it)",
         (
             "a run with `spec.status: error`, `failure.reason: Timeout` (or `EvaluationError`) and the error as the "
             "message"
         )),
        ("a correct sample that was not timed (`runtime: -1`)", "a passed run without `spec.timing`, and a warning"),
        ("the whole sample, the baseline entry", "`spec.sourceNative.sample`, `spec.sourceNative.entry`, as written"),
        ("the level and the problem id (the number that starts the problem file's name)",
         (
             "a Workload (`operation` `level<N>/<id>`; parameters `level`, `problem`), the same for the baseline and "
             "the generated kernels, so that they compare"
         )),
        ("the baseline file's name: `baseline_time_torch.json`, `baseline_time_torch_compile_<backend>_<mode>.json`",
         (
             "an Implementation per problem: library `torch`, backend `eager` or the compile backend (`inductor`), "
             "variant the mode (`default`)"
         )),
        ("the run's folder and the sample's `sample_id`",
         "an Implementation per sample: library `kernelbench`, variant `<run>/sample<N>`"),
        ("`hardware` (the GPU's name)",
         (
             "an ExecutionEnvironment (`kernelbench-unknown-gpu` where a sample does not say); import with "
             "`--environment` to name the machine"
         )),
        ("how KernelBench times",
         "one BenchmarkProtocol, `kernelbench-latency`, for the baselines and the samples alike"),
        ("level, problem id, the baseline's backend and mode, the run, the sample, the GPU",
         "labels `level`, `problem`, `backend`, `variant`, `run`, `sample`, `gpu`"),
    ),
    not_carried=(
        "the samples (KernelBench keeps mean, std, min and max, each to three significant digits)",
        "the timing method (CUDA events or host wall-clock time) and the warm-up calls",
        "the PyTorch and CUDA versions",
        "the problem's input shapes and dtypes (they are in the problem file's code)",
    ),
)

check_environment = gpu_mismatches


def convert_files(paths: list[str], level: int | None = None) -> Conversion:
    if level is not None and level < 1:
        raise UsageError(f"--level {level}: a KernelBench level is 1 or more")
    return _Converter(level).convert(paths)


class _Converter(JsonConverter):
    what, noun, fallback_name = WHAT, "entries", "kernelbench"

    def __init__(self, level: int | None):
        super().__init__()
        self.level = level

    def add(self, path: str, data: Any, text: str) -> None:
        if not isinstance(data, dict) or not data:
            self.problem(path, 1, None, f"not {WHAT}: expected an object of levels or of problem ids")
            return
        levels = [key for key in data if _LEVEL.match(key)]
        ids = [key for key in data if _PROBLEM_ID.match(key)]
        if len(levels) == len(data):
            self._baseline(path, data, LineFinder(text))
        elif len(ids) == len(data):
            self._eval_results(path, data, LineFinder(text))
        else:
            other = next((key for key in data if key not in levels and key not in ids), None)
            if other is not None:
                self.problem(path, LineFinder(text).find_key(other), json.dumps(other, ensure_ascii=False),
                             f"not {WHAT}: the keys must be levels (level1, …) or problem ids (1, 2, …)")
            else:
                key = ids[0] if data and next(iter(data)) in levels else levels[0]
                self.problem(path, LineFinder(text).find_key(key), json.dumps(key),
                             f"not {WHAT}: the keys mix levels ({json.dumps(levels[0])}, …) and problem ids "
                             f"({json.dumps(ids[0])}, …); a file holds one or the other")

    # --- baseline timings --------------------------------------------------------------

    def _baseline(self, path: str, data: dict, lines: LineFinder) -> None:
        stem = os.path.splitext(os.path.basename(path))[0]
        match = _BASELINE.match(stem)
        backend, mode = (match["backend"], match["mode"]) if match and match["backend"] else ("eager", None)
        gpu_folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
        for level_key, problems in data.items():
            level_line = lines.find_key(level_key)
            if not isinstance(problems, dict):
                self.problem(path, level_line, level_key, "must be an object of problem files")
                continue
            level = int(_LEVEL.match(level_key)[1])  # type: ignore[index]
            for problem_file, entry in problems.items():
                line = lines.find_key(problem_file) or level_line or 1
                where = f"{level_key}.{json.dumps(problem_file)}"
                self.read += 1
                figures = self._figures(path, line, where, entry)
                if figures is None:
                    continue
                problem_id = _problem_id(problem_file)
                hardware = str(entry.get("hardware") or "")
                fingerprint = _fingerprint(entry)
                external_id = "/".join(["baseline", gpu_folder, stem, level_key, problem_file, fingerprint])
                if not self.first_sighting(external_id, path, line):
                    continue
                position = (path, 1, line)
                implementation = self.shared.add(
                    "Implementation", ("baseline", level, problem_id, problem_file, backend, mode), position,
                    functools.partial(_reference, level, problem_id, problem_file, backend, mode))
                spec: dict[str, Any] = {"status": "passed", **figures}
                native = {"source": SOURCE_NAME, "benchmark": f"level{level}/{problem_file}",
                          "externalId": external_id, "level": level, "problem": problem_file,
                          "baseline": stem, "gpuFolder": gpu_folder, "entry": entry,
                          "metrics": {key: entry[key] for key in (*(k for k, _ in STATISTICS), "num_trials")
                                      if key in entry}}
                labels = {"level": str(level), "problem": str(problem_id), "backend": backend, "variant": mode or "",
                          "gpu": _gpu_label(hardware)}
                title = f"KernelBench level {level} · {problem_file} · torch {backend}" + (f" {mode}" if mode else "")
                self._run(path, line, spec, native, labels, title, level, problem_id, hardware, implementation)

    # --- eval results ------------------------------------------------------------------

    def _eval_results(self, path: str, data: dict, lines: LineFinder) -> None:
        if self.level is None:
            self.problem(path, None, None, "an eval_results.json does not name its level: give --level N")
            return
        level = self.level
        run_name = os.path.basename(os.path.dirname(os.path.abspath(path)))
        for problem_key, samples in data.items():
            problem_line = lines.find_key(problem_key) or 1
            listed = samples if isinstance(samples, list) else [samples]
            for index, sample in enumerate(listed):
                where = json.dumps(problem_key) + (f"[{index}]" if isinstance(samples, list) else "")
                line = (lines.find_key("sample_id") if isinstance(sample, dict) and "sample_id" in sample
                        else None) or problem_line
                self.read += 1
                if not isinstance(sample, dict):
                    self.problem(path, line, where, "a sample must be an object")
                    continue
                self._sample(path, line, where, level, int(problem_key), run_name, sample)

    def _sample(self, path: str, line: int, where: str, level: int, problem_id: int, run_name: str,
                sample: dict) -> None:
        for key in ("compiled", "correctness"):
            if not isinstance(sample.get(key), bool):
                self.problem(path, line, f"{where}.{key}", "must be true or false")
                return
        sample_id = sample.get("sample_id", 0)
        if not isinstance(sample_id, int) or isinstance(sample_id, bool) or sample_id < 0:
            self.problem(path, line, f"{where}.sample_id", "must be a whole number of 0 or more")
            return
        metadata: dict = sample["metadata"] if isinstance(sample.get("metadata"), dict) else {}
        spec: dict[str, Any] = {}
        stats = sample.get("runtime_stats")
        if sample["compiled"] and sample["correctness"]:
            spec["status"] = "passed"
            if isinstance(stats, dict) and stats:
                figures = self._figures(path, line, f"{where}.runtime_stats", stats)
                if figures is None:
                    return
                spec.update(figures)
        else:
            spec["status"], spec["failure"] = _failure(sample["compiled"], metadata)
        hardware = str(metadata.get("hardware") or (stats or {}).get("hardware") or "")
        fingerprint = _fingerprint(sample)
        external_id = "/".join(["eval", run_name, f"level{level}", str(problem_id), f"sample{sample_id}", fingerprint])
        if not self.first_sighting(external_id, path, line):
            return
        implementation = self.shared.add(
            "Implementation", ("sample", level, problem_id, run_name, sample_id), (path, 1, line),
            lambda: _generated(level, problem_id, run_name, sample_id))
        native = {"source": SOURCE_NAME, "benchmark": f"level{level}/{problem_id}/{run_name}/sample{sample_id}",
                  "externalId": external_id, "level": level, "problem": problem_id, "run": run_name,
                  "sample": sample}
        if spec["status"] == "passed" and "timing" in spec:
            native["metrics"] = {key: stats[key] for key in (*(k for k, _ in STATISTICS), "num_trials")  # type: ignore[index]
                                 if key in stats}  # type: ignore[operator]
        elif spec["status"] == "passed":
            self.notes.append(f"{path}, line {line}: sample {sample_id} of problem {problem_id} is correct but was "
                              "not timed; its run has no timing")
        labels = {"level": str(level), "problem": str(problem_id), "run": run_name, "sample": str(sample_id),
                  "gpu": _gpu_label(hardware)}
        title = f"KernelBench level {level} · problem {problem_id} · {run_name} sample {sample_id}"
        self._run(path, line, spec, native, labels, title, level, problem_id, hardware, implementation)

    # --- shared ------------------------------------------------------------------------

    def _figures(self, path: str, line: int, where: str, entry: Any) -> dict[str, Any] | None:
        """``timing`` from a baseline entry or runtime_stats (ms), or None with a problem."""
        if not isinstance(entry, dict):
            self.problem(path, line, where, "must be an object of mean, std, min, max and num_trials")
            return None
        latency: dict[str, float] = {}
        for key, name in STATISTICS:
            value = entry.get(key)
            if value is None:
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
                self.problem(path, line, f"{where}.{key}", f"{value!r} is not a finite number of 0 or more")
                return None
            latency[name] = round(value * TIME_UNITS["ms"], 3)  # milliseconds
        if "mean" not in latency:
            self.problem(path, line, f"{where}.mean", "is missing: the mean time is the result")
            return None
        trials = entry.get("num_trials")
        if trials is not None and (not isinstance(trials, int) or isinstance(trials, bool) or trials < 1):
            self.problem(path, line, f"{where}.num_trials", f"{trials!r} is not a whole number of 1 or more")
            return None
        return {"timing": {"latencyNs": latency, "primaryStatistic": "mean"}}

    def _run(self, path: str, line: int, spec: dict, native: dict, labels: dict, title: str, level: int,
             problem_id: int | str, hardware: str, implementation: str) -> None:
        position = (path, 1, line)
        protocol = self.shared.add("BenchmarkProtocol", (), position, _protocol)
        workload = self.shared.add("Workload", (level, problem_id), position, lambda: _workload(level, problem_id))
        environment = self.shared.add("ExecutionEnvironment", (hardware,), position, lambda: _environment(hardware))
        spec["sourceNative"] = native
        spec["protocolDigest"] = protocol
        spec["workloadDigest"] = workload
        spec["environmentDigest"] = environment
        spec["implementationDigest"] = implementation
        external_id = native["externalId"]
        self.add_run(spec, (path, line), ("kernelbench/" + external_id.rsplit("/", 1)[0], external_id), title, labels)


def _failure(compiled: bool, metadata: dict) -> tuple[str, dict[str, str]]:
    """(status, failure) of a sample that did not compile, raised, or gave wrong output."""

    def text(*keys: str) -> str | None:
        for key in keys:
            value = metadata.get(key)
            if value not in (None, ""):
                return value if isinstance(value, str) else json.dumps(value)
        return None

    if not compiled:
        message = text("compilation_error")
        if message is not None:
            return "failed", {"reason": "CompilationError", "message": message}
        message = text("error", "other_error")
        if message is not None:  # the evaluation failed (a timeout, a crash): the harness's error
            return "error", {"reason": "Timeout" if "timed out" in message.lower() else "EvaluationError",
                             "message": message}
        return "failed", {"reason": "CompilationError", "message": "the kernel did not compile"}
    message = text("runtime_error")
    if message is not None:
        return "failed", {"reason": "RuntimeError", "message": message}
    issue = text("correctness_issue") or "the output did not match the reference's"
    trials = text("correctness_trials")
    return "failed", {"reason": "IncorrectResult", "message": issue + (f" (trials passed: {trials})" if trials else "")}


def _problem_id(problem_file: str) -> int | str:
    match = _PROBLEM.match(problem_file)
    return int(match[1]) if match else problem_file


def _fingerprint(entry: Any) -> str:
    return hashlib.sha256(json.dumps(entry, sort_keys=True).encode("utf-8")).hexdigest()[:12]


def _gpu_label(hardware: str) -> str:
    return slug(canonical_gpu_name(hardware) or hardware) if hardware else ""


def _operation(level: int, problem_id: int | str) -> str:
    return f"level{level}/{problem_id}"


def _protocol() -> tuple[str, dict]:
    measurement: dict[str, Any] = {
        "metric": "latency", "timer": "other", "primaryStatistic": "mean",
        "method": "KernelBench's timing of one forward call of the model on the problem's inputs (CUDA events by "
                  "default; the file does not say which timer), after warm-up calls; mean, std, min and max of the "
                  "trials (num_trials, in each run's sourceNative.metrics) in milliseconds, to three significant "
                  "digits",
    }
    notes = ("KernelBench's time of one problem's forward pass; a generated kernel compares with the reference "
             "(baseline) on the same problem, level and GPU.")
    harness = {"name": "KernelBench", "repository": REPOSITORY}
    return protocol("kernelbench-latency", "KernelBench · latency", harness, measurement, FAMILY, notes)


def _workload(level: int, problem_id: int | str) -> tuple[str, dict]:
    parameters: dict[str, Any] = {"level": level, "problem": problem_id}
    spec = {"family": FAMILY, "operation": _operation(level, problem_id), "parameters": parameters}
    base = slug(f"kernelbench-level{level}-{problem_id}")
    name = base if isinstance(problem_id, int) else hashed_name(base, json.dumps(parameters), 100)
    return name, manifest("Workload", name, f"KernelBench level {level} problem {problem_id}", spec)


def _reference(level: int, problem_id: int | str, problem_file: str, backend: str,
               mode: str | None) -> tuple[str, dict]:
    spec: dict[str, Any] = {"library": "torch", "operation": _operation(level, problem_id), "backend": backend}
    if mode:
        spec["variant"] = mode
    base = slug(f"kernelbench-level{level}-{problem_id}-torch-{backend}-{mode or ''}")
    name = hashed_name(base, json.dumps(spec, sort_keys=True), 100) if len(base) > 90 else base
    return name, manifest("Implementation", name, f"{problem_file} · torch {backend}" + (f" {mode}" if mode else ""),
                          spec)


def _generated(level: int, problem_id: int, run_name: str, sample_id: int) -> tuple[str, dict]:
    spec = {"library": "kernelbench", "operation": _operation(level, problem_id),
            "variant": f"{run_name}/sample{sample_id}"}
    base = slug(f"kernelbench-level{level}-{problem_id}-{run_name}-sample{sample_id}")
    name = hashed_name(base, json.dumps(spec, sort_keys=True), 100)
    return name, manifest("Implementation", name, f"level {level} problem {problem_id} · {run_name} sample "
                                                  f"{sample_id}", spec)


def _environment(hardware: str) -> tuple[str, dict]:
    spec = {"hardware": gpu_hardware(hardware) if hardware else {"vendor": "unknown", "product": "unknown GPU"},
            "software": {}}
    base = "kernelbench-" + (slug(canonical_gpu_name(hardware) or hardware) if hardware else "unknown-gpu")
    return base, manifest("ExecutionEnvironment", base, f"KernelBench host · {hardware or 'GPU not recorded'}", spec)
