"""The site's pages made and written by several processes at once.

``site.publish`` reads the runs and works out the site's model in one process; the pages
are then independent of one another, so a large site's are made by a pool of worker
processes, one per CPU, forked from it: each worker inherits the model (nothing is sent
to it but a job's number), makes the pages of the jobs it is given, writes those whose
bytes changed (``files.SiteFolder.put``, under the folder's lock, which this process took
before the pool started) and answers with their paths. The pages are the same bytes
whichever process makes them: no job reads what another made, and this process counts
the pages in the jobs' order, as one process making them in turn would.

Where a worker fails, the others are stopped and the error is raised here as it would have
been in one process; ``site.publish`` then removes the temporary files they left and lists
the pages in the folder (``files.SiteFolder.abandon``): each page is replaced whole, never
half-written, and the next publish finishes the site. The workers ignore Ctrl-C:
this process is interrupted, stops them the same way and raises ``KeyboardInterrupt``.
A small site (under ``PARALLEL_RUNS`` runs), a machine of one CPU and a platform without
a safe ``fork`` (``can_fork``: none, or macOS) have the pages made in turn by this
process, and so does a system that cannot fork the workers when asked (out of processes
or memory). ``beside`` works something out in a
process of its own while this one goes on (the series' judgements and the runs'
speed-of-light and host-bound texts, while the model is worked out).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import multiprocessing
import multiprocessing.pool
import os
import pickle
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from kidx.errors import KidxError
from kidx.publish.files import SiteFolder

T = TypeVar("T")
Job = Callable[[], Iterable[tuple[str, str]]]  # makes some of the site's pages: (path, text) each

PARALLEL_RUNS = 10_000  # below this many runs, forking the workers costs about what they save
MOST_PROCESSES = 8  # each worker copies the parts of the model its pages touch

# what a worker inherits from this process: set just before the pool forks, cleared after
_WORK: tuple[SiteFolder, list[Job]] | None = None
_BESIDE: tuple[Callable, tuple] | None = None  # beside's function and arguments, the same way


def processes_for(runs: int) -> int:
    """How many worker processes make a site of ``runs`` runs (1: none, this process makes them)."""
    if runs < PARALLEL_RUNS or not can_fork():
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cpus, MOST_PROCESSES))


def can_fork() -> bool:
    """Whether the workers may be forked here: a platform with ``fork``, but not macOS, where
    Python documents forking a process as unsafe (the system's libraries may hold threads
    and locks a child cannot use) and starts processes another way by default."""
    return "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"


def write_pages(folder: SiteFolder, jobs: list[Job], processes: int) -> None:
    """Make every job's pages and put them in ``folder``, counted in the jobs' order."""
    pool = None
    global _WORK
    if processes > 1 and len(jobs) > 1:
        folder.hold_lock()  # the workers write under this process's lock
        _WORK = (folder, jobs)
        gc.freeze()  # the collector of a worker never walks (and so copies) the model it inherited
        pool = _forked_pool(processes)
        if pool is None:
            _WORK = None
            gc.unfreeze()
    if pool is None:
        for job in jobs:
            for path, text in job():
                folder.add(path, text)
        return
    results: dict[int, list[tuple[str, bool]]] = {}
    try:
        try:
            for index, pages, error in pool.imap_unordered(_run, range(len(jobs))):
                if error is not None:
                    raise error
                results[index] = pages
            pool.close()
        except BaseException:
            pool.terminate()  # the other workers stop, their pages as they are (each one whole or not there)
            pool.join()
            raise  # site.publish abandons the folder (files.SiteFolder.abandon)
        pool.join()
    finally:
        _WORK = None
        gc.unfreeze()
    for index in range(len(jobs)):
        for path, written in results[index]:
            folder.record(path, written)


@contextlib.contextmanager
def beside(parallel: bool, function: Callable[..., T], *args) -> Iterator[Callable[[], T]]:
    """``function(*args)`` worked out by a process of its own, forked now, while this one goes
    on (where ``parallel``; else here, when asked): yields what returns its result (sent back
    pickled: text, not the model). The process is stopped when the block ends, finished or not."""
    global _BESIDE
    if not parallel:
        yield functools.partial(function, *args)
        return
    _BESIDE = (function, args)  # inherited by the fork, never pickled (the runs are most of the memory)
    try:
        pool = _forked_pool(1)
    finally:
        _BESIDE = None
    if pool is None:
        yield functools.partial(function, *args)
        return
    try:
        pending = pool.apply_async(_beside)

        def result() -> T:
            found, error = pending.get()
            if error is not None:
                raise error
            return found  # type: ignore[return-value]  # function(*args), sent back

        yield result
    finally:
        pool.terminate()
        pool.join()


def _beside() -> tuple[object, BaseException | None]:
    """In ``beside``'s process: the function's result, or the error raised (as ``_run`` sends it)."""
    assert _BESIDE is not None
    function, args = _BESIDE
    try:
        return function(*args), None
    except Exception as exc:
        return None, _sendable(exc)


def _forked_pool(processes: int) -> multiprocessing.pool.Pool | None:
    """A pool of ``processes`` workers forked from this process, or None where the system
    cannot fork them now (out of processes or memory): the caller then does the work itself."""
    try:
        return multiprocessing.get_context("fork").Pool(processes, initializer=_ignore_interrupts)
    except OSError:
        return None


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run(index: int) -> tuple[int, list[tuple[str, bool]], BaseException | None]:
    """In a worker: job ``index``'s pages made and put; each one's path and whether it was written."""
    assert _WORK is not None
    folder, jobs = _WORK
    done: list[tuple[str, bool]] = []
    try:
        for path, text in jobs[index]():
            done.append((path, folder.put(path, text)))
    except Exception as exc:  # raised in the parent, as it would have been in one process
        return index, done, _sendable(exc)
    return index, done, None


def _sendable(exc: Exception) -> BaseException:
    """The error itself where it survives the trip to the parent, else a KidxError saying what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return KidxError(f"{type(exc).__name__}: {exc}")
