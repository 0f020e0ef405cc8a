"""Canonical JSON and the sha256 digest of an object's identity.

The digest covers exactly ``{"apiVersion", "kind", "spec"}``; metadata never changes it.
Canonical form: keys sorted, separators ``,`` and ``:``, UTF-8 with non-ASCII written as
itself, integers as integers, floats in Python's shortest round-trip form, and no NaN or
infinities. Callers hash exactly the bytes this module returns.
"""

from __future__ import annotations

import json

from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

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
    import hashlib  # here, not at the top: listing commands never hash, and its import is not free

    return "sha256:" + hashlib.sha256(data).hexdigest()


def digest_of(manifest: dict) -> str:
    """The digest of a manifest: sha256 over the canonical JSON of its identity."""
    return digest_bytes(canonical_json(identity_of(manifest)))
