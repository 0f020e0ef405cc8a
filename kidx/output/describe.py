"""``describe`` text: kubectl's generic layout, then References and Referenced By.

Lines are label/value pairs or section headers. Within each run of consecutive pairs the
values line up two columns after the longest label (kubectl's tabwriter, padding 2); a
section header ends the run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kidx.operations.select.describe import DescribeResult, Description
from kidx.output.terminal import escape_control

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


def describe_result_text(result: DescribeResult) -> str:
    """What ``describe`` prints of its result: every description with its figures."""
    return describe_texts(result.descriptions, result.by_prefix, result.speed_of_light, result.host)


def describe_texts(descriptions: list[Description], by_prefix: bool = False, speed_of_light: Sequence = (),
                   host: Sequence = ()) -> str:
    """Every description, a blank line apart (one newline apart when found by name
    prefix, as kubectl prints them); ``speed_of_light``: each one's figures, or None;
    ``host``: each one's host evidence, or None."""
    figures = list(speed_of_light) or [None] * len(descriptions)
    evidence = list(host) or [None] * len(descriptions)
    return ("\n" if by_prefix else "\n\n").join(
        describe_text(d, f, h) for d, f, h in zip(descriptions, figures, evidence, strict=True))


def describe_text(description: Description, speed_of_light=None, host=None) -> str:
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
    if description.not_carried:
        writer.multi("Not Carried", list(description.not_carried))
    if references:
        writer.header("References")
        for line in references:
            shown = f"{line.kind} {line.name}" if line.name else f"{line.kind} <not in store>"
            if line.title:
                shown += f" ({line.title})"
            writer.pair(humanize(line.field), f"{shown}  {line.digest[:19]}", 2)
    if speed_of_light is not None:
        _speed_of_light(writer, speed_of_light)
    if host is not None:
        _host(writer, host)
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


def _speed_of_light(writer: DescribeWriter, figures) -> None:
    """What the run achieved against the GPU's peaks (docs/speed-of-light.md): the lines
    whose figures are known, and no guess for the others."""
    from kidx.output.speed_of_light import bandwidth, flop_rate, percent

    cost = figures.cost
    moved = [f"{cost.bytes:,} B" if cost.bytes is not None else None,
             f"{cost.flops:,} FLOP" if cost.flops is not None else None]
    source = f"formula {cost.formula}" if cost.formula else cost.source
    writer.header("Speed of Light")
    writer.pair("Cost", f"{', '.join(part for part in moved if part)} ({source})", 2)

    def shares(of_published, of_measured) -> str:
        said = [f"{percent(value)} of the {which} peak" for value, which in (
            (of_published, "published"), (of_measured, "measured")) if value is not None]
        return f" ({', '.join(said)})" if said else ""

    peak, measured = figures.peak, figures.measured
    if figures.bytes_per_second is not None:
        writer.pair("Bandwidth", bandwidth(figures.bytes_per_second) + shares(
            peak.bandwidth if peak else None, measured.bandwidth if measured else None), 2)
    if figures.flops_per_second is not None:
        precision = f" {figures.precision}" if figures.precision else ""
        writer.pair("FLOP/s", flop_rate(figures.flops_per_second) + precision + shares(
            peak.flops if peak else None, measured.flops if measured else None), 2)
    if peak is not None and peak.sol is not None:
        writer.pair("SOL", f"{percent(peak.sol)} of the published peak of the {figures.gpu}", 2)
    if measured is not None and measured.sol is not None:
        writer.pair("SOL Measured", f"{percent(measured.sol)} of the peak measured on the environment", 2)


def _host(writer: DescribeWriter, host) -> None:
    """How much of the timing is the host's (docs/analysis.md): the launch overhead over a
    kernel-timer twin, or why the data suggests a host-bound timing."""
    writer.header("Host Share")
    if host.overhead is not None:
        writer.pair("Launch Overhead", host.text(), 2)
        writer.pair("Kernel Runs", ", ".join(host.twins), 2)
        return
    writer.multi("Likely Host-Bound", list(host.reasons), 2)
