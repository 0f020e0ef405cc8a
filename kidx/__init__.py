"""kidx: a kubectl-style command-line tool for a kernel benchmark index."""

__version__ = "0.1.0"
