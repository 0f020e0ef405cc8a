"""A machine with nothing but kidx, for the pages that show what `kidx env capture` reads:

    python docs/examples/plain-machine.py FOLDER && export PATH=FOLDER/bin

makes FOLDER/venv, a virtual environment holding only kidx and its runtime dependencies
(those of pyproject.toml, and theirs), linked from the environment of the Python that runs
this script, so nothing is downloaded; and FOLDER/bin, which holds `kidx` (that
environment's) and `cat`, and nothing else. With that PATH, what a capture reads does not
depend on the host's optional packages or GPU tools: no torch, triton, liger-kernel,
transformers or nvidia-ml-py, no nvidia-smi. (The CPU, the OS, Python and the host name
are still the host's: a page's `machine` directive stands for them.)

FOLDER must not exist yet.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

TOOLS = ("cat",)
# the checkout this script is part of
REPO = Path(__file__).resolve().parent.parent.parent


def name_of(requirement: str) -> tuple[str, list[str], str]:
    """A requirement's distribution name, extras and marker."""
    found = re.match(r"\s*([A-Za-z0-9._-]+)\s*(?:\[([^\]]*)\])?[^;]*(?:;(.*))?$", requirement)
    assert found, requirement
    extras = [extra.strip() for extra in (found.group(2) or "").split(",") if extra.strip()]
    return found.group(1), extras, (found.group(3) or "").strip()


def applies(marker: str, extras: list[str]) -> bool:
    """Whether a requirement's marker holds here, for the extras asked for."""
    if not marker:
        return True
    from packaging.markers import Marker  # pip's, and the test extra's

    return any(Marker(marker).evaluate({"extra": extra}) for extra in extras or [""])


def closure(requirements: list[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions these requirements need, and theirs."""
    wanted = [name_of(requirement) for requirement in requirements]
    found: dict[str, importlib.metadata.Distribution] = {}
    while wanted:
        name, extras, marker = wanted.pop()
        if not applies(marker, [""]):
            continue
        key = re.sub(r"[-_.]+", "-", name).lower()
        distribution = importlib.metadata.distribution(name)
        if key not in found:
            found[key] = distribution
        for requirement in distribution.requires or []:
            needed, needed_extras, needed_marker = name_of(requirement)
            if applies(needed_marker, extras):
                wanted.append((needed, needed_extras, ""))
    return list(found.values())


def main(folder: Path) -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder / "venv"], check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(folder / "venv")}))
    linked = set()
    for distribution in closure(project["dependencies"]):
        for file in distribution.files or []:
            top = file.parts[0]
            if top in ("..", "__pycache__") or top in linked or top.endswith(".pth"):
                continue
            source = Path(distribution.locate_file(top))
            if source.exists():
                (site / top).symlink_to(source)
                linked.add(top)
    # kidx itself: this checkout, as the pages' sessions run it
    (site / "kidx").symlink_to(REPO / "kidx")
    (site / "crds").symlink_to(REPO / "crds")
    (folder / "bin").mkdir()
    kidx = folder / "bin" / "kidx"
    kidx.write_text(f'#!/bin/sh\nunset PYTHONPATH\nexec "{folder / "venv" / "bin" / "python"}" -m kidx "$@"\n')
    kidx.chmod(0o755)
    for tool in TOOLS:
        found = next(Path(path) / tool for path in ("/usr/bin", "/bin") if (Path(path) / tool).exists())
        (folder / "bin" / tool).symlink_to(found)


if __name__ == "__main__":
    if len(sys.argv) != 2 or os.path.exists(sys.argv[1]):
        sys.exit("usage: python docs/examples/plain-machine.py FOLDER (a folder that does not exist yet)")
    main(Path(sys.argv[1]).resolve())
