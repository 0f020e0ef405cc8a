"""Test tables ported from kubectl's own tests (data only); see README.md."""
