"""``import --environment``: the ExecutionEnvironment an import's runs ran in, from a
captured manifest file or a stored name, attached to every run of the conversion."""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

from kidx.errors import InvalidInputError, Location, Problem, UsageError

if TYPE_CHECKING:
    from kidx.formats.framework import Conversion
    from kidx.kinds.registry import KindRegistry
    from kidx.store.store import Store


class AttachedEnvironment(NamedTuple):
    conversion: Conversion  # the runs pointed at the environment
    name: str  # the environment's metadata.name


def attach_named_environment(
    module: ModuleType, conversion: Conversion, environment: str, registry: KindRegistry,
    store: Callable[[], Store],
) -> AttachedEnvironment:
    """The conversion with its runs pointed at ``environment``: a file (or ``-``) when one
    is named so, else an ExecutionEnvironment of the store (``store`` opens it, only then).
    A manifest from a file joins the batch; the importer's ``check_environment`` (when it
    has one) refuses an environment the input contradicts."""
    from kidx.formats.framework import attach_environment
    from kidx.identity import digest_of

    if os.path.isfile(environment) or environment == "-" or os.sep in environment:
        body, include = _environment_from_file(environment, registry), True
    else:
        the_store = store()
        entry = the_store.catalog().get("ExecutionEnvironment", environment)
        if entry is None:
            raise UsageError(
                f'--environment {environment}: no such file, and no ExecutionEnvironment "{environment}" '
                "in the store (kidx get environments lists them)"
            )
        body, include = the_store.manifest(entry), False
    check = getattr(module, "check_environment", None)
    if check is not None:
        mismatches = check(conversion, body)
        if mismatches:
            raise InvalidInputError([Problem(Location(environment), message) for message in mismatches])
    attached = attach_environment(conversion, body, digest_of(body), include, environment)
    return AttachedEnvironment(attached, body["metadata"]["name"])


def _environment_from_file(path: str, registry: KindRegistry) -> dict:
    from kidx.manifests.reader import read_sources
    from kidx.operations.maintain.apply import validate_batch

    result = read_sources([path])
    if result.problems:
        raise InvalidInputError(result.problems)
    documents = [d for d in result.documents if d.body.get("kind") == "ExecutionEnvironment"]
    if len(documents) != 1:
        raise InvalidInputError([Problem(
            Location(path), f"expected one ExecutionEnvironment manifest, found {len(documents)}"
        )])
    validate_batch(documents, registry, result.texts)
    return documents[0].body


__all__ = ["AttachedEnvironment", "attach_named_environment"]
