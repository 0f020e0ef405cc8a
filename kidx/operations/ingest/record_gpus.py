"""kidx record --gpus: which GPUs the processes run on, and running them there at once.

``chosen_gpus`` reads ``--gpus all|LIST`` against the GPUs the machine has (their index
and UUID, from ``kidx.capture.gpu_state``, injected so tests use stand-in GPUs).
``run_on_gpus`` gives each GPU a worker thread that takes the next repetition from a
shared queue and runs it there (both sides of an interleaved repetition in turn, on that
GPU), so at most one process runs on a GPU at a time and the GPUs run side by side. Each
process sees its GPU alone (``CUDA_VISIBLE_DEVICES``, ``gpu_environment``). A failure
stops the queue (the processes already running end, and what they measured is kept); an
interrupt of kidx stops every running process."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kidx.errors import UsageError

#: how often the waiting thread looks up, so that an interrupt is seen at once
_TICK = 0.1


@dataclass(frozen=True)
class Gpu:
    index: int  # nvidia-smi's (and NVML's) index
    uuid: str | None


def chosen_gpus(text: str, states: Sequence[Any]) -> list[Gpu]:
    """The GPUs ``--gpus all|LIST`` names, among ``states`` (each with ``gpu``, its index,
    and ``uuid``); a UsageError naming --gpus for a list that is malformed, repeats a GPU
    or names one the machine does not have."""
    known = {state.gpu: Gpu(state.gpu, state.uuid) for state in states}
    if not known:
        raise UsageError(f"--gpus {text}: no GPU found on this machine (neither NVML nor nvidia-smi answered)")
    if text.strip() == "all":
        return [known[index] for index in sorted(known)]
    chosen: list[Gpu] = []
    for part in text.split(","):
        part = part.strip()
        if not (part.isascii() and part.isdigit()):
            raise UsageError(f"--gpus {text}: expected all or a comma-separated list of GPU indices, as in 0,1")
        index = int(part)
        if index not in known:
            raise UsageError(f"--gpus {text}: there is no GPU {index} on this machine (GPUs: "
                             f"{', '.join(str(number) for number in sorted(known))})")
        if known[index] in chosen:
            raise UsageError(f"--gpus {text}: GPU {index} is named twice")
        chosen.append(known[index])
    return chosen


def gpu_environment(gpu: Gpu, base: dict[str, str]) -> dict[str, str]:
    """``base`` with the process shown its GPU alone: by UUID where known (CUDA's own
    numbering need not be nvidia-smi's), else by index in PCI bus order, nvidia-smi's."""
    environment = dict(base)
    if gpu.uuid:
        environment["CUDA_VISIBLE_DEVICES"] = gpu.uuid
    else:
        environment["CUDA_VISIBLE_DEVICES"] = str(gpu.index)
        environment["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    return environment


class Running:
    """The process each worker thread runs now, so that an interrupt can stop them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: dict[int, Any] = {}

    def started(self, process) -> None:
        """``process`` runs in this thread (run_harness's ``started``)."""
        with self._lock:
            self._processes[threading.get_ident()] = process

    def finished(self) -> None:
        """This thread's process has ended."""
        with self._lock:
            self._processes.pop(threading.get_ident(), None)

    def stop_all(self, stop: Callable[[Any], None]) -> None:
        with self._lock:
            processes = list(self._processes.values())
        threads = [threading.Thread(target=stop, args=(process,)) for process in processes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def run_on_gpus(gpus: Sequence[Gpu], repetitions: Iterable[int], run: Callable[[int, Gpu], None],
                running: Running, stop: Callable[[Any], None], halted: threading.Event) -> None:
    """``run(repetition, gpu)`` for each repetition, one at a time on each GPU, the GPUs at
    once. The first failure sets ``halted`` (``run`` starts no process once it is set) and
    is raised once every GPU has stopped; an interrupt (or any exception) in this thread
    sets it too, stops the running processes with ``stop``, waits for the workers, and is
    raised."""
    waiting: queue.Queue[int] = queue.Queue()
    for repetition in repetitions:
        waiting.put(repetition)
    failures: list[BaseException] = []

    def work(gpu: Gpu) -> None:
        while not halted.is_set():
            try:
                repetition = waiting.get_nowait()
            except queue.Empty:
                return
            try:
                run(repetition, gpu)
            except BaseException as failure:  # kept for the waiting thread, which raises it
                failures.append(failure)
                halted.set()
                return

    workers = [threading.Thread(target=work, args=(gpu,), name=f"kidx-gpu-{gpu.index}") for gpu in gpus]
    for worker in workers:
        worker.start()
    try:
        for worker in workers:
            while worker.is_alive():
                worker.join(_TICK)
    except BaseException:
        halted.set()
        running.stop_all(stop)
        for worker in workers:
            worker.join()
        raise
    if failures:
        raise failures[0]
