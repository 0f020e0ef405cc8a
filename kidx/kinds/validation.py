"""Validating a document: its kind, its schema, its metadata rules."""

from __future__ import annotations

from kidx.errors import Problem
from kidx.kinds.metadata import metadata_errors
from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.kinds.schema import SchemaValidator, show
from kidx.manifests.document import Document


class DocumentValidator:
    """Validates documents against the registry, compiling each kind's schema once."""

    def __init__(self, registry: KindRegistry):
        self.registry = registry
        self._validators: dict[str, SchemaValidator] = {}

    def _validator(self, info: KindInfo) -> SchemaValidator:
        validator = self._validators.get(info.kind)
        if validator is None:
            validator = self._validators[info.kind] = SchemaValidator(info.schema)
        return validator

    def kind_of(self, document: Document) -> tuple[KindInfo | None, list[Problem]]:
        body = document.body
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if not isinstance(kind, str) or not kind:
            return None, [Problem(document.location("kind"), "Required value: the object's kind is missing")]
        if not isinstance(api_version, str) or not api_version:
            return None, [Problem(document.location("apiVersion"), "Required value: apiVersion is missing")]
        info = self.registry.by_kind(kind)
        if info is None or info.api_version != api_version:
            name = body.get("metadata", {}).get("name", "") if isinstance(body.get("metadata"), dict) else ""
            return None, [
                Problem(
                    document.location("kind"),
                    f'no matches for kind "{kind}" in version "{api_version}" (object "{name}")',
                )
            ]
        return info, []

    def problems(self, document: Document, info: KindInfo) -> list[Problem]:
        """Every schema and metadata error of the document, as located problems."""
        errors = self._validator(info).errors(document.body)
        metadata = document.body.get("metadata")
        if isinstance(metadata, dict):
            # metadata rules explain names and labels better than a bare pattern: theirs win
            extra = metadata_errors(metadata)
            if extra:
                covered = {path for path, _ in extra}
                errors = [e for e in errors if e[0] not in covered] + extra
        if not errors:
            return []
        return [Problem(document.location(path or None), message) for path, message in errors]


__all__ = ["DocumentValidator", "show"]
