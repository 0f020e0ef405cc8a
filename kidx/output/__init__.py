"""Printing: the one gateway to stdout/stderr, and every output format."""
