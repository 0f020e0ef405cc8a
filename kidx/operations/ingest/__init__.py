"""Bringing runs into the store: ``import`` (its ``--environment`` and the merge with
stored runs), ``record`` (``record.py``, with its steps in ``record_steps.py`` and the
harness, device, GPU and timer modules beside it), ``env capture`` (keeping measured
peaks) and restoring a bundle. Uses ``maintain`` (apply, the bundle format)."""
