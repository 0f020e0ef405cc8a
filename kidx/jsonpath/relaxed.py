"""kubectl's relaxed paths, as ``-o custom-columns`` columns and ``--sort-by`` keys take them.

``metadata.name``, ``.metadata.name``, ``{metadata.name}`` and ``{.metadata.name}`` all
mean ``{.metadata.name}`` (kubectl's RelaxedJSONPathExpression); the braces' content is
then a JSONPath of this package's dialect. Lists of them are comma-separated, where a
comma inside ``[…]`` (or a quoted string there), or escaped as ``\\,``, does not split
(kubectl splits at every comma, kubernetes/kubernetes#82950).
"""

from __future__ import annotations

import re
from functools import lru_cache

from kidx.errors import UsageError
from kidx.jsonpath.dialect import JSONPath

__all__ = ["RelaxedPathError", "compile_relaxed", "relaxed_path", "split_outside_brackets"]

# kubectl's RelaxedJSONPathExpression pattern, anchored with fullmatch (Python's ``$``
# would also match before a trailing newline, Go's does not).
_RELAXED = re.compile(r"\{\.?([^{}]+)\}|\.?([^{}]+)")
_RELAXED_ERROR = ("unexpected path string, expected a 'name1.name2' or '.name1.name2' "
                  "or '{name1.name2}' or '{.name1.name2}'")


class RelaxedPathError(UsageError):
    """A relaxed path kubectl would also reject."""


def relaxed_path(text: str) -> str:
    """Normalise a relaxed path to its ``{.…}`` form (kubectl's RelaxedJSONPathExpression).

    ``""`` stays ``""`` (a column that always shows ``<none>``). A path that starts with
    ``$`` or ``@`` keeps it (``{$.a}``) instead of becoming kubectl's ``{.$.a}``, which
    finds nothing there.
    """
    if not text:
        return text
    match = _RELAXED.fullmatch(text)
    if match is None:
        raise RelaxedPathError(_RELAXED_ERROR)
    spec = match.group(1) if match.group(1) is not None else match.group(2)
    if spec.startswith(("$", "@")):
        return "{" + spec + "}"
    return "{." + spec + "}"


@lru_cache(maxsize=256)
def compile_relaxed(normalised: str) -> JSONPath | None:
    """Compile a path returned by :func:`relaxed_path`; ``None`` for the empty path.

    Parse errors name the ``{.…}`` form, as kubectl's do.
    """
    if not normalised:
        return None
    return JSONPath.parse(normalised[1:-1], display=normalised)


def split_outside_brackets(text: str, sep: str = ",") -> list[str]:
    """Split ``text`` at ``sep`` except inside ``[…]`` (and quoted strings within), or
    where ``sep`` is escaped with a backslash."""
    parts: list[str] = []
    start = depth = 0
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if quote:
            if ch == quote:
                quote = None
        elif ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
        elif depth and ch in "'\"":
            quote = ch
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts
