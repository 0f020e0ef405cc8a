#!/bin/sh
# The store the release examples of these docs show: every distinct row Liger-Kernel's
# three CSVs ever held in its git history (kept in tests/data/liger/history/), imported
# into $KIDX_STORE. Run it from the repository's root.
set -e
kidx import liger tests/data/liger/history/all_benchmark_data.history.csv \
    tests/data/liger/history/all_benchmark_data_cutile.history.csv \
    tests/data/liger/history/all_benchmark_data_cutedsl.history.csv > /dev/null 2>&1
