"""What every importer shares: the table of formats, reading files, records with their
lines, problems at file:line, shared objects de-duplicated by digest, and naming.

An importer is a module named in ``IMPORTERS`` with ``convert_files(paths) ->
Conversion``: a pure converter that reads files and returns manifests in dependency
order (shared objects first, then runs), or raises InvalidInputError with one Problem
per bad record, and ``FORMAT_DOC``, what the docs say about its format (``FormatDoc``);
its help is its line in ``IMPORTERS``.
Storing, printing, the summary, ``--dry-run``, ``-o`` and attaching a captured
environment are the ``kidx import`` command's, the same for every format.

A converter is a ``Converter``: ``JsonConverter`` reads JSON files and calls ``add`` once
per file; kidx.formats.csv_files's ``CsvConverter`` reads CSV files with a fixed header
and calls ``add_row`` once per data record, reporting the ``RecordProblems`` a row raises
at its line. Both end in ``Converter.finish``: the shared objects (``SharedObjects``),
then the runs (``run_manifest``), held to apply's value limits.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kidx.errors import InvalidInputError, Location, Problem
from kidx.identity import digest_of
from kidx.identity.canonical import CanonicalError
from kidx.kinds.metadata import API_VERSION, label_value_error, name_error
from kidx.manifests.document import Document
from kidx.manifests.reader import InputTooLarge, read_bounded
from kidx.manifests.values import DataError, check_json_data

MAX_NAME = 253
ANNOTATION_FILE = "kernelindex.dev/source-file"
ANNOTATION_LINE = "kernelindex.dev/source-line"


@dataclass(frozen=True)
class FormatDoc:
    """What the docs say about an importer's format, declared once as its module's
    ``FORMAT_DOC``: the tables of docs/commands/import.md are generated from it by
    tests/update_formats.py, and tests/formats/test_format_docs.py holds them equal to it."""

    reads: str  # the docs' list of formats (markdown): what the format is …
    one_run_per: str  # … and what of it becomes one run
    # the docs' table of the format's fields (markdown): its header, then (what the format writes, where kidx keeps it)
    fields: tuple[tuple[str, str], ...]
    # what the format cannot carry, which `kidx describe` lists under a run it gave (not_carried below)
    not_carried: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImporterInfo:
    """A format of ``kidx import``: its importer's module and the command's help, declared
    here so that the command shows it without importing the importer."""

    module: str
    summary: str  # one line, in the list of formats of `kidx import --help`
    files: str  # what FILE… is
    help: str  # what the command does, before what every format shares
    examples: tuple[str, ...]  # command lines, under "Examples:"
    library_option: bool = False  # the format takes --library (convert_files(paths, library=…))
    # further options the format takes (convert_files(paths, op=…)): names in import_'s option table
    options: tuple[str, ...] = ()


# format -> importer and its help, in the order `kidx import --help` lists them; modules
# are imported only when their format is used.
IMPORTERS: dict[str, ImporterInfo] = {
    "liger": ImporterInfo(
        "kidx.formats.liger",
        summary="Liger-Kernel benchmark CSVs (all_benchmark_data*.csv).",
        files="Liger-Kernel benchmark CSV files (all_benchmark_data*.csv).",
        help=(
            "Import Liger-Kernel's benchmark CSVs: one run per row, plus the protocols,\n"
            "environments, workloads and implementations they refer to."
        ),
        examples=(
            "kidx import liger all_benchmark_data*.csv",
            "kidx import liger all_benchmark_data.csv -o yaml | kidx apply -f -",
            "kidx env capture > environment.yaml",
            "kidx import liger all_benchmark_data.csv --environment environment.yaml",
        ),
    ),
    "pytest-benchmark": ImporterInfo(
        "kidx.formats.pytest_benchmark",
        summary="pytest-benchmark JSON (pytest --benchmark-json=FILE).",
        files="pytest-benchmark JSON files (--benchmark-json or .benchmarks/…/*.json).",
        help=(
            "Import pytest-benchmark JSON: one run per benchmark (min, max, mean,\n"
            "stddev, median, iqr, rounds, and the raw samples when saved with --benchmark-save-data),\n"
            "and an environment from its machine_info."
        ),
        examples=(
            "pytest bench/ --benchmark-json=results.json --benchmark-save-data",
            "kidx import pytest-benchmark results.json",
        ),
        library_option=True,
    ),
    "nvbench": ImporterInfo(
        "kidx.formats.nvbench",
        summary="NVIDIA NVBench JSON (--json FILE).",
        files="NVBench JSON files (written with --json FILE).",
        help=(
            "Import NVIDIA NVBench JSON: one run per benchmark state (GPU time of the\n"
            "CUDA-event timer, with its samples when recorded), and an environment per device."
        ),
        examples=(
            "./my_nvbench_binary --json results.json",
            "kidx import nvbench results.json --environment environment.yaml",
        ),
    ),
    "google-benchmark": ImporterInfo(
        "kidx.formats.google_benchmark",
        summary="Google Benchmark JSON (--benchmark_format=json).",
        files="Google Benchmark JSON files (--benchmark_format=json or --benchmark_out=FILE).",
        help=(
            "Import Google Benchmark JSON: one run per benchmark instance, its\n"
            "repetitions as raw samples (aggregates are kept with it, never runs of their own), and\n"
            "an environment from the file's context."
        ),
        examples=(
            "./my_benchmark --benchmark_repetitions=10 --benchmark_out=results.json",
            "kidx import google-benchmark results.json --environment environment.yaml",
        ),
    ),
    "bmf": ImporterInfo(
        "kidx.formats.bmf.importer",
        summary="Bencher Metric Format JSON (benchmark → measure → value).",
        files="BMF JSON files (benchmark name → measure → {value, lower_value, upper_value}).",
        help=(
            "Import Bencher Metric Format JSON: one run per benchmark, every measure kept as\n"
            "written; latency (ns) is the headline, its bounds the lower and upper measurements."
        ),
        examples=(
            "kidx import bmf results.bmf.json --environment environment.yaml",
            "kidx export runs -l commit=abc123 --format bmf -o - | kidx import bmf /dev/stdin --store /tmp/other",
        ),
    ),
    "tritonbench": ImporterInfo(
        "kidx.formats.tritonbench",
        summary="tritonbench results (--csv tables, --output-json, nightly result.json).",
        files=(
            "tritonbench files: ';'-separated --csv tables (give --op and --mode) or JSON (--output-json, result.json)."
        ),
        help=(
            "Import tritonbench results: one run per (input, backend, metric) value of a --csv\n"
            "table (with --op and --mode) or of a --output-json or nightly result.json; averages and\n"
            "pass flags are not runs, and a cell holding an error is a failed run."
        ),
        examples=(
            "python run.py --op softmax --mode fwd --csv > softmax.csv",
            "kidx import tritonbench softmax.csv --op softmax --mode fwd --environment environment.yaml",
            "kidx import tritonbench result.json",
        ),
        options=("op", "mode"),
    ),
    "pytorch-benchmark": ImporterInfo(
        "kidx.formats.pytorch_benchmark.importer",
        summary="PyTorch OSS benchmark records (v3), as the HUD's dashboards read them.",
        files="v3 record files: a JSON list, or JSON lines, optionally gzipped.",
        help=(
            "Import PyTorch OSS benchmark records (v3): one run per record, its\n"
            "benchmark_values as samples, model.backend the implementation, runners and\n"
            "dependencies the environment; records kidx exported come back as they were."
        ),
        examples=(
            "kidx import pytorch-benchmark benchmark_results.json",
            (
                "kidx export runs --format pytorch-benchmark -o - | kidx import pytorch-benchmark /dev/stdin --store "
                "/tmp/other"
            ),
        ),
    ),
    "kernelbench": ImporterInfo(
        "kidx.formats.kernelbench",
        summary="KernelBench baseline timings and eval results (eval_results.json).",
        files=(
            "KernelBench files: results/timing/<GPU>/baseline_time_torch*.json, or a run's eval_results.json (give "
            "--level)."
        ),
        help=(
            "Import KernelBench results: one run per baseline timing (level, problem file) and\n"
            "per evaluated sample of an eval_results.json (with --level); a sample that did not\n"
            "compile, raised or gave wrong output is a failed run with the reason, never a timing."
        ),
        examples=(
            "kidx import kernelbench results/timing/H100_Modal/baseline_time_torch.json",
            "kidx import kernelbench runs/my_run/eval_results.json --level 1",
        ),
        options=("level",),
    ),
}


def importer(format_name: str):
    return importlib.import_module(IMPORTERS[format_name].module)


def not_carried(source: str) -> tuple[str, ...]:
    """What the format whose runs say ``sourceNative.source: <source>`` could not carry:
    its importer's ``FORMAT_DOC.not_carried`` (where its runs' source is named as its
    format is); () for any other source."""
    if source not in IMPORTERS:
        return ()
    module = importer(source)
    if getattr(module, "SOURCE_NAME", None) != source:
        return ()
    return module.FORMAT_DOC.not_carried


# --- results ---------------------------------------------------------------------------

@dataclass
class SkippedRecord:
    """A record that produced no run, and why."""

    source: str
    line: int
    reason: str


@dataclass
class Conversion:
    """The result of a conversion: manifests in dependency order, and what was read.

    ``rows_read`` counts every record read (blank and skipped ones too), in units of
    ``noun`` (rows of a CSV, benchmarks of a JSON file); ``rows_read == runs + skipped``.
    """

    documents: list[Document]
    rows_read: int
    skipped: list[SkippedRecord] = field(default_factory=list)
    noun: str = "rows"
    notes: list[str] = field(default_factory=list)  # what was read but could not be kept, and why


# --- reading ---------------------------------------------------------------------------

def read_bytes(path: str, problems: list[Problem]) -> bytes | None:
    """A file's bytes, or None with a Problem saying why not. Bounded as apply bounds a
    source (``KIDX_MAX_INPUT_SIZE``, 256 MiB by default)."""
    try:
        return read_bounded(path)
    except OSError as exc:
        problems.append(Problem(Location(path), f"cannot read file: {exc.strerror or exc}"))
    except InputTooLarge as exc:
        problems.append(Problem(Location(path), exc.message))
    return None


def read_text(path: str, problems: list[Problem]) -> str | None:
    """A file's text (UTF-8, BOM dropped), or None with a Problem saying why not
    (``read_bytes``'s bound)."""
    data = read_bytes(path, problems)
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(Problem(
            Location(path, line=line), f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}"
        ))
        return None
    return text[1:] if text.startswith("\ufeff") else text


def read_json(path: str, problems: list[Problem], what: str) -> tuple[Any, str] | None:
    """(parsed JSON, its text), or None with a Problem at the line of what is wrong: a
    syntax error, a key repeated in one object (JSON parsers keep the last silently), a
    string holding a lone surrogate (it cannot be stored as UTF-8), nesting too deep to read."""
    text = read_text(path, problems)
    if text is None:
        return None
    if not text.strip():
        problems.append(Problem(Location(path, line=1), f"the file is empty; expected {what}"))
        return None
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict:
        mapping = dict(items)
        if len(mapping) != len(items) and not repeated:
            repeated.append("")
        return mapping

    try:
        data = json.loads(text, parse_constant=_keep_constant, object_pairs_hook=pairs)
    except RecursionError:
        problems.append(Problem(Location(path, line=1), f"nested too deeply to read; expected {what}"))
        return None
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        message = getattr(exc, "msg", str(exc))
        problems.append(Problem(Location(path, line=line), f"not valid JSON ({message}); expected {what}"))
        return None
    if repeated:
        line, key = repeated_key(text)
        problems.append(Problem(Location(path, line=line), f"the key {json.dumps(key, ensure_ascii=True)} appears "
                                "twice in one object; expected one of each"))
        return None
    if refused_lone_surrogate(text, path, problems):
        return None
    return data, text


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]')
_LONE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # any surrogate escape: lone_surrogate looks closer


def repeated_key(text: str) -> tuple[int, str]:
    """The line and the key of the first key repeated in one object (the text parsed, so
    only strings, brackets and colons matter; read iteratively, at any depth)."""
    stack: list[set[str] | None] = []
    line, counted = 1, 0
    previous: str | None = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "{":
            stack.append(set())
        elif token == "[":
            stack.append(None)
        elif token in "}]":
            stack.pop()
        elif token == ":" and previous is not None and stack and stack[-1] is not None:
            key = json.loads(previous)
            if key in stack[-1]:
                line += text.count("\n", counted, match.start())
                return line, key
            stack[-1].add(key)
        previous = token if token.startswith('"') else None
    return 1, ""


def refused_lone_surrogate(text: str, path: str, problems: list[Problem]) -> bool:
    """Whether ``text`` holds a lone surrogate escape, reported at its line in ``problems``."""
    lone = lone_surrogate(text)
    if lone is None:
        return False
    line, where = lone
    problems.append(Problem(Location(path, line=line), f"{where} holds a lone surrogate escape (\\ud800-\\udfff "
                            "without its pair): not a character, so it cannot be stored"))
    return True


def lone_surrogate(text: str) -> tuple[int, str] | None:
    """The line of the first string of a JSON text with a lone surrogate escape, and that
    string (escaped); None when it has none (found without a walk where it has no escape)."""
    if "\\u" not in text or not _LONE_SURROGATE.search(text):
        return None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token.startswith('"') and "\\u" in token:
            value = json.loads(token)
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return text.count("\n", 0, match.start()) + 1, f"the string {json.dumps(value)}"
    return None


def _keep_constant(name: str) -> float:
    # NaN and Infinity appear in benchmark JSON for failed measurements; callers decide
    return float(name)


_COLON = re.compile(r"\s*:\s*")


class LineFinder:
    """Line numbers of records in a JSON text, found in order by a key text they hold.

    JSON parsers do not report positions, but each record of these formats starts with a
    distinctive key ("fullname": …, "name": …), so the n-th record is at the n-th match
    after the previous one. Each search starts where the last one ended and lines are
    counted from there, so a file's records are found in time linear in its size."""

    def __init__(self, text: str):
        self.text = text
        self.ascii = text.isascii()  # then every string is written with \u escapes, if any
        self.position = 0
        self._line = 1  # the line of self._counted
        self._counted = 0

    def spellings(self, value: Any) -> list[str]:
        """How a JSON writer may have written ``value`` in this text."""
        if self.ascii:
            return [json.dumps(value)]
        return list(dict.fromkeys([json.dumps(value, ensure_ascii=False), json.dumps(value)]))

    def find_key(self, key: Any, value: Any = None, any_value: bool = True) -> int | None:
        """The line of the next ``"key":`` (followed by ``value`` unless ``any_value``)."""
        values = None if any_value else self.spellings(value)
        for spelled in self.spellings(key):
            start = self.position
            while (found := self.text.find(spelled, start)) >= 0:
                after = _COLON.match(self.text, found + len(spelled))
                if after and (values is None or any(self.text.startswith(v, after.end()) for v in values)):
                    self._line += self.text.count("\n", self._counted, found)
                    self._counted = found
                    self.position = found + 1
                    return self._line
                start = found + 1
        return None

    def line_of(self, key: str, value: Any) -> int | None:
        return self.find_key(key, value, any_value=False)


def non_negative_number(value: Any) -> bool:
    """A finite number of at least 0 (a bool is no number here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def problem(problems: list[Problem], source: str, line: int | None, path: str | None, message: str) -> None:
    problems.append(Problem(Location(source, line=line, path=path), message))


# --- names -----------------------------------------------------------------------------

def slug(text: str) -> str:
    """Lower-case; each run of characters outside [a-z0-9] becomes one ``-``; trimmed."""
    from kidx.formats.gpus import slug as gpu_slug

    return gpu_slug(text)


def hashed_name(base: str, seed: str, limit: int) -> str:
    """``base`` cut to fit, then ``-`` and 10 hex digits of sha256(seed)."""
    suffix = hashlib.sha256(seed.encode("utf-8")).hexdigest()[:10]
    return base[: limit - 11].rstrip("-._") + "-" + suffix


def valid_labels(labels: dict[str, str]) -> dict[str, str]:
    """The labels whose values are valid label values (the rest say nothing new: every
    label repeats something the spec or its references hold)."""
    return {key: value for key, value in labels.items() if value and label_value_error(value) is None}


def manifest(kind: str, name: str, title: str, spec: dict, **metadata: Any) -> dict:
    """A shared object's body: ``metadata`` is its name, its title, then the rest."""
    return {
        "apiVersion": API_VERSION, "kind": kind,
        "metadata": {"name": name, "title": title, **metadata}, "spec": spec,
    }


def protocol(name: str, title: str, harness: dict, measurement: dict, family: str, notes: str) -> tuple[str, dict]:
    """A BenchmarkProtocol's base name and body (as ``SharedObjects.add``'s ``build``
    gives them): the ``harness`` that measured, how (``measurement``), and which runs
    compare (``family``, with ``notes`` saying within what)."""
    spec = {"harness": harness, "measurement": measurement, "comparability": {"family": family, "notes": notes}}
    return name, manifest("BenchmarkProtocol", name, title, spec)


def run_manifest(metadata: dict, spec: dict) -> dict:
    """A BenchmarkRun's body, its ``metadata`` as the importer built it (the API version
    is kidx.kinds.metadata's, the one definition)."""
    return {"apiVersion": API_VERSION, "kind": "BenchmarkRun", "metadata": metadata, "spec": spec}


# --- shared objects --------------------------------------------------------------------

@dataclass
class _Shared:
    body: dict
    base_name: str
    digest: str
    source: str
    index: int
    line: int


SHARED_KINDS = ("BenchmarkProtocol", "ExecutionEnvironment", "Implementation", "Workload")


class SharedObjects:
    """The objects runs refer to, each once per digest, in order of first need.

    Names are given at the end: an object keeps its base name unless two different
    specs of one kind share it in the batch (or it is not a valid name); then each gets
    ``-`` + 10 hex digits of its digest, so names stay unique and deterministic."""

    def __init__(self, fallback_name: str):
        self.fallback_name = fallback_name
        self.tables: dict[str, dict[str, _Shared]] = {kind: {} for kind in SHARED_KINDS}
        self._cache: dict[tuple, str] = {}

    def add(self, kind: str, inputs: tuple, where: tuple[str, int, int],
            build: Callable[[], tuple[str, dict]]) -> str:
        """The digest of the object built from ``inputs`` (built once per distinct inputs)."""
        cache_key = (kind, *inputs)
        digest = self._cache.get(cache_key)
        if digest is None:
            base_name, body = build()
            try:
                check_json_data(body)
                digest = digest_of(body)
            except (DataError, CanonicalError):
                # not storable (NaN, a 100-bit integer): kept under a stand-in digest so
                # that check_values names the value and refuses the batch
                digest = "sha256:" + hashlib.sha256(repr(cache_key).encode("utf-8")).hexdigest()
            self._cache[cache_key] = digest
            table = self.tables[kind]
            if digest not in table:
                table[digest] = _Shared(body, base_name, digest, *where)
        return digest

    def documents(self) -> list[Document]:
        documents: list[Document] = []
        for table in self.tables.values():
            counts: dict[str, int] = {}
            for item in table.values():
                counts[item.base_name] = counts.get(item.base_name, 0) + 1
            for item in table.values():
                name = item.base_name
                if counts[name] > 1 or name_error(name) is not None:
                    name = hashed_name(name or self.fallback_name, item.digest, MAX_NAME)
                item.body["metadata"]["name"] = name
                documents.append(Document(item.body, item.source, item.index, item.line))
        return documents


def raise_if_problems(problems: list[Problem]) -> None:
    if problems:
        raise InvalidInputError(problems)


def check_values(documents: list[Document]) -> None:
    """Refuse what apply would refuse as data: the same check with the same limits
    (kidx.manifests.values: integers of 64 bits, finite floats, at most 200,000 values
    and 64 levels per object), so that every imported object round-trips through
    ``kidx get -o json | kidx apply -f -``. Raises InvalidInputError at each record's line."""
    problems: list[Problem] = []
    for document in documents:
        try:
            check_json_data(document.body)
        except DataError as exc:
            body = document.body
            what = f"the {body.get('kind')} made from this record cannot be stored"
            problems.append(Problem(Location(document.source, line=document.line, path=exc.path or None),
                                    f"{what}: {exc.message}"))
    raise_if_problems(problems)


class RecordProblems(Exception):
    """What is wrong with one record, as (field path or None, message) pairs; a
    converter's step raises it and the record's problems are reported at its line."""

    def __init__(self, problems: list[tuple[str | None, str]]):
        super().__init__(problems)
        self.problems = problems


class Converter:
    """What every converter collects: the runs, the shared objects they refer to, skipped
    records, problems and notes; ``finish`` makes them a Conversion, or raises
    InvalidInputError with every problem found."""

    noun = "records"  # the unit of Conversion.rows_read
    fallback_name = "import"  # the base of a shared object's name when it has none

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.notes: list[str] = []
        self.skipped: list[SkippedRecord] = []
        self.runs: list[Document] = []
        self.read = 0
        self.shared = SharedObjects(self.fallback_name)

    def problem(self, source: str, line: int | None, path: str | None, message: str) -> None:
        problem(self.problems, source, line, path, message)

    def refused(self, source: str, line: int, problems: Sequence[tuple[str | None, str]],
                where: str | None = None) -> bool:
        """Whether a record has ``problems`` ((field path or None, message) pairs), each
        reported at the record's ``line``, its field path under the record's ``where``."""
        for path, message in problems:
            self.problem(source, line, f"{where}.{path}" if where and path else path or where, message)
        return bool(problems)

    def add_run(self, spec: dict, where: tuple[str, int], name: tuple[str, str], title: str,
                labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> None:
        """Keep the run read at ``where`` (file, line). ``name`` is (base, seed): the base
        as a slug, cut to fit and made unique by 10 hex digits of sha256(seed); ``labels``
        keeps the valid ones (no labels at all where None); its annotations say where it
        was read, then ``annotations``."""
        source, line = where
        base, seed = name
        metadata: dict[str, Any] = {"name": hashed_name(slug(base), seed, 100), "title": title}
        if labels is not None:
            metadata["labels"] = valid_labels(labels)
        metadata["annotations"] = {ANNOTATION_FILE: os.path.basename(source), ANNOTATION_LINE: str(line),
                                   **(annotations or {})}
        self.runs.append(Document(run_manifest(metadata, spec), source, 1, line))

    def finish(self) -> Conversion:
        raise_if_problems(self.problems)
        documents = [*self.shared.documents(), *self.runs]
        check_values(documents)
        return Conversion(documents, self.read, self.skipped, noun=self.noun, notes=self.notes)


class JsonConverter(Converter):
    """Collects the runs of JSON result files (one ``add`` per file); ``convert`` reads the files."""

    what = "a results file"  # for "not <what>: …"

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, tuple[str, int]] = {}  # externalId -> (path, line) where first read

    def add(self, path: str, data: Any, text: str) -> None:
        raise NotImplementedError

    def first_sighting(self, external_id: str, path: str, line: int) -> bool:
        """True the first time a record is read; later ones are skipped as duplicates."""
        first = self._seen.get(external_id)
        if first is not None:
            self.skipped.append(SkippedRecord(path, line, f"duplicate of {first[0]} line {first[1]}"))
            return False
        self._seen[external_id] = (path, line)
        return True

    @classmethod
    def convert_files(cls, paths: list[str]) -> Conversion:
        """An importer's ``convert_files`` where the format takes no options of its own:
        ``convert_files = _Converter.convert_files``."""
        return cls().convert(paths)

    def convert(self, paths: list[str]) -> Conversion:
        for path in paths:
            loaded = read_json(path, self.problems, self.what)
            if loaded is not None:
                self.add(path, *loaded)
        return self.finish()


# --- attaching an environment ----------------------------------------------------------

def attach_environment(conversion: Conversion, environment: dict, digest: str, include: bool,
                       source: str = "<environment>") -> Conversion:
    """Point every run at ``environment`` (by ``digest``) instead of the environments the
    format implied; those are dropped unless another document still refers to them.
    With ``include`` the environment's manifest joins the batch (a captured file)."""
    implied = {
        d.body["spec"].get("environmentDigest")
        for d in conversion.documents if d.body["kind"] == "BenchmarkRun"
    }
    documents: list[Document] = []
    for document in conversion.documents:
        body = document.body
        if body["kind"] == "ExecutionEnvironment" and digest_of(body) in implied:
            continue
        if body["kind"] == "BenchmarkRun" and "environmentDigest" in body["spec"]:
            body = {**body, "spec": {**body["spec"], "environmentDigest": digest}}
            document = document._replace(body=body)
        documents.append(document)
    if include:
        documents.insert(0, Document(environment, source, 1, None))
    return Conversion(documents, conversion.rows_read, conversion.skipped, conversion.noun, conversion.notes)


def gpu_mismatches(conversion: Conversion, environment: dict) -> list[str]:
    """Why the runs cannot have run in ``environment``: a GPU the input names that is not
    the environment's product (form factors may be spelled differently; products may not)."""
    hardware = environment.get("spec", {}).get("hardware", {})
    wanted = slug(hardware.get("product", ""))
    name = environment.get("metadata", {}).get("name")
    messages = []
    for document in conversion.documents:
        if document.body["kind"] != "ExecutionEnvironment":
            continue
        product = document.body["spec"]["hardware"]["product"]
        if slug(product) != wanted:
            messages.append(
                f"the runs in {document.source} (line {document.line}) ran on {product}, but environment "
                f"{name} describes {hardware.get('product') or 'a machine without a GPU'}"
            )
    return messages
