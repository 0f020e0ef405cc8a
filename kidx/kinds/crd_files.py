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
from pathlib import Path

CRD_SUFFIXES = (".yaml", ".yml", ".json")


def crd_folder() -> Path:
    """The packaged ``kidx/crds`` (installed wheel) or the repository's ``crds/``."""
    override = os.environ.get("KIDX_CRDS")
    if override:
        return Path(override)
    package = Path(__file__).resolve().parent.parent
    installed = package / "crds"
    if installed.is_dir():
        return installed
    return package.parent / "crds"


def load_crds(folder: Path | None = None) -> list[dict]:
    folder = folder or crd_folder()
    files = sorted(p for p in folder.iterdir() if p.name.endswith(CRD_SUFFIXES))
    contents = [p.read_bytes() for p in files]
    # the cache key changes with any byte of any CRD (crc32 is enough to notice edits)
    joined = b"\0".join(p.name.encode() + b"\0" + c for p, c in zip(files, contents, strict=True))
    fingerprint = f"{zlib.crc32(joined):08x}{len(joined):08x}"
    cache = _cache_path(fingerprint)
    if cache is not None:
        try:
            return json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    definitions = [_parse(path, content) for path, content in zip(files, contents, strict=True)]
    if cache is not None:
        _write_cache(cache, definitions)
    return definitions


def _parse(path: Path, content: bytes) -> dict:
    from kidx.manifests.parsing import parse_json_stream, parse_yaml_stream

    text = content.decode("utf-8")
    documents = parse_json_stream(text) if path.suffix == ".json" else parse_yaml_stream(text)
    if len(documents) != 1 or not isinstance(documents[0].data, dict):
        raise ValueError(f"{path}: expected exactly one CustomResourceDefinition")
    return documents[0].data


def _cache_path(fingerprint: str) -> Path | None:
    if os.environ.get("KIDX_NO_CACHE"):
        return None
    return Path(_user_cache_dir()) / f"crds-{fingerprint}.json"


def _user_cache_dir() -> str:
    """platformdirs.user_cache_dir("kidx"); on Linux computed directly, as platformdirs does
    (XDG), because importing platformdirs costs a third of a bare interpreter start."""
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache")
        return os.path.join(base, "kidx")
    from platformdirs import user_cache_dir

    return user_cache_dir("kidx")


def _write_cache(cache: Path, definitions: list[dict]) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        temporary = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(definitions), encoding="utf-8")
        os.replace(temporary, cache)
    except OSError:
        pass  # a read-only cache folder only costs speed
