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


# schemas of the shapes the predicate compiles into one function each (a type alone, a
# string's rules, an object of properties, an array of items), nullable or not
SHAPES = [
    {"type": "string"},
    {"type": "string", "nullable": True},
    {"type": "number"},
    {"type": "integer", "nullable": True},
    {"type": "boolean"},
    {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
    {"type": "string", "pattern": "^[a-z]+$", "nullable": True},
    {"type": "string", "enum": ["passed", "x"], "maxLength": 5},
    {"type": "string", "enum": ["passed", True, 1], "nullable": True},
    {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^[a-zA-Z]*$"},
    {"type": "string", "format": "date-time", "nullable": True},
    {"type": "string", "format": "nanoseconds"},
    {"enum": ["passed", 1, True]},
    {"pattern": "^x$"},
    {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "number", "nullable": True}},
     "required": ["name"], "additionalProperties": False},
    {"type": "object", "nullable": True, "properties": {"name": {"type": "string", "maxLength": 1}},
     "additionalProperties": False},
    {"properties": {"name": {"type": "string"}}, "x-kubernetes-preserve-unknown-fields": True},
    {"type": "object", "additionalProperties": {"type": "string", "nullable": True}},
    {"type": "array", "items": {"type": "integer"}},
    {"type": "array", "nullable": True, "items": {"type": "object", "properties": {"unknown": {"type": "integer"}},
                                                  "additionalProperties": False}},
    {"type": "array", "items": {"type": "number"}, "maxItems": 1},
    {"type": "array", "items": {"type": "string", "nullable": True, "pattern": "^[a-z]$"}, "minItems": 2},
    {"items": {"type": "integer", "minimum": 0}},
    {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
    {"type": "object", "additionalProperties": False},
    {"required": ["name"]},
    {"type": "number", "minimum": 0, "maximum": 2},
    {"minimum": 1},
    {"maxLength": 1, "minItems": 1},
    {"anyOf": [{"type": "string", "pattern": "^a"}, {"type": "integer"}, {"type": "object", "required": ["a"]}]},
    {"type": "object", "nullable": True, "anyOf": [{"required": ["name"]}, {"required": ["a"]}]},
    {"type": "object", "properties": {"name": {"type": "object", "properties": {"a": {"type": "array", "items": {
        "type": "object", "properties": {"b": {"type": "boolean"}}, "additionalProperties": False}}},
        "additionalProperties": False}}, "additionalProperties": False},
    {},
]
SHAPE_VALUES = [*ODD_VALUES, "2025-08-07T21:42:15.000Z", "2025-02-30T00:00:00Z", "ab", "passed", {"name": None},
                {"name": "a", "n": None}, {"name": "a", "n": 5.0}, {"name": "a", "x": 1}, [1, 2], [1.0], [None],
                [{"unknown": 1}], [{"unknown": "1"}], {"a": "b", "c": None}, {"a": 1}, ["a", "b"], ["a", None],
                [0, -1], 2.5, float("nan"), {"name": {"a": [{"b": True}]}}, {"name": {"a": [{"b": 1}]}},
                {"name": {"a": [{"c": True}]}}, {"name": "a", "z": 2}, {"name": 1, "z": 2}]


@pytest.mark.parametrize("schema", SHAPES, ids=lambda schema: json.dumps(schema, sort_keys=True)[:60])
def test_predicate_agrees_with_jsonschema_on_each_shape(schema):
    """Each shape on its own and as an object's property (where a type alone is checked
    without a call), on values of every type."""
    for shape in (schema, {"type": "object", "properties": {"field": schema}}):
        valid, of_record = compile_predicate(shape), SchemaValidator(shape)
        values = SHAPE_VALUES if shape is schema else [{"field": value} for value in SHAPE_VALUES]
        disagreements = [value for value in values if valid(value) != (not of_record.jsonschema_errors(value))]
        assert not disagreements, (shape, disagreements)
    assert any(compile_predicate(schema)(value) for value in SHAPE_VALUES)
    assert schema == {} or not all(compile_predicate(schema)(value) for value in SHAPE_VALUES)
