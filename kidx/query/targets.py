"""Turning ``TYPE [NAME…]``, ``TYPE/NAME…`` and ``T1,T2`` arguments into targets (kubectl §4)."""

from __future__ import annotations

from kidx.errors import UsageError
from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.records import NamedTuple

ALL = "all"


class Target(NamedTuple):
    info: KindInfo
    names: list[str] | None  # None: every object of the kind


def parse_targets(arguments: list[str], registry: KindRegistry, verb: str) -> list[Target]:
    if not arguments:
        raise UsageError(
            f'You must specify the type of resource to {verb}. Use "kidx api-resources" for a '
            "complete list of supported resources."
        )
    if any("/" in argument for argument in arguments):
        return _resource_name_pairs(arguments, registry)
    kinds = _kinds(arguments[0], registry)
    names = arguments[1:] or None
    return [Target(info, list(names) if names else None) for info in kinds]


def _kinds(spelling: str, registry: KindRegistry) -> list[KindInfo]:
    kinds: list[KindInfo] = []
    for part in spelling.split(","):
        if not part:
            continue
        found = list(registry.kinds) if part.lower() == ALL else [registry.resolve(part)]
        kinds.extend(info for info in found if info not in kinds)
    if not kinds:
        raise UsageError(f'kidx doesn\'t have a resource type "{spelling}"')
    return kinds


def _resource_name_pairs(arguments: list[str], registry: KindRegistry) -> list[Target]:
    targets: list[Target] = []
    for argument in arguments:
        if "/" not in argument:
            raise UsageError(
                "there is no need to specify a resource type as a separate argument when passing "
                "arguments in resource/name form (e.g. 'kidx get resource/<resource_name>' instead "
                "of 'kidx get resource resource/<resource_name>'"
            )
        if argument.count("/") > 1:
            raise UsageError("arguments in resource/name form may not have more than one slash")
        spelling, _, name = argument.partition("/")
        if not spelling or not name or "," in spelling:
            raise UsageError("arguments in resource/name form must have a single resource and name")
        add_named(targets, registry.resolve(spelling), name)
    return targets


def add_named(targets: list[Target], info: KindInfo, name: str) -> None:
    """Add one named object, grouping names of one kind into one target (first-seen order)."""
    for target in targets:
        if target.info is info and target.names is not None:  # named targets only reach here
            target.names.append(name)
            return
    targets.append(Target(info, [name]))


def selection_rules(arguments: list[str], selector) -> None:
    """kubectl's rules for combining names and selectors."""
    if selector is None:
        return
    if any("/" in argument for argument in arguments):
        raise UsageError(
            "selectors and the all flag cannot be used when passing resource/name arguments"
        )
    if len(arguments) > 1:
        raise UsageError("name cannot be provided when a selector is specified")
