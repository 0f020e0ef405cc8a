"""``kidx publish``: a static site of the index (HTML and its script), made from the
runs the analysis operations select. Needs Jinja2 (``pip install '.[publish]'`` from a checkout of kidx)."""

from __future__ import annotations

import importlib.util

from kidx.errors import KidxError, install_hint

TITLE = "Kernel benchmarks"  # the site's title unless --title gives one


def require_jinja() -> None:
    """Say what to install when Jinja2, which renders the pages, is missing."""
    if importlib.util.find_spec("jinja2") is None:
        raise KidxError(f"kidx publish renders its pages with Jinja2: {install_hint('publish')}")
