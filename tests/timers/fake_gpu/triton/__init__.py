"""A stand-in for triton with only ``triton.testing`` (see ../README.md)."""
from . import testing  # noqa: F401
