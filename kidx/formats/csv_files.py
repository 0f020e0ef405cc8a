"""Reading CSV files with a fixed header: the CsvConverter, beside framework's JsonConverter.

A subclass names its ``header`` and what the files are (``what``), and makes each data
record's run in ``add_row``, raising framework.RecordProblems for what is wrong with it.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from kidx.formats.framework import Conversion, Converter, RecordProblems, SkippedRecord, read_text


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
