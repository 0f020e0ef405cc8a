"""kubectl's own test tables (tests/kubectl_tables/, data ported from kubernetes' tests)
run through kidx: the parsers and evaluators directly, and a representative subset
through the CLI against objects in a temporary store."""

from __future__ import annotations

import copy
import json

import pytest

from kidx.errors import KidxError
from kidx.output.jsonpath import JSONPathTemplate
from kubectl_tables import jsonpath_cases as jp


def _render(template: str, data) -> str:
    return JSONPathTemplate.parse(template).render(data)


def _error_reason(exc: Exception) -> str:
    text = str(exc)
    for prefix in ("Error executing template: ", ", "):
        if prefix in text:
            return text.split(prefix, 1)[1]
    return text


# ------------------------------------------------------------------------ jsonpath


@pytest.mark.parametrize(("name", "template", "data", "expected", "error", "allow_missing"), jp.CASES,
                         ids=[case[0] for case in jp.CASES])
def test_jsonpath(name, template, data, expected, error, allow_missing):
    if name in jp.DIVERGENCES:
        expected, _reason = jp.DIVERGENCES[name]
        error = False
    if error:
        with pytest.raises(KidxError):
            _render(template, copy.deepcopy(data))
    else:
        assert _render(template, copy.deepcopy(data)) == expected


@pytest.mark.parametrize(("name", "template", "data", "expected"), jp.SORTED_OUTPUT_CASES)
def test_jsonpath_unordered(name, template, data, expected):
    assert sorted(_render(template, data).split()) == sorted(expected.split())


@pytest.mark.parametrize(("name", "template", "data", "message"), jp.ERROR_CASES,
                         ids=[case[0] for case in jp.ERROR_CASES])
def test_jsonpath_errors(name, template, data, message):
    if name in jp.ERROR_DIVERGENCES:
        message, _reason = jp.ERROR_DIVERGENCES[name]
    if message is None:
        assert _render(template, data) == ""
        return
    with pytest.raises(KidxError) as caught:
        _render(template, data)
    assert _error_reason(caught.value) == message


def test_every_jsonpath_divergence_names_a_case_and_a_reason():
    names = {case[0] for case in jp.CASES}
    assert set(jp.DIVERGENCES) <= names
    assert set(jp.ERROR_DIVERGENCES) <= {case[0] for case in jp.ERROR_CASES}
    assert all(reason for _, reason in [*jp.DIVERGENCES.values(), *jp.ERROR_DIVERGENCES.values()])
