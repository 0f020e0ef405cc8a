"""Queries: which objects a command's arguments and selectors mean."""
