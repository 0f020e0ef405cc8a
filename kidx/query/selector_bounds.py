"""What one label selector may hold.

A store answers a selector's requirements merged per key, and past a few of them as two set
conditions (kidx.store.label_conditions), so its cost grows with the values it lists and
the keys it names, never with the number of requirements as written. Past these bounds a
selector is refused where it is parsed, before any store is read (docs/commands/get.md),
so a generated selector cannot stall a team's server.
"""

from __future__ import annotations

from collections.abc import Sequence

from kidx.errors import UsageError
from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

MAX_SELECTOR_KEYS = 1_000
MAX_SELECTOR_VALUES = 10_000


class SelectorTooLarge(UsageError):
    """A label selector past ``MAX_SELECTOR_KEYS`` or ``MAX_SELECTOR_VALUES`` (its text is
    not repeated in the message: it is large)."""


def within_bounds(requirements: Sequence[Any]) -> None:
    """Refuse requirements (each with a ``key`` and ``values``) past the bounds."""
    keys = {requirement.key for requirement in requirements}
    if len(keys) > MAX_SELECTOR_KEYS:
        raise SelectorTooLarge(f"the label selector names {len(keys):,} label keys; a selector may name at most "
                               f"{MAX_SELECTOR_KEYS:,}")
    values = sum(max(1, len(requirement.values)) for requirement in requirements)
    if values > MAX_SELECTOR_VALUES:
        raise SelectorTooLarge(f"the label selector lists {values:,} values in {len(requirements):,} requirements; "
                               f"a selector may list at most {MAX_SELECTOR_VALUES:,} (select a large set by a label "
                               "its members share instead)")
