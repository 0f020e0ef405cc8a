"""Rules for metadata: object names, label and annotation keys and values (docs/design.md §4).

Names are never used as paths, but they are still refused when they are not plain
identifiers: ``1–253`` characters of ``a-z 0-9 - . _`` starting with a letter or digit.
"""

from __future__ import annotations

import re
from functools import lru_cache

from kidx.kinds.schema import FieldError, show

# used with fullmatch, not match: "$" also matches before a final newline ("run\n")
# the apiVersion of every kind kidx writes: the CRDs' group and version (tests/kinds holds
# them equal), spelled once for what builds manifests without reading the CRDs
API_VERSION = "kernelindex.dev/v1alpha1"
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,252}$")
_KEY_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
STORE_SET_FIELDS = ("digest", "creationTimestamp", "generation")


def name_error(name: object) -> str | None:
    """Why ``name`` is not a valid object name, or None."""
    if not isinstance(name, str) or not name:
        return "Required value: name is required"
    if NAME_PATTERN.fullmatch(name) is None:
        return (
            f"Invalid value: {show(name)}: a name must be 1 to 253 characters of lower-case "
            "letters, digits, '-', '.' and '_', starting with a letter or digit"
        )
    return None


@lru_cache(maxsize=4096)  # the same few label keys and values recur across a whole batch
def qualified_key_error(key: str) -> str | None:
    """Kubernetes' rule for label and annotation keys: ``[prefix/]name``."""
    prefix, slash, name = key.rpartition("/")
    if key.count("/") > 1:
        return f"Invalid value: {show(key)}: a key may contain at most one '/'"
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return f"Invalid value: {show(key)}: the prefix must be a lower-case DNS subdomain"
    if not name or len(name) > 63 or not _KEY_NAME.fullmatch(name):
        return (
            f"Invalid value: {show(key)}: a key name must be 1 to 63 characters of alphanumerics, "
            "'-', '_' or '.', starting and ending with an alphanumeric"
        )
    return None


@lru_cache(maxsize=4096)
def label_value_error(value: str) -> str | None:
    if len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
        return (
            f"Invalid value: {show(value)}: a label value must be empty or 1 to 63 characters of "
            "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
        )
    return None


def metadata_errors(metadata: dict) -> list[FieldError]:
    """Errors the schema cannot express: name, label and annotation syntax."""
    errors: list[FieldError] = []
    problem = name_error(metadata.get("name"))
    if problem:
        errors.append(("metadata.name", problem))
    for field, check_value in (("labels", label_value_error), ("annotations", None)):
        entries = metadata.get(field)
        if not isinstance(entries, dict):
            continue
        for key, value in entries.items():
            problem = qualified_key_error(key)
            if problem is None and check_value is not None and isinstance(value, str):
                problem = check_value(value)
            if problem:
                errors.append((f"metadata.{field}.{key}", problem))
    return errors
