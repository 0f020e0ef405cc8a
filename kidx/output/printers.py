"""Every command's printers, in one table: the ``-o`` values it takes with their help and,
for ``get``, what each format needs loaded and which renderer prints it.

``-o`` validation (``check_output``), the options' help texts (``output_help``) and shell
completion (``completion_values``) read this table, so a format is added here once (and,
for ``get``, its renderer in ``output/listing.py``). A value a command does not print is
refused in one wording, kubectl's for ``get``: ``unable to match a printer suitable for
the output format "X", allowed formats are: …`` with the command's formats sorted and
comma-separated.

Importing this module costs nothing but the table: the everyday commands read it."""

from __future__ import annotations

from kidx.errors import UsageError
from kidx.records import NamedTuple

# -o wide and -o csv|tsv of runs show the speed of light, which reads each run's workload
# (its cost) and environment (its peaks): the referenced objects these formats attach
SPEED_OF_LIGHT = frozenset({"workload", "environment"})


class Format(NamedTuple):
    """One ``-o`` value. ``value`` is written as in the help: ``json``, or ``csv=SPEC``
    for a format that takes an argument after ``=``."""

    value: str
    note: str = ""  # said after the value in the help, in parentheses
    # get: what each listed object is loaded as when no path is printed or sorted by
    # (kidx.operations.select.get.LoadMode's value: names, table, manifests); "table" also means
    # the printed values are columns, which the catalog's cached values may answer
    load: str = "manifests"
    shows: frozenset[str] = frozenset()  # referenced objects the printed columns read
    # the renderer, by its name in the RENDERERS of the command's printing module (get:
    # kidx.output.listing; compare, series: kidx.output.analysis_printing; the others:
    # kidx.output.to_printer)
    render: str = ""

    @property
    def name(self) -> str:
        return self.value.partition("=")[0]

    @property
    def takes_argument(self) -> bool:
        return "=" in self.value

    @property
    def completion(self) -> str:
        """What completion offers: ``csv=`` for ``csv=SPEC``."""
        name, equals, _ = self.value.partition("=")
        return name + equals

    @property
    def help(self) -> str:
        return f"{self.value} ({self.note})" if self.note else self.value


class Printer(NamedTuple):
    formats: tuple[Format, ...] = ()
    before: str = ""  # the help's words before the list of formats
    after: str = ""  # and after it
    to_file: str = ""  # -o names a file to write (plot, export): its help, whole
    default: Format | None = None  # what prints without -o (get: a table); not an -o value

    @property
    def names(self) -> list[str]:
        """The allowed ``-o`` values, sorted, as the refusal lists them."""
        return sorted({format.name for format in self.formats})

    def find(self, name: str, with_argument: bool) -> Format | None:
        for format in self.formats:
            if format.name == name and format.takes_argument == with_argument:
                return format
        return None


def _help(printer: Printer) -> str:
    if printer.to_file:
        return printer.to_file
    shown = [format.help for format in printer.formats]
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
    return f"{printer.before}{listed}{printer.after}."


# compare and series: renderers of kidx.output.analysis_printing
_ANALYSIS = Printer((
    Format("table", render="table"),
    Format("wide", "with achieved bandwidth and share of peak", shows=SPEED_OF_LIGHT, render="table"),
    Format("json", render="json"), Format("yaml", render="yaml"), Format("csv", render="delimited"),
    Format("tsv", render="delimited"), Format("markdown", "for a pull request", render="markdown"),
))
# the families of kidx.output.to_printer: manifests (yaml, json) and name outcomes (names,
# lines: what storing did, the default)
_OUTCOMES = Format("outcomes", render="lines")
_MANIFESTS = Printer((Format("name", "names only", render="names"), Format("yaml", render="yaml"),
                      Format("json", render="json")),
                     after=": print the manifests instead of storing them", default=_OUTCOMES)
_NAMES = Printer((Format("name", render="names"),), before="Only ", after=": print object names without the verb",
                 default=_OUTCOMES)

# keyed by the command's path, as typed: "get", "import bundle", "env capture"; a group's
# own row ("import") is its subcommands' that have none of their own
PRINTERS: dict[str, Printer] = {
    "get": Printer(
        (
            Format("wide", load="table", shows=SPEED_OF_LIGHT, render="tables"),
            Format("name", load="names", render="names"),
            Format("yaml", render="documents"),
            Format("json", render="documents"),
            Format("csv", load="table", shows=SPEED_OF_LIGHT, render="delimited"),
            Format("tsv", load="table", shows=SPEED_OF_LIGHT, render="delimited"),
            Format("csv=SPEC", load="table", render="delimited"),
            Format("tsv=SPEC", load="table", render="delimited"),
            Format("jsonpath=TEMPLATE", render="jsonpath"),
            Format("jsonpath-file=FILE", render="jsonpath"),
            Format("custom-columns=SPEC", load="table", render="custom_columns"),
            Format("custom-columns-file=FILE", load="table", render="custom_columns"),
        ),
        default=Format("table", load="table", render="tables"),
    ),
    "compare": _ANALYSIS,
    "series": _ANALYSIS,
    "plot": Printer(to_file="FILE.svg or FILE.png (needs kidx[plot]), or FILE.csv for the points."),
    "export": Printer(to_file="The bundle file to write ('-': standard output)."),
    "apply": _NAMES,
    "delete": _NAMES,
    "import": _MANIFESTS,  # every format's (import liger, import nvbench, …)
    "import bundle": _NAMES,
    "record": _MANIFESTS,
    "env capture": Printer((Format("yaml", "default", render="yaml"), Format("json", render="json"),
                            Format("name", "with --apply", render="names")),
                           after=": the format of the printed manifest", default=Format("yaml", render="yaml")),
    "history": Printer((Format("yaml", "default", render="yaml"), Format("json", render="json")),
                       before="With --revision: ", default=Format("yaml", render="yaml")),
    "api-resources": Printer((Format("wide"), Format("name"), Format("json"), Format("yaml"))),
    "version": Printer((Format("json", render="json"), Format("yaml", render="yaml"))),
    "fsck": Printer((Format("json", render="json"),), after=": the report as JSON",
                    default=Format("text", render="text")),
    "summary": Printer((Format("json", render="json"), Format("yaml", render="yaml"),
                        Format("csv", render="delimited"), Format("tsv", render="delimited")),
                       before="A table, or ", after=" of the same rows", default=Format("table", render="table")),
}


def output_help(command: str) -> str:
    """The help of ``command``'s ``-o``."""
    return _help(PRINTERS[command])


def printer(command: str) -> Printer | None:
    """The printer of ``command``'s path ("import liger": its group's, "import")."""
    return PRINTERS.get(command) or PRINTERS.get(command.partition(" ")[0])


def completion_values(command: str) -> list[str]:
    """What completion offers after ``command -o`` (a path: "import bundle"): each format's
    name, ``=`` ended for one that takes an argument, sorted by name (a bare name before
    its ``=`` form)."""
    found = printer(command)
    if found is None:
        return []
    values = {(format.name, format.takes_argument): format.completion for format in found.formats}
    return [values[key] for key in sorted(values)]


def rejected_output(value: str, command: str) -> UsageError:
    """The error for an ``-o`` value that ``command`` does not print."""
    return UsageError(f'unable to match a printer suitable for the output format "{value}", '
                      "allowed formats are: " + ",".join(PRINTERS[command].names))


def check_output(command: str, value: str | None, default: str | None = None) -> str | None:
    """``value`` when ``command`` prints it; ``default`` when no ``-o`` was given."""
    if value is None:
        return default
    if value not in PRINTERS[command].names:
        raise rejected_output(value, command)
    return value
