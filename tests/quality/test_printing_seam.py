"""No command compares an output format: each asks the printer table for its printer
(kidx.output.to_printer, kubectl's ToPrinter) and calls it. A source scan of kidx/cli for a
comparison of an ``-o`` value (``output_format == …``, ``fmt in (…)``, ``== "json"`` …);
the printer table's own modules, outside kidx/cli, are where formats are named.

``REMAINING`` lists the places not converted yet, by module and count (none now): the test
fails on a new comparison, and on a module listed that has fewer (then strike it)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import kidx

CLI = Path(kidx.__file__).parent / "cli"

FORMATS = "name|json|yaml|csv|tsv|wide|table|markdown"
COMPARISON = re.compile(
    r"\b(?:output_format|fmt)\s*(?:==|!=|\bnot in\b|\bin\b)"  # the -o value compared
    rf"|(?:==|!=)\s*[\"'](?:{FORMATS})[\"']"  # a format's name compared
    rf"|\bin\s*\(\s*[\"'](?:{FORMATS})[\"']"  # a tuple of format names
)

REMAINING: dict[str, int] = {}


def comparisons() -> Counter[str]:
    found: Counter[str] = Counter()
    for module in sorted(CLI.rglob("*.py")):
        for line in module.read_text(encoding="utf-8").splitlines():
            if COMPARISON.search(line):
                found[module.relative_to(CLI).as_posix()] += 1
    return found


def test_no_command_compares_an_output_format():
    assert dict(comparisons()) == REMAINING


def test_the_scan_finds_a_comparison():
    assert COMPARISON.search('    out.data(to_json(x) if output_format == "json" else to_yaml(x))')
    assert COMPARISON.search('    if fmt in ("csv", "tsv"):')
    assert COMPARISON.search('    keep = value not in ("yaml", "json")')
    assert not COMPARISON.search('    if export_format == "bundle":')  # --format, not -o
    assert not COMPARISON.search("    if output_format is None:")
