"""The implementation of kidx's public Python API; import its names from ``kidx``.

The public surface is what ``kidx.__all__`` names, and ``kidx.errors``. The modules of
this package are where those names live; every other module of kidx is internal and may
change without notice.
"""
