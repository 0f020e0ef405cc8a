"""``kidx export``: the selection, then a bundle, Bencher Metric Format, PyTorch OSS
benchmark records or Parquet, written whole or returned for standard output
(``exporting.py``). Uses ``select`` and ``maintain`` (the bundle format)."""
