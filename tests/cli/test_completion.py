"""Shell completion: the scripts, the __complete candidates, and a real bash round trip."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

BIN = Path(sys.executable).parent

MANIFESTS = """\
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkProtocol
metadata:
  name: proto-a
  labels: {team: alpha}
spec:
  harness: {name: Harness A}
  measurement: {timer: cuda_events}
---
apiVersion: kernelindex.dev/v1alpha1
kind: ExecutionEnvironment
metadata:
  name: env-h100
  labels: {vendor: nvidia}
spec:
  hardware: {vendor: nvidia, product: NVIDIA H100}
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: web-2
  labels: {app: web, tier: fe}
spec: {status: passed}
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: web-10
  labels: {app: web, tier: be}
spec: {status: failed}
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: api-1
  labels: {app: api}
spec: {status: passed}
"""
COMMANDS = ["api-resources", "apply", "compare", "completion", "delete", "describe", "diff", "digest", "env",
            "explain", "export", "fsck", "gc", "get", "history", "import", "plot", "publish", "pull", "push", "record",
            "series", "summary", "version"]
TYPE_WORDS = [
    "benchmarkprotocol", "benchmarkprotocols", "benchmarkrun", "benchmarkruns", "bp", "br", "ee", "env",
    "environment", "environments", "envs", "executionenvironment", "executionenvironments", "impl",
    "implementation", "implementations", "impls", "protocol", "protocols", "run", "runs", "wl", "workload",
    "workloads", "all",
]


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """One store for the module: completion only reads it."""
    from kidx.cli.app import run

    folder = tmp_path_factory.mktemp("completion")
    path = folder / "m.yaml"
    path.write_text(MANIFESTS, encoding="utf-8")
    err = io.StringIO()
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
        monkeypatch.delenv("KIDX_STORE", raising=False)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = run(["apply", "-f", str(path), "--store", str(folder / "store")])
    assert code == 0, err.getvalue()
    return folder / "store"


@pytest.fixture
def complete(filled, monkeypatch):
    """``kidx __complete WORD…`` in process, against the filled store; the candidates as a list."""
    from kidx.cli.app import run

    monkeypatch.setenv("KIDX_STORE", str(filled))

    def invoke(*words: str) -> list[str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(["__complete", *words])
        assert (code, err.getvalue()) == (0, "")
        text = out.getvalue()
        assert text == "" or text.endswith("\n")
        return text.splitlines()

    return invoke


# ------------------------------------------------------------------ scripts


@pytest.mark.parametrize("shell, marker", [("bash", "complete -F _kidx kidx"), ("zsh", "compdef _kidx kidx"),
                                           ("fish", "complete -c kidx")])
def test_completion_scripts(kidx, shell, marker):
    code, out, err = kidx("completion", shell)
    assert (code, err) == (0, "")
    assert out.strip() and out.endswith("\n")
    assert "kidx __complete" in out
    assert marker in out
    assert "__files__" in out


def test_unsupported_shell(kidx):
    assert kidx("completion", "powershell") == (1, "", 'error: Unsupported shell type "powershell".\n')


def test_completion_needs_a_shell(kidx):
    code, out, err = kidx("completion")
    assert (code, out) == (1, "")
    assert err.startswith("error: ")


def test_bash_script_is_valid_bash(kidx, tmp_path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    script = tmp_path / "kidx.bash"
    script.write_text(kidx("completion", "bash").out, encoding="utf-8")
    assert subprocess.run([bash, "-n", str(script)], capture_output=True).returncode == 0


# ------------------------------------------------------------------ candidates


def test_commands(complete):
    assert complete("") == COMMANDS
    assert complete("d") == ["delete", "describe", "diff", "digest"]
    assert complete("ge") == ["get"]
    assert complete("zz") == []


def test_no_words_at_all_gives_commands(filled, monkeypatch):
    from kidx.cli.app import run

    monkeypatch.setenv("KIDX_STORE", str(filled))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run(["__complete"]) == 0
    assert out.getvalue().splitlines() == COMMANDS


@pytest.mark.parametrize("command", ["get", "describe", "delete", "history", "explain"])
def test_type_words(complete, command):
    assert complete(command, "") == TYPE_WORDS
    assert complete(command, "ru") == ["run", "runs"]
    assert complete(command, "e") == [
        "ee", "env", "environment", "environments", "envs", "executionenvironment", "executionenvironments"]


def test_names_from_the_store(complete):
    assert complete("get", "runs", "") == ["api-1", "web-10", "web-2"]
    assert complete("get", "runs", "web") == ["web-10", "web-2"]
    assert complete("describe", "run", "web-1") == ["web-10"]
    assert complete("delete", "br", "a") == ["api-1"]
    assert complete("history", "protocols", "") == ["proto-a"]
    assert complete("get", "runs", "nope") == []
    assert complete("get", "workloads", "") == []


def test_names_after_a_first_name_and_for_several_types(complete):
    assert complete("get", "runs", "web-2", "") == ["api-1", "web-10", "web-2"]
    assert complete("get", "runs,protocols", "") == ["api-1", "web-10", "web-2", "proto-a"]


def test_names_after_flags_with_values(complete):
    assert complete("get", "-o", "name", "runs", "w") == ["web-10", "web-2"]
    assert complete("get", "-l", "app=web", "runs", "") == ["api-1", "web-10", "web-2"]


def test_type_slash_name(complete):
    assert complete("get", "run/") == ["run/api-1", "run/web-10", "run/web-2"]
    assert complete("get", "run/w") == ["run/web-10", "run/web-2"]
    assert complete("describe", "env/") == ["env/env-h100"]
    assert complete("delete", "protocol/p") == ["protocol/proto-a"]
    assert complete("get", "nope/") == []


def test_names_come_from_the_store_named_on_the_line(complete, kidx, tmp_path, filled):
    other = tmp_path / "other-store"
    manifest = tmp_path / "o.yaml"
    manifest.write_text("apiVersion: kernelindex.dev/v1alpha1\nkind: BenchmarkRun\nmetadata:\n  name: elsewhere\n"
                        "spec: {status: passed}\n", encoding="utf-8")
    assert kidx("apply", "-f", str(manifest), store_path=other).code == 0
    assert complete("get", "--store", str(other), "runs", "") == ["elsewhere"]
    assert complete("get", f"--store={other}", "runs", "") == ["elsewhere"]
    assert os.environ["KIDX_STORE"] == str(filled)  # the line's --store is read, not written into the environment
    assert complete("get", "runs", "") == ["api-1", "web-10", "web-2"]


@pytest.mark.parametrize(
    "command, expected",
    [
        ("get", ["csv", "csv=", "custom-columns=", "custom-columns-file=", "json", "jsonpath=", "jsonpath-file=", "name",
                 "tsv", "tsv=", "wide", "yaml"]),
        ("compare", ["csv", "json", "markdown", "table", "tsv", "wide", "yaml"]),
        ("series", ["csv", "json", "markdown", "table", "tsv", "wide", "yaml"]),
        ("export", ["__files__"]),
        ("env capture", ["json", "name", "yaml"]),
        ("env", []),
        ("plot", ["__files__"]),
        ("apply", ["name"]),
        ("delete", ["name"]),
        ("import", ["json", "name", "yaml"]),
        ("import liger", ["json", "name", "yaml"]),
        ("import bundle", ["name"]),
        ("history", ["json", "yaml"]),
        ("api-resources", ["json", "name", "wide", "yaml"]),
        ("describe", []),
    ],
)
def test_output_values_per_command(complete, command, expected):
    assert complete(*command.split(), "-o", "") == expected
    assert complete(*command.split(), "--output", "") == expected


def test_output_values_filtered_by_prefix(complete):
    assert complete("get", "runs", "-o", "j") == ["json", "jsonpath=", "jsonpath-file="]
    assert complete("get", "runs", "-o", "custom-columns=") == ["custom-columns="]


def test_label_keys_and_values(complete):
    keys = complete("get", "runs", "-l", "")
    assert {"app=", "tier="} <= set(keys)
    assert keys == sorted(keys) and all(key.endswith("=") for key in keys)
    assert complete("get", "runs", "-l", "ti") == ["tier="]
    assert complete("get", "runs", "--selector", "app=") == ["app=api", "app=web"]
    assert complete("get", "runs", "-l", "app=w") == ["app=web"]
    assert complete("get", "runs", "-l", "tier!=") == ["tier!=be", "tier!=fe"]
    assert complete("get", "runs", "-l", "app=web,ti") == ["app=web,tier="]
    assert complete("get", "runs", "-l", "app=web,tier=f") == ["app=web,tier=fe"]
    assert complete("delete", "runs", "-l", "nokey=") == []


def test_flags(complete):
    assert complete("get", "runs", "--so") == ["--sort-by"]
    assert complete("get", "runs", "--s") == ["--selector", "--show-labels", "--show-kind", "--sort-by", "--store"]
    assert complete("history", "run", "web-2", "--") == ["--revision", "--output", "--no-headers", "--store"]
    assert complete("diff", "-") == ["--filename", "-f", "--recursive", "-R", "--store"]
    assert complete("explain", "--r") == ["--recursive"]
    assert "--field-selector" in complete("get", "runs", "-")
    assert "--references" in complete("get", "runs", "-")


def test_flags_of_each_subcommand(complete):
    """A group's subcommands have flags of their own: bundle takes no --library or --level."""
    assert complete("import", "bundle", "x", "--l") == []
    assert complete("import", "bundle", "x", "-") == ["--dry-run", "--output", "-o", "--store"]
    assert complete("import", "liger", "x", "--l") == []
    assert complete("import", "pytest-benchmark", "x", "--l") == ["--library"]
    assert complete("import", "kernelbench", "x", "--l") == ["--level"]
    assert complete("import", "tritonbench", "x", "--mo") == ["--mode"]
    assert complete("import", "bundle", "x", "-o", "") == ["name"]
    assert complete("import", "bundle", "x", "-o=") == ["-o=name"]
    assert complete("env", "capture", "--m") == ["--measure-peaks"]
    assert complete("env", "--") == []


def test_files(complete):
    assert complete("apply", "-f", "") == ["__files__"]
    assert complete("apply", "--filename", "ma") == ["__files__"]
    assert complete("diff", "-f", "") == ["__files__"]
    assert complete("delete", "-f", "") == ["__files__"]
    assert complete("get", "--store", "") == ["__files__"]
    assert complete("import", "liger", "") == ["__files__"]


def test_other_positions(complete):
    assert complete("completion", "") == ["bash", "zsh", "fish"]
    assert complete("completion", "z") == ["zsh"]
    assert complete("import", "") == ["liger", "pytest-benchmark", "nvbench", "google-benchmark", "bmf", "tritonbench",
                                       "pytorch-benchmark", "kernelbench", "bundle"]
    assert complete("record", "") == ["liger", "pytest-benchmark", "nvbench", "google-benchmark", "bmf", "tritonbench",
                                       "pytorch-benchmark", "kernelbench"]
    assert complete("record", "--c") == ["--capture", "--cache"]
    assert complete("import", "n") == ["nvbench"]
    assert complete("import", "liger", "f.csv", "--environment", "") == ["__files__"]
    assert complete("env", "") == ["capture"]
    assert complete("env", "capture", "--ap") == ["--apply"]
    assert complete("apply", "") == []


def test_completion_of_an_empty_or_missing_store(monkeypatch, tmp_path):
    from kidx.cli.app import run

    monkeypatch.setenv("KIDX_STORE", str(tmp_path / "none"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert run(["__complete", "get", "runs", ""]) == 0
        assert run(["__complete", "get", "runs", "-l", ""]) == 0
    assert (out.getvalue(), err.getvalue()) == ("", "")
    assert not (tmp_path / "none").exists()


# ------------------------------------------------------------------ a real shell


def bash_complete(store: Path, words: list[str], cword: int, line: str | None = None) -> subprocess.CompletedProcess:
    """Call _kidx the way bash does: COMP_WORDS/COMP_CWORD, and COMP_LINE/COMP_POINT when given."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")

    def quoted(word: str) -> str:
        return "'" + word.replace("'", "'\\''") + "'"

    program = "source <(kidx completion bash) || exit 3\n"
    if line is not None:
        program += f"COMP_LINE={quoted(line)}; COMP_POINT={len(line)}\n"
    program += (
        f"COMP_WORDS=({' '.join(map(quoted, words))}); COMP_CWORD={cword}\n"
        "_kidx\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1",
                   "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([bash, "-c", program], capture_output=True, text=True, env=environment, cwd=REPO)


def test_bash_round_trip(filled):
    assert shutil.which("kidx", path=str(BIN)), "the venv's kidx script is needed"
    done = bash_complete(filled, ["kidx", "get", "runs", "web"], 3)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["web-10", "web-2"]
    done = bash_complete(filled, ["kidx", "ge"], 1)
    assert done.stdout.splitlines() == ["get"]
    done = bash_complete(filled, ["kidx", "get", "run/a"], 2)
    assert done.stdout.splitlines() == ["run/api-1"]


@pytest.mark.parametrize(
    "line, words, expected",
    [
        ("kidx ", ["kidx", ""], COMMANDS),
        ("kidx get runs w", ["kidx", "get", "runs", "w"], ["web-10", "web-2"]),
        ("kidx get runs -o j", ["kidx", "get", "runs", "-o", "j"], ["json", "jsonpath=", "jsonpath-file="]),
        ("kidx get runs -l ti", ["kidx", "get", "runs", "-l", "ti"], ["tier="]),
        # bash cuts words at '=' (COMP_WORDBREAKS): the reply replaces only the part after it
        ("kidx get runs -l app=w", ["kidx", "get", "runs", "-l", "app", "=", "w"], ["web"]),
        # readline replaces the text after the '=', even when COMP_WORDS's current word is "="
        ("kidx get runs -l app=", ["kidx", "get", "runs", "-l", "app", "="], ["api", "web"]),
        ("kidx get runs -l tier=", ["kidx", "get", "runs", "-l", "tier", "="], ["be", "fe"]),
        ("kidx get runs -l app=web,tier=f", ["kidx", "get", "runs", "-l", "app", "=", "web,tier", "=", "f"], ["fe"]),
        ("kidx get runs -l tier!=b", ["kidx", "get", "runs", "-l", "tier!", "=", "b"], ["be"]),
    ],
)
def test_bash_round_trip_as_bash_splits_the_line(filled, line, words, expected):
    done = bash_complete(filled, words, len(words) - 1, line)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == expected


def test_bash_round_trip_falls_back_to_files(filled, tmp_path):
    (tmp_path / "manifest-one.yaml").write_text("", encoding="utf-8")
    current = str(tmp_path / "manifest-o")
    done = bash_complete(filled, ["kidx", "apply", "-f", current], 3, f"kidx apply -f {current}")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [str(tmp_path / "manifest-one.yaml")]


def test_store_given_before_the_command_is_honoured(kidx_process, store, seed_bundle, tmp_path):
    import json as _json

    bundle = tmp_path / "seed.json"
    bundle.write_text(_json.dumps(seed_bundle))
    other = tmp_path / "other-store"
    assert kidx_process("apply", "-f", str(bundle), "--store", str(other)).code == 0
    result = kidx_process("__complete", "--store", str(other), "get", "env", "liger-bench-nvidia-h1")
    assert result.out == "liger-bench-nvidia-h100-80gb-hbm3\n"


def test_values_of_flags_that_are_not_names(complete):
    assert complete("get", "runs", "--sort-by", ".spec.timing.latencyNs.m") == [
        ".spec.timing.latencyNs.median", ".spec.timing.latencyNs.mean",
        ".spec.timing.latencyNs.min", ".spec.timing.latencyNs.max"]
    assert complete("get", "runs", "--sort-by", "-.spec.st") == ["-.spec.status"]
    assert complete("get", "runs", "--sort-by", ".metadata.name,.spec.stat") == [".metadata.name,.spec.status"]
    assert complete("get", "runs", "--field-selector", "spec.st") == ["spec.status="]
    assert complete("get", "runs", "--field-selector", "spec.status=passed,metadata.n") == [
        "spec.status=passed,metadata.name="]
    assert complete("get", "runs", "--field-selector", "spec.status=") == []
    assert complete("get", "environments", "--field-selector", "spec.hardware.p") == ["spec.hardware.product="]
    assert complete("get", "runs", "-L", "") == ["app", "team", "tier", "vendor"]  # keys in the store
    assert complete("get", "runs", "--label-columns", "app,ti") == ["app,tier"]
    assert complete("get", "runs", "-L", "app=") == []
    assert complete("get", "--sort-by", "") == []  # no type yet: nothing to offer, and no names
    for flag in ("--limit", "--references", "--revision"):
        assert complete("get", "runs", flag, "") == []
    assert complete("delete", "runs", "--dry-run", "s") == ["server"]


@pytest.mark.slow
def test_bash_in_a_terminal_inserts_label_values_once(filled):
    """Through a real interactive bash and readline, where `-l key=` once became `key==value`."""
    import pty
    import select
    import time

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")

    def typed(text: str) -> str:
        pid, fd = pty.fork()
        if pid == 0:  # the child: an interactive bash with kidx completion loaded
            os.environ.update({"PS1": "$ ", "KIDX_STORE": str(filled), "NO_COLOR": "1",
                               "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"})
            os.execv(bash, [bash, "--norc", "--noprofile", "-i"])

        def read(seconds: float, until: bytes = b"") -> bytes:
            out, end = b"", time.time() + seconds
            while time.time() < end and not (until and until in out):
                if select.select([fd], [], [], 0.05)[0]:
                    try:
                        out += os.read(fd, 4096)
                    except OSError:
                        break
            return out

        try:
            read(5, b"$ ")
            os.write(fd, b"source <(kidx completion bash); echo loaded\n")
            read(10, b"loaded")
            read(1, b"$ ")
            os.write(fd, text.encode() + b"\t")
            shown = read(3)
            os.write(fd, b"\x15exit\n")
            read(2)
        finally:
            os.close(fd)
            os.waitpid(pid, 0)
        return shown.decode(errors="replace")

    assert "-l tier=" in typed("kidx get runs -l ti")
    echoed = typed("kidx get protocols -l team=")  # one value in the store: readline inserts it
    assert "team=alpha" in echoed and "==" not in echoed


def test_values_written_after_an_equals_sign(complete):
    assert complete("get", "runs", "-o=j") == ["-o=json", "-o=jsonpath=", "-o=jsonpath-file="]
    assert complete("get", "runs", "-l=app=w") == ["-l=app=web"]
    assert complete("get", "runs", "--selector=ti") == ["--selector=tier="]
    assert complete("get", "runs", "--sort-by=-.spec.st") == ["--sort-by=-.spec.status"]
    assert complete("get", "runs", "--field-selector=spec.st") == ["--field-selector=spec.status="]
    assert complete("apply", "-f=ma") == ["__files__"]
    assert complete("get", "runs", "--no-headers=x") == []


def _typer_commands() -> dict:
    """Every command by its path ("get", "import bundle"): a group's subcommands, not the group."""
    import typer

    from kidx.cli.app import COMMANDS, build_app

    commands = {}
    for name, command in typer.main.get_command(build_app(list(COMMANDS))).commands.items():
        subcommands = getattr(command, "commands", None)
        commands.update({f"{name} {sub}": each for sub, each in subcommands.items()} if subcommands
                        else {name: command})
    return commands


def _options(command) -> list:
    """The command's options, as typer's parameters hold them."""
    return [param for param in command.params if param.param_type_name == "option"]


def test_completion_offers_every_flag_of_every_command_and_knows_which_take_a_value():
    """Compared subcommand by subcommand: each is offered its own flags, no other's."""
    from kidx.cli.completion import _VALUED, COMMAND_FLAGS, command_flags, command_path

    commands = _typer_commands()
    flags = {path: list(dict.fromkeys(flag for option in _options(command) for flag in option.opts
                                      + option.secondary_opts if flag not in ("-h", "--help")))
             for path, command in commands.items()}
    valued = {flag for command in commands.values() for option in _options(command) if not option.is_flag
              for flag in option.opts}
    assert {path: command_flags(path) for path in commands} == flags, (
        f"kidx/cli/completion.py's COMMAND_FLAGS should read { {p: f for p, f in flags.items() if p in COMMAND_FLAGS} }")
    assert set(COMMAND_FLAGS) <= set(commands)
    assert all(command_path(path.split()) == path for path in commands)
    assert _VALUED == valued, f"kidx/cli/completion.py's _VALUED should read {sorted(valued)}"


def test_completion_offers_every_output_format_each_command_takes(complete, kidx, filled):
    """-o values come from the printer table, and are exactly what each command (each
    subcommand) accepts: the values its refusal of an unknown format lists."""
    from kidx.output.printers import PRINTERS, printer

    commands = _typer_commands()
    with_output = {path for path, command in commands.items() for option in _options(command)
                   if "--output" in option.opts}
    assert {path.split()[0] for path in with_output} <= {command.split()[0] for command in PRINTERS}
    for path in sorted(with_output):
        offered = complete(*path.split(), "x", "-o", "")
        if printer(path).to_file:
            assert offered == ["__files__"], path
            continue
        arguments = [word for param in commands[path].params if param.param_type_name == "argument"
                     for word in (["runs", "x"] if param.nargs == -1 else ["runs"])]
        arguments = {"history": ["runs", "x", "--revision", "1"],  # -o prints one revision
                     "record": ["liger", "x"]}.get(path, arguments)
        code, out, err = kidx(*path.split(), *arguments, "-o", "unknown", store_path=filled)
        assert code != 0 and out == "", path
        allowed = err.removeprefix('error: unable to match a printer suitable for the output format "unknown", '
                                   "allowed formats are: ")
        assert allowed != err, (path, err)
        assert sorted({value.rstrip("=") for value in offered}) == allowed.strip().split(","), path
