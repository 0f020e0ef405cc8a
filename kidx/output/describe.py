"""``describe`` text: kubectl's generic layout, then References and Referenced By.

Lines are label/value pairs or section headers. Within each run of consecutive pairs the
values line up two columns after the longest label (kubectl's tabwriter, padding 2); a
section header ends the run.
"""

from __future__ import annotations

import re

from kidx.output.terminal import escape_control
from kidx.query.descriptions import Description

NONE = "<none>"
_ACRONYMS = {"api": "API", "url": "URL", "uid": "UID", "guid": "GUID", "id": "ID"}
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def humanize(key: str) -> str:
    """``apiVersion`` → ``API Version``, ``latencyNs`` → ``Latency Ns``; odd keys verbatim."""
    if not re.fullmatch(r"[A-Za-z-]+", key):
        return key
    words = _WORDS.findall(key.replace("-", " "))
    return " ".join(_ACRONYMS.get(word.lower(), word[:1].upper() + word[1:]) for word in words)


class DescribeWriter:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str | None]] = []  # (label or header, value or None)

    def pair(self, label: str, value: str, indent: int = 0) -> None:
        self.lines.append((" " * indent + label + ":", value))

    def header(self, label: str, indent: int = 0) -> None:
        self.lines.append((" " * indent + label + ":", None))

    def multi(self, label: str, values: list[str], indent: int = 0) -> None:
        """Labels and annotations: one per line, continuation lines aligned under the first."""
        if not values:
            self.pair(label, NONE, indent)
            return
        self.pair(label, values[0], indent)
        for value in values[1:]:
            self.lines.append(("", value))

    def value(self, data, indent: int) -> None:
        """A spec value, recursively: maps as sections, lists item by item, scalars inline."""
        if isinstance(data, dict):
            for key in sorted(data):
                self._field(humanize(key), data[key], indent)
        elif isinstance(data, list):
            for item in data:
                if isinstance(item, (dict, list)):
                    self.value(item, indent)
                else:
                    self.lines.append((" " * indent + _scalar(item), None))

    def _field(self, label: str, data, indent: int) -> None:
        if not isinstance(data, (dict, list)):
            self.pair(label, _scalar(data), indent)
        elif data:
            self.header(label, indent)
            self.value(data, indent + 2)
        else:
            self.pair(label, NONE, indent)

    def render(self) -> str:
        out: list[str] = []
        run: list[tuple[str, str]] = []

        def flush() -> None:
            if run:
                width = max(len(label) for label, _ in run) + 2
                out.extend((label.ljust(width) + value).rstrip() for label, value in run)
                run.clear()

        for label, value in self.lines:  # every label and value may come from a manifest
            if value is None:
                flush()
                out.append(escape_control(label))
            else:
                run.append((escape_control(label), escape_control(value)))
        flush()
        return "\n".join(out) + "\n"


def _scalar(value) -> str:
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def describe_texts(descriptions: list[Description], by_prefix: bool = False) -> str:
    """Every description, a blank line apart (one newline apart when found by name
    prefix, as kubectl prints them)."""
    return ("\n" if by_prefix else "\n\n").join(describe_text(d) for d in descriptions)


def describe_text(description: Description) -> str:
    manifest, references, referrers = description.manifest, description.references, description.referrers
    metadata = manifest["metadata"]
    writer = DescribeWriter()
    writer.pair("Name", metadata["name"])
    labels = metadata.get("labels") or {}
    writer.multi("Labels", [f"{k}={labels[k]}" for k in sorted(labels)])
    annotations = metadata.get("annotations") or {}
    writer.multi("Annotations", [f"{k}: {annotations[k]}" for k in sorted(annotations)])
    writer.pair("Title", metadata.get("title") or NONE)
    writer.pair("Digest", metadata["digest"])
    writer.pair("Created", metadata["creationTimestamp"])
    writer.pair("Generation", str(metadata["generation"]))
    writer.pair("API Version", manifest["apiVersion"])
    writer.pair("Kind", manifest["kind"])
    if manifest.get("spec"):
        writer.header("Spec")
        writer.value(manifest["spec"], 2)
    else:
        writer.pair("Spec", NONE)
    if references:
        writer.header("References")
        for line in references:
            shown = f"{line.kind} {line.name}" if line.name else f"{line.kind} <not in store>"
            if line.title:
                shown += f" ({line.title})"
            writer.pair(humanize(line.field), f"{shown}  {line.digest[:19]}", 2)
    if referrers:
        writer.header("Referenced By")
        for referrer in referrers:
            listed = ", ".join(referrer.names)
            more = referrer.referrers - len(referrer.names)
            if more > 0:
                listed += f", … ({more} more)"
            writer.pair(referrer.kind, f"{referrer.referrers}  {listed}", 2)
    else:
        writer.pair("Referenced By", NONE)
    return writer.render()
