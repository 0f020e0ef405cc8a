"""Convert pytest-benchmark JSON (``pytest --benchmark-json=FILE``, or the files that
``--benchmark-autosave`` keeps under ``.benchmarks/``) into kidx manifests.

One file is one pytest session: ``machine_info`` (host, CPU, Python), ``commit_info``,
``datetime`` (when the session ran, UTC), ``version`` (of pytest-benchmark) and
``benchmarks``, each with its test ``fullname``, ``params``, ``options`` and ``stats`` in
seconds; ``stats.data`` holds every round's time (always in ``--benchmark-json``
output; in autosaved files only with ``--benchmark-save-data``).

Output, per benchmark: one BenchmarkRun (min, max, mean, stddev, median in ns, the
median as headline; q1, q3, iqr, rounds, iterations, outliers as measurements; the raw
round times as spec.samples), a Workload (group or test function, and its params), an
Implementation (the test function of the project), a BenchmarkProtocol per set of timing
options, and an ExecutionEnvironment from machine_info: the CPU (vendor, model,
architecture) and Python, the operating system and pytest-benchmark as software; the
host name is an annotation. pytest-benchmark times on the CPU's clock and records no
GPU: for GPU code, capture the machine with ``kidx env capture`` and import with
``--environment``.

Identity: ``{fullname}/{12 hex of the session's record}`` is the externalId (one test,
one session): the benchmark's summary statistics, options, machine and commit, which a
session's ``--benchmark-json`` file and its autosave file share (their ``datetime`` is
when each file was written, and differs). So the same file imported twice gives the
same runs, a new session new ones, and the two files of one session one run each: the
fuller record (with the round times) and the earlier time, in whichever order they are
imported (``merge_stored``). The Implementation's library is the project's name (from
``--library``, else the pyproject.toml or setup.cfg of the folder kidx runs in), never
the name of the folder pytest ran in.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from kidx.formats.framework import (
    Conversion,
    FormatDoc,
    JsonConverter,
    LineFinder,
    SkippedRecord,
    hashed_name,
    manifest,
    non_negative_number,
    protocol,
    slug,
)
from kidx.manifests.document import Document
from kidx.units import TIME_UNITS

SOURCE_NAME = "pytest-benchmark"
FAMILY = "pytest_benchmark"
REPOSITORY = "https://github.com/ionelmc/pytest-benchmark"
WHAT = "pytest-benchmark JSON (pytest --benchmark-json=FILE)"
UNKNOWN_LIBRARY = "unknown"
_HEADLINE = ("min", "max", "mean", "stddev", "median")
# stats key -> (metric, statistic, unit, seconds?)
_MEASUREMENTS = {
    "q1": ("latency", "p25", "ns", True),
    "q3": ("latency", "p75", "ns", True),
    "iqr": ("latency", "iqr", "ns", True),
    "rounds": ("rounds", "count", "count", False),
    "iterations": ("iterations", "count", "count", False),
}
_CPU_VENDORS = {"genuineintel": "intel", "authenticamd": "amd"}
_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?\Z")

FORMAT_DOC = FormatDoc(
    reads=(
        "`pytest --benchmark-json=FILE` output, or the files `--benchmark-autosave` keeps "
        "([pytest-benchmark](#pytest-benchmark))"
    ),
    one_run_per="benchmark",
    fields=(
        ("pytest-benchmark", "kidx"),
        ("`stats.min`, `max`, `mean`, `stddev`, `median` (seconds)",
         "`spec.timing.latencyNs` in ns; the median is the headline"),
        ("`stats.q1`, `q3`, `iqr`, `rounds`, `iterations`",
         (
             "`spec.measurements` (`p25`, `p75`, `iqr` in ns; counts). The quartiles are the run's band: compare and "
             "series show it as `… (p25-p75)`, since pytest-benchmark keeps no p20 and p80"
         )),
        ("`stats.data` (each round's time)",
         "`spec.samples` (`metric: latency`, `unit: ns`, one value per round, in order)"),
        ("every numeric `stats` key, `options`, `extra_info`",
         "`spec.sourceNative` (`metrics`, `options`, `extraInfo`), as written"),
        ("`datetime`", "`spec.observedAt` (UTC)"),
        ("`machine_info`",
         (
             "an ExecutionEnvironment: the CPU (`cpu.vendor_id_raw` → vendor, `cpu.brand_raw` → product, `machine` → "
             "architecture) with software `python`, `python-implementation`, `os` (`system`) and `pytest-benchmark`; "
             "host name and kernel release are annotations. Named `pytest-benchmark-<cpu>-<10 hex of its digest>`"
         )),
        ("`options` (timer, rounds, gc, warm-up)", "a BenchmarkProtocol (`pytest-benchmark-<timer>[-nogc]`)"),
        ("`group` (else the test function) and `params`", "a Workload (`pytest-benchmark-<group>-<param id>`)"),
        ("the project and the test function",
         (
             "an Implementation: `library` is the project's name, `operation` the test function, `entryPoint` the "
             "test's node id (below)"
         )),
        ("`group`, test function, `commit_info`",
         (
             "labels `group`, `test`, `project`, `commit`, `branch`, `pytest_benchmark_version` (those that are valid "
             "label values)"
         )),
    ),
)


def convert_files(paths: list[str], library: str | None = None) -> Conversion:
    """``library``: the Implementation's library; by default the project name of the
    current folder's pyproject.toml or setup.cfg (``project_name``), else ``unknown``."""
    converter = _Converter()
    if library is None:
        library = project_name(Path.cwd())
        if library is None:
            converter.notes.append(f"no project name in a pyproject.toml or setup.cfg of {Path.cwd()} or above: the "
                                   f"implementations' library is {UNKNOWN_LIBRARY!r} (pass --library NAME)")
    converter.library = library or UNKNOWN_LIBRARY
    return converter.convert(paths)


def project_name(folder: Path) -> str | None:
    """The ``[project] name`` of the nearest pyproject.toml (or ``[tool.poetry] name``, or
    setup.cfg's ``[metadata] name``) in ``folder`` or above, up to the checkout's root: a
    name every clone of the project shares, wherever it lives."""
    import configparser
    import tomllib

    for current in (folder, *folder.parents):
        pyproject = current / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                data = {}
            name = (data.get("project") or {}).get("name") or ((data.get("tool") or {}).get("poetry") or {}).get("name")
            if isinstance(name, str) and name:
                return name
        setup_cfg = current / "setup.cfg"
        if setup_cfg.is_file():
            parser = configparser.ConfigParser(interpolation=None)
            try:
                parser.read(setup_cfg, encoding="utf-8")
            except (OSError, UnicodeDecodeError, configparser.Error):
                pass
            name = parser.get("metadata", "name", fallback=None)
            if name:
                return name
        if (current / ".git").exists():
            return None
    return None


class _Converter(JsonConverter):
    what, noun, fallback_name = WHAT, "benchmarks", "pytest-benchmark"
    library = UNKNOWN_LIBRARY

    def __init__(self) -> None:
        super().__init__()
        self._twins: dict[str, Document] = {}

    def add(self, path: str, data: Any, text: str) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list) \
                or not isinstance(data.get("machine_info"), dict):
            self.problem(path, 1, None, f"not {WHAT}: expected an object with machine_info and benchmarks")
            return
        observed = _observed_at(data.get("datetime"))
        if observed is None:
            self.problem(path, 1, "datetime", f"{data.get('datetime')!r} is not an ISO 8601 time")
            return
        version = str(data.get("version") or "unknown")
        machine = data["machine_info"]
        commit = data.get("commit_info") if isinstance(data.get("commit_info"), dict) else {}
        lines = LineFinder(text)
        for index, benchmark in enumerate(data["benchmarks"]):
            self.read += 1
            where = f"benchmarks[{index}]"
            fullname = benchmark.get("fullname") if isinstance(benchmark, dict) else None
            line = (lines.line_of("fullname", fullname) if isinstance(fullname, str) else None) or 1
            if self.refused(path, line, _problems_of(benchmark), where):
                continue
            external_id = f"{fullname}/{_session_fingerprint(benchmark, machine, commit, version)}"
            twin = self._twins.get(external_id)
            if twin is not None:  # the same session's other file: one run, the fuller record
                self.skipped.append(SkippedRecord(path, line, f"duplicate of line {twin.line} of {twin.source}, the "
                                                              "same session's record (merged into one run)"))
                self._merge_twin(twin, path, line, benchmark, external_id, observed, version, machine, commit)
                continue
            self._benchmark(path, line, benchmark, external_id, observed, version, machine, commit)
            self._twins[external_id] = self.runs[-1]

    def _merge_twin(self, twin: Document, *arguments) -> None:
        before = len(self.runs)
        self._benchmark(*arguments)
        other = self.runs.pop()
        assert len(self.runs) == before
        index = next(i for i, run in enumerate(self.runs) if run is twin)
        self.runs[index] = self._twins[arguments[3]] = twin._replace(
            body={**twin.body, "spec": merge_twins(twin.body["spec"], other.body["spec"])})

    def _benchmark(self, path, line, benchmark, external_id, observed, version, machine, commit) -> None:
        position = (path, 1, line)
        options = benchmark.get("options") if isinstance(benchmark.get("options"), dict) else {}
        function = benchmark["name"].split("[", 1)[0]
        operation = benchmark.get("group") or function
        params = _scalar_params(benchmark.get("params"))
        project = str(commit.get("project") or "") or None  # a label only: often the folder's name
        protocol = self.shared.add("BenchmarkProtocol", (version, _options_key(options)), position,
                                   lambda: _protocol(version, options))
        environment = self.shared.add("ExecutionEnvironment", (_machine_key(machine), version), position,
                                      lambda: _environment(machine, version))
        library = self.library
        implementation = self.shared.add("Implementation", (library, benchmark["fullname"].split("[", 1)[0]),
                                         position, lambda: _implementation(library, benchmark["fullname"], function))
        workload = self.shared.add("Workload", (operation, repr(sorted(params.items()))), position,
                                   lambda: _workload(operation, params, benchmark.get("param")))
        stats = benchmark["stats"]
        spec: dict[str, Any] = {
            "status": "passed",
            "observedAt": observed,
            "timing": {
                "latencyNs": {stat: _ns(stats[stat]) for stat in _HEADLINE if non_negative_number(stats.get(stat))},
                "primaryStatistic": "median",
            },
        }
        measurements = [
            {"metric": metric, "statistic": statistic, "unit": unit,
             "value": _ns(stats[key]) if seconds else stats[key]}
            for key, (metric, statistic, unit, seconds) in _MEASUREMENTS.items() if non_negative_number(stats.get(key))
        ]
        if measurements:
            spec["measurements"] = measurements
        data = stats.get("data")
        if isinstance(data, list) and data:
            spec["samples"] = {"metric": "latency", "unit": "ns", "values": [_ns(value) for value in data]}
        spec["sourceNative"] = {
            "source": SOURCE_NAME,
            "benchmark": benchmark["fullname"],
            "externalId": external_id,
            "metrics": {key: value for key, value in stats.items() if key != "data" and non_negative_number(value)},
            "options": options,
            "extraInfo": benchmark.get("extra_info") or {},
        }
        spec["protocolDigest"] = protocol
        spec["workloadDigest"] = workload
        spec["environmentDigest"] = environment
        spec["implementationDigest"] = implementation
        labels = {
            "group": str(benchmark.get("group") or ""), "test": function, "project": project or "",
            "commit": str(commit.get("id") or ""), "branch": str(commit.get("branch") or ""),
            "pytest_benchmark_version": version,
        }
        dirty = {"kernelindex.dev/commit-dirty": "true"} if commit.get("dirty") else None
        self.add_run(spec, (path, line), ("pytest/" + external_id, external_id),
                     f"{benchmark['name']} · pytest-benchmark", labels, dirty)


def _problems_of(benchmark: Any) -> list[tuple[str | None, str]]:
    if not isinstance(benchmark, dict):
        return [(None, "a benchmark must be an object")]
    bad: list[tuple[str | None, str]] = []
    for key in ("name", "fullname"):
        if not isinstance(benchmark.get(key), str) or not benchmark.get(key):
            bad.append((key, "is missing or not a string"))
    stats = benchmark.get("stats")
    if not isinstance(stats, dict):
        return bad + [("stats", "is missing")]
    for key in (*_HEADLINE, "q1", "q3", "iqr"):
        value = stats.get(key)
        if value is not None and not non_negative_number(value):
            bad.append((f"stats.{key}", f"{value!r} is not a non-negative number"))
    if not non_negative_number(stats.get("median")):
        bad.append(("stats.median", "is missing"))
    data = stats.get("data")
    if data is not None and (not isinstance(data, list) or not all(non_negative_number(v) for v in data)):
        bad.append(("stats.data", "must be a list of non-negative numbers (seconds)"))
    return bad



def _ns(seconds: float) -> float:
    return round(seconds * TIME_UNITS["s"], 3)


def _observed_at(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    match = _DATETIME.match(text)
    if not match:
        return None
    zone = match.group(3)
    if zone in (None, "+00:00"):
        zone = "Z"  # pytest-benchmark writes UTC
    return match.group(1) + (match.group(2) or "") + zone


def _scalar_params(params: Any) -> dict[str, Any]:
    """Params as workload parameters: JSON scalars as they are, anything else as its text."""
    if not isinstance(params, dict):
        return {}
    return {
        str(key): value if isinstance(value, (str, int, float, bool)) or value is None else str(value)
        for key, value in params.items()
        if value is not None
    }


def _options_key(options: dict) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in options.items()))


def _protocol(version: str, options: dict) -> tuple[str, dict]:
    timer = str(options.get("timer") or "perf_counter")
    measurement: dict[str, Any] = {
        "metric": "latency", "timer": "wall_clock", "primaryStatistic": "median",
        "method": (f"rounds of calls timed with {timer}"
                   + (", garbage collection off" if options.get("disable_gc") else "")
                   + (", warm-up on" if options.get("warmup") else "")),
    }
    if isinstance(options.get("min_rounds"), int):
        measurement["repetitions"] = options["min_rounds"]
    notes = ("Wall-clock time of one call, per round (a round's time divided by its iterations), on the CPU's clock; "
             "the median over the rounds is the headline. "
             f"Options: {', '.join(f'{k}={v}' for k, v in sorted(options.items()))}.")
    name = "pytest-benchmark-" + slug(timer) + ("-nogc" if options.get("disable_gc") else "")
    harness = {"name": "pytest-benchmark", "repository": REPOSITORY, "version": version}
    return protocol(name, f"pytest-benchmark {version} · {timer}", harness, measurement, FAMILY, notes)


def _machine_key(machine: dict) -> tuple:
    cpu = machine.get("cpu")
    if not isinstance(cpu, dict):
        cpu = {}
    return (cpu.get("brand_raw"), cpu.get("vendor_id_raw"), machine.get("machine"), machine.get("python_version"),
            machine.get("python_implementation"), machine.get("system"), machine.get("node"), machine.get("release"))


def _environment(machine: dict, version: str) -> tuple[str, dict]:
    cpu = machine.get("cpu")
    if not isinstance(cpu, dict):
        cpu = {}
    model = str(cpu.get("brand_raw") or machine.get("processor") or "unknown CPU")
    vendor = _CPU_VENDORS.get(str(cpu.get("vendor_id_raw") or "").lower()) or slug(model.split()[0]) or "unknown"
    hardware: dict[str, Any] = {"vendor": vendor, "product": model}
    if machine.get("machine"):
        hardware["architecture"] = str(machine["machine"])
    software = {
        "python": str(machine.get("python_version") or ""),
        "python-implementation": str(machine.get("python_implementation") or ""),
        "os": str(machine.get("system") or ""),  # the kernel release is an annotation, as in env capture
        "pytest-benchmark": version,
    }
    spec = {"hardware": hardware, "software": {k: v for k, v in software.items() if v}}
    base = "pytest-benchmark-" + slug(model)
    from kidx.identity import digest_of

    body = manifest("ExecutionEnvironment", base, f"pytest-benchmark host · {model}", spec)
    # one model, many Python/OS combinations: the name carries the spec's digest
    name = hashed_name(base, digest_of(body), 100)
    body["metadata"]["name"] = name
    annotations = {"kernelindex.dev/hostname": machine.get("node"), "kernelindex.dev/kernel": machine.get("release")}
    annotations = {key: str(value) for key, value in annotations.items() if value}
    if annotations:
        body["metadata"]["annotations"] = annotations
    return name, body


def _implementation(library: str, fullname: str, function: str) -> tuple[str, dict]:
    """The test function of a project: its library is the project's name (never the
    folder the checkout lives in), its entry point the test's node id."""
    test = fullname.split("[", 1)[0]
    spec: dict[str, Any] = {"library": library, "operation": function, "entryPoint": test}
    name = "pytest-" + slug(library + "-" + test)
    return name, manifest("Implementation", name, f"{function} ({library})", spec)


def _session_fingerprint(benchmark: dict, machine: Any, commit: Any, version: str) -> str:
    """12 hex digits over what one session's --benchmark-json file and its autosave file
    share for a benchmark (its summary statistics, options, machine and commit); not the
    file's datetime, which each file takes when it is written, nor the round times, which
    an autosave file holds only with --benchmark-save-data."""
    stats = {key: value for key, value in benchmark["stats"].items() if key != "data"}
    shared = {"stats": stats, "options": benchmark.get("options"), "params": benchmark.get("params"),
              "machine": machine, "commit": commit, "version": version}
    return hashlib.sha256(json.dumps(shared, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:12]


def merge_twins(first: dict, second: dict) -> dict:
    """One run spec from a benchmark's two records of one session: the round times where
    either has them, and the earlier of the two file times."""
    merged = dict(first)
    if "samples" not in merged and "samples" in second:
        merged["samples"] = second["samples"]
    times = [spec["observedAt"] for spec in (first, second) if spec.get("observedAt")]
    if times:
        merged["observedAt"] = min(times, key=_moment)
    return merged


def merge_stored(incoming: dict, stored: dict) -> dict:
    """The run to store when the store already holds one of the same name: when both are
    records of one session (the same externalId), the fuller record (``merge_twins``), so
    that a session's --benchmark-json and autosave files give one run, in either order."""
    incoming_id = ((incoming.get("spec") or {}).get("sourceNative") or {}).get("externalId")
    stored_id = ((stored.get("spec") or {}).get("sourceNative") or {}).get("externalId")
    if incoming_id is None or incoming_id != stored_id:
        return incoming
    spec = merge_twins(stored["spec"], incoming["spec"])
    metadata = {**incoming["metadata"], "annotations": (stored.get("metadata") or {}).get("annotations")
                or incoming["metadata"].get("annotations")}
    return {**incoming, "metadata": metadata, "spec": spec}


def _moment(text: str):
    from datetime import UTC, datetime

    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _workload(operation: str, params: dict, param_id: Any) -> tuple[str, dict]:
    key = str(param_id) if param_id is not None else ""
    spec: dict[str, Any] = {"family": FAMILY, "operation": operation, "parameters": params}
    if key:
        spec["key"] = key
    name = "pytest-benchmark-" + slug(operation + ("-" + key if key else ""))
    title = " · ".join([operation, *(f"{k} {v}" for k, v in sorted(params.items()))])
    return name, manifest("Workload", name, title, spec)
