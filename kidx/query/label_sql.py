"""Label selector requirements as SQL over the catalog's (key, value) label index.

The SQL narrows the candidates through the index; the caller still checks each candidate
with the selector itself, so numeric comparisons (``gt``/``lt``) stay exact.
"""

from __future__ import annotations

_HAS_VALUE = "id {negation}IN (SELECT object_id FROM labels WHERE key=? AND value IN ({marks}))"
_HAS_KEY = "id {negation}IN (SELECT object_id FROM labels WHERE key=?)"


def label_clauses(selector) -> list[tuple[str, list]]:
    clauses: list[tuple[str, list]] = []
    for requirement in selector.requirements:
        operator, key, values = requirement.operator, requirement.key, list(requirement.values)
        if operator in ("=", "==", "in"):
            clauses.append((_HAS_VALUE.format(negation="", marks=",".join("?" * len(values))), [key, *values]))
        elif operator in ("!=", "notin"):
            clauses.append((_HAS_VALUE.format(negation="NOT ", marks=",".join("?" * len(values))), [key, *values]))
        elif operator in ("exists", "gt", "lt"):
            clauses.append((_HAS_KEY.format(negation=""), [key]))
        elif operator == "!":
            clauses.append((_HAS_KEY.format(negation="NOT "), [key]))
    return clauses
