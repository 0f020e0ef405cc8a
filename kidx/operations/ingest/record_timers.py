"""kidx record --timer: a harness's do_bench replaced, and its runs given the protocol
of the timer that measured them.

The harness runs with ``kidx/timers/site`` first on its PYTHONPATH (``timer_environment``),
so its ``triton.testing.do_bench`` is kidx's, which appends a line per call to a log.
Each imported run whose headline figure is exactly a value that a logged call returned
(do_bench's median, or its single value) was measured by that call: ``retimed`` gives it
a protocol derived from the harness's own (``spec.measurement`` saying the timer, cache
state and budgets, ``replacesDoBench: true``), its samples, and an annotation where the
timer fell back (cupti for a call a CUDA graph could not capture). Runs no call returned
keep the harness's protocol, and the notes say how many.
"""

from __future__ import annotations

import copy
import json
import os
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

import kidx.timers
from kidx.formats.framework import Conversion, hashed_name, slug
from kidx.identity import digest_of
from kidx.records import NamedTuple
from kidx.timers.settings import (
    ENV_CACHE,
    ENV_LOG,
    ENV_MAX_NOISE,
    ENV_MAX_TIME,
    ENV_MIN_TIME,
    ENV_PACKAGE,
    ENV_REFERENCE_SM,
    ENV_TIMER,
    measurement_spec,
)
from kidx.units import NANOSECONDS, TIME_UNITS

# found from kidx.timers itself, not from where this module sits among the operations
SITE_FOLDER = Path(kidx.timers.__file__).resolve().parent / "site"
KIDX_PACKAGE = SITE_FOLDER.parents[1]
ANNOTATION_FALLBACK = "kernelindex.dev/timer-fallback"
ANNOTATION_SM_CLOCK = "kernelindex.dev/sm-clock-mhz"
ANNOTATION_CLOCK_WARNING = "kernelindex.dev/clock-warning"
ANNOTATION_NOISE = "kernelindex.dev/timer-noise"
ANNOTATION_TIMER_WALL = "kernelindex.dev/timer-wall-ms"  # the do_bench call's wall time: warm-up, capture, samples
ANNOTATION_LOW_CLOCK_SAMPLES = "kernelindex.dev/low-clock-samples"
ANNOTATION_PERSISTING_L2 = "kernelindex.dev/persisting-l2"
ANNOTATION_KERNEL_COUNT = "kernelindex.dev/kernel-count-warning"
#: a run whose SM clock, read just after timing, was below this share of the GPU's maximum is flagged
LOW_CLOCK_SHARE = 0.8


def timer_environment(timer: str, cache: str, log: Path, base: dict[str, str] | None = None,
                      max_noise: float | None = None, max_time_ms: float | None = None, *,
                      reference_sm_mhz: int | None = None, min_time_ms: float | None = None) -> dict[str, str]:
    """The harness's environment: kidx's sitecustomize first on PYTHONPATH, the timer,
    the cache state, adaptive stopping (``max_noise``, ``max_time_ms``) and the least
    sampling time (``min_time_ms``) where asked, the
    log file named, and the GPU's default SM clock where kidx read it (the timer drops
    samples taken below 75 % of it)."""
    environment = dict(os.environ if base is None else base)
    existing = environment.get("PYTHONPATH")
    environment["PYTHONPATH"] = str(SITE_FOLDER) + (os.pathsep + existing if existing else "")
    environment[ENV_PACKAGE] = str(KIDX_PACKAGE)
    environment[ENV_TIMER] = timer
    environment[ENV_CACHE] = cache
    environment[ENV_LOG] = str(log)
    if max_noise is not None:
        environment[ENV_MAX_NOISE] = repr(float(max_noise))
        if max_time_ms is not None:
            environment[ENV_MAX_TIME] = repr(float(max_time_ms))
    if min_time_ms:
        environment[ENV_MIN_TIME] = repr(float(min_time_ms))
    if reference_sm_mhz:
        environment[ENV_REFERENCE_SM] = str(reference_sm_mhz)
    return environment


def read_log(path: Path) -> tuple[list[dict], list[str]]:
    """The logged calls, and notes on lines that could not be read."""
    if not path.is_file():
        return [], []
    entries, notes = [], []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        try:
            entry = json.loads(line)
        except ValueError:
            notes.append(f"{path}, line {number}: not a JSON line; that do_bench call is not matched")
            continue
        if isinstance(entry, dict) and headline(entry) is not None:
            entries.append(entry)
    return entries, notes


def headline(entry: dict) -> float | None:
    """The figure a harness writes for a logged call: do_bench's median (quantile 0.5),
    or the single value it returned."""
    result, quantiles = entry.get("result"), entry.get("quantiles")
    if isinstance(result, list) and isinstance(quantiles, list) and 0.5 in quantiles and len(result) == len(quantiles):
        result = result[quantiles.index(0.5)]
    if isinstance(result, int | float) and not isinstance(result, bool):
        return float(result)
    return None


def _run_headline(body: dict) -> float | None:
    metrics = ((body.get("spec") or {}).get("sourceNative") or {}).get("metrics") or {}
    value = metrics.get("ms_50")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class Retimed(NamedTuple):
    conversion: Conversion
    retimed: int  # runs given their timer's protocol
    kept: int  # runs left with the harness's timer
    low_clock: int  # runs measured while the SM clock was below LOW_CLOCK_SHARE of its maximum
    low_clock_samples: int = 0  # runs whose timer dropped (or had to keep) samples taken at a low SM clock
    kernel_count: int = 0  # runs whose cupti calls launched another number of kernels than the untimed call


def retimed(conversion: Conversion, entries: dict[str, list[dict]],
            max_sm_mhz: dict[str, int] | None = None) -> Retimed:
    """The conversion with each run a logged call measured given its timer's protocol:
    ``entries`` maps each imported file to the calls logged by the process that wrote it,
    ``max_sm_mhz`` to the GPU's maximum SM clock where it was read."""
    by_value: dict[tuple[str, str], deque[dict]] = defaultdict(deque)
    for source, logged in entries.items():
        for entry in logged:
            by_value[(source, repr(headline(entry)))].append(entry)
    protocols = {digest_of(document.body): document for document in conversion.documents
                 if document.body.get("kind") == "BenchmarkProtocol"}
    made: dict[str, Any] = {}  # new protocol digest -> its document
    documents, runs_retimed, runs_kept, low_clock, low_samples, kernel_count = [], 0, 0, 0, 0, 0
    for document in conversion.documents:
        body = document.body
        if body.get("kind") != "BenchmarkRun":
            documents.append(document)
            continue
        value = _run_headline(body)
        queue = by_value.get((document.source, repr(value))) if value is not None else None
        original = protocols.get(str((body.get("spec") or {}).get("protocolDigest")))
        if not queue or original is None:
            if value is not None and original is not None:
                runs_kept += 1
            documents.append(document)
            continue
        entry = queue.popleft()
        protocol = _timer_protocol(original.body, entry)
        digest = digest_of(protocol)
        if digest not in made:
            made[digest] = original._replace(body=protocol)
        run = _retimed_run(body, entry, digest, (max_sm_mhz or {}).get(document.source))
        low_clock += ANNOTATION_CLOCK_WARNING in run["metadata"]["annotations"]
        low_samples += ANNOTATION_LOW_CLOCK_SAMPLES in run["metadata"]["annotations"]
        kernel_count += ANNOTATION_KERNEL_COUNT in run["metadata"]["annotations"]
        documents.append(document._replace(body=run))
        runs_retimed += 1
    # the harness's protocols that no run measured under any more are not stored
    measured_under = {document.body["spec"].get("protocolDigest") for document in documents
                      if document.body.get("kind") == "BenchmarkRun"}
    documents = [document for document in documents if document.body.get("kind") != "BenchmarkProtocol"
                 or digest_of(document.body) in measured_under]
    # the new protocols go before the first run, as every conversion orders them
    first_run = next((index for index, document in enumerate(documents)
                      if document.body.get("kind") == "BenchmarkRun"), len(documents))
    documents[first_run:first_run] = list(made.values())
    return Retimed(Conversion(documents, conversion.rows_read, conversion.skipped, conversion.noun, conversion.notes),
                   runs_retimed, runs_kept, low_clock, low_samples, kernel_count)


def _timer_protocol(harness_protocol: dict, entry: dict) -> dict:
    timer, cache = str(entry.get("timer")), str(entry.get("cache"))
    protocol = copy.deepcopy(harness_protocol)
    spec = protocol.setdefault("spec", {})
    measurement = dict(spec.get("measurement") or {})
    for key in ("repetitions", "warmupIterations", "method", "quantiles"):
        measurement.pop(key, None)
    measurement.update(measurement_spec(timer, cache, float(entry.get("warmupMs") or 0),
                                        float(entry.get("repetitionMs") or 0), replaces_do_bench=True,
                                        statistic=measurement.get("primaryStatistic", "median"),
                                        max_noise=_number(entry.get("maxNoise")),
                                        max_time_ms=_number(entry.get("maxTimeMs")),
                                        min_time_ms=_number(entry.get("minTimeMs"))))
    if isinstance(entry.get("quantiles"), list):
        measurement["quantiles"] = [float(q) for q in entry["quantiles"]]
    spec["measurement"] = measurement
    comparability = dict(spec.get("comparability") or {})
    if comparability.get("notes"):
        comparability["notes"] = (f"kidx record replaced the harness's triton.testing.do_bench with its {timer} "
                                  f"timer (measurement.method says how it times); the rest describes the "
                                  f"harness. {comparability['notes']}")
    spec["comparability"] = comparability
    metadata = dict(protocol.get("metadata") or {})
    metadata.pop("digest", None)
    old_name = str(metadata.get("name") or "protocol")
    metadata["name"] = hashed_name(slug(f"{old_name}-{timer}-{cache}"), json.dumps(measurement, sort_keys=True), 253)
    if metadata.get("title"):
        metadata["title"] = f"{metadata['title']} · {timer}, {cache} L2"
    protocol["metadata"] = metadata
    return protocol


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _retimed_run(body: dict, entry: dict, protocol_digest: str, max_sm_mhz: int | None) -> dict:
    run = copy.deepcopy(body)
    spec = run["spec"]
    spec["protocolDigest"] = protocol_digest
    samples = entry.get("samplesMs")
    if isinstance(samples, list) and samples and all(isinstance(v, int | float) for v in samples):
        spec["samples"] = {"metric": "latency", "unit": NANOSECONDS,
                           "values": [round(v * TIME_UNITS["ms"], 3) for v in samples]}
    annotations = dict((run.get("metadata") or {}).get("annotations") or {})
    if entry.get("fallback"):
        annotations[ANNOTATION_FALLBACK] = f"{entry.get('requestedTimer')} asked for: {entry['fallback']}"
    wall = _number(entry.get("elapsedMs"))
    if wall is not None:
        annotations[ANNOTATION_TIMER_WALL] = f"{wall:.1f}"
    noise = _number(entry.get("noise"))
    if noise is not None:
        stopped = f" (sampling stopped by {entry['stoppedBy']})" if entry.get("stoppedBy") else ""
        annotations[ANNOTATION_NOISE] = f"relative standard error of the median {noise:.3%}{stopped}"
    clock = entry.get("smClockMHz")
    if isinstance(clock, int) and not isinstance(clock, bool):
        annotations[ANNOTATION_SM_CLOCK] = str(clock)
        if max_sm_mhz and clock < LOW_CLOCK_SHARE * max_sm_mhz:
            annotations[ANNOTATION_CLOCK_WARNING] = (f"the SM clock was {clock} MHz just after timing, below "
                                                     f"{LOW_CLOCK_SHARE:.0%} of the GPU's maximum {max_sm_mhz} MHz")
    check = entry.get("clockCheck")
    if isinstance(check, dict) and isinstance(check.get("warning"), str):
        annotations[ANNOTATION_LOW_CLOCK_SAMPLES] = check["warning"]
    if isinstance(entry.get("persistingL2"), str):
        annotations[ANNOTATION_PERSISTING_L2] = entry["persistingL2"]
    if isinstance(entry.get("kernelWarning"), str):
        annotations[ANNOTATION_KERNEL_COUNT] = entry["kernelWarning"]
    run.setdefault("metadata", {})["annotations"] = annotations
    return run
