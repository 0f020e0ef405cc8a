"""kubectl's ``ToPrinter``: a command's ``-o`` value, checked against the printer table
(``kidx.output.printers``), turned into the callable that renders what the command prints.

The commands that print the same thing share a family of renderers, named by the table's
rows (``Format.render``) and kept in ``RENDERERS`` here:

- manifests, as ``yaml`` or ``json``: a document in, its text out (``history --revision``,
  ``version``, ``env capture``, ``import``/``record -o yaml|json``, ``summary -o json|yaml``);
- name outcomes, as ``names`` (``-o name``) or ``lines`` (no ``-o``): the lines of what
  ``apply``, ``delete``, ``import``, ``record`` and ``env capture --apply`` did, each a
  ``NamedLine``, printed whole or as its object's name only.

A command that prints a thing of its own passes its renderers (``fsck``: ``reports.FSCK``;
``summary``: ``summary.RENDERERS``), named by its rows as well.

So a command asks for its printer and calls it; it never compares an output format
(tests/quality/test_printing_seam.py holds that)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kidx.output.printers import PRINTERS, Format, check_output
from kidx.records import NamedTuple


class NamedLine(NamedTuple):
    """One object's line of an outcome: ``KIND/NAME`` and the whole line (``KIND/NAME created``)."""

    name: str
    line: str


def render_yaml(document: Any) -> str:
    from kidx.output.serialize import to_yaml

    return to_yaml(document)


def render_json(document: Any) -> str:
    from kidx.output.serialize import to_json

    return to_json(document)


def render_names(lines: Iterable[NamedLine]) -> str:
    return "".join(line.name + "\n" for line in lines)


def render_lines(lines: Iterable[NamedLine]) -> str:
    return "".join(line.line + "\n" for line in lines)


# the families' renderers by the name the printer table's rows give them (tests/output/
# test_printers.py holds the two equal)
MANIFESTS: dict[str, Callable[[Any], str]] = {"yaml": render_yaml, "json": render_json}
NAME_OUTCOMES: dict[str, Callable[[Iterable[NamedLine]], str]] = {"names": render_names, "lines": render_lines}
RENDERERS: dict[str, Callable[[Any], str]] = {**MANIFESTS, **NAME_OUTCOMES}


class Printing(NamedTuple):
    """A command's printer for one ``-o`` value: its row of the table and its renderer."""

    format: Format
    render: Callable[..., str]

    @property
    def prints_manifests(self) -> bool:
        """Whether it prints manifests (instead of what storing them did)."""
        return self.format.render in MANIFESTS

    @property
    def names_only(self) -> bool:
        return self.format.render == "names"

    @property
    def outcomes(self) -> Callable[[Iterable[NamedLine]], str]:
        """The name outcomes printer that goes with it, for what storing did: ``names``
        with ``-o name``, else whole ``lines`` (``env capture -o yaml --apply``)."""
        return render_names if self.names_only else render_lines


def to_printer(command: str, value: str | None, renderers: Mapping[str, Callable[..., str]] = RENDERERS) -> Printing:
    """The printer of ``command``'s ``-o`` ``value`` (checked: a value the table does not
    list for it is refused); without ``-o``, the table's default for the command. Its
    renderer is the one of ``renderers`` (the families', unless the command has its own)
    that the row names."""
    printer = PRINTERS[command]
    name = check_output(command, value)
    found = printer.default if name is None else printer.find(name, False)
    assert found is not None, (command, value)  # the table gives a default to each command here
    return Printing(found, renderers[found.render])
