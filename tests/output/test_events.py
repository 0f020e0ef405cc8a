"""kidx/output/events.py: the words of each event operations report, exactly, and the
two subscribers (the command line's standard error, the Python API's warnings)."""

from __future__ import annotations

import io

import pytest

from kidx.operations import events
from kidx.output.events import Worded, progress_reporter, stderr_reporter, worded
from kidx.output.gateway import Output
from kidx.timers.settings import Sampling

WORDS = [
    (events.Progressed("storing", 250, 1000), Worded("storing 250/1000")),
    (events.NotInCheckout("/tmp/x"), Worded("/tmp/x is not in a git checkout: the runs carry no commit label", True)),
    (events.RecordingStarted("liger", ("python", "b c.py"), 1, None, None, None, Sampling()),
     Worded("record liger: running python 'b c.py'")),
    (events.RecordingStarted("liger", ("python", "b.py"), 4, "all", "cuda_graph", "flush", Sampling(0.005, 2000.0)),
     Worded("record liger: running python b.py (4 processes) on GPUs all, timed with cuda_graph (flush L2) in "
            "place of do_bench, sampled until the median's relative standard error is under 0.5% or 2 s have "
            "passed")),
    (events.RecordingStarted("liger", ("b",), 1, None, "cupti", "warm", Sampling(None, None, 1500.0)),
     Worded("record liger: running b, timed with cupti (warm L2) in place of do_bench, each call sampled for at "
            "least 1.5 s")),
    (events.RecordingStarted("liger", ("b",), 1, None, "cupti", "cold", Sampling(0.01, 2000.0, 2000.0)),
     Worded("record liger: running b, timed with cupti (cold L2) in place of do_bench, sampled until the median's "
            "relative standard error is under 1% or 2 s have passed, each call sampled for at least 2 s")),
    (events.ProcessStarted(2, 4, "head", 1, ("python", "b.py")), Worded("process 2 of 4, head, gpu 1: python b.py")),
    (events.ProcessStarted(1, 2, None, None, ("x",)), Worded("process 1 of 2: x")),
    (events.HarnessOutput("ready"), Worded("ready")),
    (events.HarnessOutput("ready", 3), Worded("[gpu 3] ready")),
    (events.ProcessEnded("liger", 1.26, "out.csv", {"commit": "abc", "dirty": "true"}),
     Worded("record liger: the command ended in 1.3 s; importing out.csv; labels: commit=abc, dirty=true")),
    (events.ProcessEnded("liger", 0.0, "out.csv", {}),
     Worded("record liger: the command ended in 0.0 s; importing out.csv; labels: none")),
    (events.TimerLogNote("log, line 3: not a JSON line"), Worded("log, line 3: not a JSON line", True)),
    (events.TimerUnused(), Worded("--timer had no effect: the command never called triton.testing.do_bench, so its "
                                  "runs keep the harness's own timer", True)),
    (events.Retimed(1, 1), Worded("record: 1 run timed by kidx's timer (1 do_bench call)")),
    (events.Retimed(3, 6), Worded("record: 3 runs timed by kidx's timer (6 do_bench calls)")),
    (events.RunsFlagged(1, "unmatched"), Worded("1 run matched no do_bench call and keep the harness's own protocol",
                                                True)),
    (events.RunsFlagged(2, "low-clock"), Worded("2 runs measured while the SM clock was well below the GPU's maximum "
                                                "(annotation kernelindex.dev/clock-warning)", True)),
    (events.MeasuredKept(2, "/tmp/k r", "liger", "my store"),
     Worded("the results measured so far (2 files) are kept in /tmp/k r: store them as this recording would have "
            "with kidx record liger --recover '/tmp/k r' --store 'my store'", True)),
    (events.RecoveredStored(1, "/tmp/k", "rec-1"),
     Worded("record: the 1 result file kept in /tmp/k are stored (recording rec-1); the folder may be removed")),
    (events.CaptureNote("no nvidia-smi"), Worded("note: no nvidia-smi")),
    (events.CaptureNote("NVML hung", warning=True), Worded("NVML hung", True)),
    (events.PeaksKept("box", "2026-01-01"), Worded("note: kept the peaks measured at 2026-01-01 on "
                                                   "executionenvironment box (--measure-peaks measures them again)")),
    (events.BundleNote("no checksum"), Worded("no checksum", True)),
    (events.PlotWritten("a.svg", 1, 2, 9), Worded("wrote a.svg: 1 panel, 2 lines, 9 points")),
    (events.RunsLeftOut(3, "sol", "workload.spec.parameters.seq"),
     Worded("3 runs left out: no figure (no cost, or no peak for --y sol), or no value at "
            "workload.spec.parameters.seq")),
    (events.SitePublished("site", 10, 4, 2, 1, 3, 7, 0, True),
     Worded("site: 10 files (4 runs, 2 group families, 1 series); would write 3, 7 unchanged, would remove 0")),
    (events.Transferred("remote", 1, 2, 0, False), Worded("remote: copied 1 object; 2 names changed, 0 unchanged")),
]


@pytest.mark.parametrize(("event", "words"), WORDS, ids=[type(event).__name__ for event, _ in WORDS])
def test_each_event_is_worded(event, words):
    assert worded(event) == words


def test_the_command_line_prints_the_words_on_stderr_escaped():
    stdout, stderr = io.StringIO(), io.StringIO()
    report = stderr_reporter(Output(stdout, stderr, environ={}))
    report(events.HarnessOutput("ready\x1b[2J"))
    report(events.TimerUnused())
    assert stdout.getvalue() == ""
    assert stderr.getvalue() == ("ready^[[2J\n"
                                 "Warning: --timer had no effect: the command never called triton.testing.do_bench, "
                                 "so its runs keep the harness's own timer\n")


def test_progress_is_drawn_on_a_terminal_only():
    with progress_reporter(Output(io.StringIO(), io.StringIO(), environ={}), 10**6, 1) as report:
        assert report is None  # not a terminal: no bar, and no line either


def test_the_api_keeps_the_warnings_only():
    from kidx.api.store import _Warnings

    kept = _Warnings()
    kept(events.CaptureNote("no nvidia-smi"))
    kept(events.BundleNote("no checksum"))
    assert kept == ["no checksum"]


def test_a_string_has_no_words():
    with pytest.raises(TypeError, match="^no words for the event str$"):
        worded("a sentence")  # type: ignore[arg-type]
