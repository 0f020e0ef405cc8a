"""Identity: canonical JSON and content digests (docs/design.md §2)."""

from kidx.identity.canonical import CanonicalError, canonical_json, digest_of, identity_of

__all__ = ["CanonicalError", "canonical_json", "digest_of", "identity_of"]
