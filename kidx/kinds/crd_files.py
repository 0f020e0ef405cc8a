"""Finding and loading the CustomResourceDefinition files.

The CRDs are the single source of truth for kinds. Parsing YAML costs more than a whole
``kidx get`` may take, so the parsed definitions are cached as JSON in the user cache
folder, keyed by a hash of the CRD files' bytes: any edit to a CRD invalidates the cache.
"""

from __future__ import annotations

import json
import os
import sys
import zlib

from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

# plain os.path on strings: every command loads the CRDs, and pathlib's import is not free

CRD_SUFFIXES = (".yaml", ".yml", ".json")


def crd_folder() -> str:
    """The packaged ``kidx/crds`` (installed wheel) or the repository's ``crds/``."""
    override = os.environ.get("KIDX_CRDS")
    if override:
        return override
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    installed = os.path.join(package, "crds")
    if os.path.isdir(installed):
        return installed
    return os.path.join(os.path.dirname(package), "crds")


def load_crds(folder: str | Path | None = None) -> list[dict]:
    folder = os.fspath(folder) if folder else crd_folder()
    names = sorted(name for name in os.listdir(folder) if name.endswith(CRD_SUFFIXES))
    contents = []
    for name in names:
        with open(os.path.join(folder, name), "rb") as stream:
            contents.append(stream.read())
    # the cache key changes with any byte of any CRD (crc32 is enough to notice edits)
    joined = b"\0".join(name.encode() + b"\0" + c for name, c in zip(names, contents, strict=True))
    fingerprint = f"{zlib.crc32(joined):08x}{len(joined):08x}"
    cache = _cache_path(fingerprint)
    if cache is not None:
        try:
            with open(cache, encoding="utf-8") as stream:
                return json.loads(stream.read())
        except (OSError, ValueError):
            pass
    definitions = [_parse(os.path.join(folder, name), content) for name, content in zip(names, contents, strict=True)]
    if cache is not None:
        _write_cache(cache, definitions)
    return definitions


def _parse(path: str, content: bytes) -> dict:
    from kidx.manifests.parsing import parse_json_stream, parse_yaml_stream

    text = content.decode("utf-8")
    documents = parse_json_stream(text) if path.endswith(".json") else parse_yaml_stream(text)
    if len(documents) != 1 or not isinstance(documents[0].data, dict):
        raise ValueError(f"{path}: expected exactly one CustomResourceDefinition")
    return documents[0].data


def _cache_path(fingerprint: str) -> str | None:
    if os.environ.get("KIDX_NO_CACHE"):
        return None
    return os.path.join(_user_cache_dir(), f"crds-{fingerprint}.json")


def _user_cache_dir() -> str:
    """platformdirs.user_cache_dir("kidx"); on Linux computed directly, as platformdirs does
    (XDG), because importing platformdirs costs a third of a bare interpreter start."""
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache")
        return os.path.join(base, "kidx")
    from platformdirs import user_cache_dir

    return user_cache_dir("kidx")


def _write_cache(cache: str, definitions: list[dict]) -> None:
    try:
        folder = os.path.dirname(cache)
        os.makedirs(folder, exist_ok=True)
        from kidx.files import write_file

        write_file(cache, json.dumps(definitions).encode("utf-8"), sync=False)  # a cache: rebuilt when lost
    except OSError:
        pass  # a read-only cache folder only costs speed
