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

    def problems(self, document: Document, info: KindInfo, may_hold_nul: bool = True) -> list[Problem]:
        """Every schema and metadata error of the document, as located problems.
        ``may_hold_nul=False``: its source text holds no spelling of a NUL character, so its
        strings are not searched for one."""
        errors = self._validator(info).errors(document.body)
        if may_hold_nul:
            errors += nul_errors(document.body)
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


# how a NUL character may be written in a JSON or YAML source text; a text with none of
# these holds none (a false alarm only costs a search of the document's strings)
NUL_SPELLINGS = ("\x00", "\\u0000", "\\0", "\\x00", "\\U00000000")


def text_may_hold_nul(text: str) -> bool:
    return any(spelling in text for spelling in NUL_SPELLINGS)


def nul_errors(body: object) -> list[tuple[str, str]]:
    """A NUL character in any string (a key or a value): no store can keep it the same way
    (PostgreSQL's text refuses it), so every store refuses it here, at its field."""
    if "\\x00" not in repr(body):  # repr writes a NUL as \x00: one pass in C finds there is none
        return []
    found = []
    pending: list[tuple[str, object]] = [("", body)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and "\x00" in key:
                    found.append((path, f"Invalid value: the key {show(key)} holds a NUL character (\\u0000), "
                                        "which cannot be stored"))
                    continue
                pending.append((f"{path}.{key}" if path else str(key), item))
        elif isinstance(value, list):
            pending.extend((f"{path}[{index}]", item) for index, item in enumerate(value))
        elif isinstance(value, str) and "\x00" in value:
            found.append((path, f"Invalid value: {show(value)}: a NUL character (\\u0000) cannot be stored"))
    return sorted(found)


__all__ = ["DocumentValidator", "nul_errors", "show", "text_may_hold_nul"]
