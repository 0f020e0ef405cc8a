"""The "In the CLI" commands of the pages: each reproduces what its page shows from the
same store (the published selection, narrowed to the page's objects), so a reader can
take a page's question to the command line."""

from __future__ import annotations

import re
import shlex
from functools import lru_cache

from kidx.analysis.significance import SLOWER
from kidx.operations.analyse.compare import PREVIOUS, CompareRequest
from kidx.operations.select.analysed_runs import AnalysedRun, Referenced
from kidx.publish.context import PublishRequest
from kidx.publish.model import Family


def _reference_argument(role: str, referenced: Referenced) -> str:
    return f"{role}/{referenced.name}" if referenced.name is not None else referenced.digest or ""


def _scalar_terms(prefix: str, value, terms: list) -> bool:
    """``prefix.key=value`` for every scalar under ``value``; False where one cannot be
    selected on (a list, or a key that is not a field name)."""
    from kidx.query.field_selector import FieldSelectorError
    from kidx.store.catalog import scalar_text

    if isinstance(value, dict):
        return all(_scalar_terms(f"{prefix}.{key}", item, terms) for key, item in sorted(value.items()))
    text = scalar_text(value)
    if text is None:
        return False
    try:
        terms.append(_requirement(prefix, text))
    except FieldSelectorError:
        return False
    return True


@lru_cache(maxsize=1 << 16)
def _requirement(field: str, text: str):
    """``FIELD=TEXT``, checked once: a site's families share most of their workload fields."""
    from kidx.query.field_selector import FieldRequirement

    return FieldRequirement(field, "=", text)


def workload_fields(runs: list[AnalysedRun]) -> dict[str, set[str]]:
    """Per operation, the field selector paths of every scalar its workloads have."""
    fields: dict[str, set[str]] = {}
    seen: set = set()
    for run in runs:
        if run.workload.digest in seen:
            continue
        seen.add(run.workload.digest)
        terms: list = []
        _scalar_terms("workload.spec", run.workload.spec or {}, terms)
        fields.setdefault(str((run.workload.spec or {}).get("operation")), set()).update(t.field for t in terms)
    return fields


def plot_command(family: Family, request: PublishRequest, fields: dict[str, set[str]],
                 known: dict | None = None) -> str | None:
    """The ``kidx plot`` command that draws a group page's chart: the published selection,
    narrowed to the family's protocol, environment and workloads (every workload field
    but the swept parameter, and ``FIELD=`` for the fields other workloads of its
    operation have and its own lack); None where plot cannot draw it (no numeric swept
    parameter, or a workload field a field selector cannot name). ``known``: the axis and
    field selector made for the families before, by workload digest and swept parameter
    (families on other GPUs or protocols share them), one dict per publish."""
    if family.x_param is not None and not all(_plottable(point.x) for line in family.lines for point in line.points):
        return None
    workload = family.lines[0].points[0].run.workload
    key = (workload.digest, family.x_param)
    if known is not None and workload.digest is not None and key in known:
        found = known[key]
    else:
        found = _plot_selection(workload.spec, family.x_param, request, fields)
        if known is not None and workload.digest is not None:
            known[key] = found
    if found is None:
        return None
    x, selection = found
    arguments = ["kidx", "plot", "--x", f"workload.spec.parameters.{x}", *request.names]
    if request.selector is not None:
        arguments += ["-l", str(request.selector)]
    arguments += ["--field-selector", selection]
    for reference in (*request.references, _reference_argument("protocol", family.protocol),
                      _reference_argument("environment", family.environment)):
        arguments += ["--references", reference]
    return shlex.join([*arguments, "-o", "chart.svg"])


def _plot_selection(workload_spec: dict | None, x: str | None, request: PublishRequest,
                    fields: dict[str, set[str]]) -> tuple[str, str] | None:
    """A plot command's axis parameter and ``--field-selector`` text for a family's
    workload (``plot_command``), or None."""
    from kidx.query.field_selector import FieldRequirement, FieldSelector

    spec = dict(workload_spec or {})
    spec.pop("key", None)  # a text form of the parameters: it varies with the swept one
    parameters = dict(spec.get("parameters") or {})
    if x is None:  # one workload: any numeric parameter serves as the axis
        x = next((name for name, value in sorted(parameters.items()) if _plottable(value)), None)
    if x is None:
        return None
    parameters.pop(x, None)
    spec["parameters"] = parameters
    terms: list = []
    if not _scalar_terms("workload.spec", spec, terms) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", x):
        return None
    named = {term.field for term in terms} | {f"workload.spec.parameters.{x}", "workload.spec.key"}
    others = fields.get(str(spec.get("operation")), set()) - named
    terms += [FieldRequirement(field, "=", "") for field in sorted(others)]
    if isinstance(request.field_selector, FieldSelector):
        terms.extend(request.field_selector.requirements)
    return x, str(FieldSelector(sorted(terms, key=str)))


def _plottable(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _selection(command: str, request: PublishRequest, selector: str | None = None,
               terms: tuple = ()) -> list[str]:
    """``kidx COMMAND`` with the published selection: its runs, label selector (and
    ``selector`` beside it), field selector (and ``terms``) and references."""
    from kidx.query.field_selector import FieldSelector

    arguments = ["kidx", command, *request.names]
    labels = [text for text in (str(request.selector) if request.selector is not None else "", selector or "") if text]
    if labels:
        arguments += ["-l", ",".join(labels)]
    fields = [*terms, *(request.field_selector.requirements if isinstance(request.field_selector, FieldSelector)
                        else ())]
    if fields:
        arguments += ["--field-selector", str(FieldSelector(sorted(fields, key=str)))]
    for reference in request.references:
        arguments += ["--references", reference]
    return arguments


def _rule(request: PublishRequest) -> list[str]:
    """The verdict rule's options where the request's differ from the defaults."""
    from kidx.analysis.significance import ALPHA

    return ((["--threshold", f"{request.threshold * 100:g}"] if request.threshold is not None else [])
            + (["--alpha", f"{request.alpha:g}"] if request.alpha != ALPHA else []))


def series_command(request: PublishRequest, protocol: Referenced, workload: Referenced,
                   environments: list[Referenced], group: list[AnalysedRun]) -> str | None:
    """The ``kidx series`` command that follows a series page's group: the published
    selection narrowed to its protocol and workload, and to its environment (or, where
    the page's series cross environments of one machine, to that machine's hardware
    fields), with the page's release label, the first ``--baseline`` the group holds (as
    the page sets it) and the page's rule; None where a field selector cannot name the
    machine."""
    terms: list = []
    references = [_reference_argument("protocol", protocol), _reference_argument("workload", workload)]
    if len(environments) == 1:
        references.append(_reference_argument("environment", environments[0]))
    elif not _scalar_terms("environment.spec.hardware", (environments[0].spec or {}).get("hardware") or {}, terms) \
            or not terms:
        return None
    arguments = _selection("series", request, terms=tuple(terms))
    for reference in references:
        arguments += ["--references", reference]
    if request.release_label:
        arguments += ["--label", request.release_label]
    names = [run.implementation_names() for run in group]
    baseline = next((wanted for wanted in request.baselines if any(wanted in held for held in names)), None)
    if baseline is not None:
        arguments += ["--baseline", baseline]
    return shlex.join(arguments + _rule(request))


def regressions_request(request: PublishRequest) -> CompareRequest | None:
    """What the regressions page compares, with ``--release-label``: the published
    selection, each release against the one before it (``--by label=KEY --baseline
    previous``), the rows that got slower, confirmed or not (``--only slower``); the page
    shows its rows and ``regressions_command`` prints it. None without a release label."""
    if request.release_label is None:
        return None
    return CompareRequest(request.names, request.selector, request.field_selector, request.references,
                          label_key=request.release_label, baseline=PREVIOUS, threshold=request.threshold,
                          only=frozenset({SLOWER}), alpha=request.alpha)


def regressions_command(request: PublishRequest) -> str | None:
    """The ``kidx compare`` command of ``regressions_request``: the same rows, from the same
    store; None without a release label."""
    compared = regressions_request(request)
    if compared is None:
        return None
    arguments = _selection("compare", request)
    arguments += ["--by", f"label={compared.label_key}", "--baseline", PREVIOUS, "--only", SLOWER]
    return shlex.join(arguments + _rule(request))
