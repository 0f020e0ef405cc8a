"""Rewrite what is generated from each importer's FORMAT_DOC: the tables of
docs/commands/import.md (the list of formats, and each format's table of fields).

    python tests/update_formats.py

A new importer brings its FORMAT_DOC (kidx.formats.framework.FormatDoc) and its entry
in IMPORTERS (kidx/formats/framework.py: its module and the command's help); this fills
in the page. tests/formats/test_format_docs.py fails while the page is stale. Read the
diff before committing it.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kidx.formats.framework import IMPORTERS, FormatDoc  # noqa: E402

PAGE = REPO / "docs" / "commands" / "import.md"
TABLE_HEAD = "| FORMAT | reads | one run per |\n| --- | --- | --- |\n"


def format_docs() -> dict[str, FormatDoc]:
    """Each format's FORMAT_DOC, in IMPORTERS' order."""
    return {name: importlib.import_module(info.module).FORMAT_DOC for name, info in IMPORTERS.items()}


# --- docs/commands/import.md -----------------------------------------------------------

def format_table(docs: dict[str, FormatDoc]) -> str:
    return TABLE_HEAD + "".join(f"| `{name}` | {doc.reads} | {doc.one_run_per} |\n" for name, doc in docs.items())


def fields_table(doc: FormatDoc) -> str:
    (first, second), *rows = doc.fields
    return f"| {first} | {second} |\n| --- | --- |\n" + "".join(f"| {a} | {b} |\n" for a, b in rows)


def sections(text: str, names: list[str]) -> dict[str, tuple[int, int]]:
    """Where each format's part of the page is: from its ``## name`` heading to the next
    format's."""
    starts = [text.index(f"\n## {name}\n") for name in names]
    return {name: (start, end) for name, start, end in zip(names, starts, [*starts[1:], len(text)], strict=True)}


def table_at(text: str, start: int, end: int, head: str) -> tuple[int, int]:
    """The span of the table that begins with the line ``head`` between start and end;
    (at, at) where there is none: right after the heading at ``start``."""
    found = text.find("\n" + head + "\n", start, end)
    if found < 0:
        at = text.index("\n", start + 1) + 1
        return at, at
    at = stop = found + 1
    while stop < len(text) and text.startswith("|", stop):
        stop = text.index("\n", stop) + 1
    return at, stop


def page_text(docs: dict[str, FormatDoc]) -> str:
    text = PAGE.read_text(encoding="utf-8")
    at, stop = table_at(text, 0, len(text), TABLE_HEAD.splitlines()[0])
    text = text[:at] + format_table(docs) + text[stop:]
    for name in docs:  # a new format's part of the page starts at the end, with its table
        if f"\n## {name}\n" not in text:
            text = text.rstrip("\n") + f"\n\n## {name}\n"
    for name, doc in docs.items():
        start, end = sections(text, list(docs))[name]
        (first, second), *_ = doc.fields
        at, stop = table_at(text, start, end, f"| {first} | {second} |")
        table = fields_table(doc)
        text = text[:at] + ("\n" + table + "\n" if at == stop else table) + text[stop:]
    return text


if __name__ == "__main__":
    text = page_text(format_docs())
    changed = text != PAGE.read_text(encoding="utf-8")
    PAGE.write_text(text, encoding="utf-8")
    print(f"{PAGE.relative_to(REPO)}: {'rewritten' if changed else 'unchanged'}")
