"""Analyses of selected runs: ``compare`` (and its ``--aggregate``), ``series``, ``plot``
and ``summary``. Uses ``select``."""
