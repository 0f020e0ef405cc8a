#!/bin/sh
# The store most pages of these docs show: the seed record applied, then Liger-Kernel's
# three published CSVs (kept in tests/data/liger/) imported, into $KIDX_STORE. Run it from
# the repository's root.
set -e
kidx apply -f docs/examples/seed-bundle.json > /dev/null 2>&1
kidx import liger tests/data/liger/all_benchmark_data.csv tests/data/liger/all_benchmark_data_cutile.csv \
    tests/data/liger/all_benchmark_data_cutedsl.csv > /dev/null 2>&1
