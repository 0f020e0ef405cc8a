"""What every importer shares: the table of formats, reading files, records with their
lines, problems at file:line, shared objects de-duplicated by digest, and naming.

An importer is a module named in ``IMPORTERS`` with ``convert_files(paths) ->
Conversion``: a pure converter that reads files and returns manifests in dependency
order (shared objects first, then runs), or raises InvalidInputError with one Problem
per bad record. Storing, printing, the summary, ``--dry-run``, ``-o`` and attaching a
captured environment are the ``kidx import`` command's, the same for every format.

A converter is a ``Converter``: ``JsonConverter`` reads JSON files and calls ``add`` once
per file; ``CsvConverter`` reads CSV files with a fixed header and calls ``add_row`` once
per data record, reporting the ``RecordProblems`` a row raises at its line. Both end in
``Converter.finish``: the shared objects (``SharedObjects``), then the runs
(``run_manifest``), held to apply's value limits.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import json
import math
import re
from collections.abc import Callable
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
class ImporterInfo:
    module: str
    summary: str  # one line for --help
    files: str  # what FILE… is
    library_option: bool = False  # the format takes --library (convert_files(paths, library=…))
    # further options the format takes (convert_files(paths, op=…)): names in import_'s option table
    options: tuple[str, ...] = ()


# format -> importer; modules are imported only when their format is used.
IMPORTERS: dict[str, ImporterInfo] = {
    "liger": ImporterInfo(
        "kidx.importers.liger", "Liger-Kernel benchmark CSVs (all_benchmark_data*.csv).",
        "Liger-Kernel benchmark CSV files (all_benchmark_data*.csv).",
    ),
    "pytest-benchmark": ImporterInfo(
        "kidx.importers.pytest_benchmark", "pytest-benchmark JSON (pytest --benchmark-json=FILE).",
        "pytest-benchmark JSON files (--benchmark-json or .benchmarks/…/*.json).", library_option=True,
    ),
    "nvbench": ImporterInfo(
        "kidx.importers.nvbench", "NVIDIA NVBench JSON (--json FILE).",
        "NVBench JSON files (written with --json FILE).",
    ),
    "google-benchmark": ImporterInfo(
        "kidx.importers.google_benchmark", "Google Benchmark JSON (--benchmark_format=json).",
        "Google Benchmark JSON files (--benchmark_format=json or --benchmark_out=FILE).",
    ),
    "bmf": ImporterInfo(
        "kidx.importers.bmf", "Bencher Metric Format JSON (benchmark → measure → value).",
        "BMF JSON files (benchmark name → measure → {value, lower_value, upper_value}).",
    ),
    "tritonbench": ImporterInfo(
        "kidx.importers.tritonbench", "tritonbench results (--csv tables, --output-json, nightly result.json).",
        "tritonbench files: ';'-separated --csv tables (give --op and --mode) or JSON (--output-json, result.json).",
        options=("op", "mode"),
    ),
    "pytorch-benchmark": ImporterInfo(
        "kidx.importers.pytorch_benchmark", "PyTorch OSS benchmark records (v3), as the HUD's dashboards read them.",
        "v3 record files: a JSON list, or JSON lines, optionally gzipped.",
    ),
    "kernelbench": ImporterInfo(
        "kidx.importers.kernelbench", "KernelBench baseline timings and eval results (eval_results.json).",
        "KernelBench files: results/timing/<GPU>/baseline_time_torch*.json, or a run's eval_results.json (give "
        "--level).",
        options=("level",),
    ),
}


def importer(format_name: str):
    return importlib.import_module(IMPORTERS[format_name].module)


def not_carried(source: str) -> tuple[str, ...]:
    """What the format whose runs say ``sourceNative.source: <source>`` could not carry:
    its importer's ``NOT_CARRIED`` (an importer that declares it names its runs' source
    as its format is named); () for any other source."""
    if source not in IMPORTERS:
        return ()
    module = importer(source)
    if getattr(module, "SOURCE_NAME", None) != source:
        return ()
    return tuple(getattr(module, "NOT_CARRIED", ()))


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
        line, key = _repeated_key(text)
        problems.append(Problem(Location(path, line=line), f"the key {json.dumps(key, ensure_ascii=True)} appears "
                                "twice in one object; expected one of each"))
        return None
    lone = _lone_surrogate(text) if "\\u" in text and _LONE_SURROGATE.search(text) else None
    if lone is not None:
        line, where = lone
        problems.append(Problem(Location(path, line=line), f"{where} holds a lone surrogate escape (\\ud800-\\udfff "
                                "without its pair): not a character, so it cannot be stored"))
        return None
    return data, text


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]')
_LONE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # any surrogate escape: _lone_surrogate looks closer


def _repeated_key(text: str) -> tuple[int, str]:
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


def _lone_surrogate(text: str) -> tuple[int, str] | None:
    """The line of the first string with a lone surrogate escape, and that string (escaped)."""
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
    from kidx.importers.gpus import slug as gpu_slug

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

    def convert(self, paths: list[str]) -> Conversion:
        for path in paths:
            loaded = read_json(path, self.problems, self.what)
            if loaded is not None:
                self.add(path, *loaded)
        return self.finish()


@dataclass
class CsvRecord:
    """One data record of a CSV file: its fields, its text as written (without its last
    line end), and where it is: the file, its number among the data records (from 1),
    the line it starts on."""

    fields: list[str]
    text: str
    source: str
    number: int
    line: int


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LINE_END = re.compile(r"(?:\r\n|\r|\n)\Z")
_CONFLICT_MARKERS = ("<<<<<<<", "=======", ">>>>>>>", "|||||||")


class CsvConverter(Converter):
    """Collects the runs of CSV files with one fixed header (one ``add_row`` per data
    record); ``convert`` reads the files. Each record keeps the text it was read from
    and the line it starts on (a quoted field may span lines). A record that is not
    CSV, a git conflict marker, a record with the wrong number of fields, a header that
    is not ``header`` are problems at their line; a blank record is skipped."""

    what = "CSV"  # for "expected the <what> header"
    header: tuple[str, ...] = ()
    noun = "rows"

    def add_row(self, record: CsvRecord) -> None:
        """Add one data record's run, or raise RecordProblems."""
        raise NotImplementedError

    def convert(self, paths: list[str]) -> Conversion:
        for path in paths:
            text = read_text(path, self.problems)
            if text is not None:
                self.add_text(text, path)
        return self.finish()

    def add_text(self, text: str, source: str) -> None:
        """Add the records of one file's text; ``source`` names it in results and errors."""
        if text.startswith("\ufeff"):
            text = text[1:]  # text that read_text did not see
        lines = _LINE.findall(text)
        if not lines:
            self.problem(source, 1, None, f"the file is empty; expected the {self.what} header")
            return
        reader = csv.reader(iter(lines), strict=True)
        header_done = False
        number = 0
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
                error = None
            except StopIteration:
                break
            except csv.Error as exc:
                fields, error = [], f"malformed CSV record: {exc}"
            raw = _LINE_END.sub("", "".join(lines[start - 1 : reader.line_num]))
            if header_done:
                number += 1
                self.read += 1
            marker = next((m for m in _CONFLICT_MARKERS if raw.startswith(m)), None)
            if marker is not None:
                self.problem(source, start, None, f"git conflict marker {raw!r}: the file holds an unresolved merge")
                continue
            if error is not None:
                self.problem(source, start, None, error)
                if not header_done:
                    return
                continue
            if not header_done:
                if not self._check_header(fields, source, start):
                    return
                header_done = True
                continue
            if not fields:
                self.skipped.append(SkippedRecord(source, start, "blank record"))
                continue
            if len(fields) != len(self.header):
                self.problem(source, start, None, f"expected {len(self.header)} fields, found {len(fields)}")
                continue
            try:
                self.add_row(CsvRecord(fields, raw, source, number, start))
            except RecordProblems as exc:
                for column, message in exc.problems:
                    self.problem(source, start, column, message)
        if not header_done:
            self.problem(source, 1, None, f"the file has no header; expected the {self.what} header")

    def _check_header(self, fields: list[str], source: str, line: int) -> bool:
        header = self.header
        if tuple(fields) == header:
            return True
        if len(fields) != len(header):
            detail = f"found {len(fields)} columns"
        else:
            i = next(i for i, (a, b) in enumerate(zip(fields, header, strict=True)) if a != b)
            detail = f"column {i + 1} is {fields[i]!r}, expected {header[i]!r}"
        self.problem(source, line, None, f"not a {self.what} header ({detail}); expected {','.join(header)}")
        return False


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
