"""kidx run as another user: for tests of what permission bits do (a read-only store).

Permission bits do not stop root, so as root such a test runs kidx as ``nobody`` through
``setpriv``. That user must be able to read what it runs; a checkout often lives where only
its owner can (a clone in root's home, mode 700, with its virtual environment inside). So
the tests never run the checkout itself as that user: they run a copy, made once per test
session in a fresh folder anyone can read, of what kidx needs, namely its package and CRDs
from this checkout and the installed files of its runtime dependencies (pyproject.toml's
``dependencies``, followed through their own), with an interpreter that user can start
(this one, or the one its virtual environment was made from). Where none can, the test is
skipped with the reason.

Not root: the tests run kidx as this user, from the checkout (the owner can read it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
NOBODY = ("--reuid=65534", "--regid=65534", "--clear-groups")
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


class OtherUser:
    """How to run ``python -m kidx`` as the other user: ``command(*args)`` and ``env``."""

    def __init__(self, prefix: list[str], python: str, path: str, folder: Path | None):
        self.prefix, self.python, self.path, self.folder = prefix, python, path, folder

    def command(self, *args: str) -> list[str]:
        return [*self.prefix, self.python, "-s", "-m", "kidx", *args]

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": self.path, "NO_COLOR": "1"}

    def remove(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def other_user() -> OtherUser | str:
    """The other user, ready; or why kidx cannot be run as another user here (the skip reason)."""
    if os.geteuid() != 0:
        return OtherUser([], sys.executable, str(REPO), None)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return "running as root without setpriv: cannot drop the privilege that ignores permissions"
    folder = Path(tempfile.mkdtemp(prefix="kidx-other-user-"))
    try:
        _copy_runtime(folder)
        for path in [folder, *folder.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
        prefix = [setpriv, *NOBODY]
        tried = []
        for python in dict.fromkeys([sys.executable, getattr(sys, "_base_executable", sys.executable)]):
            user = OtherUser(prefix, python, str(folder), folder)
            probe = subprocess.run(
                [*prefix, python, "-s", "-c", "import kidx.cli.app, kidx; print(kidx.__file__)"],
                capture_output=True, text=True, cwd="/", env=user.env,
            )
            if probe.returncode == 0 and probe.stdout.strip() == str(folder / "kidx" / "__init__.py"):
                return user
            tried.append(f"{python}: {(probe.stderr.strip().splitlines() or [probe.stdout.strip()])[-1]}")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    return "no Python interpreter that user nobody can start runs kidx (" + "; ".join(tried) + ")"


def _copy_runtime(folder: Path) -> None:
    shutil.copytree(REPO / "kidx", folder / "kidx", ignore=_IGNORED)
    shutil.copytree(REPO / "crds", folder / "crds", ignore=_IGNORED)
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pending = [Requirement(text) for text in project["dependencies"]]
    done: set[str] = set()
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in done:
            continue
        done.add(name)
        distribution = metadata.distribution(requirement.name)
        for text in distribution.requires or ():
            needed = Requirement(text)
            extras = {""} | set(requirement.extras)
            if needed.marker is None or any(needed.marker.evaluate({"extra": extra}) for extra in extras):
                pending.append(needed)
        for file in distribution.files or ():
            if ".." in file.parts or "__pycache__" in file.parts:
                continue  # scripts installed outside site-packages; compiled caches
            source = Path(str(distribution.locate_file(file)))
            if source.is_file():
                target = folder / file
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
