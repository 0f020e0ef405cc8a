"""Bencher Metric Format (bencher.dev), both ways: ``importer.py`` reads it (``kidx import
bmf``), ``exporter.py`` writes it (``kidx export --format bmf``); a run read from BMF is
written back with the benchmark name and the measures it came with."""
