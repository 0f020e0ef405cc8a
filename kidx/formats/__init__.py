"""The formats of other tools, one place each: what ``kidx import FORMAT`` reads and what
``kidx export --format FORMAT`` writes. Pure conversions between a format's files and
manifests: no store, no printing (the operations in ``kidx.operations.ingest`` and
``kidx.operations.export`` store, select and write).

A format kidx only reads is a module (``liger.py``, ``nvbench.py``, …); a format read and
written is a package with both directions side by side, ``importer.py`` and
``exporter.py`` (``bmf/``, ``pytorch_benchmark/``); ``parquet.py`` is written only. What
every importer shares, and ``IMPORTERS``, the table of ``kidx import``'s formats, is
``framework.py``'s; what every exporter is given, ``run_objects.py``'s."""
