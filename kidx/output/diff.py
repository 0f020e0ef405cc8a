"""``diff`` text: a unified diff of YAML per changed object, as ``diff -u -N`` prints it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Protocol

from kidx.output.serialize import to_yaml


class Change(Protocol):
    """What one object's diff is made of (``operations.diff.ObjectChange``)."""

    @property
    def file_name(self) -> str: ...
    @property
    def live(self) -> dict | None: ...
    @property
    def merged(self) -> dict: ...


def render_diff(changes: Iterable[Change]) -> str:
    """Empty when no object's YAML differs."""
    chunks: list[str] = []
    for change in changes:
        before = to_yaml(change.live).splitlines(keepends=True) if change.live is not None else []
        after = to_yaml(change.merged).splitlines(keepends=True)
        live, merged = f"LIVE/{change.file_name}", f"MERGED/{change.file_name}"
        lines = list(difflib.unified_diff(before, after, live, merged))
        if lines:
            chunks.append(f"diff -u -N {live} {merged}\n" + "".join(lines))
    return "".join(chunks)
