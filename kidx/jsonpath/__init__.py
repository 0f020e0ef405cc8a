"""kubectl's JSONPath dialect with kidx's extensions: parsing, evaluation, printing.

A language of its own, below every layer that reads paths: ``-o jsonpath`` and
custom-column printing (``output/``), ``--sort-by`` and the choice of what a command
must load (``query/``). ``dialect`` holds the public entry points and what the dialect
is, built from ``lexer`` (errors and tokens), ``parser``, ``tree`` (the parse tree,
which evaluates itself) and ``printing`` (kubectl's value printing); ``regex`` is the
RE2-syntax matcher of ``=~`` filters; ``relaxed`` the relaxed paths of custom columns
and sort keys.
"""

from kidx.jsonpath.dialect import (
    JSONPath,
    JSONPathError,
    JSONPathEvaluationError,
    JSONPathTemplate,
    Step,
    Steps,
    evaluate,
    format_value,
)
from kidx.jsonpath.relaxed import RelaxedPathError, compile_relaxed, relaxed_path, split_outside_brackets

__all__ = [
    "JSONPath",
    "JSONPathError",
    "JSONPathEvaluationError",
    "JSONPathTemplate",
    "RelaxedPathError",
    "Step",
    "Steps",
    "compile_relaxed",
    "evaluate",
    "format_value",
    "relaxed_path",
    "split_outside_brackets",
]
