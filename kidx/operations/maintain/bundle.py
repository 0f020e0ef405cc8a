"""The export bundle: a portable, versioned JSON file holding part or all of a store.

Format ``kidx.bundle/v1`` (docs/maintenance.md#export-and-restore-backups) is one JSON object, written
one entry per line so that it diffs and greps well::

    {"format":"kidx.bundle/v1","exported":"2026-…Z","selection":"all",
    "counts":{"objects":3,"names":3,"revisions":3},
    "objects":{
    "sha256:080e…":{"apiVersion":…,"kind":…,"spec":…},
    …
    },
    "names":[
    {"kind":"BenchmarkProtocol","name":…,"digest":…,"title":…,"labels":{…},"annotations":{…},"created":…,"generation":1},
    …
    ],
    "revisions":[
    {"kind":…,"name":…,"event":"applied","digest":…,"title":…,"labels":{…},"annotations":{…},"generation":1,"recorded":…},
    …
    ],
    "checksum":"sha256:…"}

Each object is written as its exact stored (canonical) bytes, so re-hashing its
canonical form on the way back in gives its digest again; a reader checks that. The
revisions are in the order the store recorded them. ``checksum`` covers what no digest
does: the sha256 of the canonical JSON of ``{"objects": [sorted digests], "names": […],
"revisions": […]}``, so a changed time, generation, label or name is detected. Bundles
written before the checksum existed are read without that check, with a warning.

A bundle is input like any other: it is bounded as apply bounds a source, and every
object, name and revision must pass what apply checks (names, labels, the kind's
schema, nesting, 64-bit integers) before anything is restored. Nothing here touches a
store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from kidx.errors import InvalidInputError, Location, Problem
from kidx.identity.canonical import CanonicalError, canonical_json, digest_bytes
from kidx.kinds.metadata import name_error
from kidx.manifests.document import Document
from kidx.manifests.reader import InputTooLarge, read_bounded
from kidx.manifests.values import DataError, check_json_data

if TYPE_CHECKING:
    from kidx.kinds.registry import KindRegistry

DIGEST_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}$")  # a digest as a bundle names objects

FORMAT = "kidx.bundle/v1"
FORMAT_PREFIX = "kidx.bundle/"
EVENTS = ("applied", "deleted")
TOP_LEVEL = ("format", "exported", "selection", "counts", "objects", "names", "revisions", "checksum")
NO_CHECKSUM = ("has no checksum (written by a kidx from before bundles had one): its names and history "
               "are restored unverified; its objects are checked against their digests")


@dataclass(slots=True)
class BundleName:
    """A name's current state."""

    kind: str
    name: str
    digest: str
    title: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    created: str
    generation: int


@dataclass(slots=True)
class BundleRevision:
    kind: str
    name: str
    event: str  # "applied" or "deleted"
    digest: str | None
    title: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    generation: int | None
    recorded: str


@dataclass(slots=True)
class Bundle:
    objects: dict[str, bytes] = field(default_factory=dict)  # digest -> canonical bytes
    names: list[BundleName] = field(default_factory=list)
    revisions: list[BundleRevision] = field(default_factory=list)
    exported: str = ""
    selection: str = ""
    warnings: list[str] = field(default_factory=list)  # what a reader could not check


def _name_record(entry: BundleName) -> dict:
    return {
        "kind": entry.kind, "name": entry.name, "digest": entry.digest, "title": entry.title,
        "labels": entry.labels, "annotations": entry.annotations, "created": entry.created,
        "generation": entry.generation,
    }


def _revision_record(revision: BundleRevision) -> dict:
    return {
        "kind": revision.kind, "name": revision.name, "event": revision.event, "digest": revision.digest,
        "title": revision.title, "labels": revision.labels, "annotations": revision.annotations,
        "generation": revision.generation, "recorded": revision.recorded,
    }


def checksum(digests: Iterable[str], names: list, revisions: list) -> str:
    """The bundle's checksum over its object digests, names and revisions (as JSON values)."""
    return digest_bytes(canonical_json({"objects": sorted(digests), "names": names, "revisions": revisions}))


def _line(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def write_bundle(stream: BinaryIO, bundle: Bundle, progress=None) -> None:
    """Write ``bundle`` in format v1; objects are copied as stored, never re-encoded."""
    header = {
        "format": FORMAT,
        "exported": bundle.exported,
        "selection": bundle.selection,
        "counts": {"objects": len(bundle.objects), "names": len(bundle.names), "revisions": len(bundle.revisions)},
    }
    stream.write(_line(header)[:-1] + b",\n")  # the header's fields open the one JSON object
    stream.write(b'"objects":{')
    for position, digest in enumerate(sorted(bundle.objects)):
        stream.write(b"\n" if position == 0 else b",\n")
        stream.write(_line(digest) + b":" + bundle.objects[digest])
    stream.write(b'\n},\n"names":[')
    names = [_name_record(entry) for entry in bundle.names]
    for position, record in enumerate(names):
        stream.write(b"\n" if position == 0 else b",\n")
        stream.write(_line(record))
    stream.write(b'\n],\n"revisions":[')
    revisions = [_revision_record(revision) for revision in bundle.revisions]
    for position, record in enumerate(revisions):
        stream.write(b"\n" if position == 0 else b",\n")
        stream.write(_line(record))
    stream.write(b'\n],\n"checksum":' + _line(checksum(bundle.objects, names, revisions)) + b"}\n")


def write_bundle_file(path: Path, bundle: Bundle, crash_point=None) -> int:
    """Write the bundle to ``path`` through a temporary file renamed into place, so that
    ``path`` is either the old file or the whole new bundle (or into it, where it is a named
    pipe or a device: ``kidx.files.output_file``); returns its size in bytes."""
    from kidx.files import output_file

    with output_file(path, sync=True) as stream:
        counted = _Counting(stream)
        write_bundle(counted, bundle)  # type: ignore[arg-type]
        if crash_point is not None:
            crash_point("export-written")
    return counted.written


class _Counting:
    """A stream's ``write``, counting the bytes (a pipe has no size to ask afterwards)."""

    def __init__(self, stream: BinaryIO):
        self.stream, self.written = stream, 0

    def write(self, data: bytes) -> int:
        self.written += len(data)
        return self.stream.write(data)


def is_bundle(head: bytes) -> bool:
    """Whether the first bytes of a file are a kidx bundle's header."""
    return head.lstrip().startswith(b'{"format":"' + FORMAT_PREFIX.encode())


# --- reading -------------------------------------------------------------------------------


class _Checker:
    def __init__(self, source: str):
        self.source = source
        self.problems: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(Problem(Location(self.source, path=path), message))

    def text(self, value, path: str, optional: bool = False) -> bool:
        if value is None and optional:
            return True
        if not isinstance(value, str):
            self.add(path, f"must be a string{' or null' if optional else ''}")
            return False
        return True

    def digest(self, value, path: str, optional: bool = False) -> bool:
        if value is None and optional:
            return True
        if not isinstance(value, str) or not DIGEST_PATTERN.match(value):
            self.add(path, "must be a sha256:<64 hex digits> digest")
            return False
        return True

    def mapping(self, value, path: str) -> bool:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            self.add(path, "must be a mapping of strings to strings")
            return False
        return True

    def event(self, value, path: str) -> bool:
        if value not in EVENTS:
            self.add(path, 'must be "applied" or "deleted"')
            return False
        return True

    def generation(self, value, path: str, optional: bool = False) -> bool:
        if value is None and optional:
            return True
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.add(path, "must be a positive integer")
            return False
        return True


def read_bundle(path: Path | str, registry: KindRegistry | None = None) -> Bundle:
    """Read and check a bundle (with ``registry``, every object, name and revision as
    apply checks them); InvalidInputError lists every problem found. The file is bounded
    as apply bounds a source (``KIDX_MAX_INPUT_SIZE``)."""
    source = str(path)
    try:
        data = read_bounded(source)
    except OSError as exc:
        raise InvalidInputError([Problem(Location(source), f"cannot read: {exc.strerror or exc}")]) from None
    except InputTooLarge as exc:
        raise InvalidInputError([Problem(Location(source), exc.message)]) from None
    return parse_bundle(data, source, registry=registry)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_bundle(data: bytes, source: str, known_kinds: Iterable[str] = (),
                 registry: KindRegistry | None = None) -> Bundle:
    check = _Checker(source)
    try:
        document = json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise InvalidInputError([Problem(Location(source), f"not a kidx bundle: invalid JSON: {exc}")]) from None
    if not isinstance(document, dict) or not isinstance(document.get("format"), str):
        raise InvalidInputError([Problem(Location(source), f'not a kidx bundle (no "format": "{FORMAT}")')])
    if document["format"] != FORMAT:
        raise InvalidInputError([Problem(
            Location(source, path="format"),
            f'unsupported bundle format "{document["format"]}" (this kidx reads {FORMAT})',
        )])
    for key in document:
        if key not in TOP_LEVEL:
            check.add(key, "is not a field of a kidx bundle")
    kinds = set(known_kinds) if registry is None else {info.kind for info in registry.kinds}
    bundle = Bundle(exported=str(document.get("exported", "")), selection=str(document.get("selection", "")))
    objects = document.get("objects")
    if not isinstance(objects, dict):
        check.add("objects", "must be a mapping of digests to objects")
        objects = {}
    for digest, content in objects.items():
        where = f"objects[{digest}]"
        if not check.digest(digest, where):
            continue
        if not isinstance(content, dict) or set(content) != {"apiVersion", "kind", "spec"}:
            check.add(where, "must be an object with exactly apiVersion, kind and spec")
            continue
        try:
            check_json_data(content)  # apply's limits: 64 levels, 200,000 values, 64-bit integers
            canonical = canonical_json(content)
        except DataError as exc:
            check.add(f"{where}.{exc.path}" if exc.path else where, exc.message)
            continue
        except (CanonicalError, RecursionError) as exc:
            check.add(where, str(exc))
            continue
        actual = digest_bytes(canonical)
        if actual != digest:
            check.add(where, f"content hashes to {actual}, not to its name")
            continue
        if kinds and content["kind"] not in kinds:
            check.add(f"{where}.kind", f'unknown kind "{content["kind"]}"')
            continue
        bundle.objects[digest] = canonical
    names = document.get("names")
    if not isinstance(names, list):
        check.add("names", "must be a list")
        names = []
    seen: set[tuple[str, str]] = set()
    for position, item in enumerate(names):
        where = f"names[{position}]"
        if not isinstance(item, dict):
            check.add(where, "must be an object")
            continue
        ok = all((
            _kind_ok(check, item.get("kind"), f"{where}.kind", kinds),
            check.text(item.get("name"), f"{where}.name"),
            check.digest(item.get("digest"), f"{where}.digest"),
            check.text(item.get("title"), f"{where}.title", optional=True),
            check.mapping(item.get("labels", {}), f"{where}.labels"),
            check.mapping(item.get("annotations", {}), f"{where}.annotations"),
            check.text(item.get("created"), f"{where}.created"),
            check.generation(item.get("generation"), f"{where}.generation"),
        ))
        if not ok:
            continue
        key = (item["kind"], item["name"])
        if key in seen:
            check.add(where, f'{item["kind"]} "{item["name"]}" is listed twice')
            continue
        seen.add(key)
        if item["digest"] not in bundle.objects and item["digest"] in objects:
            continue  # its object was refused above
        if item["digest"] not in objects:
            check.add(f"{where}.digest", f"{item['digest']} is not among the bundle's objects")
            continue
        bundle.names.append(BundleName(
            kind=item["kind"], name=item["name"], digest=item["digest"], title=item.get("title"),
            labels=dict(item.get("labels", {})), annotations=dict(item.get("annotations", {})),
            created=item["created"], generation=item["generation"],
        ))
    revisions = document.get("revisions")
    if not isinstance(revisions, list):
        check.add("revisions", "must be a list")
        revisions = []
    for position, item in enumerate(revisions):
        where = f"revisions[{position}]"
        if not isinstance(item, dict):
            check.add(where, "must be an object")
            continue
        event = item.get("event")
        ok = all((
            _kind_ok(check, item.get("kind"), f"{where}.kind", kinds),
            check.text(item.get("name"), f"{where}.name"),
            check.event(event, f"{where}.event"),
            check.digest(item.get("digest"), f"{where}.digest", optional=event == "deleted"),
            check.text(item.get("title"), f"{where}.title", optional=True),
            check.mapping(item.get("labels") or {}, f"{where}.labels"),
            check.mapping(item.get("annotations") or {}, f"{where}.annotations"),
            check.generation(item.get("generation"), f"{where}.generation", optional=event == "deleted"),
            check.text(item.get("recorded"), f"{where}.recorded"),
        ))
        if not ok:
            continue
        if event == "applied" and item["digest"] not in objects:
            check.add(f"{where}.digest", f"{item['digest']} is not among the bundle's objects")
            continue
        bundle.revisions.append(BundleRevision(
            kind=item["kind"], name=item["name"], event=item["event"], digest=item.get("digest"),
            title=item.get("title"),
            labels=dict(item.get("labels") or {}), annotations=dict(item.get("annotations") or {}),
            generation=item.get("generation"), recorded=item["recorded"],
        ))
    if not check.problems:
        _check_names_match_history(check, bundle)
        _check_generations(check, bundle)
    if not check.problems and registry is not None:
        _check_as_apply(check, bundle, objects, registry)  # the parsed objects, checked above
    if not check.problems:
        _check_sums(check, document, bundle)
    if check.problems:
        raise InvalidInputError(check.problems)
    return bundle


def _check_sums(check: _Checker, document: dict, bundle: Bundle) -> None:
    """The counts and the checksum, when the bundle has them (a bundle from before the
    checksum is read with a warning)."""
    counts = document.get("counts")
    actual = {"objects": len(bundle.objects), "names": len(bundle.names), "revisions": len(bundle.revisions)}
    if counts is not None and counts != actual:
        check.add("counts", f"says {json.dumps(counts)}, but the bundle holds {json.dumps(actual)}")
        return
    if "checksum" not in document:
        bundle.warnings.append(f"{check.source} {NO_CHECKSUM}")
        return
    expected = checksum(bundle.objects, document["names"], document["revisions"])
    if document["checksum"] != expected:
        check.add("checksum", f"the bundle's names and history hash to {expected}, not to its checksum: "
                              "the file was changed or damaged after it was written")


def _check_generations(check: _Checker, bundle: Bundle) -> None:
    """A name's generations rise with each applied revision and start again after a
    deletion, as the store records them: a revision listed twice is refused. Two distinct
    revisions sharing a generation (what a store's concurrent writes could once leave,
    ``kidx fsck``'s ``revision-generation``) are kept as the store had them, with a warning:
    a backup is restored, not refused for its store's flaw."""
    last: dict[tuple[str, str], tuple[int, BundleRevision]] = {}
    for position, revision in enumerate(bundle.revisions):
        key = (revision.kind, revision.name)
        if revision.event == "deleted":
            last.pop(key, None)
            continue
        assert revision.generation is not None  # applied revisions carry one (checked above)
        previous = last.get(key)
        if previous is not None and revision.generation <= previous[1].generation:  # type: ignore[operator]
            if revision == previous[1]:
                check.add(f"revisions[{position}].generation",
                          f'{revision.kind} "{revision.name}" generation {revision.generation} follows generation '
                          f"{previous[1].generation}: a revision is listed twice or out of order")
            else:
                bundle.warnings.append(
                    f"{check.source}: revisions[{position}]: {revision.kind} \"{revision.name}\" generation "
                    f"{revision.generation} follows generation {previous[1].generation} (revisions[{previous[0]}]); "
                    "restored as recorded ('kidx fsck' reports it as revision-generation)")
        last[key] = (position, revision)


def _check_as_apply(check: _Checker, bundle: Bundle, contents: dict[str, dict], registry: KindRegistry) -> None:
    """What apply checks, for every name and applied revision: the object's kind is the
    name's, and the manifest they make passes the kind's schema and the metadata rules."""
    from kidx.kinds.validation import DocumentValidator

    validator = DocumentValidator(registry)
    reported: set[tuple[str, str]] = set()
    checked: set[tuple] = set()
    records: list[tuple[str, BundleName | BundleRevision, str | None]] = [
        (f"names[{p}]", n, n.digest) for p, n in enumerate(bundle.names)]
    records += [(f"revisions[{p}]", r, r.digest) for p, r in enumerate(bundle.revisions)]
    for where, record, digest in records:
        if digest is None or isinstance(record, BundleRevision) and record.event == "deleted":
            error = name_error(record.name)  # a deletion keeps no object: its name is all there is to check
            if error:
                check.add(f"{where}.name", error)
            continue
        key = (record.kind, record.name, digest, record.title, tuple(sorted(record.labels.items())),
               tuple(sorted(record.annotations.items())))
        if key in checked:
            continue  # a name is its last revision: checked once
        checked.add(key)
        content = contents[digest]
        if content["kind"] != record.kind:
            check.add(f"{where}.kind",
                      f'{record.kind} "{record.name}" names {digest}, an object of kind {content["kind"]}')
            continue
        info = registry.by_kind(record.kind)
        assert info is not None  # kinds were checked against the registry
        metadata: dict[str, Any] = {"name": record.name}
        if record.title is not None:
            metadata["title"] = record.title
        if record.labels:
            metadata["labels"] = record.labels
        if record.annotations:
            metadata["annotations"] = record.annotations
        manifest = {"apiVersion": content["apiVersion"], "kind": content["kind"], "metadata": metadata,
                    "spec": content["spec"]}
        for problem in validator.problems(Document(manifest, check.source, 1), info):
            path = problem.location.path or ""
            if path.startswith("metadata."):
                check.add(f"{where}.{path[len('metadata.'):]}", problem.message)
            elif (digest, path) not in reported:  # the object's own problem: said once
                reported.add((digest, path))
                check.add(f"objects[{digest}]" + (f".{path}" if path else ""), problem.message)


def _kind_ok(check: _Checker, value, path: str, kinds: set[str]) -> bool:
    if not check.text(value, path):
        return False
    if kinds and value not in kinds:
        check.add(path, f'unknown kind "{value}"')
        return False
    return True


def _check_names_match_history(check: _Checker, bundle: Bundle) -> None:
    """Every name's current state is its last revision; a name without one is refused."""
    last: dict[tuple[str, str], BundleRevision] = {}
    for recorded in bundle.revisions:
        last[(recorded.kind, recorded.name)] = recorded
    for position, name in enumerate(bundle.names):
        revision = last.get((name.kind, name.name))
        if (
            revision is None
            or revision.event != "applied"
            or (revision.digest, revision.title, revision.labels, revision.annotations, revision.generation)
            != (name.digest, name.title, name.labels, name.annotations, name.generation)
        ):
            check.add(f"names[{position}]", f'{name.kind} "{name.name}" does not match its last revision')
    current = {(name.kind, name.name) for name in bundle.names}
    for key, revision in last.items():
        if revision.event == "applied" and key not in current:
            check.add("revisions", f'{key[0]} "{key[1]}" was last applied but is not among the names')


__all__ = [
    "FORMAT", "Bundle", "BundleName", "BundleRevision", "is_bundle", "parse_bundle", "read_bundle",
    "write_bundle", "write_bundle_file",
]
