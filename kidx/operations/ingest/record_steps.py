"""kidx record: run a benchmark harness, find what it wrote, label it with the code it ran.

The steps, each its own function so the command stays thin:

1. ``git_state``: the commit, branch and cleanliness of the working folder, read
   *before* the harness runs (a harness that writes into the checkout, as Liger's
   appends to a tracked CSV, must not make the recorded code look dirty).
2. ``plan_output``: where the harness will write its results. A JSON harness is given
   the option that names its output file when the command does not name one already
   (``--benchmark-json`` for pytest, ``--benchmark_out`` for Google Benchmark, ``--json``
   for NVBench); Liger's harness appends to ``<scripts>/../data/all_benchmark_data.csv``,
   so the rows it adds are found by comparing the file before and after.
3. ``run_harness``: the command, in a process group of its own, its output passed
   through to standard error; Ctrl-C or SIGTERM to kidx stops the whole group (an
   interrupt, then a termination, then a kill) and is waited for. ``check_timer_device``
   refuses ``--timer`` first where the harness's Python has no torch with a CUDA device.
4. ``OutputPlan.collect``: the files to import, refused when the harness wrote nothing.
5. ``label_runs``: every run gets the labels ``commit``, ``branch`` (``dirty`` when the
   folder had uncommitted changes) and the user's ``--label`` pairs; the exact values and
   the command line are annotations.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import re
import shlex
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kidx.errors import UsageError
from kidx.kinds.metadata import label_value_error, qualified_key_error
from kidx.operations.events import HarnessOutput, ProcessStarted
from kidx.operations.ingest.record_device import check_timer_device as check_timer_device
from kidx.operations.ingest.record_device import harness_python as harness_python
from kidx.operations.ingest.record_harness import (
    HarnessFailed,
    HarnessInterrupted,
    HarnessResult,
    failure_message,
    run_harness,
    stop_harness,
)
from kidx.records import NamedTuple
from kidx.timers.settings import Sampling

if TYPE_CHECKING:
    from collections.abc import Callable

    from kidx.formats.framework import Conversion
    from kidx.operations.events import Event
    from kidx.operations.reporting import Reporter

ANNOTATION_PREFIX = "kernelindex.dev/"
ANNOTATION_GPU_UUID = ANNOTATION_PREFIX + "gpu-uuid"
#: record --gpus: the GPU a run's process ran on (the importers' ``gpu`` label names its product)
GPU_INDEX_LABEL = "gpu-index"
LIGER_DATA_FILE = "all_benchmark_data.csv"
#: Liger's harness writes all_benchmark_data_<value>.csv instead when this is set
LIGER_TARGET_VARIABLE = "LIGER_BENCH_TARGET"
_NOT_LABEL_TEXT = re.compile(r"[^A-Za-z0-9_.-]+")


# --- the code that ran -------------------------------------------------------------------

@dataclass(frozen=True)
class GitState:
    commit: str
    branch: str | None  # None: a detached HEAD
    dirty: bool


def git_state(folder: Path) -> GitState | None:
    """The working folder's commit, branch and cleanliness; None outside a git checkout."""

    def git(*arguments: str) -> str | None:
        try:
            completed = subprocess.run(["git", "-C", str(folder), *arguments], capture_output=True, text=True,
                                       timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        return completed.stdout.strip() if completed.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    branch = git("symbolic-ref", "--quiet", "--short", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return GitState(commit, branch or None, bool(status))


def label_text(value: str) -> str:
    """``value`` as a label value: runs of other characters as ``-``, at most 63, trimmed."""
    text = _NOT_LABEL_TEXT.sub("-", value)[:63]
    return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", text)


def parse_labels(pairs: list[str]) -> dict[str, str]:
    """``--label k=v`` pairs, each checked by the Kubernetes rules."""
    labels: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals:
            raise UsageError(f"--label {pair}: expected KEY=VALUE")
        problem = qualified_key_error(key) or label_value_error(value)
        if problem:
            raise UsageError(f"--label {pair}: {problem}")
        labels[key] = value
    return labels


def recording_metadata(state: GitState | None, command: list[str], labels: dict[str, str]) -> tuple[dict, dict]:
    """(labels, annotations) for every recorded run."""
    recorded: dict[str, str] = {}
    annotations = {ANNOTATION_PREFIX + "recorded-command": shlex.join(command)}
    if state is not None:
        recorded["commit"] = state.commit[:63]
        annotations[ANNOTATION_PREFIX + "git-commit"] = state.commit
        if state.branch:
            branch = label_text(state.branch)
            if branch:
                recorded["branch"] = branch
            annotations[ANNOTATION_PREFIX + "git-branch"] = state.branch
        if state.dirty:
            recorded["dirty"] = "true"
    recorded.update(labels)
    return recorded, annotations


class Metadata(NamedTuple):
    """What one imported file's runs get: labels and annotations."""

    labels: dict[str, str]
    annotations: dict[str, str]


def label_runs(conversion: Conversion, by_source: dict[str, Metadata]) -> Conversion:
    """The conversion with each run given the labels and annotations ``by_source`` names
    for the file it was read from."""
    from kidx.formats.framework import Conversion

    documents = []
    for document in conversion.documents:
        body = document.body
        added = by_source.get(document.source)
        if body["kind"] == "BenchmarkRun" and added is not None:
            metadata = dict(body.get("metadata") or {})
            metadata["labels"] = {**(metadata.get("labels") or {}), **added.labels}
            metadata["annotations"] = {**(metadata.get("annotations") or {}), **added.annotations}
            document = document._replace(body={**body, "metadata": metadata})
        documents.append(document)
    return Conversion(documents, conversion.rows_read, conversion.skipped, conversion.noun, conversion.notes)


# --- where the results go ----------------------------------------------------------------

@dataclass
class OutputPlan:
    """The command to run and how to find its results afterwards."""

    command: list[str]
    path: Path  # the file the harness writes
    added_option: bool  # kidx added the option that names it
    appended_csv: bool = False  # the harness appends rows to a CSV (Liger)
    before: tuple[float, int] | None = None  # (mtime, size) before the run, when it existed
    records_before: Counter = field(default_factory=Counter)
    line_map: dict[int, int] = field(default_factory=dict)  # extracted CSV line -> line in the harness's file

    def snapshot(self) -> None:
        if self.path.is_file():
            stat = self.path.stat()
            self.before = (stat.st_mtime, stat.st_size)
            if self.appended_csv:
                self.records_before = Counter(record for _, record in _csv_records(self.path))

    def collect(self, scratch: Path) -> list[str]:
        """The files to import; a HarnessFailed when the harness wrote nothing new."""
        if not self.path.is_file():
            raise HarnessFailed(f"the command wrote no results to {self.path}; nothing was imported")
        stat = self.path.stat()
        if self.before is not None and (stat.st_mtime, stat.st_size) == self.before and not self.appended_csv:
            raise HarnessFailed(f"the command did not write {self.path} (it is unchanged); nothing was imported")
        if not self.appended_csv:
            return [str(self.path)]
        return [str(self._new_rows(scratch))]

    def _new_rows(self, scratch: Path) -> Path:
        """The header and the records the harness added, in a file of the same name."""
        records = list(_csv_records(self.path))
        if not records:
            raise HarnessFailed(f"{self.path} is empty; nothing was imported")
        header_line, header = records[0]
        seen = Counter(self.records_before)
        added = []
        for line, record in records[1:]:
            if seen[record] > 0:
                seen[record] -= 1
            else:
                added.append((line, record))
        if not added:
            raise HarnessFailed(f"the command added no rows to {self.path}; nothing was imported")
        extracted = scratch / self.path.name
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        self.line_map = {1: header_line}
        for number, (line, record) in enumerate(added, start=2):
            writer.writerow(record)
            self.line_map[number] = line
        extracted.write_text(buffer.getvalue(), encoding="utf-8")
        return extracted


def restore_lines(conversion: Conversion, line_maps: dict[str, dict[int, int]]) -> Conversion:
    """Source-line annotations that point into the harness's own file, not the extract
    (``line_maps``: extracted file -> its line -> the line in the harness's file)."""
    if not any(line_maps.values()):
        return conversion
    from kidx.formats.framework import ANNOTATION_LINE, Conversion

    documents = []
    for document in conversion.documents:
        annotations = (document.body.get("metadata") or {}).get("annotations") or {}
        line = annotations.get(ANNOTATION_LINE)
        line_map = line_maps.get(document.source) or {}
        if line is not None and line.isdigit() and int(line) in line_map:
            metadata = {**document.body["metadata"],
                        "annotations": {**annotations, ANNOTATION_LINE: str(line_map[int(line)])}}
            document = document._replace(body={**document.body, "metadata": metadata})
        documents.append(document)
    return Conversion(documents, conversion.rows_read, conversion.skipped, conversion.noun, conversion.notes)


def _csv_records(path: Path):
    """(line, record as a tuple) for each non-blank CSV record of ``path``."""
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        line = 1
        for record in reader:
            if record:
                yield line, tuple(record)
            line = reader.line_num + 1


def _option_value(command: list[str], option: str) -> str | None:
    """The value of ``--option=VALUE`` or ``--option VALUE`` in ``command``."""
    for index, argument in enumerate(command):
        if argument.startswith(option + "="):
            return argument.split("=", 1)[1]
        if argument == option and index + 1 < len(command):
            return command[index + 1]
    return None


def _is_pytest(command: list[str]) -> bool:
    first = os.path.basename(command[0])
    return first in ("pytest", "py.test") or (first.startswith("python") and command[1:3] == ["-m", "pytest"])


def plan_output(format_name: str, command: list[str], results: str | None, folder: Path, scratch: Path) -> OutputPlan:
    """Where ``command`` will write results of ``format_name``, adding the option that says
    so to a JSON harness whose command names none."""
    if not command:
        raise UsageError("no command to run: give it after --, as in 'kidx record pytest-benchmark -- pytest bench/'")
    if format_name == "liger":
        path = Path(results) if results else _liger_data_file(command, folder)
        return OutputPlan(list(command), _absolute(path, folder), False, appended_csv=True)
    if results:
        return OutputPlan(list(command), _absolute(Path(results), folder), False)
    target = scratch / "results.json"
    if format_name == "pytest-benchmark":
        named = _option_value(command, "--benchmark-json")
        if named:
            return OutputPlan(list(command), _absolute(Path(named), folder), False)
        if not _is_pytest(command):
            raise UsageError(f"cannot tell where {shlex.join(command)} writes pytest-benchmark JSON: run pytest "
                             "directly, or give --results FILE")
        return OutputPlan([*command, f"--benchmark-json={target}"], target, True)
    if format_name == "google-benchmark":
        named = _option_value(command, "--benchmark_out")
        if named:
            out_format = _option_value(command, "--benchmark_out_format")
            if out_format not in (None, "json"):
                raise UsageError(f"--benchmark_out_format={out_format}: kidx reads Google Benchmark's JSON only")
            return OutputPlan(list(command), _absolute(Path(named), folder), False)
        return OutputPlan([*command, f"--benchmark_out={target}", "--benchmark_out_format=json"], target, True)
    if format_name == "nvbench":
        for option in ("--json", "--jsonbin"):
            named = _option_value(command, option)
            if named:
                return OutputPlan(list(command), _absolute(Path(named), folder), False)
        return OutputPlan([*command, "--json", str(target)], target, True)
    if format_name == "tritonbench":
        named = _option_value(command, "--output-json")
        if named:
            return OutputPlan(list(command), _absolute(Path(named), folder), False)
        return OutputPlan([*command, "--output-json", str(target)], target, True)
    raise UsageError(f"kidx record cannot find the output of {format_name}: give --results FILE")


def _absolute(path: Path, folder: Path) -> Path:
    return path if path.is_absolute() else folder / path


def _liger_data_file(command: list[str], folder: Path) -> Path:
    """Liger's harness (its ``utils.py``) writes ``../data/all_benchmark_data.csv`` beside
    its scripts folder: the folder of a script the command runs that has Liger's
    ``utils.py`` beside it, else the working folder (the harness is run from there)."""
    for argument in command[1:]:
        if argument.endswith(".py"):
            script = _absolute(Path(argument), folder)
            if (script.parent / "utils.py").is_file():
                return script.parent.parent / "data" / LIGER_DATA_FILE
    return folder.parent / "data" / LIGER_DATA_FILE


# --- several processes, one or two commands ------------------------------------------------

@dataclass
class Side:
    """One command that kidx record runs: its output plan, its code, and its side's name
    (``base`` or ``head`` under --interleave, else None)."""

    name: str | None
    plan: OutputPlan
    state: GitState | None
    labels: dict[str, str] = field(default_factory=dict)


RECORDING_FILE = "recording.json"  # in the scratch folder: what --recover stores
LABEL_RECORDING = "recording"  # every recorded run's label: the recording it belongs to


def new_recording_id() -> str:
    """A recording's name, unique to one kidx record: its UTC start and 6 hex digits
    (``20261207T083512Z-a1b2c3``), a valid label value."""
    import secrets
    from datetime import UTC, datetime

    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


@dataclass
class Collected:
    """What the processes wrote so far: the files to import (each a copy in the scratch
    folder), each file's origin (the recording and process that wrote it), labels and
    annotations, line maps and do_bench calls (read from each process's log)."""

    recording: str = field(default_factory=new_recording_id)
    files: list[str] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Metadata] = field(default_factory=dict)
    line_maps: dict[str, dict[int, int]] = field(default_factory=dict)
    timer_logs: dict[str, str] = field(default_factory=dict)  # file -> its process's do_bench log
    timer_calls: dict[str, list[dict]] = field(default_factory=dict)
    max_sm_mhz: dict[str, int] = field(default_factory=dict)  # the GPU's maximum SM clock, where read
    notes: list[str] = field(default_factory=list)

    def save(self, scratch: Path, request: dict) -> None:
        """``scratch``/recording.json: the request (format, options, labels, timing,
        environment) and each file's origin, labels, annotations and line map, paths
        relative to ``scratch``; written whole or not at all, after every process, so
        that ``load`` stores what was measured exactly as record would have."""
        files = [{"file": os.path.relpath(name, scratch), "origin": self.origins[name],
                  "labels": self.metadata[name].labels, "annotations": self.metadata[name].annotations,
                  "lineMap": {str(k): v for k, v in self.line_maps.get(name, {}).items()},
                  "timerLog": (os.path.relpath(self.timer_logs[name], scratch) if name in self.timer_logs else None),
                  "maxSmMhz": self.max_sm_mhz.get(name)}
                 for name in self.files]
        text = json.dumps({"recording": self.recording, **request, "files": files}, indent=2)
        partial = scratch / (RECORDING_FILE + ".partial")
        partial.write_text(text + "\n", encoding="utf-8")
        os.replace(partial, scratch / RECORDING_FILE)

    @classmethod
    def load(cls, scratch: Path, shown: str) -> tuple[Collected, dict]:
        """What ``save`` wrote in ``scratch``: the collected files and the request; a
        UsageError naming the folder (as ``shown``) and field when it is not a kept recording."""
        from kidx.operations.ingest.record_timers import read_log

        path = scratch / RECORDING_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UsageError(f"--recover {shown}: no {RECORDING_FILE} there; it is not a folder kidx record "
                             "kept") from None
        except (OSError, ValueError) as exc:
            raise UsageError(f"--recover {shown}: cannot read {path}: {exc}") from None
        try:
            collected = cls(recording=str(data["recording"]))
            for number, entry in enumerate(data["files"]):
                where = f"files[{number}]"
                name = str((scratch / entry["file"]).resolve())
                if not Path(name).is_file():
                    raise UsageError(f"--recover {shown}: {path}, {where}.file: {entry['file']} is missing")
                collected.files.append(name)
                collected.origins[name] = str(entry["origin"])
                collected.metadata[name] = Metadata(dict(entry["labels"]), dict(entry["annotations"]))
                collected.line_maps[name] = {int(k): int(v) for k, v in (entry.get("lineMap") or {}).items()}
                if entry.get("timerLog"):
                    log = scratch / entry["timerLog"]
                    collected.timer_logs[name] = str(log)
                    collected.timer_calls[name], notes = read_log(log)
                    collected.notes.extend(notes)
                if entry.get("maxSmMhz"):
                    collected.max_sm_mhz[name] = int(entry["maxSmMhz"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UsageError(f"--recover {shown}: {path} is not a recording kidx record wrote ({exc!r})") from None
        return collected, data


def command_folder(command: list[str], folder: Path) -> Path:
    """The folder of the first script a command runs (its checkout is the code that ran),
    else ``folder``."""
    for argument in command[1:]:
        if argument.endswith(".py"):
            script = _absolute(Path(argument), folder)
            if script.is_file():
                return script.parent
    return folder


def split_interleaved(command: list[str]) -> tuple[list[str], list[str]]:
    """--interleave's two commands: BASE… -- HEAD…."""
    if "--" not in command:
        raise UsageError("--interleave needs two commands: kidx record FORMAT --interleave -- BASE… -- HEAD…")
    cut = command.index("--")
    base, head = command[:cut], command[cut + 1:]
    if not base or not head:
        raise UsageError("--interleave needs two commands: kidx record FORMAT --interleave -- BASE… -- HEAD…")
    return base, head


def run_processes(sides: list[Side], processes: int, folder: Path, scratch: Path, report: Reporter,
                  timer: tuple[str, str] | None, collected: Collected,
                  ended: Callable[[OutputPlan, HarnessResult, dict[str, str]], None],
                  gpu_states: Callable[[], list] = list, gpus: list | None = None,
                  kept_so_far: Callable[[], None] = lambda: None, sampling: Sampling | None = None) -> None:
    """Run each side's command ``processes`` times, alternating sides (A B A B …), each
    run a fresh process; what each wrote is copied into ``collected`` as it ends, so a
    later failure loses nothing already measured (``kept_so_far`` is called after each:
    kidx record writes the recording's file then). ``timer``: (timer, cache) to replace
    do_bench with; ``sampling``: what kidx record asks of its sampling (adaptive stopping,
    the least time a call).
    ``gpus`` (``record_gpus.Gpu``s, from --gpus): the repetitions run on
    those GPUs at once, one process a GPU at a time, both sides of a repetition in turn
    on one GPU (``record_gpus.run_on_gpus``)."""
    runner = _Processes(sides, processes, folder, scratch, report, timer, collected, ended, gpu_states,
                        several_gpus=bool(gpus) and len(gpus or []) > 1, kept_so_far=kept_so_far, sampling=sampling)
    if not gpus:
        for repetition in range(1, processes + 1):
            for side in sides:
                runner.run(side, repetition)
        return
    from kidx.operations.ingest.record_gpus import Running, run_on_gpus

    def repetition_on(repetition: int, gpu) -> None:  # both sides in turn, on one GPU
        for side in sides:
            runner.run(side, repetition, gpu)

    runner.running, runner.halted = Running(), threading.Event()
    try:
        run_on_gpus(gpus, range(1, processes + 1), repetition_on, runner.running, stop_harness, runner.halted)
    except KeyboardInterrupt:
        raise HarnessInterrupted("interrupted: the commands were stopped; nothing was imported") from None


@dataclass
class _Processes:
    """What every process of one recording shares; ``run`` runs one of them. Under --gpus
    several run at once (one a GPU, in threads): what they share is changed under ``lock``."""

    sides: list[Side]
    processes: int
    folder: Path
    scratch: Path
    report: Reporter  # each process started, and each line its command prints (``operations.events``)
    timer: tuple[str, str] | None
    collected: Collected
    ended: Callable[[OutputPlan, HarnessResult, dict[str, str]], None]
    gpu_states: Callable[[], list]
    several_gpus: bool = False
    kept_so_far: Callable[[], None] = lambda: None  # after each process: the recording's file written
    sampling: Sampling | None = None  # with the timer: adaptive stopping, the least time a call
    running: Any = None  # record_gpus.Running, under --gpus
    halted: Any = None  # a threading.Event set when the processes are to stop, under --gpus
    lock: Any = field(default_factory=threading.RLock)

    def say(self, event: Event) -> None:
        with self.lock:
            self.report(event)

    def run(self, side: Side, repetition: int, gpu: Any = None) -> None:
        """One process of ``side``'s command (on ``gpu``, a record_gpus.Gpu, under --gpus)."""
        import shutil

        from kidx.operations.ingest.record_timers import read_log, timer_environment

        if self.halted is not None and self.halted.is_set():
            return
        processes, timer, collected = self.processes, self.timer, self.collected
        repeated = processes > 1 or len(self.sides) > 1
        tag = f"{side.name}-{repetition:02d}" if side.name else f"{repetition:02d}"
        target = self.scratch / f"process-{tag}"
        target.mkdir()
        log = target / "do_bench.jsonl"
        before = self._states(gpu)
        sampling = self.sampling or Sampling()
        environment = (timer_environment(*timer, log, max_noise=sampling.max_noise, max_time_ms=sampling.max_time_ms,
                                         reference_sm_mhz=_reference_clock(before), min_time_ms=sampling.min_time_ms)
                       if timer else None)
        plan = side.plan
        if plan.appended_csv and repeated:
            # each process writes a file of its own (the harness's LIGER_BENCH_TARGET), so a
            # later process's rows are never dropped as duplicates of an earlier one's
            liger_target = f"kidx-{os.getpid()}-{tag}"
            environment = {**(environment or os.environ), LIGER_TARGET_VARIABLE: liger_target}
            plan = dataclasses.replace(plan, path=plan.path.with_name(f"all_benchmark_data_{liger_target}.csv"))
        elif self.several_gpus and plan.added_option:
            plan = _own_output(plan, target)  # processes at once never share a file
        else:
            plan = dataclasses.replace(plan)  # snapshot and collect keep state on the plan
        shown: int | None = None  # the GPU named before each line, while processes run on several at once
        if gpu is not None:
            from kidx.operations.ingest.record_gpus import gpu_environment

            environment = gpu_environment(gpu, environment or dict(os.environ))
            if self.several_gpus:
                shown = gpu.index
        plan.snapshot()
        if repeated or gpu is not None:
            self.say(ProcessStarted(repetition, processes, side.name, gpu.index if gpu is not None else None,
                                    tuple(side.plan.command)))
        running = self.running
        result = run_harness(plan.command, self.folder, lambda line: self.say(HarnessOutput(line, shown)),
                             environment, on_start=running.started if running is not None else None)
        if running is not None:
            running.finished()
        if result.returncode != 0:
            raise HarnessFailed(failure_message(plan.command, result))
        labels = {**side.labels, LABEL_RECORDING: collected.recording}
        if repeated:
            labels["repetition"] = str(repetition)
        if side.name:
            labels["side"] = side.name
        if gpu is not None:
            labels[GPU_INDEX_LABEL] = str(gpu.index)
        with self.lock:
            self.ended(plan, result, labels)
        after = self._states(gpu)
        annotations = recording_metadata(side.state, plan.command, {})[1]
        if gpu is not None and gpu.uuid:
            annotations[ANNOTATION_GPU_UUID] = gpu.uuid
        for moment, states in (("before", before), ("after", after)):
            if states:
                annotations[f"{ANNOTATION_PREFIX}gpu-state-{moment}"] = "; ".join(state.text() for state in states)
        max_clocks = [state.max_sm_mhz for state in before if state.max_sm_mhz]
        calls, notes = read_log(log) if timer else ([], [])
        with self.lock:
            collected.notes.extend(notes)
            for written in plan.collect(target):
                kept = Path(written)
                if kept.parent != target:
                    kept = target / kept.name
                    shutil.copyfile(written, kept)
                key = str(kept)
                collected.files.append(key)
                collected.origins[key] = f"{collected.recording}/{tag}"
                collected.line_maps[key] = dict(plan.line_map)
                collected.metadata[key] = Metadata(labels, annotations)
                collected.timer_calls[key] = calls
                if timer:
                    collected.timer_logs[key] = str(log)
                if max_clocks:
                    collected.max_sm_mhz[key] = min(max_clocks)
            self.kept_so_far()
        if plan.appended_csv and plan.path != side.plan.path:
            plan.path.unlink(missing_ok=True)  # the file kidx asked this process to write

    def _states(self, gpu: Any) -> list:
        """The GPUs' state now: the process's own GPU's under --gpus."""
        with self.lock:
            states = self.gpu_states()
        return states if gpu is None else [state for state in states if state.gpu == gpu.index]


def _reference_clock(states: list) -> int | None:
    """The SM clock below whose 75 % the timer drops samples: the lowest of the GPUs' default clocks."""
    clocks = [clock for clock in (getattr(state, "reference_sm_mhz", None) for state in states) if clock]
    return min(clocks) if clocks else None


def _own_output(plan: OutputPlan, target: Path) -> OutputPlan:
    """``plan`` with the file kidx added to the command moved into ``target``, the process's
    own folder."""
    path = target / plan.path.name
    old = str(plan.path)
    command = [str(path) if argument == old else
               argument[:-len(old)] + str(path) if argument.endswith("=" + old) else argument
               for argument in plan.command]
    return dataclasses.replace(plan, command=command, path=path)
