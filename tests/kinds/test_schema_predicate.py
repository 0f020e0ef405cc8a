"""The fast yes/no validator must accept exactly what jsonschema, the validator of record, accepts."""

from __future__ import annotations

import copy
import json
import random

import pytest
from conftest import SEED_BUNDLE

from kidx.kinds.crd_files import load_crds
from kidx.kinds.registry import KindRegistry
from kidx.kinds.schema import SchemaValidator, compile_predicate

REGISTRY = KindRegistry.from_crds(load_crds())
ODD_VALUES = [None, True, False, 0, -1, 1.5, 5.0, "", "x", "sha256:" + "0" * 64, "passed", [], [1], {}, {"name": "a"},
              {"unknown": 1}, 2**40, "A" * 300]


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


def _mutations(document, rng, count):
    paths = [p for p in _paths(document) if p]
    for _ in range(count):
        mutated = copy.deepcopy(document)
        path = rng.choice(paths)
        parent = mutated
        for step in path[:-1]:
            parent = parent[step]
        action = rng.random()
        if action < 0.2 and isinstance(parent, dict):
            del parent[path[-1]]
        elif action < 0.3 and isinstance(parent, dict):
            parent[f"extra{rng.randint(0, 9)}"] = rng.choice(ODD_VALUES)
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
        yield mutated


@pytest.mark.parametrize("member", ["run", "protocol", "environment"])
def test_predicate_agrees_with_jsonschema_on_mutations(member):
    manifest = json.loads(SEED_BUNDLE.read_text())[member]
    schema = REGISTRY.by_kind(manifest["kind"]).schema
    valid, of_record = compile_predicate(schema), SchemaValidator(schema)
    rng = random.Random(f"predicate-{member}")
    disagreements = []
    checked = 0
    for mutated in _mutations(manifest, rng, 1500):
        errors = of_record.jsonschema_errors(mutated)
        checked += 1
        if valid(mutated) != (not errors):
            disagreements.append((mutated, errors))
    assert checked == 1500
    assert not disagreements, disagreements[:3]
    assert valid(manifest) and not of_record.jsonschema_errors(manifest)
