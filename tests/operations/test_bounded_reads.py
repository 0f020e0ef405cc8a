"""compare and describe read what their answer needs, not the store: adding many runs
that share a protocol, workload or environment with the compared runs, but never their
implementation, leaves the objects read and the output exactly as they were, and
describe's catalog queries do no more work (SQLite's virtual-machine steps)."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path

import pytest

from kidx.store.store import Store

REP = Path(__file__).resolve().parents[1] / "data" / "h200-aa" / "rep-01"
UNRELATED = 120


@pytest.fixture
def counted(monkeypatch):
    """The number of objects read from the store since the last reset."""
    reads = [0]
    identity, identities = Store.identity, Store.identities

    def one(self, digest):
        reads[0] += 1
        return identity(self, digest)

    def many(self, digests):
        digests = list(digests)
        reads[0] += len(digests)
        return identities(self, digests)

    monkeypatch.setattr(Store, "identity", one)
    monkeypatch.setattr(Store, "identities", many)
    return reads


@pytest.fixture
def steps(monkeypatch):
    """SQLite virtual-machine steps (in hundreds) run on connections opened since the last reset."""
    done = [0]
    connect = sqlite3.connect

    def counting(*arguments, **options):
        connection = connect(*arguments, **options)
        connection.set_progress_handler(lambda: done.__setitem__(0, done[0] + 1), 100)
        return connection

    monkeypatch.setattr(sqlite3, "connect", counting)
    return done


def _apply(kidx, tmp_path, items: list[dict], name: str) -> None:
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    code, _, err = kidx("apply", "-f", str(path))
    assert code == 0, err


def _compared_pair(items: list[dict]) -> tuple[dict, dict]:
    """Two passed latency runs of one protocol, workload and environment by two implementations."""
    groups: dict[tuple, dict[str, dict]] = {}
    for item in items:
        spec = item.get("spec") or {}
        if item["kind"] == "BenchmarkRun" and spec.get("status") == "passed" and "timing" in spec:
            key = (spec["protocolDigest"], spec["workloadDigest"], spec["environmentDigest"])
            groups.setdefault(key, {}).setdefault(spec["implementationDigest"], item)
    pair = next(list(runs.values())[:2] for _, runs in sorted(groups.items()) if len(runs) >= 2)
    return pair[0], pair[1]


def _unrelated(items: list[dict], runs: tuple[dict, dict]) -> list[dict]:
    """Runs on the compared runs' protocol and environment, on other workloads of the
    store, by implementations neither of them has."""
    from kidx.identity import digest_of

    own = {run["spec"]["implementationDigest"] for run in runs}
    others = [item["metadata"]["name"] for item in items
              if item["kind"] == "Implementation" and digest_of(item) not in own]
    own_workload = runs[0]["spec"]["workloadDigest"]
    workloads = [item["metadata"]["name"] for item in items
                 if item["kind"] == "Workload" and digest_of(item) != own_workload]
    assert others and len(workloads) > 1
    out = []
    for i in range(UNRELATED):
        clone = copy.deepcopy(runs[0])
        clone["metadata"] = {"name": f"unrelated-{i:04d}"}
        spec = clone["spec"]
        del spec["implementationDigest"]
        spec["implementationRef"] = {"name": others[i % len(others)]}
        del spec["workloadDigest"]
        spec["workloadRef"] = {"name": workloads[i % len(workloads)]}
        spec["timing"]["latencyNs"] = {"median": 1000 + i}
        out.append(clone)
    return out


def test_compare_and_describe_read_the_same_objects_whatever_else_the_store_holds(kidx, tmp_path, counted, steps):
    code, out, err = kidx("import", "liger", str(REP / "all_benchmark_data.csv"), "--environment",
                          str(REP / "environment.yaml"), "-o", "json")
    assert code == 0, err
    items = json.loads(out)["items"]
    _apply(kidx, tmp_path, items, "store.json")
    first, second = _compared_pair(items)
    names = (first["metadata"]["name"], second["metadata"]["name"])

    def measured() -> list[tuple[int, int, str]]:
        found = []
        for command in (("compare", *names, "-o", "json"), ("compare", *names, "-o", "wide"),
                        ("describe", "run", names[0])):
            counted[0] = steps[0] = 0
            code, out, err = kidx(*command)
            assert (code, err) == (0, ""), (command, err)
            found.append((counted[0], steps[0], out))
        return found

    before = measured()
    unrelated = _unrelated(items, (first, second))
    _apply(kidx, tmp_path, unrelated, "unrelated.json")
    code, out, _ = kidx("get", "runs", "-o", "name")
    assert code == 0 and out.count("/unrelated-") == len(unrelated)

    after = measured()
    assert [out for _, _, out in after] == [out for _, _, out in before]
    assert [reads for reads, _, _ in after] == [reads for reads, _, _ in before]
    assert all(reads < 60 for reads, _, _ in after), after
    # describe's look-ups start from the run's implementation or workload, which the added runs
    # lack, and check the protocol and environment on those runs: no more steps (within a page's)
    assert after[-1][1] <= before[-1][1] + 2, (before[-1][1], after[-1][1])


EVENTS_RUN = "liger-rms-norm-forward-liger-nvidia-h200-eps1e-06-hidden4096-seq1024-bf16-2026-12-01-10-3-cd4148fe0a"


def _beside(items: list[dict], run_name: str, count: int) -> list[dict]:
    """Runs that share the run's implementation and environment but cannot be its host
    evidence: on its protocol, workloads of other operations (no point of its sweeps);
    on its workload, another pass's protocol (no kernel timer, so no twin)."""
    from kidx.identity import digest_of

    run = next(item for item in items if item["metadata"]["name"] == run_name)
    own = next(item for item in items if digest_of(item) == run["spec"]["workloadDigest"])
    workloads = [item["metadata"]["name"] for item in items
                 if item["kind"] == "Workload" and item["spec"].get("operation") != own["spec"].get("operation")]
    backward = next(item["metadata"]["name"] for item in items if item["kind"] == "BenchmarkProtocol"
                    and item["metadata"]["name"].endswith("-backward"))
    assert workloads
    out = []
    for i in range(count):
        clone = copy.deepcopy(run)
        clone["metadata"] = {"name": f"beside-{i:04d}"}
        spec = clone["spec"]
        if i % 4:
            del spec["workloadDigest"]
            spec["workloadRef"] = {"name": workloads[i % len(workloads)]}
        else:
            del spec["protocolDigest"]
            spec["protocolRef"] = {"name": backward}
        spec["timing"]["latencyNs"] = {"median": 1000 + i}
        out.append(clone)
    return out


def test_describe_reads_only_the_runs_that_can_be_its_host_evidence(kidx, tmp_path, monkeypatch):
    """A run's host evidence comes from kernel-timer twins and points of its own sweeps;
    the other runs of its twin and sweep look-ups (found from the catalog rows) are not read."""
    code, out, err = kidx("import", "liger", str(REP / "all_benchmark_data.csv"), "--environment",
                          str(REP / "environment.yaml"), "-o", "json")
    assert code == 0, err
    items = json.loads(out)["items"]
    _apply(kidx, tmp_path, items, "store.json")
    code, before, err = kidx("describe", "run", EVENTS_RUN)
    assert (code, err) == (0, "") and "Likely Host-Bound:  flat sweep" in before
    _apply(kidx, tmp_path, _beside(items, EVENTS_RUN, 40), "beside.json")
    code, out, err = kidx("get", "runs", "-o", "json")
    assert code == 0, err
    beside = {item["metadata"]["digest"] for item in json.loads(out)["items"]
              if item["metadata"]["name"].startswith("beside-")}
    assert len(beside) == 40

    read: set[str] = set()  # the digests of the objects describe reads
    identity, identities = Store.identity, Store.identities

    def one(self, digest):
        read.add(digest)
        return identity(self, digest)

    def many(self, digests):
        digests = list(digests)
        read.update(digests)
        return identities(self, digests)

    monkeypatch.setattr(Store, "identity", one)
    monkeypatch.setattr(Store, "identities", many)
    code, after, err = kidx("describe", "run", EVENTS_RUN)
    assert (code, err, after) == (0, "", before)
    assert read and not read & beside, sorted(read & beside)
