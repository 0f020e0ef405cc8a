"""The site's folder: write only the files whose bytes changed, remove the pages of
objects that are gone, and never touch a file the site did not write.

What the site wrote is listed in ``SITE_LIST`` (one path a line, sorted) inside the
folder; a file not in that list is the user's (a CNAME, a README) and is left alone.
A folder that holds files but no list is refused, so a mistyped path cannot be filled
with pages (an empty or missing folder is fine, and so is one holding only hidden
entries, such as the ``.git`` of a checkout of a pages branch).
"""

from __future__ import annotations

import os
from pathlib import Path

from kidx.errors import KidxError

SITE_LIST = ".kidx-site"


class SiteFolder:
    """Pages are compared and written as they are added, so a large site is never held in
    memory; ``finish`` removes what the previous publish wrote and this one did not."""

    def __init__(self, root: Path, dry_run: bool = False):
        self.root = Path(root)
        self.dry_run = dry_run
        self.previous = self._previous()  # refuses a folder that is not a site before anything is written
        self.pages: set[str] = set()
        self.written: list[str] = []
        self.unchanged = 0

    def add(self, path: str, text: str) -> None:
        if path in self.pages:
            raise ValueError(f"two pages at {path}")
        self.pages.add(path)
        data = text.encode("utf-8")
        target = self.root / path
        try:
            if target.stat().st_size == len(data) and target.read_bytes() == data:
                self.unchanged += 1
                return
        except FileNotFoundError:
            pass
        self.written.append(path)
        if not self.dry_run:
            _write(target, data)

    def _previous(self) -> list[str]:
        listed = self.root / SITE_LIST
        if listed.is_file():
            # only paths the site could have written: relative, inside the folder
            return [line for line in listed.read_text("utf-8").splitlines()
                    if line and not line.startswith("/") and ".." not in line.split("/")]
        if self.root.exists() and not self.root.is_dir():
            raise KidxError(f"{self.root} is not a folder")
        if self.root.is_dir() and any(not entry.name.startswith(".") for entry in self.root.iterdir()):
            raise KidxError(f"{self.root} holds files that kidx publish did not write (no {SITE_LIST} list "
                            "there): publish into an empty or new folder")
        return []

    def finish(self) -> list[str]:
        """Remove the pages of the previous publish that this one did not write; the paths removed."""
        removed = sorted(set(self.previous) - self.pages)
        if not self.dry_run:
            for path in removed:
                target = self.root / path
                if target.is_file():
                    target.unlink()
                _remove_empty_parents(target.parent, self.root)
            listing = "".join(f"{path}\n" for path in sorted(self.pages)).encode("utf-8")
            target = self.root / SITE_LIST
            if not target.is_file() or target.read_bytes() != listing:
                _write(target, listing)
        return removed


def _write(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, target)


def _remove_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
