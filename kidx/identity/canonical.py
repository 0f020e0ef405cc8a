"""Canonical JSON and the sha256 digest of an object's identity.

The digest covers exactly ``{"apiVersion", "kind", "spec"}``; metadata never changes it.
Canonical form: keys sorted, separators ``,`` and ``:``, UTF-8 with non-ASCII written as
itself, integers as integers, floats in Python's shortest round-trip form, and no NaN or
infinities. Callers hash exactly the bytes this module returns.
"""

from __future__ import annotations

import json
import re

from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

DIGEST_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}$")

_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
)


class CanonicalError(ValueError):
    """A value has no canonical JSON form (NaN, infinity, a non-JSON type)."""


def canonical_json(value: Any) -> bytes:
    """Return the canonical UTF-8 bytes of a JSON-compatible value."""
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except ValueError as exc:  # NaN or infinity
        raise CanonicalError("NaN and infinite numbers have no canonical form") from exc
    except TypeError as exc:
        raise CanonicalError(str(exc)) from exc


def identity_of(manifest: dict) -> dict:
    """The part of a manifest that the digest covers."""
    return {"apiVersion": manifest["apiVersion"], "kind": manifest["kind"], "spec": manifest["spec"]}


def digest_bytes(data: bytes) -> str:
    """``sha256:`` and the hex digest of ``data``.

    The first ``LIGHT_HASHES`` digests of a process are made by Python's own SHA-256, the
    rest by OpenSSL's (hashlib): loading OpenSSL costs a cold process about as much as the
    interpreter's own start, more than a ``describe`` spends hashing the few objects it
    reads and checks, while a command hashing thousands of objects saves it back many
    times over (OpenSSL's hash is about three times as fast here). Both give the same digest.
    """
    global _hashed, _sha256
    _hashed += 1
    if _hashed == LIGHT_HASHES:
        import hashlib  # here, not at the top: listing commands never hash, and its import is not free

        _sha256 = hashlib.sha256
    elif _sha256 is None:
        _sha256 = _builtin_sha256()
    return "sha256:" + _sha256(data).hexdigest()


# digests made before OpenSSL is loaded: its load costs about what 500 of them cost more
# by the built-in hash (bench/bench_startup.py measures the commands' start)
LIGHT_HASHES = 256
_hashed = 0
_sha256: Any = None


def _builtin_sha256() -> Any:
    """The interpreter's built-in SHA-256 (``_sha256`` to Python 3.11, ``_sha2`` from 3.12),
    else hashlib's where a build lacks it."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12 on
        except ImportError:
            from hashlib import sha256
    return sha256


def digest_of(manifest: dict) -> str:
    """The digest of a manifest: sha256 over the canonical JSON of its identity."""
    return digest_bytes(canonical_json(identity_of(manifest)))
