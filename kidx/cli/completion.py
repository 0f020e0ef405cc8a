"""Shell completion: the scripts, and the candidates behind them.

The scripts call ``kidx __complete WORD… CURRENT`` and offer the lines it prints. The
candidates come from the command table, the kind registry (types) and the store (names,
label keys and values), so completion knows exactly what the store holds. ``__complete``
is answered before the argument parser is even built: completion runs on every Tab.
"""

from __future__ import annotations

from collections.abc import Iterable

# every command's flags by its path ("get", "import bundle", "env capture"), in the order
# typer lists them, and below every flag that takes a value: kept here so that __complete
# starts without typer, and held equal to the commands by tests/cli/test_completion.py
# (which prints the lists to paste when not); an import format's are its ImporterInfo's
COMMAND_FLAGS: dict[str, list[str]] = {
    "apply": ["--filename", "-f", "--recursive", "-R", "--dry-run", "--output", "-o", "--store"],
    "get": ["--output", "-o", "--selector", "-l", "--field-selector", "--show-labels", "--label-columns", "-L",
            "--no-headers", "--show-kind", "--sort-by", "--ignore-not-found", "--references", "--limit", "--store"],
    "describe": ["--selector", "-l", "--store"],
    "delete": ["--filename", "-f", "--recursive", "-R", "--selector", "-l", "--all", "--ignore-not-found",
               "--dry-run", "--output", "-o", "--store"],
    "diff": ["--filename", "-f", "--recursive", "-R", "--store"],
    "digest": ["--filename", "-f", "--recursive", "-R", "--store"],
    "explain": ["--recursive", "--max-depth"],
    "history": ["--revision", "--output", "-o", "--no-headers", "--store"],
    "import bundle": ["--dry-run", "--output", "-o", "--store"],
    "record": ["--environment", "--capture", "--no-capture", "--label", "--results", "--library", "--op", "--mode",
               "--level", "--timer", "--cache", "--max-noise", "--max-time", "--min-time", "--processes",
               "--interleave", "--gpus", "--recover", "--dry-run", "--output", "-o", "--store"],
    "env capture": ["--output", "-o", "--apply", "--name", "--measure-peaks", "--dry-run", "--store"],
    "api-resources": ["--output", "-o", "--no-headers", "--sort-by"],
    "completion": [],
    "version": ["--output", "-o"],
    "fsck": ["--repair", "--from-bundle", "--output", "-o", "--store"],
    "gc": ["--dry-run", "--store"],
    "export": ["--output", "-o", "--selector", "-l", "--format", "--store"],
    "compare": ["--selector", "-l", "--field-selector", "--references", "--by", "--baseline", "--threshold",
                "--alpha", "--fail-on-regression", "--fail-on-inconclusive", "--allow-empty", "--only", "--aggregate",
                "--force", "--metric", "--output", "-o", "--store"],
    "series": ["--selector", "-l", "--field-selector", "--references", "--label", "--baseline", "--threshold",
               "--alpha", "--fail-on-regression", "--fail-on-inconclusive", "--allow-empty", "--tail", "--output",
               "-o", "--store"],
    "plot": ["--x", "--output", "-o", "--selector", "-l", "--field-selector", "--references", "--by", "--title",
             "--y", "--store"],
    "push": ["--selector", "-l", "--force", "--dry-run", "--store"],
    "pull": ["--selector", "-l", "--force", "--dry-run", "--store"],
    "publish": ["--selector", "-l", "--field-selector", "--references", "--title", "--base-url", "--baseline",
                "--release-label", "--threshold", "--alpha", "--dry-run", "--store"],
    "summary": ["--selector", "-l", "--release-label", "--output", "-o", "--no-headers", "--store"],
}
GROUPS = ("import", "env")  # commands whose first word is a subcommand
TYPED_COMMANDS = ("get", "describe", "delete", "history", "explain", "export")
FILE_FLAGS = ("-f", "--filename", "--store", "--environment", "--results")
SHELLS = ("bash", "zsh", "fish")
FILES = "__files__"  # tells the script to fall back to file-name completion


def _store(location: str | None):
    """The store the line names (``--store PATH`` typed earlier on it), resolved as a
    command resolves it."""
    from kidx.api.locations import backend_store

    return backend_store(location)


def _store_argument(words: list[str]) -> str | None:
    """The last ``--store PATH`` typed earlier on the line, if any."""
    location = None
    for index, word in enumerate(words):
        if word == "--store" and index + 1 < len(words):
            location = words[index + 1]
        elif word.startswith("--store="):
            location = word.split("=", 1)[1]
    return location


def subcommands(group: str) -> list[str]:
    """The subcommands of ``group``, in the order its help lists them."""
    if group == "import":
        from kidx.formats.framework import IMPORTERS

        return [*IMPORTERS, "bundle"]
    return ["capture"] if group == "env" else []


def command_path(words: list[str]) -> str:
    """The command the words name: its first word, and a group's subcommand after it."""
    if words[0] in GROUPS and len(words) > 1 and words[1] in subcommands(words[0]):
        return f"{words[0]} {words[1]}"
    return words[0]


def command_flags(path: str) -> list[str]:
    """The flags of the command at ``path``, in the order typer lists them."""
    group, _, format_name = path.partition(" ")
    if group == "import" and path not in COMMAND_FLAGS:
        from kidx.formats.framework import IMPORTERS

        info = IMPORTERS.get(format_name)
        if info is None:
            return []
        return ["--environment", *(["--library"] if info.library_option else []), "--dry-run", "--output", "-o",
                "--store", *(f"--{option}" for option in info.options)]
    return COMMAND_FLAGS.get(path, [])


def _type_words() -> list[str]:
    from kidx.kinds.registry import registry

    words: list[str] = []
    for info in registry().kinds:
        words.extend([info.plural, info.singular, *info.short_names])
    return sorted(set(words)) + ["all"]


def _names(type_word: str, prefix: str, location: str | None) -> list[str]:
    from kidx.kinds.registry import registry

    try:
        kinds = [registry().resolve(part) for part in type_word.split(",") if part != "all"]
    except Exception:
        return []
    catalog = _store(location).catalog()
    return [entry.name for info in kinds for entry in catalog.with_name_prefix(info.kind, prefix)]


def _label_candidates(current: str, location: str | None) -> list[str]:
    head, _, last = current.rpartition(",")
    head = head + "," if head else ""
    catalog = _store(location).catalog()
    if "=" in last:
        key, _, value = last.partition("=")
        key = key.rstrip("!")
        operator = last[: len(last) - len(value)]
        return [f"{head}{operator}{found}" for found in catalog.label_values(key, value)]
    return [f"{head}{key}=" for key in catalog.label_keys(last)]


def _aggregate_candidates(current: str, location: str | None) -> list[str]:
    """``--aggregate``'s keys (kidx.operations.analyse.aggregate.AGGREGATE_KEYS), ``label=`` with
    the store's label keys after it."""
    from kidx.operations.analyse.aggregate import AGGREGATE_KEYS

    found = []
    for key in AGGREGATE_KEYS:
        name, equals, _ = key.partition("=")
        if equals and current.startswith(name + equals):
            found += [f"{name}={label}" for label in _store(location).catalog().label_keys(current[len(name) + 1:])]
        elif (name + equals).startswith(current):
            found.append(name + equals)
    return found


def _path_candidates(words: list[str], current: str, flag: str) -> list[str]:
    """Field paths of the kinds named on the line: ``spec.status=`` for
    ``--field-selector`` (terms comma-separated), ``.spec.status`` for ``--sort-by``."""
    from kidx.kinds.field_paths import scalar_paths
    from kidx.kinds.registry import registry

    positional = [w for i, w in enumerate(words[1:], 1) if not w.startswith("-") and words[i - 1] not in _VALUED]
    if not positional:
        return []
    paths: list[str] = []
    for part in positional[0].split("/")[0].split(","):
        try:
            info = registry().resolve(part)
        except Exception:
            continue
        paths += [path for path in scalar_paths(info) if path not in paths]
    head, comma, last = current.rpartition(",")
    head += comma
    if flag == "--sort-by":
        descending = "-" if last.startswith("-") else ""
        last = last[len(descending):]
        return [f"{head}{descending}.{p}" for p in paths if f".{p}".startswith(last) or p.startswith(last)]
    if "=" in last:
        return []
    return [f"{head}{p}=" for p in paths if p.startswith(last)]


def candidates(words: list[str], current: str, commands: Iterable[str] = ()) -> list[str]:
    """What may come next, given the words before the cursor and the word being typed;
    ``commands`` are the command names (the entry point's, which imports this module)."""
    location = _store_argument(words)
    while words and words[0].startswith("--store"):  # a global --store before the command
        words = words[2:] if words[0] == "--store" else words[1:]
    if not words:
        return [c for c in sorted(commands) if c.startswith(current)]
    command, previous, path = words[0], words[-1], command_path(words)
    if previous in FILE_FLAGS or (command, previous) == ("fsck", "--from-bundle"):
        return [FILES]
    if previous in ("-o", "--output"):  # the command's formats, from the printer table
        from kidx.output.printers import completion_values, printer

        formats = printer(path)
        if formats is not None and formats.to_file:
            return [FILES]
        return [v for v in completion_values(path) if v.startswith(current)]
    if previous in ("-l", "--selector"):
        return _label_candidates(current, location)
    if previous in ("-L", "--label-columns"):  # label keys, comma-separated
        return [] if "=" in current else [c.removesuffix("=") for c in _label_candidates(current, location)]
    if previous in ("--field-selector", "--sort-by"):
        return _path_candidates(words, current, previous)
    if previous == "--aggregate":
        return _aggregate_candidates(current, location)
    if previous == "--dry-run":
        return [value for value in ("none", "client", "server") if value.startswith(current)]
    if previous in _VALUED:  # a value nothing can be offered for (--limit, --revision, …)
        return []
    flag, equals, value = current.partition("=")
    if equals and flag in _VALUED:  # -o=json, -l=app=web, --sort-by=.spec.x
        found = candidates([*words, flag], value, commands)
        return found if found == [FILES] else [f"{flag}={candidate}" for candidate in found]
    if current.startswith("-"):
        return [flag for flag in command_flags(path) if flag.startswith(current)]
    if command == "completion":
        return [shell for shell in SHELLS if shell.startswith(current)]
    if command == "import":
        return [f for f in subcommands(command) if f.startswith(current)] if len(words) == 1 else [FILES]
    if command == "record":
        from kidx.formats.framework import IMPORTERS

        return [f for f in IMPORTERS if f.startswith(current)] if len(words) == 1 else []
    if command == "env":
        return [c for c in subcommands(command) if c.startswith(current)] if len(words) == 1 else []
    if command in ("compare", "series", "plot"):
        return [] if previous in _VALUED else _names("runs", current, location)
    if command in TYPED_COMMANDS:
        positional = [w for i, w in enumerate(words[1:], 1) if not w.startswith("-") and words[i - 1] not in _VALUED]
        if command == "explain" or not positional:
            if "/" in current:
                type_word, _, prefix = current.partition("/")
                return [f"{type_word}/{name}" for name in _names(type_word, prefix, location)]
            return [word for word in _type_words() if word.startswith(current)]
        return _names(positional[0], current, location)
    return []


_VALUED = {"--aggregate", "--alpha", "--base-url", "--baseline", "--by", "--cache", "--dry-run", "--environment",
           "--field-selector", "--filename", "--format", "--from-bundle", "--gpus", "--label", "--label-columns",
           "--level", "--library", "--limit", "--max-depth", "--max-noise", "--max-time", "--metric", "--min-time",
           "--mode", "--name", "--only", "--op", "--output", "--processes", "--recover", "--references",
           "--release-label", "--results", "--revision", "--selector", "--sort-by", "--store", "--tail", "--threshold",
           "--timer", "--title", "--x", "--y", "-L", "-f", "-l", "-o"}


def complete(arguments: list[str], commands: Iterable[str]) -> str:
    words, current = (arguments[:-1], arguments[-1]) if arguments else ([], "")
    try:
        found = candidates(words, current, commands)
    except Exception:  # completion must never print a traceback into the user's shell
        found = []
    return "".join(f"{candidate}\n" for candidate in found)


BASH = """# kidx bash completion; load with: source <(kidx completion bash)
_kidx() {
    local IFS=$'\\n'
    local -a words
    if [[ -n "${COMP_LINE+set}" ]]; then
        # words split at blanks only: bash's COMP_WORDS are also cut at = and :
        # (COMP_WORDBREAKS), which would split "-l app=web" and "-o jsonpath="
        local line="${COMP_LINE:0:COMP_POINT}"
        IFS=$' \\t' read -r -a words <<< "$line"
        [[ -z "$line" || "$line" == *[[:blank:]] ]] && words+=("")
    else
        words=("${COMP_WORDS[@]:0:COMP_CWORD+1}")
    fi
    local candidates
    candidates=($(kidx __complete "${words[@]:1}" 2>/dev/null))
    if [[ "${candidates[0]}" == "__files__" ]]; then
        COMPREPLY=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}"))
        return
    fi
    # readline replaces only the text after the last word break (= or :) of the word
    # being typed, even when COMP_WORDS[COMP_CWORD] is that "=" itself: drop the rest
    local current="${words[${#words[@]}-1]}"
    local before="${current%"${current##*[=:]}"}"
    COMPREPLY=("${candidates[@]#"$before"}")
    [[ "${candidates[0]}" == *= ]] && compopt -o nospace 2>/dev/null
}
complete -F _kidx kidx
"""

ZSH = """#compdef kidx
# kidx zsh completion; load with: source <(kidx completion zsh)
_kidx() {
    local -a candidates
    candidates=("${(@f)$(kidx __complete "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)}")
    if [[ "${candidates[1]}" == "__files__" ]]; then
        _files
        return
    fi
    compadd -S '' -- "${candidates[@]}"
}
compdef _kidx kidx
"""

FISH = """# kidx fish completion; load with: kidx completion fish | source
function __kidx_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l found (kidx __complete $words (commandline -ct) 2>/dev/null)
    if test "$found[1]" = "__files__"
        __fish_complete_path (commandline -ct)
    else
        printf '%s\\n' $found
    end
end
complete -c kidx -f -a '(__kidx_complete)'
"""


def script(shell: str) -> str:
    from kidx.errors import UsageError

    scripts = {"bash": BASH, "zsh": ZSH, "fish": FISH}
    if shell not in scripts:
        raise UsageError(f'Unsupported shell type "{shell}".')
    return scripts[shell]
