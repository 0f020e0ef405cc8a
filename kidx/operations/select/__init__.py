"""Reading the store as a selection: ``get`` and ``describe``, the runs an analysis works on
with their objects (``analysed_runs``), runs as table rows, why a selector selects
nothing, and the store's host-bound evidence. Uses no other family."""
