"""kidx record --timer, --processes and --interleave end to end on the stand-in GPU
(fake_gpu/README.md): a Liger-style harness that calls triton.testing.do_bench, run
unmodified, gets kidx's do_bench; its runs get the protocol of the timer that measured
them; repeated processes and interleaved sides are labelled; what was measured before a
failure is kept."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

HERE = Path(__file__).parent
FAKE_GPU = HERE / "fake_gpu"

pytestmark = pytest.mark.slow  # a harness process per case, and kidx around it


@pytest.fixture
def scripts(tmp_path) -> Path:
    folder = tmp_path / "benchmark" / "scripts"
    folder.mkdir(parents=True)
    (tmp_path / "benchmark" / "data").mkdir()
    (folder / "utils.py").write_text("")  # where Liger's harness keeps its utils
    shutil.copy(HERE / "liger_stand_in.py", folder / "benchmark_stand_in.py")
    return folder


def record(folder: Path, store: Path, *arguments: str, gpu: bool = True) -> subprocess.CompletedProcess:
    environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1",
                   "PYTHONPATH": os.pathsep.join([str(FAKE_GPU), str(REPO)])}
    if not gpu:
        environment["FAKE_GPU_ABSENT"] = "1"  # the stand-in torch has no CUDA device
    return subprocess.run([sys.executable, "-m", "kidx", "record", "liger", "--no-capture", *arguments],
                          cwd=folder, capture_output=True, text=True, env=environment, timeout=300)


def fake_nvidia_smi(folder: Path, sm_mhz: int) -> str:
    """A folder holding an nvidia-smi that answers kidx's query of the GPUs' state."""
    folder.mkdir()
    program = folder / "nvidia-smi"
    program.write_text(f"#!/bin/sh\necho '0, {sm_mhz}, 1980, 3201, 350.25, 45'\n")
    program.chmod(0o755)
    return str(folder)


def stored(store: Path, kind: str) -> list[dict]:
    completed = subprocess.run([sys.executable, "-m", "kidx", "get", kind, "-o", "json", "--store", str(store)],
                               capture_output=True, text=True, check=True)
    return json.loads(completed.stdout)["items"]


def test_the_harness_gets_kidx_timer_and_its_runs_say_which(scripts, tmp_path):
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--processes", "2", "--", sys.executable,
                  "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    assert "record: 4 runs timed by kidx's timer (4 do_bench calls)\n" in done.stderr
    assert "BenchmarkProtocol 2 created" in done.stderr and "BenchmarkRun 4 created" in done.stderr
    protocols = {protocol["metadata"]["name"]: protocol["spec"]["measurement"]
                 for protocol in stored(store, "protocols")}
    assert sorted(measurement["timer"] for measurement in protocols.values()) == ["cuda_graph", "cupti"]
    for measurement in protocols.values():  # the harness's own protocol is not stored: nothing was timed by it
        assert measurement["replacesDoBench"] is True and measurement["cache"] == "cold"
        assert measurement["warmupMs"] == 25.0 and measurement["repetitionMs"] == 10.0
        assert measurement["quantiles"] == [0.5, 0.2, 0.8]
    runs = stored(store, "runs")
    by_pass = {}
    for run in runs:
        by_pass.setdefault(run["metadata"]["labels"]["operation"], []).append(run)
    assert sorted(run["metadata"]["labels"]["repetition"] for run in by_pass["forward"]) == ["1", "2"]
    for run in by_pass["forward"]:  # the two kernels only: no launch, no host latency, no flush
        assert run["spec"]["timing"]["latencyNs"]["median"] == pytest.approx(5000.0)
        assert run["spec"]["samples"]["values"] == pytest.approx([5000.0] * len(run["spec"]["samples"]["values"]))
        assert "kernelindex.dev/timer-fallback" not in run["metadata"]["annotations"]
        assert run["metadata"]["annotations"]["kernelindex.dev/sm-clock-mhz"] == "1980"
    for run in by_pass["backward"]:
        assert run["spec"]["timing"]["latencyNs"]["median"] == pytest.approx(12000.0)
        assert run["metadata"]["annotations"]["kernelindex.dev/timer-fallback"] == (
            "cuda_graph asked for: the call could not be captured in a CUDA graph: "
            "operation not permitted when stream is capturing")


def test_the_gpu_state_is_kept_and_a_low_clock_is_flagged(scripts, tmp_path, monkeypatch):
    """Each process's runs keep the GPUs' state before and after it; a run whose SM clock,
    read just after timing, was below 80 % of the GPU's maximum (1200 of 1980 MHz) is flagged."""
    monkeypatch.setenv("PATH", fake_nvidia_smi(tmp_path / "bin", 1400) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("FAKE_GPU_SM_CLOCK", "1200")
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--", sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    assert ("Warning: 2 runs measured while the SM clock was well below the GPU's maximum (annotation "
            "kernelindex.dev/clock-warning)\n") in done.stderr
    for run in stored(store, "runs"):
        annotations = run["metadata"]["annotations"]
        assert annotations["kernelindex.dev/gpu-state-before"] == (
            "0: sm 1400 MHz (max 1980), memory 3201 MHz, 350.25 W, 45 C")
        assert annotations["kernelindex.dev/gpu-state-after"] == annotations["kernelindex.dev/gpu-state-before"]
        assert annotations["kernelindex.dev/clock-warning"] == (
            "the SM clock was 1200 MHz just after timing, below 80% of the GPU's maximum 1980 MHz")


def test_without_nvml_the_clock_after_timing_comes_from_nvidia_smi(scripts, tmp_path, monkeypatch):
    """Where NVML's Python binding is missing (torch.cuda.clock_rate raises), the SM clock just
    after timing is asked of nvidia-smi, for the timed GPU by its UUID."""
    folder = tmp_path / "bin"
    folder.mkdir()
    asked = tmp_path / "asked.txt"
    program = folder / "nvidia-smi"
    program.write_text("#!/bin/sh\n"
                       f"echo \"$*\" >> {asked}\n"
                       'case "$*" in *=clocks.sm*) echo 1300 ;; '
                       "*) echo '0, 1300, 1980, 3201, 350.25, 45' ;; esac\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("FAKE_GPU_SM_CLOCK", "no-nvml")
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--", sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    for run in stored(store, "runs"):
        annotations = run["metadata"]["annotations"]
        assert annotations["kernelindex.dev/sm-clock-mhz"] == "1300"
        assert annotations["kernelindex.dev/clock-warning"] == (
            "the SM clock was 1300 MHz just after timing, below 80% of the GPU's maximum 1980 MHz")
    assert ("--id=GPU-0b8f2d4e-1111-2222-3333-444455556666 --query-gpu=clocks.sm --format=csv,noheader,nounits"
            in asked.read_text().splitlines())


def test_without_the_timer_the_harness_keeps_its_own(scripts, tmp_path):
    store = tmp_path / "store"
    done = record(scripts, store, "--", sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    assert [protocol["spec"]["measurement"]["timer"] for protocol in stored(store, "protocols")] == [
        "cuda_events", "cuda_events"]  # Liger's protocol of each pass
    assert {run["spec"]["timing"]["latencyNs"]["median"] for run in stored(store, "runs")} == {1_000_000.0}


def test_a_harness_that_never_calls_do_bench_is_told(scripts, tmp_path):
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cupti", "--", sys.executable, "benchmark_stand_in.py", "--no-do-bench")
    assert done.returncode == 0, done.stderr
    assert ("Warning: --timer had no effect: the command never called triton.testing.do_bench, so its runs keep "
            "the harness's own timer\n") in done.stderr
    assert [protocol["spec"]["measurement"]["timer"] for protocol in stored(store, "protocols")] == [
        "cuda_events", "cuda_events"]


def test_without_a_gpu_the_timer_is_refused_before_the_harness_runs(scripts, tmp_path):
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--", sys.executable, "benchmark_stand_in.py", gpu=False)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith(f"\nerror: --timer cuda_graph needs a CUDA device, and the harness's Python "
                                f"({sys.executable}) has none: torch.cuda.is_available() is False (no GPU, or a "
                                "CPU-only build of PyTorch); nothing was run\n")
    assert "record liger: running" not in done.stderr
    assert not (scripts / "runs-so-far").exists()  # the harness never started
    assert not store.exists()


def test_a_harness_python_without_torch_is_refused_before_it_runs(scripts, tmp_path):
    """The question goes to the harness's own Python, here kidx's without the stand-in
    torch on its path, so it has no torch at all."""
    store = tmp_path / "store"
    environment = {**os.environ, "KIDX_STORE": str(store), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "kidx", "record", "liger", "--no-capture", "--timer", "cupti", "--",
                           sys.executable, "benchmark_stand_in.py"], cwd=scripts, capture_output=True, text=True,
                          env=environment, timeout=300)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith(f"\nerror: --timer cupti needs torch with a CUDA device, and the harness's Python "
                                f"({sys.executable}) has no torch (ModuleNotFoundError: No module named 'torch'); "
                                "nothing was run\n")
    assert not (scripts / "runs-so-far").exists()


def test_what_was_measured_before_a_failure_is_kept_and_recovered_as_recorded(scripts, tmp_path):
    """The recovery command stores the kept runs exactly as record would have: the timer's
    protocol, the samples, the repetition and recording labels (before, the printed kidx
    import filed kernel timings under the harness's cuda_events protocol, unlabelled)."""
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--processes", "3", "--label", "suite=s", "--",
                  sys.executable, "benchmark_stand_in.py", "--fail-after", "2")
    assert done.returncode == 1
    kept = [line for line in done.stderr.splitlines() if "the results measured so far" in line]
    assert len(kept) == 1, done.stderr
    command = kept[0].split("store them as this recording would have with ", 1)[1].split()
    assert command[:4] == ["kidx", "record", "liger", "--recover"]
    assert not store.exists()
    recovered = subprocess.run([sys.executable, "-m", "kidx", *command[1:], "--store", str(store)],
                               capture_output=True, text=True)
    assert recovered.returncode == 0, recovered.stderr
    runs = stored(store, "runs")
    assert len(runs) == 4
    assert sorted(run["metadata"]["labels"]["repetition"] for run in runs) == ["1", "1", "2", "2"]
    assert {run["metadata"]["labels"]["suite"] for run in runs} == {"s"}
    assert all(run["spec"]["samples"]["values"] for run in runs)
    timers = sorted(protocol["spec"]["measurement"]["timer"] for protocol in stored(store, "protocols"))
    assert timers == ["cuda_graph", "cupti"]  # the backward call, which a graph cannot capture, fell back
    shutil.rmtree(command[4])


def test_interleaved_sides_alternate_and_are_labelled(scripts, tmp_path):
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--interleave", "--processes", "2", "--",
                  sys.executable, "benchmark_stand_in.py", "--", sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    order = [line.split(":", 1)[0] for line in done.stderr.splitlines() if line.startswith("process ")]
    assert order == ["process 1 of 2, base", "process 1 of 2, head", "process 2 of 2, base", "process 2 of 2, head"]
    sides = sorted((run["metadata"]["labels"]["side"], run["metadata"]["labels"]["repetition"])
                   for run in stored(store, "runs"))
    assert sides == [(side, repetition) for side in ("base", "head") for repetition in ("1", "2") for _ in "ab"]


@pytest.mark.parametrize(("arguments", "message"), [
    (["--timer", "wall"], 'error: --timer "wall": use cuda_graph, cupti, cuda_events\n'),
    (["--timer", "cupti", "--cache", "hot"], 'error: --cache "hot": use cold, warm\n'),
    (["--interleave"], "error: --interleave needs two commands: kidx record FORMAT --interleave -- BASE… -- HEAD…\n"),
])
def test_bad_timer_options_are_refused_before_anything_runs(scripts, tmp_path, arguments, message):
    done = record(scripts, tmp_path / "store", *arguments, "--", sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 2 or done.returncode == 1
    assert done.stderr.endswith(message)
    assert not (scripts / "runs-so-far").exists()


def test_on_the_h200_every_timed_run_keeps_its_clock_and_none_is_flagged(tmp_path):
    """Recorded on the H200 (tests/data/h200-timers/gpu-state/): `kidx record --timer` with
    cuda_graph and cupti, 2 processes each. Every run carries the SM clock read just after
    timing, at the GPU's maximum (1980 MHz), so none is flagged, though the GPU idled at
    345 MHz before some processes: the state before is kept as read, never judged."""
    store = tmp_path / "store"
    bundle = REPO / "tests" / "data" / "h200-timers" / "gpu-state" / "store.kidx.json"
    subprocess.run([sys.executable, "-m", "kidx", "import", "bundle", str(bundle), "--store", str(store)],
                   capture_output=True, text=True, check=True)
    runs = [run for run in stored(store, "runs") if run["metadata"]["labels"].get("suite") == "gpu-state"]
    assert len(runs) == 48
    assert {run["metadata"]["annotations"]["kernelindex.dev/sm-clock-mhz"] for run in runs} == {"1980"}
    assert not [run for run in runs if "kernelindex.dev/clock-warning" in run["metadata"]["annotations"]]
    before = {run["metadata"]["annotations"]["kernelindex.dev/gpu-state-before"].split(",")[0] for run in runs}
    assert before == {"0: sm 1980 MHz (max 1980)", "0: sm 345 MHz (max 1980)"}


def test_max_noise_samples_until_precise_and_the_protocol_says_so(scripts, tmp_path):
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--max-noise", "0.5", "--max-time", "2", "--",
                  sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    assert ("timed with cuda_graph (cold L2) in place of do_bench, sampled until the median's relative standard "
            "error is under 0.5% or 2 s have passed\n") in done.stderr
    measurements = [protocol["spec"]["measurement"] for protocol in stored(store, "protocols")]
    assert {(m["timer"], m["maxNoise"], m["maxTimeMs"]) for m in measurements} == {
        ("cuda_graph", 0.005, 2000.0), ("cupti", 0.005, 2000.0)}
    runs = stored(store, "runs")
    assert {run["metadata"]["annotations"]["kernelindex.dev/timer-noise"] for run in runs} == {
        "relative standard error of the median 0.000% (sampling stopped by noise)"}
    assert {len(run["spec"]["samples"]["values"]) for run in runs} == {10}


def test_min_time_samples_each_call_longer_and_the_protocol_says_so(scripts, tmp_path):
    """GEMM-heavy calls want more than do_bench's 100 ms (tests/data/h100-warmup): --min-time
    raises the harness's budget for every call, and the protocol keeps both."""
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--min-time", "0.25", "--",
                  sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    assert ("timed with cuda_graph (cold L2) in place of do_bench, each call sampled for at least 0.25 s\n"
            in done.stderr)
    measurements = [protocol["spec"]["measurement"] for protocol in stored(store, "protocols")]
    assert {(m["timer"], m["minTimeMs"], m["repetitionMs"], "maxNoise" in m) for m in measurements} == {
        ("cuda_graph", 250.0, 10.0, False), ("cupti", 250.0, 10.0, False)}  # the stand-in asks rep=10
    assert all(m["method"].endswith("; each call sampled for at least 250 ms") for m in measurements)
    budget_store = tmp_path / "budget"
    assert record(scripts, budget_store, "--timer", "cuda_graph", "--", sys.executable,
                  "benchmark_stand_in.py").returncode == 0
    longer = sorted(len(run["spec"]["samples"]["values"]) for run in stored(store, "runs"))
    budget = sorted(len(run["spec"]["samples"]["values"]) for run in stored(budget_store, "runs"))
    assert all(many >= 2 * few for many, few in zip(longer, budget, strict=True))


def test_max_time_under_min_time_is_raised_to_it_and_the_protocol_says_so(scripts, tmp_path):
    """--max-noise stops no sooner than --min-time, so a shorter --max-time is not the limit
    that held: the line and the protocol say the one that did."""
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--max-noise", "0.5", "--max-time", "0.1",
                  "--min-time", "0.2", "--", sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    assert ("in place of do_bench, sampled until the median's relative standard error is under 0.5% or 0.2 s have "
            "passed, each call sampled for at least 0.2 s\n") in done.stderr
    measurements = [protocol["spec"]["measurement"] for protocol in stored(store, "protocols")]
    assert {(m["timer"], m["maxTimeMs"], m["minTimeMs"]) for m in measurements} == {
        ("cuda_graph", 200.0, 200.0), ("cupti", 200.0, 200.0)}


@pytest.mark.parametrize(("arguments", "message"), [
    (["--max-noise", "0.5"], "error: --max-noise applies with --timer: the harness's own timer samples as it does\n"),
    (["--timer", "cupti", "--max-time", "3"], "error: --max-time applies with --max-noise\n"),
    (["--min-time", "1"], "error: --min-time applies with --timer: the harness's own timer samples as it does\n"),
    (["--cache", "warm"], "error: --cache applies with --timer: the harness's own timer treats the cache as it "
                          "does\n"),
    (["--cache", "hot"], "error: --cache applies with --timer: the harness's own timer treats the cache as it "
                         "does\n"),
    (["--timer", "cupti", "--min-time", "-1"], "error: --min-time -1: not a finite, non-negative number of seconds\n"),
    (["--timer", "cupti", "--min-time", "nan"], "error: --min-time nan: not a finite, non-negative number of seconds\n"),
    (["--timer", "cupti", "--min-time", "inf"], "error: --min-time inf: not a finite, non-negative number of seconds\n"),
    (["--timer", "cupti", "--min-time", "1e306"], "error: --min-time 1e+306: not a finite, non-negative number of "
                                                  "seconds\n"),  # finite, but not in milliseconds
    (["--timer", "cupti", "--max-noise", "1", "--max-time", "-2"], "error: --max-time -2: not a finite, "
                                                                   "positive number of seconds\n"),
    (["--timer", "cupti", "--max-noise", "1", "--max-time", "0"], "error: --max-time 0: not a finite, "
                                                                  "positive number of seconds\n"),
    (["--timer", "cupti", "--max-noise", "1", "--max-time", "0", "--min-time", "1"],
     "error: --max-time 0: not a finite, positive number of seconds\n"),  # not raised to --min-time
    (["--timer", "cupti", "--min-time", "x"], "error: Invalid value for '--min-time': 'x' is not a valid float.\n"
                                              "See 'kidx record --help' for usage.\n"),
    (["--recover", "kept", "--min-time", "1"], "error: --recover stores a kept recording as it was: it takes no "
                                               "a command, --min-time\n"),
    (["--timer", "cupti", "--max-noise", "100"], "error: --max-noise 100: 1.0 is not a fraction between 0 and 1 "
                                                 "(0.005 is 0.5 %)\n"),
])
def test_bad_stopping_options_are_refused_before_anything_runs(scripts, tmp_path, arguments, message):
    done = record(scripts, tmp_path / "store", *arguments, "--", sys.executable, "benchmark_stand_in.py")
    assert (done.returncode, done.stderr) == (1, message)
    assert not (scripts / "runs-so-far").exists()
    assert not (tmp_path / "store").exists()
def fake_gpus(folder: Path, count: int) -> str:
    """A folder holding an nvidia-smi of ``count`` GPUs: it answers kidx's fuller state query
    (UUID, default clock and clock event reasons; 0x4, a software power cap, on GPU 1)."""
    folder.mkdir()
    program = folder / "nvidia-smi"
    lines = "\\n".join(f"{index}, GPU-fake-{index}, 1980, 1980, 3201, 120.5, 40, 1980, "
                       f"{'0x0000000000000004' if index == 1 else '0x0000000000000000'}" for index in range(count))
    program.write_text("#!/bin/sh\n"
                       'case "$*" in *clocks_event_reasons*) printf "' + lines + '\\n" ;; *) exit 6 ;; esac\n')
    program.chmod(0o755)
    return str(folder)


def test_gpus_run_both_sides_of_a_repetition_on_one_gpu_and_label_it(scripts, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", fake_gpus(tmp_path / "bin", 2) + os.pathsep + os.environ["PATH"])
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--interleave", "--processes", "2", "--gpus", "all",
                  "--", sys.executable, "benchmark_stand_in.py", "--", sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    assert ("record liger: running " + sys.executable + " benchmark_stand_in.py (2 processes) on GPUs all, timed "
            "with cuda_graph (cold L2) in place of do_bench\n") in done.stderr
    runs = stored(store, "runs")
    assert len(runs) == 8
    pairs: dict[str, set] = {}
    for run in runs:
        labels, annotations = run["metadata"]["labels"], run["metadata"]["annotations"]
        assert annotations["kernelindex.dev/gpu-uuid"] == f"GPU-fake-{labels['gpu-index']}"
        assert labels["gpu"] == "nvidia-h200"  # the importer's label of the product stays
        assert annotations["kernelindex.dev/gpu-state-before"] == (
            f"{labels['gpu-index']}: sm 1980 MHz (max 1980), memory 3201 MHz, 120.5 W, 40 C, clocks held by "
            + ("sw-power-cap" if labels["gpu-index"] == "1" else "none"))
        pairs.setdefault(labels["repetition"], set()).add((labels["gpu-index"], labels["side"]))
    assert sorted(pairs) == ["1", "2"]
    for seen in pairs.values():  # base and head of a repetition on one GPU
        assert len({gpu for gpu, _ in seen}) == 1 and {side for _, side in seen} == {"base", "head"}
    shown = sorted(line.split()[1] for line in (scripts / "gpus-seen.txt").read_text().splitlines())
    assert shown == ["GPU-fake-0", "GPU-fake-0", "GPU-fake-1", "GPU-fake-1"]


@pytest.mark.parametrize(("gpus", "message"), [
    ("2", "error: --gpus 2: there is no GPU 2 on this machine (GPUs: 0, 1)\n"),
    ("0;1", "error: --gpus 0;1: expected all or a comma-separated list of GPU indices, as in 0,1\n"),
])
def test_a_bad_gpus_list_is_refused_before_anything_runs(scripts, tmp_path, monkeypatch, gpus, message):
    monkeypatch.setenv("PATH", fake_gpus(tmp_path / "bin", 2) + os.pathsep + os.environ["PATH"])
    done = record(scripts, tmp_path / "store", "--gpus", gpus, "--", sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 1 and done.stderr.endswith(message)
    assert not (scripts / "runs-so-far").exists() and not (tmp_path / "store").exists()


def test_gpus_refuse_processes_at_once_writing_one_named_file(scripts, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", fake_gpus(tmp_path / "bin", 2) + os.pathsep + os.environ["PATH"])
    done = subprocess.run([sys.executable, "-m", "kidx", "record", "bmf", "--no-capture", "--gpus", "all",
                           "--processes", "2", "--results", "out.json", "--", "true"], cwd=scripts,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 1
    assert done.stderr.endswith(f"error: --gpus all: the processes would run at once and all write {scripts}/out.json; "
                                "let kidx name the results file (leave out --results and the command's own output "
                                "option), or run on one GPU\n")


def test_samples_at_a_low_clock_are_counted_and_the_runs_say_so(scripts, tmp_path, monkeypatch):
    """The GPU's default clock (1980 MHz, from the state kidx reads before the process) goes
    to the timer; the SM clock reads 1980 MHz for the forward call's batch and 1100 MHz from
    then on, so every sample of the backward call was taken below 1485 MHz (75 %): kept, as
    nothing else was measured, and said so. Each run also says whether the persisting L2
    lines were reset (here, without a driver, not)."""
    monkeypatch.setenv("PATH", fake_nvidia_smi(tmp_path / "bin", 1980) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("FAKE_GPU_SM_CLOCK", "1980,1980,1980,1100")
    store = tmp_path / "store"
    done = record(scripts, store, "--timer", "cuda_graph", "--", sys.executable, "benchmark_stand_in.py")
    assert done.returncode == 0, done.stderr
    assert ("Warning: 1 run had samples taken while the SM clock was below 75% of its default (dropped, or kept "
            "where no other was taken; annotation kernelindex.dev/low-clock-samples)\n") in done.stderr
    runs = {run["metadata"]["labels"]["operation"]: run["metadata"]["annotations"] for run in stored(store, "runs")}
    assert "kernelindex.dev/low-clock-samples" not in runs["forward"]
    assert runs["backward"]["kernelindex.dev/low-clock-samples"] == (
        "every sample was taken while the SM clock read below 1485 MHz (75% of the default 1980 MHz; lowest "
        "1100 MHz): they are kept, as nothing else was measured")
    for notes in runs.values():
        assert notes["kernelindex.dev/persisting-l2"].startswith(("reset", "not reset: "))
        assert "kernelindex.dev/kernel-count-warning" not in notes
