"""Kinds: the registry built from crds/, type-name resolution, schema validation, metadata rules."""
