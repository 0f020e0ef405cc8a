"""Describe: the objects asked for, each with its references resolved both ways."""

from __future__ import annotations

from kidx.query.descriptions import Description, describe_entry
from kidx.query.selection import select
from kidx.query.targets import parse_targets, selection_rules
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kidx.kinds.registry import KindRegistry
    from kidx.query.label_selector import LabelSelector
    from kidx.store.store import Store


class DescribeResult(NamedTuple):
    descriptions: list[Description]
    missing: list[str]  # NotFound messages
    by_prefix: bool  # found by name prefix (kubectl prints these one newline apart)


def describe_objects(
    store: Store, registry: KindRegistry, arguments: list[str], selector: LabelSelector | None
) -> DescribeResult:
    """The objects named or selected; with exactly ``TYPE NAME`` and no object called
    NAME, every object whose name starts with NAME (as kubectl does; with more names, or
    ``TYPE/NAME``, a miss stays a NotFound)."""
    selection_rules(arguments, selector)
    targets = parse_targets(arguments, registry, "describe")
    with store.reading() as catalog:
        selection = select(catalog, targets, selector)
        found = selection.entries
        missing = selection.missing
        by_prefix = False
        if missing and len(targets) == 1 and len(targets[0].names or ()) == 1 and "/" not in arguments[0]:
            prefixed = [
                (targets[0].info, entry)
                for name in targets[0].names or ()
                for entry in catalog.with_name_prefix(targets[0].info.kind, name)
                if (targets[0].info, entry) not in found
            ]
            if prefixed:
                found, missing, by_prefix = found + prefixed, [], True
        descriptions = [describe_entry(store, info, entry) for info, entry in found]
    return DescribeResult(descriptions, missing, by_prefix)


__all__ = ["DescribeResult", "describe_objects"]
