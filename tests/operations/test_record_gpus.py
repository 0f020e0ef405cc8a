"""kidx record --gpus on stand-in GPUs: which process ran on which GPU (CUDA_VISIBLE_DEVICES),
at most one process a GPU at a time, the GPUs at once, both sides of a repetition on one
GPU, the gpu label and UUID annotation on each process's runs, and the errors for a bad
--gpus list. The harness is a small Python script; the GPUs are a stand-in state reading."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kidx.capture.gpu_state import GpuState
from kidx.errors import UsageError
from kidx.operations.ingest import record_steps
from kidx.operations.ingest.record_gpus import Gpu, chosen_gpus
from kidx.output.events import worded

UUIDS = {0: "GPU-aaaaaaaa-0000", 1: "GPU-bbbbbbbb-1111", 2: "GPU-cccccccc-2222"}

#: the harness: says which GPU it saw, refuses to share its GPU, and waits (up to 30 s) until
#: a process has started on every GPU, which only processes run at once can achieve
HARNESS = '''
import json, os, sys, time
out, folder, gpus, side = sys.argv[1].split("=", 1)[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
gpu = os.environ["CUDA_VISIBLE_DEVICES"]
busy = os.path.join(folder, "busy-" + gpu)
shared = os.path.exists(busy)
open(busy, "w").close()
open(os.path.join(folder, "started-" + gpu), "w").close()
waited = time.monotonic()
while len([n for n in os.listdir(folder) if n.startswith("started-")]) < gpus and time.monotonic() - waited < 30:
    time.sleep(0.02)
together = len([n for n in os.listdir(folder) if n.startswith("started-")]) >= gpus
with open(os.path.join(folder, "order.txt"), "a") as handle:
    handle.write(f"{gpu} {side}\\n")
time.sleep(0.05)
os.remove(busy)
json.dump({"gpu": gpu, "side": side, "shared": shared, "together": together}, open(out, "w"))
'''


def states() -> list[GpuState]:
    return [GpuState(index, 1980, 1980, 2619, 100.0, 40, uuid, 1980, 0) for index, uuid in UUIDS.items()]


def sides(tmp_path: Path, names: list[str | None], gpus: int) -> list[record_steps.Side]:
    script = tmp_path / "harness.py"
    script.write_text(HARNESS)
    made = []
    for name in names:
        folder = tmp_path / "scratch" / (name or "one")
        folder.mkdir(parents=True)
        path = folder / "results.json"
        command = [sys.executable, str(script), f"--out={path}", str(tmp_path), str(gpus), name or "one"]
        made.append(record_steps.Side(name, record_steps.OutputPlan(command, path, True), None, {"suite": "s"}))
    return made


def run(tmp_path: Path, names: list[str | None], processes: int, gpus: list[Gpu]) -> list[tuple[dict, dict, dict]]:
    """(what each process wrote, its labels, its annotations), in the order they ended."""
    scratch = tmp_path / "scratch"
    collected = record_steps.Collected()
    lines: list[str] = []
    record_steps.run_processes(sides(tmp_path, names, len(gpus)), processes, tmp_path, scratch, lines.append, None,
                         collected, lambda plan, result, labels: None, states, gpus)
    return [(json.loads(Path(file).read_text()), collected.metadata[file].labels,
             collected.metadata[file].annotations) for file in collected.files]


def test_processes_run_on_every_gpu_at_once_one_a_gpu_at_a_time(tmp_path):
    gpus = chosen_gpus("all", states())
    ran = run(tmp_path, [None], 6, gpus)
    assert len(ran) == 6
    for wrote, labels, notes in ran:
        index = int(labels["gpu-index"])
        assert wrote["gpu"] == UUIDS[index] == notes["kernelindex.dev/gpu-uuid"]
        assert wrote["shared"] is False  # never two processes on one GPU
        assert wrote["together"] is True  # a process had started on each of the 3 GPUs meanwhile
        assert notes["kernelindex.dev/gpu-state-before"] == (
            f"{index}: sm 1980 MHz (max 1980), memory 2619 MHz, 100 W, 40 C, clocks held by none")
        assert labels["suite"] == "s"
    assert sorted(labels["repetition"] for _, labels, _ in ran) == [str(number) for number in range(1, 7)]
    assert {labels["gpu-index"] for _, labels, _ in ran} == {"0", "1", "2"}


def test_both_sides_of_a_repetition_run_on_one_gpu_base_first(tmp_path):
    gpus = chosen_gpus("0,2", states())
    ran = run(tmp_path, ["base", "head"], 3, gpus)
    by_repetition: dict[str, dict[str, str]] = {}
    for wrote, labels, _ in ran:
        assert wrote["side"] == labels["side"] and wrote["shared"] is False
        by_repetition.setdefault(labels["repetition"], {})[labels["side"]] = labels["gpu-index"]
    assert sorted(by_repetition) == ["1", "2", "3"]
    for pair in by_repetition.values():
        assert pair["base"] == pair["head"] in ("0", "2")
    order = (tmp_path / "order.txt").read_text().split()
    for gpu in (UUIDS[0], UUIDS[2]):  # on each GPU the sides alternate, base first
        seen = [order[index + 1] for index in range(0, len(order), 2) if order[index] == gpu]
        assert seen == ["base", "head"] * (len(seen) // 2)


def test_one_gpu_runs_in_turn_with_its_label(tmp_path):
    ran = run(tmp_path, [None], 2, chosen_gpus("1", states()))
    assert [(wrote["gpu"], labels["gpu-index"], labels["repetition"]) for wrote, labels, _ in ran] == [
        (UUIDS[1], "1", "1"), (UUIDS[1], "1", "2")]


def test_a_failure_on_one_gpu_stops_the_queue_and_keeps_what_was_measured(tmp_path):
    gpus = chosen_gpus("0,1", states())
    chosen = sides(tmp_path, [None], 2)
    script = tmp_path / "fails.py"
    script.write_text("import os, sys, time\n"
                      "if os.environ['CUDA_VISIBLE_DEVICES'] == 'GPU-bbbbbbbb-1111': sys.exit(5)\n"
                      "time.sleep(0.3)\n"
                      "open(sys.argv[1].split('=', 1)[1], 'w').write('{}')\n")
    plan = chosen[0].plan
    chosen[0].plan = record_steps.OutputPlan([sys.executable, str(script), plan.command[2]], plan.path, True)
    collected = record_steps.Collected()
    with pytest.raises(record_steps.HarnessFailed, match="exited with status 5; nothing was imported$"):
        record_steps.run_processes(chosen, 8, tmp_path, tmp_path / "scratch", lambda line: None, None, collected,
                             lambda *ended: None, states, gpus)
    # GPU 1 failed at once; GPU 0's process then running ended and was kept, and no other started
    assert [collected.metadata[file].labels["gpu-index"] for file in collected.files] == ["0"]


@pytest.mark.parametrize(("text", "message"), [
    ("3", "--gpus 3: there is no GPU 3 on this machine (GPUs: 0, 1, 2)"),
    ("0,x", "--gpus 0,x: expected all or a comma-separated list of GPU indices, as in 0,1"),
    ("", "--gpus : expected all or a comma-separated list of GPU indices, as in 0,1"),
    ("1,1", "--gpus 1,1: GPU 1 is named twice"),
])
def test_a_bad_list_is_refused_naming_gpus(text, message):
    with pytest.raises(UsageError) as raised:
        chosen_gpus(text, states())
    assert str(raised.value) == message


def test_without_gpus_all_is_refused():
    with pytest.raises(UsageError, match=r"^--gpus all: no GPU found on this machine \(neither NVML nor "
                                         r"nvidia-smi answered\)$"):
        chosen_gpus("all", [])


def test_an_interrupt_stops_the_process_on_every_gpu(tmp_path):
    """Ctrl-C reaches kidx while a process runs on each GPU: each is passed the interrupt
    (and ends, leaving a marker), no other starts, and kidx says the commands were stopped."""
    import os
    import signal
    import threading

    script = tmp_path / "waits.py"
    script.write_text("import os, signal, sys, time\n"
                      "gpu = os.environ['CUDA_VISIBLE_DEVICES']\n"
                      "def stopped(*_):\n"
                      f"    open(os.path.join({str(tmp_path)!r}, 'stopped-' + gpu), 'w').close()\n"
                      "    sys.exit(3)\n"
                      "signal.signal(signal.SIGINT, stopped)\n"
                      "print('ready', gpu, flush=True)\n"
                      "for _ in range(600): time.sleep(0.05)\n")
    chosen = sides(tmp_path, [None], 2)
    plan = chosen[0].plan
    chosen[0].plan = record_steps.OutputPlan([sys.executable, str(script), plan.command[2]], plan.path, True)
    ready: list[str] = []
    both = threading.Event()

    def echo(event) -> None:  # the operation's events: the harness's lines among them
        line = worded(event).text
        if "ready" in line:
            ready.append(line)
            if len(ready) == 2:
                both.set()

    def press_ctrl_c() -> None:
        if both.wait(60):
            os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    try:
        with pytest.raises(record_steps.HarnessInterrupted, match="^interrupted: the commands were stopped; nothing was "
                                                            "imported$"):
            record_steps.run_processes(chosen, 6, tmp_path, tmp_path / "scratch", echo, None, record_steps.Collected(),
                                 lambda *ended: None, states, chosen_gpus("0,1", states()))
    finally:
        both.set()
        presser.join()
    assert sorted(line.split()[-1] for line in ready) == [UUIDS[0], UUIDS[1]]  # no third process started
    assert (tmp_path / f"stopped-{UUIDS[0]}").exists() and (tmp_path / f"stopped-{UUIDS[1]}").exists()
