"""kidx series --tail N: each series' N newest points by observedAt, read with the one
before them, and nothing more of the series: the run objects read stay the same however
long the series grow, on either backend."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from kidx.store.store import Store

pytestmark = pytest.mark.both_backends

PROTOCOL = "sha256:" + "1" * 64
WORKLOAD = "sha256:" + "2" * 64
ENVIRONMENT = "sha256:" + "3" * 64
BASELINE = "sha256:" + "b" * 64
LEVELS = {"a": 1000.0, "b": 2000.0}  # µs: a is twice as fast as the baseline b


def _run(implementation: str, night: int, status: str = "passed") -> str:
    """``implementation``'s run on ``night`` (b a second after a: one session), ±0.2%."""
    observed = datetime(2026, 1, 1) + timedelta(days=night, seconds=implementation == "b")
    timing = (f"timing: {{latencyNs: {{median: {round(LEVELS[implementation] * (1 + 0.001 * (night % 5 - 2)) * 1000)}}}, "
              "primaryStatistic: median}" if status == "passed" else "")
    return f"""apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata: {{name: {implementation}-{night + 100:04d}}}
spec:
  status: {status}
  observedAt: "{observed.isoformat()}Z"
  {timing}
  protocolDigest: {PROTOCOL}
  workloadDigest: {WORKLOAD}
  environmentDigest: {ENVIRONMENT}
  implementationDigest: sha256:{implementation * 64}
"""


def _apply(kidx, nights) -> None:
    """Both series' runs of ``nights``, newest first (a backfill: applied in the reverse
    of the order they were observed in)."""
    documents = "---\n".join(_run(implementation, night) for night in sorted(nights, reverse=True)
                             for implementation in LEVELS)
    code, _, err = kidx("apply", "-f", "-", stdin=documents)
    assert code == 0, err


@pytest.fixture
def read(monkeypatch):
    """The digests of the objects read from the store since the last clear."""
    digests: list[str] = []
    identity, identities = Store.identity, Store.identities

    def one(self, digest):
        digests.append(digest)
        return identity(self, digest)

    def many(self, wanted):
        wanted = list(wanted)
        digests.extend(wanted)
        return identities(self, wanted)

    monkeypatch.setattr(Store, "identity", one)
    monkeypatch.setattr(Store, "identities", many)
    return digests


def _runs_read(kidx, read: list[str]) -> set[str]:
    read = list(read)  # before get reads every run
    code, out, _ = kidx("get", "runs", "-o", "json")
    names = {item["metadata"]["digest"]: item["metadata"]["name"] for item in json.loads(out)["items"]}
    return {names[digest] for digest in read if digest in names}


def test_a_tail_reads_the_newest_runs_of_each_series_and_no_more(kidx, read):
    _apply(kidx, range(30))
    code, _, err = kidx("apply", "-f", "-", stdin=_run("a", 30, status="failed"))  # the newest: no figure
    assert code == 0, err

    def tail() -> tuple[str, set[str]]:
        read.clear()
        code, out, err = kidx("series", "--baseline", BASELINE, "--tail", "3", "-o", "json")
        assert (code, err) == (0, "")
        return out, _runs_read(kidx, read)

    out, runs = tail()
    assert runs == {f"{implementation}-{night + 100:04d}" for implementation in LEVELS for night in range(26, 30)}
    document = json.loads(out)
    assert len(document["series"]) == 2
    kernel = next(series for series in document["series"] if series["points"][0]["run"].startswith("a-"))
    assert [(point["run"], point["baselineRun"], round(point["speedup"], 3)) for point in kernel["points"]] == [
        ("a-0127", "b-0127", 2.0), ("a-0128", "b-0128", 2.0), ("a-0129", "b-0129", 2.0)]
    assert kernel["points"][0]["change"] is not None and kernel["points"][0]["verdict"] is not None
    assert sorted(entry["run"] for entry in document["inputs"]) == sorted(runs)
    assert document["singlePointSeries"] == 0

    # thirty older nights backfilled: the same runs read, the same result
    _apply(kidx, range(-30, 0))
    assert tail() == (out, runs)
    code, out, err = kidx("series", "--baseline", BASELINE, "--tail", "3")
    assert (code, err) == (0, "1 runs left out: not passed, or no figure to compare\n")
