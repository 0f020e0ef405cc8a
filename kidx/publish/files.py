"""The site's folder: write only the files whose bytes changed, remove the pages of
objects that are gone, and never touch a file the site did not write.

What the site wrote is listed in ``SITE_LIST`` (one path a line, sorted) inside the
folder; a file not in that list is the user's (a CNAME, a README) and is left alone.
A folder that holds files but no list is refused, so a mistyped path cannot be filled
with pages (an empty or missing folder is fine, and so is one holding only hidden
entries, such as the ``.git`` of a checkout of a pages branch). A publish writes the
list (empty) into a folder that has none before its first page, so that one killed
before its list is complete leaves a site, never a folder the next publish refuses.

What may be removed is decided by the site's layout (a pattern every page's path
matches), never by the list alone: a list naming ``.git/HEAD`` removes nothing, and a
page of the layout that no list names (written by a publish killed before it wrote its
list) is removed by the next publish that does not write it. Nothing is written or
removed through a symbolic link: a folder of the layout that is a link is refused
before anything is written, a page that is a link is replaced by a file (the link's
target untouched), and each file is written through ``kidx.files.write_file`` (a
temporary file of its own beside it, a unique name, removed on failure; not synced: a
site is made again from the store). One publish at a time writes into a folder (an
exclusive lock on the folder itself); under that lock, ``finish`` removes the temporary
files of the site's files that a killed publish left.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from kidx.errors import KidxError
from kidx.files import TEMPORARY, write_file
from kidx.store.faults import crash_point

LEFTOVER = re.compile(TEMPORARY)

SITE_LIST = ".kidx-site"


class SiteFolder:
    """Pages are compared and written as they are added, so a large site is never held in
    memory; ``finish`` removes the layout's files that this publish did not write."""

    def __init__(self, root: Path, layout: re.Pattern[str], folders: tuple[str, ...], dry_run: bool = False):
        """``layout`` matches every path a page can have; ``folders`` are the folders those paths are in."""
        self.root = Path(root)
        self.layout = layout
        self.folders = folders
        self.dry_run = dry_run
        # refuses a folder that is not a site, or a folder of the layout that is a link, before anything is written
        self.previous = self._previous()
        self._refuse_links()
        self._lock: int | None = None
        self.pages: set[str] = set()
        self.written: list[str] = []
        self.unchanged = 0

    def add(self, path: str, text: str) -> None:
        if path in self.pages:
            raise ValueError(f"two pages at {path}")
        self.record(path, self.put(path, text))

    def put(self, path: str, text: str) -> bool:
        """Write the page where its bytes differ from the file's; whether it was (or, dry, would be)
        written. Changes nothing of what this object counts (``record`` does), so a worker process
        of ``kidx.publish.workers`` calls it, under the lock ``hold_lock`` took before it started."""
        if not self.layout.fullmatch(path):
            raise ValueError(f"{path} is not a path of the site's layout")
        data = text.encode("utf-8")
        target = self.root / path
        if _same_file_bytes(target, data):
            return False
        if not self.dry_run:
            self._take_lock()
            _write(self.root, target, data)
        return True

    def record(self, path: str, written: bool) -> None:
        """Count a page ``put`` wrote (or found unchanged), here or in a worker process."""
        if path in self.pages:
            raise ValueError(f"two pages at {path}")
        self.pages.add(path)
        if written:
            self.written.append(path)
        else:
            self.unchanged += 1

    def hold_lock(self) -> None:
        """Take the folder's lock now (not at the first write), so that worker processes write
        under it; nothing for a dry run, which writes nothing."""
        if not self.dry_run:
            self._take_lock()

    def _take_lock(self) -> None:
        if self._lock is None:
            self._lock = _lock(self.root)
            if not _is_regular_file(self.root / SITE_LIST):
                # the folder is claimed before its first page: a first publish killed before it
                # wrote its list leaves a site (pages the next publish finishes), not a folder
                # of files no list names, which the next would refuse
                _write(self.root, self.root / SITE_LIST, b"")

    def _previous(self) -> list[str]:
        listed = self.root / SITE_LIST
        if _is_regular_file(listed):
            # only paths the site's layout could have written (never a hidden one, never outside)
            return [line for line in listed.read_text("utf-8", errors="replace").splitlines()
                    if self.layout.fullmatch(line)]
        if self.root.exists() and not self.root.is_dir():
            raise KidxError(f"{self.root} is not a folder")
        if self.root.is_dir() and any(not entry.name.startswith(".") for entry in self.root.iterdir()):
            raise KidxError(f"{self.root} holds files that kidx publish did not write (no {SITE_LIST} list "
                            "there): publish into an empty or new folder")
        return []

    def _refuse_links(self) -> None:
        for name in self.folders:
            folder = self.root / name
            if folder.is_symlink():
                raise KidxError(f"{folder} is a symbolic link: kidx publish never writes or removes through a "
                                "link; remove the link (or publish into another folder)")
            if folder.exists() and not folder.is_dir():
                raise KidxError(f"{folder} is not a folder: kidx publish writes its pages there")

    def _on_disk(self) -> set[str]:
        """The files of the site's layout that are in the folder, whoever listed them."""
        found: set[str] = set()
        for name in ["", *self.folders]:
            folder = self.root / name
            if name and (folder.is_symlink() or not folder.is_dir()):
                continue
            try:
                entries = list(os.scandir(folder))
            except FileNotFoundError:
                continue
            for entry in entries:
                path = f"{name}/{entry.name}" if name else entry.name
                if self.layout.fullmatch(path) and not entry.is_dir(follow_symlinks=False):
                    found.add(path)
        return found

    def finish(self) -> list[str]:
        """Remove the layout's files that this publish did not write; the paths removed."""
        removed = sorted((set(self.previous) | self._on_disk()) - self.pages)
        if not self.dry_run:
            crash_point("publish-written")
            self._take_lock()
            for path in removed:
                target = self.root / path
                if target.is_symlink() or _is_regular_file(target):
                    target.unlink()  # a link itself, never its target
                if not target.parent.is_symlink():
                    _remove_empty_parents(target.parent, self.root)
            self.remove_temporary_files()
            listing = "".join(f"{path}\n" for path in sorted(self.pages)).encode("utf-8")
            target = self.root / SITE_LIST
            if not _same_file_bytes(target, listing):
                _write(self.root, target, listing)
        return removed

    def abandon(self) -> None:
        """After a publish failed or was interrupted (its worker processes stopped): the
        temporary files beside the site's files removed, and the list naming every file of the
        layout now in the folder (listed before, or written by this publish), so that the folder
        is still a site, which the next publish finishes. Nothing where nothing was written."""
        if self._lock is None:
            return
        try:
            self.remove_temporary_files()
            listing = "".join(f"{path}\n" for path in sorted(set(self.previous) | self._on_disk())).encode("utf-8")
            target = self.root / SITE_LIST
            if not _same_file_bytes(target, listing):
                _write(self.root, target, listing)
        except OSError:
            pass  # the failure being raised says more (a full disk, a folder gone)

    def remove_temporary_files(self) -> None:
        """Under the lock no other publish is writing: a temporary file beside a page is a killed
        one's (or a stopped worker's)."""
        for name in ["", *self.folders]:
            folder = self.root / name
            if not folder.is_symlink():
                for leftover in _leftovers(folder, self.layout, f"{name}/" if name else "", name == ""):
                    leftover.unlink(missing_ok=True)

    def close(self) -> None:
        """Release the folder's lock (finished or not)."""
        if self._lock is not None and self._lock >= 0:
            os.close(self._lock)
        self._lock = None


def _is_regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _same_file_bytes(target: Path, data: bytes) -> bool:
    """Whether ``target`` is a regular file (not a link) holding exactly ``data``."""
    try:
        status = target.lstat()
        if not stat.S_ISREG(status.st_mode) or status.st_size != len(data):
            return False
        return target.read_bytes() == data
    except OSError:
        return False


def _write(root: Path, target: Path, data: bytes) -> None:
    folder = target.parent
    if folder != root:
        if folder.is_symlink():
            raise KidxError(f"{folder} is a symbolic link: kidx publish never writes through a link")
        folder.mkdir(parents=True, exist_ok=True)
    # kidx.files: a temporary file of its own (O_EXCL: never an existing file, never through a link),
    # then a rename, which replaces a link at the target rather than writing where it points; not
    # synced: a site is made again from the store
    write_file(target, data, sync=False, mode=0o644)


def _leftovers(folder: Path, layout: re.Pattern[str], prefix: str, top: bool) -> list[Path]:
    """The temporary files (kidx.files) of the site's files that a killed publish left in ``folder``."""
    found = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        match = LEFTOVER.fullmatch(entry.name)
        named = match and (layout.fullmatch(prefix + match.group(1)) or (top and match.group(1) == SITE_LIST))
        if named and entry.is_file(follow_symlinks=False):
            found.append(folder / entry.name)
    return found


def _remove_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and not folder.is_symlink() and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def _lock(root: Path) -> int:
    """An exclusive lock on the folder for this process's life: a second publish into it is refused."""
    root.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks on folders
        return -1
    handle = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(handle)
        raise KidxError(f"{root}: another kidx publish is writing into this folder; "
                        "try again when it is done") from error
    return handle
