"""Reading ``-f`` arguments into documents, collecting every problem instead of stopping.

Sources: files (any extension when named explicitly), folders (``.yaml``, ``.yml``,
``.json`` children in lexical order; sub-folders with ``recursive``) and ``-`` for standard
input. Text must be UTF-8 (a UTF-8 or UTF-16 byte-order mark is tolerated). Each parsed
document is flattened: a ``List`` yields its items, a bundle (a document without
``apiVersion`` whose values are manifests, the seed's form) yields its values.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import BinaryIO

from kidx.errors import Location, Problem, UsageError
from kidx.manifests.document import Document
from kidx.manifests.locate import LOCATE_LIMIT
from kidx.manifests.parsing import ParseError, looks_like_json, parse_json_stream, parse_yaml_stream
from kidx.manifests.values import MAX_NODES, DataError, check_json_data
from kidx.units import BINARY_STEPS

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "STDIN"
MAX_INPUT_ENV = "KIDX_MAX_INPUT_SIZE"
# far above a real batch, yet bounded: parsing needs several times the text's size in memory
DEFAULT_MAX_INPUT_SIZE = 256 << 20
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_CHUNK = 1 << 20


@dataclass(slots=True)
class ReadResult:
    documents: list[Document] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # source -> text, to locate lines on error


def expand_sources(arguments: Iterable[str], recursive: bool) -> list[str]:
    """Turn ``-f`` values into an ordered list of files (and ``-`` for stdin)."""
    files: list[str] = []
    stdin_seen = False
    for argument in arguments:
        for path in (part for part in argument.split(",") if part):
            if path == "-":
                if stdin_seen:
                    raise UsageError("standard input cannot be used for multiple arguments")
                stdin_seen = True
                files.append("-")
            elif os.path.isdir(path):
                files.extend(_folder_files(path, recursive))
            elif os.path.exists(path):
                files.append(path)
            else:
                raise UsageError(f'the path "{path}" does not exist')
    return files


def _folder_files(folder: str, recursive: bool) -> list[str]:
    found: list[str] = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_dir():
            if recursive:
                found.extend(_folder_files(entry.path, recursive))
        elif entry.name.endswith(MANIFEST_SUFFIXES) and entry.is_file():
            found.append(entry.path)  # a FIFO or a device found in a folder is not read: it could wait forever
    return found


def read_sources(files: list[str], stdin: BinaryIO | None = None) -> ReadResult:
    result = ReadResult()
    limit = max_input_size()
    for path in files:
        source = STDIN if path == "-" else path
        try:
            raw = _read_limited(stdin or _stdin(), limit) if path == "-" else read_bounded(path)
        except OSError as exc:
            result.problems.append(Problem(Location(source), f"cannot read: {exc.strerror or exc}"))
            continue
        except InputTooLarge as exc:
            result.problems.append(Problem(Location(source), exc.message))
            continue
        if raw is None:
            result.problems.append(Problem(Location(source), _too_large(limit)))
            continue
        read_text(_decode(raw, source, result), source, result, is_json=path.endswith(".json"))
    return result


class InputTooLarge(Exception):
    """A source holds more than the input limit (``message`` says which and how to raise it)."""

    def __init__(self, limit: int):
        super().__init__(_too_large(limit))
        self.message = _too_large(limit)


def read_bounded(path: str, regular_only: bool = False) -> bytes:
    """All of one file, bounded as apply bounds a source (``KIDX_MAX_INPUT_SIZE``).

    Raises OSError when it cannot be read and InputTooLarge past the limit (``/dev/zero``
    is refused there, not read forever). With ``regular_only`` anything but a regular
    file (a FIFO, a device, a folder) is refused before a byte is read: opening does not
    wait for a FIFO's writer, so a FIFO cannot make a read hang.
    """
    limit = max_input_size()
    flags = os.O_RDONLY | (os.O_NONBLOCK if regular_only else 0)
    descriptor = os.open(path, flags)
    if regular_only:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            os.close(descriptor)
            raise OSError(errno.EINVAL, f"not a regular file ({file_type(mode)})")
        os.set_blocking(descriptor, True)
    with os.fdopen(descriptor, "rb") as handle:
        data = _read_limited(handle, limit)
    if data is None:
        raise InputTooLarge(limit)
    return data


def file_type(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "not a regular file"


def _stdin() -> BinaryIO:
    # a closed standard input (``kidx apply -f - <&-``) leaves sys.stdin None
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise OSError(errno.EBADF, "standard input is closed")
    return stream


def max_input_size() -> int:
    """The most bytes one source may hold: KIDX_MAX_INPUT_SIZE, else 256 MiB."""
    configured = os.environ.get(MAX_INPUT_ENV)
    if not configured:
        return DEFAULT_MAX_INPUT_SIZE
    match = re.fullmatch(r"\s*(\d+)\s*([KMG]i?)?\s*", configured)
    if match is None:
        raise UsageError(
            f'{MAX_INPUT_ENV}="{configured}" is not a size: give bytes, or a number with Ki, Mi or Gi (e.g. 512Mi)'
        )
    return int(match.group(1)) * _SIZE_UNITS[(match.group(2) or "")[:1]]


def _read_limited(stream: BinaryIO, limit: int) -> bytes | None:
    """All of ``stream``, or None once it passes ``limit`` bytes (``/dev/zero`` never ends)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return None


def _too_large(limit: int) -> str:
    return f"input is larger than {_size_text(limit)}, the limit for one source (set {MAX_INPUT_ENV} to change it)"


def _size_text(size: int) -> str:
    for unit, factor in BINARY_STEPS[1:]:  # GiB at most, as the limit is written (…G)
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


def _decode(raw: bytes, source: str, result: ReadResult) -> str | None:
    try:
        if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
            return raw.decode("utf-16")
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        result.problems.append(
            Problem(Location(source, line=line), f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}")
        )
        return None


def read_text(text: str | None, source: str, result: ReadResult, is_json: bool = False) -> None:
    """Parse one source's text and append its flattened documents or its problems."""
    if text is None:
        return
    result.texts[source] = text
    if not text or text.isspace():  # isspace stops at the first other character: cheap
        result.problems.append(Problem(Location(source), "no objects in the input (the file is empty)"))
        return
    try:
        parsed = _parse(text, is_json)
    except ParseError as exc:
        result.problems.append(Problem(Location(source, exc.index, exc.line, exc.path), exc.message))
        return
    if not parsed:
        result.problems.append(Problem(Location(source), "no objects in the input (only comments or empty documents)"))
    # values a text can legitimately hold; only aliases expand beyond this
    budget = [10 * len(text) + MAX_NODES]
    for item in parsed:
        if not isinstance(item.data, dict):  # not a manifest; say first if it is not even JSON data
            try:
                check_json_data(item.data, min(MAX_NODES, budget[0]))
            except DataError as exc:
                result.problems.append(Problem(Location(source, item.index, item.line, exc.path or None), exc.message))
                continue
        start = len(result.documents)
        _flatten(item.data, source, item.index, item.line, None, Location(source, item.index, item.line), result)
        for position in range(start, len(result.documents)):
            document = result.documents[position]
            try:
                budget[0] -= check_json_data(document.body, min(MAX_NODES, budget[0]))
            except DataError as exc:
                del result.documents[position:]
                path = f"{document.member}.{exc.path}" if document.member and exc.path else document.member or exc.path
                line = item.line
                if exc.path and len(text) <= LOCATE_LIMIT:  # name the field's own line
                    from kidx.manifests.locate import locate_line

                    line = locate_line(text, item.index, path) or item.line
                result.problems.append(Problem(Location(source, item.index, line, path or None), exc.message))
                break


def _parse(text: str, is_json: bool):
    """JSON for .json files and for text that starts like JSON, else YAML.

    Text that starts with ``{`` but is not JSON syntax may still be YAML (``{kind: List}``);
    outside .json files it gets a second chance as YAML. A bad value in valid JSON syntax
    (NaN, a duplicate key) is not retried, and when YAML fails too, the JSON error stands.
    """
    if is_json or not looks_like_json(text):
        return parse_json_stream(text) if is_json else parse_yaml_stream(text)
    try:
        return parse_json_stream(text)
    except ParseError as json_error:
        if not json_error.syntax:
            raise
        try:
            return parse_yaml_stream(text)
        except ParseError:
            raise json_error from None


def _flatten(data, source, index, line, member, location, result: ReadResult) -> None:
    if not isinstance(data, dict):
        result.problems.append(Problem(location, f"expected a manifest (a mapping), found {_json_type(data)}"))
        return
    kind = data.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(data.get("items"), list):
        for position, item in enumerate(data["items"]):
            name = f"items[{position}]" if member is None else f"{member}.items[{position}]"
            _flatten(item, source, index, line, name, location, result)
        return
    if "apiVersion" not in data and "kind" not in data and data and all(
        isinstance(value, dict) and "apiVersion" in value for value in data.values()
    ):
        for key, value in data.items():  # a bundle, e.g. {"run": …, "protocol": …}
            _flatten(value, source, index, line, key if member is None else f"{member}.{key}", location, result)
        return
    result.documents.append(Document(data, source, index, line, member))


def _json_type(value) -> str:
    return {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(value), "null"
    )
