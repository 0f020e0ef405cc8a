"""Statistics for comparing runs: what a run's headline figure is, with its spread, and
when a difference between two figures is significant. Pure functions over run specs;
no store, no output."""
