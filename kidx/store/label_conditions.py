"""Label requirements as SQL over the (key, value, object_id) label index, for both backends.

A selector's requirements are first merged per key (``merged_requirements``): every
requirement on one key becomes at most one set of values allowed or refused, and a
presence or absence, holding for exactly the same label sets. A few merged requirements are
a clause each (``label_clause``, in the backend's SQL); past ``SET_FORM_AFTER`` they are
two set conditions whatever their number (``label_clauses``): the objects holding every
wanted (key, value) or key, counted per object, and the objects holding any refused one,
each a join of one list parameter with the index. So a generated selector of thousands of
requirements costs the index lookups of its values, never thousands of subqueries (SQLite
once took 96 KiB of memory a requirement, PostgreSQL minutes of CPU); its size is bounded
where it is parsed (kidx.query.selector_bounds).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

from kidx.errors import StoreError
from kidx.records import NamedTuple

Clause = tuple[str, builtins.list]
# (pairs, keys) -> SQL selecting object_id from the label rows holding one of the (key,
# value) pairs or one of the keys, and its parameters (one backend's spelling)
LabelRows = Callable[[builtins.list[builtins.list[str]], builtins.list[str]], Clause]
SET_FORM_AFTER = 16


class _Merged(NamedTuple):
    """A requirement standing for all of a selector's requirements of one operator on one key."""

    key: str
    operator: str
    values: tuple[str, ...]


def merged_requirements(requirements) -> builtins.list:
    """The requirements as at most three per key, holding for exactly the same label sets:
    the values allowed (``in``: every ``=`` and ``in`` of the key intersected, less the
    values refused), else the values refused (``notin``: every ``!=`` and ``notin`` joined),
    the key present (``exists``; also what ``gt`` and ``lt`` ask of the SQL, their numbers
    being checked on the rows) and the key absent (``!``). So a generated selector of
    thousands of requirements on one key (``v!=a,v!=b,…``) is one set condition, whose
    values the SQL holds as one list (a JSON text or an array), not thousands of clauses."""
    by_key: dict[str, builtins.list] = {}
    for requirement in requirements:
        by_key.setdefault(requirement.key, []).append(requirement)
    merged: builtins.list = []
    for key, found in by_key.items():
        allowed: set[str] | None = None
        refused: set[str] = set()
        present = absent = False
        for requirement in found:
            operator, values = requirement.operator, set(requirement.values)
            if operator in ("=", "==", "in"):
                allowed = values if allowed is None else allowed & values
            elif operator in ("!=", "notin"):
                refused |= values
            elif operator in ("exists", "gt", "lt"):
                present = True
            elif operator == "!":
                absent = True
            else:
                raise StoreError(f"unknown label operator {operator!r}")
        if allowed is not None:
            merged.append(_Merged(key, "in", tuple(sorted(allowed - refused))))
        elif refused:
            merged.append(_Merged(key, "notin", tuple(sorted(refused))))
        if present and allowed is None:
            merged.append(_Merged(key, "exists", ()))
        if absent:
            merged.append(_Merged(key, "!", ()))
    return merged


def label_clause(requirement, has_label: Callable[[str, builtins.list | None, str], tuple[str, builtins.list]],
                 never: str) -> tuple[str, builtins.list] | None:
    """SQL over the (key, value) label index for one requirement (None: it holds for every
    object). It narrows the candidates; gt/lt are checked exactly on the rows afterwards.
    ``has_label(key, values, negation)`` spells "has the label key (with one of the values,
    unless None)", after ``negation`` ("NOT " or ""), in one backend's SQL; ``never`` is
    its false."""
    operator, key, values = requirement.operator, requirement.key, list(requirement.values)
    if operator in ("=", "==", "in", "!=", "notin"):
        negation = "NOT " if operator in ("!=", "notin") else ""
        if not values:
            return None if negation else (never, [])
        return has_label(key, values, negation)
    if operator in ("exists", "gt", "lt", "!"):
        return has_label(key, None, "NOT " if operator == "!" else "")
    raise StoreError(f"unknown label operator {operator!r}")


def label_clauses(requirements, has_label: Callable[[str, builtins.list | None, str], Clause], never: str,
                  rows: LabelRows, column: str) -> builtins.list[Clause]:
    """The SQL conditions on ``column`` (an object id) for a selector's requirements: a
    clause per merged requirement (``label_clause``), or past ``SET_FORM_AFTER`` of them
    the two set conditions (see the module's docstring)."""
    merged = merged_requirements(requirements)
    if len(merged) <= SET_FORM_AFTER:
        return [clause for clause in (label_clause(r, has_label, never) for r in merged) if clause is not None]
    wanted_pairs, wanted_keys, refused_pairs, refused_keys = [], [], [], []
    wanted = 0
    for requirement in merged:
        if requirement.operator == "in":
            if not requirement.values:
                return [(never, [])]
            wanted += 1
            wanted_pairs += [[requirement.key, value] for value in requirement.values]
        elif requirement.operator == "exists":
            wanted += 1
            wanted_keys.append(requirement.key)
        elif requirement.operator == "notin":
            refused_pairs += [[requirement.key, value] for value in requirement.values]
        else:  # "!"
            refused_keys.append(requirement.key)
    clauses = []
    if wanted:
        # an object has one value a key, and a key is wanted once: a count of the rows it
        # holds of those wanted is the number of requirements it meets
        sql, parameters = rows(wanted_pairs, wanted_keys)
        clauses.append((f"{column} IN (SELECT object_id FROM ({sql}) wanted GROUP BY object_id "
                        f"HAVING count(*) = {wanted})", parameters))
    if refused_pairs or refused_keys:
        sql, parameters = rows(refused_pairs, refused_keys)
        clauses.append((f"{column} NOT IN ({sql})", parameters))
    return clauses
