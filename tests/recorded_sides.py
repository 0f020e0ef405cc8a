"""Two sides of a real recording, one of them slowed: a kidx export bundle's runs labelled
side=a or side=b and applied to a new store with side b's figures (samples too) times a factor.
The verdict tests on real kernel-timer runs share it (test_compare_precision, test_compare_floors)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def recorded_sides(kidx, recorded: Path, bundle: Path, run_arguments: tuple[str, ...],
                   side_of: Callable[[dict], str | None], runs_expected: int) -> Callable[[float, Path], Path]:
    """Restore ``bundle`` into ``recorded``, read the runs ``kidx get runs RUN_ARGUMENTS``
    selects (``runs_expected`` of them), and return a function that applies them, labelled
    side=``side_of(run)`` (None: left out), with side b's figures times a factor, to a store."""
    code, _, err = kidx("import", "bundle", str(bundle), store_path=recorded)
    assert code == 0, err
    objects = []
    for kind in ("protocols", "workloads", "environments", "implementations"):
        code, out, err = kidx("get", kind, "-o", "json", store_path=recorded)
        assert code == 0, err
        objects += json.loads(out)["items"]
    code, out, err = kidx("get", "runs", *run_arguments, "-o", "json", store_path=recorded)
    assert code == 0, err
    runs = [(run, side) for run in json.loads(out)["items"] if (side := side_of(run)) is not None]
    assert len(runs) == runs_expected

    def applied(factor: float, store: Path) -> Path:
        documents = [*objects]
        for run, side in runs:
            run = json.loads(json.dumps(run))
            run["metadata"]["labels"]["side"] = side
            if side == "b":
                latency = run["spec"]["timing"]["latencyNs"]
                for key, value in latency.items():
                    latency[key] = [v * factor for v in value] if isinstance(value, list) else value * factor
                for entry in run["spec"].get("measurements") or ():
                    entry["value"] *= factor
                    if isinstance(entry.get("samples"), list):
                        entry["samples"] = [v * factor for v in entry["samples"]]
                samples = run["spec"].get("samples")
                if samples:
                    samples["values"] = [value * factor for value in samples["values"]]
            documents.append(run)
        for document in documents:
            for key in ("digest", "creationTimestamp", "generation"):
                document["metadata"].pop(key, None)
        code, _, err = kidx("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                   "items": documents}), store_path=store)
        assert code == 0, err
        return store

    return applied
