"""Every console block in docs/ runs, and prints what the page shows.

Each page is a session: its blocks run in order, as a user would type them, in a fresh
folder with a fresh store, from the state the page itself sets up. A test case is one
block, named by its page and its number on the page (``test_docs[guide.md-3]``), so a
failure says where to look. How a page declares its set-up, and what is compared, is in
docs/writing-docs.md.

A page's set-up and exceptions are HTML comments (invisible when the page is rendered):

- ``<!-- docs-test: setup COMMAND -->`` runs COMMAND (bash, in the session folder) before
  the page's first block; several may be given, in order.
- ``<!-- docs-test: not-run REASON -->`` just before a block: the block is not run, because
  it needs what a test machine does not have (a GPU, a remote server); REASON says what.
- ``<!-- docs-test: unordered -->`` just before a block: its output lines are compared
  as a set (for output whose order the page does not promise).
- ``<!-- docs-test: before COMMAND -->`` just before a block: COMMAND runs, unseen, before
  the block (to make the state the page describes in words, such as a damaged file).
- ``<!-- docs-test: machine FACT=VALUE … -->`` just before a block: the block shows what
  ``kidx env capture`` read on the machine the page was written on; VALUE is what it read
  for FACT (``cpu``, ``vendor``, ``architecture``, ``os``, ``python``, ``kernel``,
  ``hostname``, ``cpu-count``). Each is replaced by this machine's own before comparing,
  and so is the environment name that follows from the spec (see ``expected_here``).

A set-up command that exits with status 77 says the machine lacks what the page needs (a
PostgreSQL server, say): the page's blocks are then skipped, with its message as the reason.

Compared: standard output and standard error together, line by line, after the varying
parts are replaced (times, ages); standard output's lines must also come in the order
shown. The exit status is not compared, except where the page shows it (``echo $?``).
"""

from __future__ import annotations

import functools
import os
import platform
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO

DOCS = REPO / "docs"
FENCE = re.compile(r"^(?P<indent> *)```console\n(?P<body>.*?)^(?P=indent)```", re.S | re.M)
DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(\w[\w-]*)\s*(.*?)\s*-->", re.S)
# what legitimately differs from one run to the next
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
# an age and the spaces that pad its column, wherever the AGE column stands (-o wide and -L
# put columns after it, whose start then moves with the age's width), and the header's padding
AGE = re.compile(r"(?<=\s)(?:\d+m\d+s|\d+h\d+m|\d+[smhd]|<unknown>)(?:\s+|$)")
AGE_HEADER = re.compile(r"(?<=\s)AGE(?:\s+|$)")
# how long a command took (`3 passed in 0.99s`, `the command ended in 8.0 s`)
DURATION = re.compile(r"(?<=\bin )\d+(?:\.\d+)? ?s\b")
# the random part of the name of a scratch folder kidx makes (`/tmp/kidx-record-0ghmv2pk`)
SCRATCH = re.compile(r"(/tmp/kidx-[a-z]+-)[a-z0-9_]{8}\b")
# a recording's name: its UTC start and 6 random hex digits (`recording=20261207T083512Z-a1b2c3`)
RECORDING = re.compile(r"\b\d{8}T\d{6}Z-[0-9a-f]{6}\b")
TEMP = "/tmp/"
SKIP = 77  # a set-up command's exit status for "this machine lacks what the page needs"


@dataclass
class Block:
    page: str
    number: int
    commands: list[tuple[str, list[str]]]
    not_run: str | None = None
    unordered: bool = False
    before: list[str] = field(default_factory=list)
    machine: dict[str, str] | None = None  # the facts of the machine the page was written on


@dataclass
class Page:
    name: str
    setup: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)


def parse_page(path: Path) -> Page:
    return parse_page_text(path.relative_to(DOCS).as_posix(), path.read_text(encoding="utf-8"))


def parse_page_text(name: str, text: str) -> Page:
    page = Page(name)
    for found in DIRECTIVE.finditer(text):
        if found.group(1) == "setup":
            page.setup.append(found.group(2))
    for number, fence in enumerate(FENCE.finditer(text), start=1):
        commands: list[tuple[str, list[str]]] = []
        for line in fence.group("body").splitlines():
            line = line.removeprefix(fence.group("indent"))
            if line.startswith("$ "):
                commands.append((line[2:], []))
            elif commands:
                commands[-1][1].append(line)
        block = Block(page.name, number, commands)
        for kind, argument in _directives_before(text[: fence.start()]):
            if kind == "not-run":
                block.not_run = argument or "no reason given"
            elif kind == "unordered":
                block.unordered = True
            elif kind == "before":
                block.before.append(argument)
            elif kind == "machine":
                block.machine = dict(fact.split("=", 1) for fact in shlex.split(argument))
        page.blocks.append(block)
    return page


def _directives_before(text: str) -> list[tuple[str, str]]:
    """The directives in the HTML comments that stand right before a block (only blank
    lines between them), in page order."""
    found: list[tuple[str, str]] = []
    rest = text.rstrip()
    while rest.endswith("-->"):
        start = rest.rfind("<!--")
        comment = DIRECTIVE.fullmatch(rest[start:])
        if start < 0 or comment is None:
            break
        if comment.group(1) != "setup":
            found.insert(0, (comment.group(1), comment.group(2)))
        rest = rest[:start].rstrip()
    return found


# where each machine fact stands in `kidx env capture`'s output: the keys of its lines
FACT_LINES = {"cpu": ("product", "cpu", "title"), "vendor": ("vendor",), "architecture": ("architecture",),
              "os": ("os",), "python": ("python",), "kernel": ("kernelindex.dev/kernel",),
              "hostname": ("kernelindex.dev/hostname",), "cpu-count": ("kernelindex.dev/cpu-count",)}


def this_machine() -> dict[str, str]:
    """The facts of the machine the test runs on, read where docs/commands/env.md says
    kidx reads them (the pages' sessions run kidx in this interpreter)."""
    from kidx.formats.gpus import slug

    cpu = " ".join((_first_value("/proc/cpuinfo", "model name", ":") or "").split()) or platform.processor()
    os_name = ((_first_value("/etc/os-release", "PRETTY_NAME", "=") or "").strip('"')
               or f"{platform.system()} {platform.release()}")
    word = cpu.split()[0].lower().split("(")[0] if cpu.split() else ""
    return {"cpu": cpu, "vendor": {"genuineintel": "intel", "authenticamd": "amd"}.get(word, slug(word) or "unknown"),
            "architecture": platform.machine(), "os": os_name, "python": platform.python_version(),
            "kernel": platform.release(), "hostname": socket.gethostname(), "cpu-count": str(os.cpu_count())}


def _first_value(path: str, key: str, separator: str) -> str | None:
    """The value of the first ``key SEPARATOR value`` line of ``path``; None without one."""
    try:
        with open(path, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                name, found, value = line.partition(separator)
                if found and name.strip() == key and value.strip():
                    return value.strip()
    except OSError:
        pass
    return None


def environment_name(body: dict) -> str:
    """The name kidx env capture derives from an environment's spec (docs/commands/env.md)."""
    from kidx.formats.gpus import slug
    from kidx.identity import digest_of

    hardware = body["spec"]["hardware"]
    if "count" in hardware:
        base = slug(" ".join(filter(None, [hardware["product"], hardware.get("formFactor")]))) + f"-{hardware['count']}x"
    else:
        base = "cpu-" + slug(hardware["product"])
    return base[:200].rstrip("-") + "-" + digest_of(body).split(":", 1)[1][:10]


def expected_here(block: Block) -> list[tuple[str, list[str]]]:
    """The block's commands and what they print on this machine: in a ``machine`` block,
    each fact of the page's machine, where its line shows it, replaced by this machine's;
    then the environment name derived from the page's spec, wherever it stands, by the
    name derived from the spec that results."""
    if block.machine is None:
        return block.commands
    here = this_machine()

    def replaced(line: str) -> str:
        for fact, value in block.machine.items():
            for key in FACT_LINES[fact]:
                start, _, rest = line.partition(f"{key}: ")
                if _ and not start.strip():
                    line = f"{start}{key}: {rest.replace(value, here[fact])}"
        return line

    commands = [(command, [replaced(line) for line in shown]) for command, shown in block.commands]
    for (_, before), (_, after) in zip(block.commands, commands, strict=True):
        if any(line.startswith("apiVersion: ") for line in before):
            from ruamel.yaml import YAML

            def document(lines: list[str]) -> dict:
                start = next(index for index, line in enumerate(lines) if line.startswith("apiVersion: "))
                return YAML(typ="safe").load("\n".join(lines[start:]))

            page_body = document(before)
            page_name = page_body["metadata"]["name"]
            assert environment_name(page_body) == page_name, f"{block.page}: {page_name} is not its spec's name"
            name = environment_name(document(after))
            commands = [(command, [line.replace(page_name, name) for line in shown]) for command, shown in commands]
            break
    return commands


PAGES = [parse_page(path) for path in sorted(DOCS.rglob("*.md"))]
# Pages whose sessions are set up to run. A page not yet named here is skipped, with its
# name in the skip reason, until its set-up is written and its blocks pass.
EXECUTED = {"guide.md", "commands/completion.md", "commands/describe.md", "commands/import.md", "commands/env.md",
            "commands/fsck.md", "commands/record.md", "api.md", "commands/explain.md", "commands/apply.md",
            "commands/history.md", "commands/delete.md", "commands/get.md", "scripting.md", "store.md",
            "recording-runs.md", "teams.md", "reference/jsonpath.md", "commands/push.md", "speed-of-light.md",
            "publish.md", "analysis.md", "commands/compare.md", "commands/series.md", "commands/plot.md",
            "maintenance.md", "reference/store-guarantees.md", "commands/summary.md", "measuring.md"}
BLOCKS = [block for page in PAGES for block in page.blocks]
# pages whose blocks take many seconds (a command that waits on a lock, a long pipeline);
# a page's blocks share one session, so the whole page is marked, never one block of it
SLOW_PAGES = {"reference/store-guarantees.md", "scripting.md"}
# a page's blocks share one session, in one process, in order: under pytest-xdist the
# README's `--dist loadfile` runs this whole file in one worker
CASES = [pytest.param(block, marks=pytest.mark.slow) if block.page in SLOW_PAGES else block for block in BLOCKS]


class Session:
    """One page's shell: its folder, its store, the environment and folder its commands left."""

    def __init__(self, page: Page, root: Path):
        self.page, self.root = page, root
        self.home = root / "home"
        self.tmp = root / "tmp"
        self.work = root / "work"
        for folder in (self.home, self.tmp, self.work):
            folder.mkdir(parents=True)
        # the page's relative paths (docs/examples/…, tests/data/…) resolve as in a checkout
        for top in ("docs", "tests", "crds"):
            (self.work / top).symlink_to(REPO / top)
        self.state = root / "state"
        self.state.mkdir()
        (self.state / "cwd").write_text(str(self.work))
        self.environment = {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            # the checkout's kidx, whichever copy the interpreter has installed (an editable
            # install of another checkout, say): the pages document this code
            "PYTHONPATH": str(REPO),
            "TMPDIR": str(self.tmp),
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
            "KIDX_STORE": str(self.root / "store"),
            "XDG_CACHE_HOME": str(self.root / "cache"),
            "MPLCONFIGDIR": matplotlib_folder(),
            # a checkout tested with another checkout's environment (PYTHONPATH=$PWD) runs its own kidx
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        }
        self.last_code = 0
        self.failed: str | None = None
        self.skipped: str | None = None  # why the page cannot run here (a set-up exited 77)
        made = _set_up_states.get(tuple(page.setup))
        if made is not None:  # another page set up the same state: copy it (imports take seconds)
            self._copy_state(*made)
            return
        for command in page.setup:
            done = self.run(command)
            if done.returncode == SKIP:
                self.skipped = done.stderr.strip() or f"set-up `{command}` says this machine lacks what it needs"
                return
            if done.returncode != 0:
                self.failed = f"set-up `{command}` failed ({done.returncode}): {done.stderr.strip()}"
                return
        if page.setup:
            _set_up_states[tuple(page.setup)] = (self.root / "made", self.root)
            for part in SESSION_PARTS:
                if (self.root / part).exists():
                    shutil.copytree(self.root / part, self.root / "made" / part, symlinks=True)

    def _copy_state(self, made: Path, root: Path) -> None:
        """The state another session's set-up made (``made``, a copy of what it left under
        ``root``): its files, and the folder and exported variables its shell ended with,
        each path under ``root`` now under this session's root."""
        for part in SESSION_PARTS:
            if (made / part).exists():
                shutil.rmtree(self.root / part, ignore_errors=True)
                shutil.copytree(made / part, self.root / part, symlinks=True)
        for left in ("cwd", "env"):
            path = self.state / left
            if path.exists():
                path.write_text(path.read_text().replace(f"{root}/", f"{self.root}/"))

    def run(self, command: str) -> subprocess.CompletedProcess:
        """Run one command as the page's shell would: after the commands before it."""
        command = command.replace(TEMP, f"{self.tmp}/")
        program = (
            f"if [ -f {self.state}/env ]; then . {self.state}/env; fi\n"
            f'cd "$(cat {self.state}/cwd)"\n'
            f"(exit {self.last_code})\n"
            f"{command}\n"
            "__status=$?\n"
            f"pwd > {self.state}/cwd; export -p > {self.state}/env\n"
            "exit $__status\n"
        )
        done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, env=self.environment,
                              timeout=300)
        self.last_code, self.last = done.returncode, done
        return done

    def check(self, command: str, shown: list[str], ordered: bool = True) -> str | None:
        """Run ``command``; None when it printed what ``shown`` says, else what differs."""
        done = self.run(command)
        out = [self.normal(line) for line in done.stdout.splitlines()]
        err = [self.normal(line) for line in done.stderr.splitlines()]
        expected = [self.normal(line) for line in shown]
        if sorted(out + err) != sorted(expected):
            missing = [line for line in expected if line not in out + err]
            extra = [line for line in out + err if line not in expected]
            return (f"$ {command}\n(exit {done.returncode})\nshown but not printed:\n  " + "\n  ".join(missing)
                    + "\nprinted but not shown:\n  " + "\n  ".join(extra))
        if ordered and [line for line in expected if line in out] != out:
            return f"$ {command}\nstandard output's lines come in another order than shown"
        return None

    def shown(self, line: str) -> str:
        """A printed line as a page shows it: the session's temporary folder as /tmp."""
        return line.replace(f"{self.tmp}/", TEMP).replace(str(self.tmp), TEMP.rstrip("/"))

    def normal(self, line: str) -> str:
        line = DURATION.sub("<duration>", TIMESTAMP.sub("<time>", self.shown(line)))
        line = RECORDING.sub("<recording>", SCRATCH.sub(r"\1<random>", line))
        return AGE_HEADER.sub("AGE ", AGE.sub("<age> ", line)).rstrip()


_sessions: dict[str, Session] = {}
# a page's set-up commands → (a copy of the state they made, the root of the session they ran in)
_set_up_states: dict[tuple[str, ...], tuple[Path, Path]] = {}
@functools.cache  # one folder for this process's sessions, its font cache built once
def matplotlib_folder() -> str:
    """A matplotlib configuration folder whose font cache is built already, as on a machine
    that has drawn a plot before: building it takes seconds, and past five matplotlib
    says so on standard error, which a page's session would then print (a loaded machine)."""
    folder = tempfile.mkdtemp(prefix="kidx-docs-matplotlib-")
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env={**os.environ, "MPLCONFIGDIR": folder},
                   capture_output=True, check=False)
    return folder
# what a session's commands can change: its store, its folders, its shell's folder and variables
SESSION_PARTS = ("store", "work", "home", "tmp", "cache", "state")


@pytest.fixture
def session(request, tmp_path_factory) -> Session:
    block: Block = request.param
    found = _sessions.get(block.page)
    if found is None:
        page = next(page for page in PAGES if page.name == block.page)
        found = _sessions[block.page] = Session(page, tmp_path_factory.mktemp("docs"))
    return found


def _id(block: Block) -> str:
    return f"{block.page}-{block.number}"


@pytest.mark.skipif(shutil.which("bash") is None, reason="the docs' sessions are bash sessions")
@pytest.mark.parametrize("session", CASES, ids=_id, indirect=True)
def test_docs(session: Session, request) -> None:
    block: Block = request.node.callspec.params["session"]
    if session.failed:
        pytest.fail(f"an earlier step of {block.page} failed: {session.failed}")
    if session.skipped and block.page in EXECUTED:
        pytest.skip(f"{block.page} cannot run here: {session.skipped}")
    if block.page not in EXECUTED:
        pytest.skip(f"{block.page}: not yet set up to run")
    if block.not_run:
        pytest.skip(f"not run: {block.not_run}")
    for command in block.before:
        done = session.run(command)
        if done.returncode != 0:
            session.failed = f"block {block.number}'s preparation `{command}`"
            pytest.fail(f"preparing block {block.number}: `{command}` failed: {done.stderr.strip()}", pytrace=False)
    for command, shown in expected_here(block):
        problem = session.check(command, shown, ordered=not block.unordered)
        if problem:
            session.failed = f"block {block.number}, `{command}`"
            pytest.fail(problem, pytrace=False)


def test_the_pages_executed_exist() -> None:
    assert EXECUTED <= {page.name for page in PAGES}


def test_every_page_is_collected() -> None:
    """The collection sees every console block of every page: a block the parser missed
    would never run."""
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        opened = re.findall(r"^ *```console$", text, flags=re.M)
        assert len(opened) == len(parse_page(path).blocks), path.name


def test_the_comparison_ignores_times_and_ages_but_nothing_else(tmp_path) -> None:
    session = Session(Page("example.md"), tmp_path / "s")
    assert session.check("kidx version", ["kidx 0.1.0"]) is None
    assert session.check("echo 'a   2025-08-07T21:42:15.000Z   3s'", ["a   2026-11-29T17:49:30Z   12m"]) is None
    assert session.check("echo 'N   AGE   TIER'; echo 'a   3s    x'", ["N   AGE     TIER", "a   4m22s   x"]) is None
    assert "shown but not printed" in session.check("echo 'a   3s    x'", ["a   3s    y"])
    assert session.check("echo '3 passed in 0.99s; ended in 8.0 s'", ["3 passed in 1.53s; ended in 12.3 s"]) is None
    assert "shown but not printed" in session.check("echo 'within 1 s'", ["within 2 s"])
    assert session.check("echo /tmp/kidx-record-0ghmv2pk/r.json", ["/tmp/kidx-record-9ii0qbea/r.json"]) is None
    assert "shown but not printed" in session.check("kidx version", ["kidx 0.2.0"])
    assert "printed but not shown" in session.check("echo one; echo two", ["one"])
    assert "another order" in session.check("echo one; echo two", ["two", "one"])
    # a page's shell keeps its folder, its variables and the last exit status
    assert session.check("mkdir sub && cd sub && export X=1; false", []) is None
    assert session.check("echo $? $X ${PWD##*/}", ["1 1 sub"]) is None


def test_a_set_up_that_exits_77_skips_the_page(tmp_path) -> None:
    session = Session(Page("example.md", setup=["echo 'no server here' >&2; exit 77"]), tmp_path / "s")
    assert (session.skipped, session.failed) == ("no server here", None)
    session = Session(Page("example.md", setup=["echo broken >&2; exit 3"]), tmp_path / "t")
    assert session.skipped is None and session.failed == "set-up `echo broken >&2; exit 3` failed (3): broken"


PAGE_MACHINE = {"cpu": "Intel(R) Xeon(R) Processor", "vendor": "intel", "architecture": "x86_64", "os": "Debian 12",
                "python": "3.11.7", "kernel": "6.18.44", "hostname": "vm", "cpu-count": "2"}
ANOTHER_MACHINE = {"cpu": "AMD EPYC 9654 96-Core Processor", "vendor": "amd", "architecture": "aarch64",
                   "os": "Ubuntu 24.04.3 LTS", "python": "3.12.3", "kernel": "6.8.0-49-generic", "hostname": "ci-7",
                   "cpu-count": "192"}


def captured_lines(facts: dict[str, str], name: str) -> list[str]:
    return ["note: no GPU found: this is a CPU environment", "apiVersion: kernelindex.dev/v1alpha1",
            "kind: ExecutionEnvironment", "metadata:", "  annotations:",
            f"    kernelindex.dev/cpu-count: '{facts['cpu-count']}'", f"    kernelindex.dev/hostname: {facts['hostname']}",
            f"    kernelindex.dev/kernel: {facts['kernel']}", f"  name: {name}", f"  title: CPU only · {facts['cpu']}",
            "spec:", "  hardware:", f"    architecture: {facts['architecture']}", f"    product: {facts['cpu']}",
            f"    vendor: {facts['vendor']}", "  software:", f"    os: {facts['os']}", f"    python: {facts['python']}"]


def test_a_machine_block_expects_this_machines_facts_and_the_name_they_make(monkeypatch) -> None:
    """A page written on one machine, checked on another: the facts the directive names
    are this machine's where their lines show them (and nowhere else: the cpu count's 2
    is not replaced in other lines), and the name follows the spec that results."""
    page_name, here_name = "cpu-intel-r-xeon-r-processor-42cd74a9fd", "cpu-amd-epyc-9654-96-core-processor-4155fff126"
    monkeypatch.setattr(sys.modules[__name__], "this_machine", lambda: ANOTHER_MACHINE)
    block = Block("example.md", 1, [("kidx env capture", captured_lines(PAGE_MACHINE, page_name)),
                                    ("kidx env capture --apply", [f"executionenvironment.kernelindex.dev/{page_name} "
                                                                  "created", "2 2 vm"])],
                  machine=PAGE_MACHINE)
    assert expected_here(block) == [
        ("kidx env capture", captured_lines(ANOTHER_MACHINE, here_name)),
        ("kidx env capture --apply", [f"executionenvironment.kernelindex.dev/{here_name} created", "2 2 vm"])]
    page = parse_page_text("example.md", '<!-- docs-test: machine cpu="A B" cpu-count=2 -->\n```console\n$ true\n```\n')
    assert page.blocks[0].machine == {"cpu": "A B", "cpu-count": "2"}


def test_this_machines_facts_are_what_kidx_env_capture_reads_here(tmp_path) -> None:
    session = Session(Page("example.md"), tmp_path / "s")
    done = session.run("kidx env capture -o json 2>/dev/null")
    import json

    body, here = json.loads(done.stdout), this_machine()
    annotations, spec = body["metadata"]["annotations"], body["spec"]
    cpu = spec.get("host", {}).get("cpu") or spec["hardware"]["product"]
    assert (cpu, spec["software"]["os"], spec["software"]["python"]) == (here["cpu"], here["os"], here["python"])
    assert [annotations[f"kernelindex.dev/{fact}"] for fact in ("kernel", "hostname", "cpu-count")] == [
        here["kernel"], here["hostname"], here["cpu-count"]]
    if "count" not in spec["hardware"]:  # a CPU environment: the CPU is the hardware
        assert (spec["hardware"]["vendor"], spec["hardware"]["architecture"]) == (here["vendor"], here["architecture"])
    assert environment_name(body) == body["metadata"]["name"]


def test_a_copied_set_up_keeps_the_folder_variables_and_files_it_left(tmp_path) -> None:
    """Two pages with the same set-up: the second gets a copy of what the first's made,
    the same as if it had run it itself (the shell's folder, exported variables, files in
    /tmp/ and the home folder), whichever page comes first."""
    setup = ["mkdir sub && cd sub && export FROM_SETUP=$HOME && echo made > /tmp/note && touch ~/.rc",
             "export KIDX_STORE=/tmp/store && kidx apply -f ../docs/examples/seed-bundle.json > /dev/null 2>&1"]
    for name in ("first", "second"):
        session = Session(Page(f"{name}.md", setup=list(setup)), tmp_path / name)
        assert session.failed is None
        assert session.check("echo ${PWD##*/} $(cat /tmp/note) $(ls -A ~)", ["sub made .rc"]) is None
        assert session.check('test "$FROM_SETUP" = "$HOME" && echo "$KIDX_STORE"', ["/tmp/store"]) is None
        assert session.check("kidx get protocols -o name", [
            "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward"]) is None
    assert tuple(setup) in _set_up_states
