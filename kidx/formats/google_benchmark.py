"""Convert Google Benchmark JSON (``--benchmark_format=json``, or ``--benchmark_out=FILE``
with the default ``--benchmark_out_format=json``) into kidx manifests.

One file is one program run: a ``context`` (date, host, executable, CPU count and clock,
caches, whether CPU scaling was on, the library's version and build type, and any
``--benchmark_context`` keys) and ``benchmarks``, a list of entries. An entry is either
one repetition of one benchmark instance (``run_type: iteration``: ``real_time`` and
``cpu_time`` per iteration in ``time_unit``, ``iterations``, user counters such as
``bytes_per_second``, ``items_per_second`` or custom ones) or an aggregate over an
instance's repetitions (``run_type: aggregate``: ``mean``, ``median``, ``stddev``,
``cv``, user-defined statistics) or over a family (``BigO``, ``RMS`` of a complexity
fit). With ``--benchmark_enable_random_interleaving`` the repetitions of all instances
run in a random order and instances appear in a random order; each instance's entries
still share its ``run_name``, which is what the import groups by.

Output, per benchmark instance: one BenchmarkRun. Its repetitions' real times (the
manual time with ``UseManualTime``) are the raw samples, in ns; the headline is the
median, with mean and stddev (Google Benchmark's own aggregates where the file has
them), min and max; CPU time, the coefficient of variation, the counts, the bytes per
second (``memory_bandwidth``) and the items per second (``throughput``) are
measurements. Aggregates are never runs of their own. Every entry of the instance is kept
verbatim in ``spec.sourceNative.entries`` (the family's complexity fit
in ``familyAggregates``, the file's context in ``context``): nothing the file says is
lost. Per file, a BenchmarkProtocol (library version and timer), an
ExecutionEnvironment from the context (caches, library version and build type; Google
Benchmark records no CPU model, so pass ``--environment`` for a captured machine), and a
Workload per instance (the family and its arguments).

Identity: ``{executable}/{run_name}/{date}`` is the externalId (the executable's base
name, never its folder): the same file imported twice gives the same runs, a new program
run new ones, whatever the order of its entries.
"""

from __future__ import annotations

import math
import os
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from kidx.formats.framework import (
    FormatDoc,
    JsonConverter,
    LineFinder,
    hashed_name,
    manifest,
    non_negative_number,
    protocol,
    slug,
)

SOURCE_NAME = "google-benchmark"
FAMILY = "google_benchmark"
REPOSITORY = "https://github.com/google/benchmark"
WHAT = "Google Benchmark JSON (--benchmark_format=json or --benchmark_out=FILE)"
# its own scales, not kidx.units.TIME_UNITS: ns is 1.0 here (1 there), so an ns figure is
# written as a float (5.0, not 5), and its runs' digests depend on it
TIME_UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
# entry keys that are not user counters
_FIXED_KEYS = frozenset({
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
    "aggregate_unit", "error_occurred", "error_message", "skipped", "skip_message", "label",
    "big_o", "real_coefficient", "cpu_coefficient", "rms", "manual_time",
})
_FAMILY_AGGREGATES = ("BigO", "RMS")
# name components that say how an instance was timed, not what it computed
_TIMING_MODIFIERS = re.compile(
    r"(real_time|manual_time|process_time|(min_time|min_warmup_time|iterations|repeats):.+)\Z")
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?\Z")

FORMAT_DOC = FormatDoc(
    reads=(
        "Google Benchmark's `--benchmark_format=json` / `--benchmark_out=FILE` output "
        "([google-benchmark](#google-benchmark))"
    ),
    one_run_per="benchmark instance",
    fields=(
        ("Google Benchmark", "kidx"),
        ((
            "each repetition's `real_time` (the manual time for `/manual_time` benchmarks), in its `time_unit` (`ns`, "
            "`us`, `ms`, `s`)"
        ),
         (
             "`spec.samples` (`metric: latency`, `unit: ns`, in the order written); `min` and `max` of "
             "`spec.timing.latencyNs`"
         )),
        ("the `_median`, `_mean` and `_stddev` aggregates' `real_time`",
         (
             "`spec.timing.latencyNs` `median` (the headline), `mean`, `stddev`, in ns; computed from the repetitions "
             "when the file has no aggregates (one repetition: its value is the median and the mean)"
         )),
        ("`cpu_time` (median and mean), the `_cv` aggregate, repetitions, iterations",
         "`spec.measurements`: `cpu_latency` (ns), `latency` `cv` (`ratio`), `repetitions` and `iterations` (`count`)"),
        ("`bytes_per_second`, `items_per_second`",
         (
             "`spec.measurements`: `memory_bandwidth` (`bytes/s`) and `throughput` (`items/s`), each the `median`; "
             "`kidx compare --metric memory_bandwidth` (or `throughput`) judges runs by them, more being better"
         )),
        ("every user counter (`bytes_per_second`, `items_per_second`, custom ones)",
         (
             "`spec.sourceNative.metrics`: the median over the repetitions (the `_median` aggregate's where written), "
             "keyed by the counter's name; `sourceNative.counters` lists them"
         )),
        ((
            "every entry of the instance (repetitions and aggregates), the family's complexity fit (`_BigO`, `_RMS`), "
            "the `context`"
        ),
         (
             "`spec.sourceNative.entries`, `familyAggregates` and `context`, verbatim (NaN and infinities as `null`): "
             "nothing the file says is lost"
         )),
        ("`error_occurred` (SkipWithError), `skipped` (SkipWithMessage)",
         "`spec.status: error` or `skipped` with `spec.failure.message`"),
        ((
            "`context`: `caches`, `library_version`, `library_build_type`; `host_name`, `num_cpus`, `mhz_per_cpu`, "
            "`cpu_scaling_enabled`, `aslr_enabled`"
        ),
         (
             "an ExecutionEnvironment: `host.caches` (type, level, size, sharing) and software `google-benchmark` and "
             "`google-benchmark-build`; the rest are annotations. Google Benchmark records no CPU model, so the "
             "product is `unknown CPU`: capture the machine (`kidx env capture`) and import with `--environment`"
         )),
        ("library version and timer (`real_time` or `manual_time`, and name modifiers such as `min_time:`)",
         "a BenchmarkProtocol (`google-benchmark-real-time`, `google-benchmark-manual-time`)"),
        ("the family and the arguments in the name (`BM_copy/64/n:8/threads:2`)",
         "a Workload (`operation` is the family; parameters `arg0`, `n`, `threads`; integers stay integers)"),
        ("the executable's base name, the family", "labels `executable`, `benchmark`, `google_benchmark_version`"),
    ),
)


@dataclass
class _Instance:
    """One benchmark instance of a file: its repetitions and its aggregates, as written."""

    run_name: str
    line: int
    family: Any
    repetitions: list[dict] = field(default_factory=list)
    aggregates: list[dict] = field(default_factory=list)


class _Converter(JsonConverter):
    what, noun, fallback_name = WHAT, "benchmarks", "google-benchmark"

    def add(self, path: str, data: Any, text: str) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list) \
                or not isinstance(data.get("context"), dict):
            self.problem(path, 1, None, f"not {WHAT}: expected an object with context and benchmarks")
            return
        context = data["context"]
        observed = _observed_at(context.get("date"))
        if observed is None:
            self.problem(path, 1, "context.date", f"{context.get('date')!r} is not a date and time")
            return
        if str(context.get("library_build_type") or "").lower() == "debug":
            self.notes.append(f"{path}: the Google Benchmark library was built as debug; timings may be affected "
                              "(Google Benchmark warns the same)")
        if context.get("cpu_scaling_enabled") is True:
            self.notes.append(f"{path}: CPU scaling was enabled; real-time measurements may be noisy "
                              "(Google Benchmark warns the same)")
        instances, family_aggregates = self._instances(path, data["benchmarks"], LineFinder(text))
        self.read += len(instances)
        executable = os.path.basename(str(context.get("executable") or "")) or "benchmark"
        for instance in instances.values():
            external_id = f"{executable}/{instance.run_name}/{context['date']}"
            if not self.first_sighting(external_id, path, instance.line):
                continue
            self._run(path, instance, external_id, observed, executable, context,
                      family_aggregates.get(instance.family, []))

    def _instances(self, path: str, entries: list, lines: LineFinder) -> tuple[dict[str, _Instance], dict]:
        """Entries grouped by instance, in order of first appearance; family aggregates by family."""
        instances: dict[str, _Instance] = {}
        family_aggregates: dict[Any, list[dict]] = {}
        for index, entry in enumerate(entries):
            where = f"benchmarks[{index}]"
            name = entry.get("name") if isinstance(entry, dict) else None
            line = (lines.line_of("name", name) if isinstance(name, str) else None) or 1
            if self.refused(path, line, _problems_of(entry), where):
                continue
            run_name = str(entry.get("run_name") or entry["name"])
            family = entry.get("family_index", run_name.split("/", 1)[0])
            if entry["run_type"] == "aggregate" and entry.get("aggregate_name") in _FAMILY_AGGREGATES:
                family_aggregates.setdefault(family, []).append(_finite_only(entry))
                continue
            instance = instances.setdefault(run_name, _Instance(run_name, line, family))
            (instance.aggregates if entry["run_type"] == "aggregate" else instance.repetitions).append(
                _finite_only(entry))
        return instances, family_aggregates

    def _run(self, path: str, instance: _Instance, external_id: str, observed: str, executable: str,
             context: dict, family_aggregates: list[dict]) -> None:
        position = (path, 1, instance.line)
        first = (instance.repetitions or instance.aggregates)[0]
        family_name, parameters, key, modifiers = _parse_name(instance.run_name, first.get("threads"))
        timer = "manual_time" if "manual_time" in modifiers else "real_time"
        version = str(context.get("library_version") or "unknown")
        protocol = self.shared.add("BenchmarkProtocol", (version, timer, tuple(modifiers)), position,
                                   lambda: _protocol(version, timer, modifiers))
        environment = self.shared.add("ExecutionEnvironment", (_context_key(context),), position,
                                      lambda: _environment(context))
        workload = self.shared.add("Workload", (family_name, key), position,
                                   lambda: _workload(family_name, parameters, key))
        spec: dict[str, Any] = {"status": "passed", "observedAt": observed}
        failed = next((e for e in instance.repetitions if e.get("error_occurred") or e.get("skipped")), None)
        if failed is not None:
            skipped = bool(failed.get("skipped")) and not failed.get("error_occurred")
            spec["status"] = "skipped" if skipped else "error"
            spec["failure"] = {
                "reason": "Skipped" if skipped else "BenchmarkError",
                "message": str(failed.get("skip_message" if skipped else "error_message") or ""),
            }
        else:
            spec.update(_figures(instance))
        counters = sorted({k for e in [*instance.repetitions, *instance.aggregates] for k in e if k not in _FIXED_KEYS})
        spec["sourceNative"] = {
            "source": SOURCE_NAME,
            "benchmark": instance.run_name,
            "externalId": external_id,
            "timeUnit": str(first.get("time_unit") or "ns"),
            "counters": counters,
            "metrics": _counter_medians(instance, counters),
            "entries": [*instance.repetitions, *instance.aggregates],
            "context": _finite_only(context),
        }
        if family_aggregates:
            spec["sourceNative"]["familyAggregates"] = family_aggregates
        spec["protocolDigest"] = protocol
        spec["workloadDigest"] = workload
        spec["environmentDigest"] = environment
        labels = {"benchmark": family_name, "executable": executable, "google_benchmark_version": version}
        self.add_run(spec, (path, instance.line), ("google-benchmark/" + external_id, external_id),
                     f"{instance.run_name} · Google Benchmark", labels)


convert_files = _Converter.convert_files


def _problems_of(entry: Any) -> list[tuple[str | None, str]]:
    if not isinstance(entry, dict):
        return [(None, "a benchmark entry must be an object")]
    bad: list[tuple[str | None, str]] = [
        (key, f"{entry[key]!r} is not a single value (a string, number or boolean)")
        for key in _SCALAR_FIELDS if isinstance(entry.get(key), (list, dict))]
    if bad:  # compared, hashed and grouped below: a list or an object there is no value of Google Benchmark's
        return bad
    if not isinstance(entry.get("name"), str) or not entry["name"]:
        bad.append(("name", "is missing or not a string"))
    if entry.get("run_type") not in ("iteration", "aggregate"):
        bad.append(("run_type", f"{entry.get('run_type')!r} is neither iteration nor aggregate"))
    if entry.get("aggregate_name") in _FAMILY_AGGREGATES:
        return bad
    if "time_unit" in entry and entry["time_unit"] not in TIME_UNITS:
        bad.append(("time_unit", f"{entry['time_unit']!r} is not one of ns, us, ms, s"))
    iterations = entry.get("iterations")
    if iterations is not None and (not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 0):
        bad.append(("iterations", f"{iterations!r} is not a count (a whole number, 0 or more)"))
    if entry.get("aggregate_unit") == "percentage":
        return bad
    for key in ("real_time", "cpu_time"):
        value = entry.get(key)
        if not non_negative_number(value) and not (entry.get("error_occurred") or entry.get("skipped")):
            bad.append((key, "is missing" if value is None else f"{value!r} is not a non-negative number"))
    return bad



# the fields of a benchmark entry that Google Benchmark writes as one string, number or boolean
_SCALAR_FIELDS = ("name", "run_name", "run_type", "aggregate_name", "aggregate_unit", "time_unit", "family_index",
                  "per_family_instance_index", "repetitions", "repetition_index", "threads", "iterations",
                  "real_time", "cpu_time", "error_occurred", "error_message", "skipped", "skip_message", "label")


def _finite_only(value: Any) -> Any:
    """The value with NaN and the infinities as null (canonical JSON has no place for them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite_only(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite_only(item) for item in value]
    return value


def _ns(entry: dict, key: str) -> float:
    return round(entry[key] * TIME_UNITS[entry.get("time_unit") or "ns"], 3)


def _figures(instance: _Instance) -> dict[str, Any]:
    """timing, measurements and samples of a passed instance."""
    aggregates = {e.get("aggregate_name"): e for e in instance.aggregates}
    real = [_ns(e, "real_time") for e in instance.repetitions]
    cpu = [_ns(e, "cpu_time") for e in instance.repetitions]
    latency: dict[str, float] = {}
    if real:
        latency.update(min=min(real), max=max(real))
    for statistic, compute in (("median", statistics.median), ("mean", statistics.fmean),
                               ("stddev", statistics.stdev)):
        if statistic in aggregates and aggregates[statistic].get("aggregate_unit", "time") == "time":
            latency[statistic] = _ns(aggregates[statistic], "real_time")
        elif len(real) >= (2 if statistic == "stddev" else 1):
            latency[statistic] = round(compute(real), 3)
    figures: dict[str, Any] = {"timing": {"latencyNs": latency, "primaryStatistic": "median"}}
    measurements = []
    for statistic in ("median", "mean"):
        value = _ns(aggregates[statistic], "cpu_time") if statistic in aggregates else (
            round(statistics.median(cpu) if statistic == "median" else statistics.fmean(cpu), 3) if cpu else None)
        if value is not None:
            measurements.append({"metric": "cpu_latency", "statistic": statistic, "unit": "ns", "value": value})
    cv = aggregates.get("cv")
    if cv is not None and non_negative_number(cv.get("real_time")):
        measurements.append({"metric": "latency", "statistic": "cv", "unit": "ratio", "value": cv["real_time"]})
    measurements.append({"metric": "repetitions", "statistic": "count", "unit": "count",
                         "value": len(instance.repetitions) or aggregates.get("median", aggregates.get("mean", {}))
                         .get("iterations") or 0})
    iterations = {e.get("iterations") for e in instance.repetitions}
    if len(iterations) == 1 and isinstance(next(iter(iterations)), int):
        measurements.append({"metric": "iterations", "statistic": "count", "unit": "count",
                             "value": next(iter(iterations))})
    for counter, metric, unit in _RATES:
        rate = _median_of(instance, counter)
        if rate is not None:
            measurements.append({"metric": metric, "statistic": "median", "unit": unit, "value": rate})
    figures["measurements"] = measurements
    if len(real) > 1:
        figures["samples"] = {"metric": "latency", "unit": "ns", "values": real}
    return figures


# the rate counters Google Benchmark names itself (SetBytesProcessed, SetItemsProcessed) ->
# (kidx metric, unit): a bandwidth and a throughput, more of either better
_RATES = (("bytes_per_second", "memory_bandwidth", "bytes/s"), ("items_per_second", "throughput", "items/s"))


def _median_of(instance: _Instance, counter: str) -> float | None:
    """A counter's median over the repetitions (Google Benchmark's median aggregate where written)."""
    for aggregate in instance.aggregates:
        if aggregate.get("aggregate_name") == "median" and non_negative_number(aggregate.get(counter)):
            return aggregate[counter]
    values = [e[counter] for e in instance.repetitions if non_negative_number(e.get(counter))]
    return statistics.median(values) if values else None


def _counter_medians(instance: _Instance, counters: list[str]) -> dict[str, float | None]:
    return {counter: _median_of(instance, counter) for counter in counters}


def _parse_name(run_name: str, threads: Any) -> tuple[str, dict[str, Any], str, list[str]]:
    """(family, parameters, workload key, timing modifiers) of ``BM_x/8/n:64/real_time/threads:2``."""
    family, *parts = run_name.split("/")
    parameters: dict[str, Any] = {}
    shown: list[str] = []
    modifiers: list[str] = []
    position = 0
    for part in parts:
        if _TIMING_MODIFIERS.match(part):
            modifiers.append(part)
            continue
        if part.startswith("threads:"):
            continue
        key, value = part.split(":", 1) if ":" in part else (f"arg{position}", part)
        position += 0 if ":" in part else 1
        parameters[key] = _typed(value)
        shown.append(part)
    if isinstance(threads, int) and not isinstance(threads, bool):
        parameters["threads"] = threads
        if threads != 1:
            shown.append(f"threads:{threads}")
    return family, parameters, "/".join(shown), modifiers


def _typed(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return text


def _observed_at(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    match = _DATE.match(text.strip())
    if not match:
        return None
    zone = match.group(4)
    if zone is None or zone in ("+00:00", "+0000", "-00:00"):
        zone = "Z"
    elif ":" not in zone:
        zone = zone[:3] + ":" + zone[3:]
    return f"{match.group(1)}T{match.group(2)}{match.group(3) or ''}{zone}"


def _caches(context: dict) -> list[dict]:
    caches = []
    for cache in context.get("caches") or []:
        if isinstance(cache, dict) and non_negative_number(cache.get("size")):
            caches.append({key: cache[key] for key in ("type", "level", "size", "num_sharing") if key in cache})
    return caches


def _context_key(context: dict) -> tuple:
    return (repr(_caches(context)), context.get("library_version"), context.get("library_build_type"),
            context.get("host_name"), context.get("num_cpus"), context.get("executable"))


def _size(size: float) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{int(size // scale)} {unit}"
    return f"{int(size)} B"


def _environment(context: dict) -> tuple[str, dict]:
    caches = [{"type": str(c.get("type") or ""), "level": c.get("level"), "sizeBytes": int(c["size"]),
               **({"sharedBy": c["num_sharing"]} if isinstance(c.get("num_sharing"), int) else {})}
              for c in _caches(context)]
    host: dict[str, Any] = {}
    if caches:
        host["caches"] = caches
    software = {"google-benchmark": str(context.get("library_version") or ""),
                "google-benchmark-build": str(context.get("library_build_type") or "")}
    spec: dict[str, Any] = {"hardware": {"vendor": "unknown", "product": "unknown CPU"}}
    if host:
        spec["host"] = host
    spec["software"] = {key: value for key, value in software.items() if value}
    cache_text = ", ".join(f"L{c['level']} {c['type'].lower()} {_size(c['sizeBytes'])}" for c in caches)
    title = " · ".join(filter(None, ["Google Benchmark host", cache_text]))
    from kidx.identity import digest_of

    body = manifest("ExecutionEnvironment", "google-benchmark-host", title, spec)
    name = hashed_name("google-benchmark-host", digest_of(body), 100)
    body["metadata"]["name"] = name
    annotations = {
        "kernelindex.dev/hostname": context.get("host_name"),
        "kernelindex.dev/cpu-count": context.get("num_cpus"),
        "kernelindex.dev/cpu-mhz": context.get("mhz_per_cpu"),
        "kernelindex.dev/cpu-scaling-enabled": context.get("cpu_scaling_enabled"),
        "kernelindex.dev/aslr-enabled": context.get("aslr_enabled"),
    }
    annotations = {key: str(value).lower() if isinstance(value, bool) else str(value)
                   for key, value in annotations.items() if value is not None and value != ""}
    if annotations:
        body["metadata"]["annotations"] = annotations
    return name, body


def _protocol(version: str, timer: str, modifiers: list[str]) -> tuple[str, dict]:
    manual = timer == "manual_time"
    measurement: dict[str, Any] = {
        "metric": "latency", "timer": "other" if manual else "wall_clock", "primaryStatistic": "median",
        "method": ("repetitions of a timed loop; each repetition's time per iteration is one sample"
                   + (" (the time the benchmark reported with SetIterationTime)" if manual else " (wall clock)")),
    }
    notes = ("Time per iteration of a benchmark loop, one sample per repetition; the median over the repetitions "
             "is the headline. " + (f"Name modifiers: {', '.join(modifiers)}. " if modifiers else "")
             + "Comparable within one benchmark instance (family and arguments) and machine.")
    name = "google-benchmark-" + slug(timer) + "".join("-" + slug(m) for m in modifiers if m != timer)
    harness = {"name": "Google Benchmark", "repository": REPOSITORY, "version": version}
    return protocol(name, f"Google Benchmark {version} · {timer}", harness, measurement, FAMILY, notes)


def _workload(family: str, parameters: dict, key: str) -> tuple[str, dict]:
    spec: dict[str, Any] = {"family": FAMILY, "operation": family, "parameters": parameters}
    if key:
        spec["key"] = key
    name = "google-benchmark-" + slug(family + ("-" + key if key else ""))
    title = " · ".join([family, *(f"{k} {v}" for k, v in parameters.items())])
    return name, manifest("Workload", name, title, spec)
