"""kidx.analysis.hostbound: which kernel-timer runs are an events run's twins."""

from __future__ import annotations

import copy

import pytest

from kidx.analysis.hostbound import Timed, assess, twin_key

FORWARD = {"harness": {"name": "bench.py"},
           "measurement": {"metric": "latency", "timer": "cuda_events", "cache": "warm", "repetitionMs": 100.0},
           "comparability": {"notes": "Timed: the forward pass, another way than cuda_events."}}


def _with(spec: dict, **measurement) -> dict:
    changed = copy.deepcopy(spec)
    changed["measurement"].update(measurement)
    return changed


def test_a_twin_protocol_differs_only_in_its_measurement():
    graph = _with(FORWARD, timer="cuda_graph", cache="cold", repetitionMs=10.0, method="a CUDA graph")
    graph["comparability"]["notes"] = "Timed: the forward pass, another way than cuda_graph."
    assert twin_key(graph) == twin_key(FORWARD)  # the notes name each protocol's own timer
    backward = _with(FORWARD, timer="cuda_graph")
    backward["comparability"]["notes"] = "Timed: the backward pass, another way than cuda_graph."
    assert twin_key(backward) != twin_key(FORWARD)
    harness = _with(FORWARD, timer="cuda_graph")
    harness["harness"]["version"] = "2"
    assert twin_key(harness) != twin_key(FORWARD)
    assert twin_key(None) is None


def test_a_timer_is_read_as_a_word():
    """A protocol of timer `other` keeps "another" in its notes."""
    other = _with(FORWARD, timer="other")
    graph = _with(FORWARD, timer="cuda_graph")
    assert twin_key(other) == twin_key(graph) and "another" in (twin_key(other) or "")


def test_assess_takes_the_twins_of_the_same_key_only():
    def run(name, timer, value, spec):
        return Timed(name, "w", "i", "e", name, timer, value, twin_key=twin_key(spec))

    forward = copy.deepcopy(FORWARD)
    forward["comparability"]["notes"] = "Timed: the forward pass."
    backward = _with(forward, timer="cuda_graph")
    backward["comparability"]["notes"] = "Timed: the backward pass."
    found = assess([run("events", "cuda_events", 100.0, forward),
                    run("graph", "cuda_graph", 10.0, _with(forward, timer="cuda_graph")),
                    run("backward-graph", "cuda_graph", 90.0, backward)])
    assert (found["events"].overhead, found["events"].twins) == (pytest.approx(10.0), ("graph",))


def test_assess_of_one_run_finds_what_assessing_all_finds_for_it():
    """describe asks for its run's evidence alone (``only``): the same evidence as the
    whole window's for that run, and none for the others, whose sweep reasons it does not
    work out (each is a pass over its sweep's points)."""
    def run(name, seq, value, timer="cuda_events", implementation="i"):
        spec = {"kernel": "k", "parameters": {"seq": seq, "hidden": 4096}}
        return Timed(name, f"w{seq}", implementation, "e", "p", timer, value, spec, twin_key="key")

    runs = [run(f"s{seq}", seq, 1000.0 + seq / 100) for seq in (1024, 2048, 4096, 8192, 16384)]
    runs += [run("g1024", 1024, 500.0, timer="cuda_graph"), run("other", 1024, 10.0, implementation="j"),
             run("other2", 2048, 20.0, implementation="j")]
    everything = assess(runs)
    assert set(everything) == {"s1024", "s2048", "s4096", "s8192"}  # a flat sweep; s1024 has a twin
    assert everything["s1024"].overhead == pytest.approx(1010.24 / 500.0)
    assert "flat sweep" in everything["s2048"].text()
    for name in ("s1024", "s2048", "s8192", "s16384", "other", "g1024"):
        assert assess(runs, only=name) == ({name: everything[name]} if name in everything else {})
