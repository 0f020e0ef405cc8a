"""Operations: what each verb does to the store, independent of the command line.

Five families, each a package (docs/design.md §7): ``select`` and ``maintain`` at the
bottom, independent of each other; ``analyse``, ``ingest`` and ``export`` above them,
independent of each other; ``reporting`` (the Reporter) and ``events`` (what it is given)
under all five. pyproject.toml's second ``layers`` contract holds the order."""
