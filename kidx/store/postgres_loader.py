"""Bulk loads that run behind the write that asks for them (the PostgreSQL backend).

A write's ``COPY``s go to one thread of its connection, in the order they are asked for,
while the write goes on making the rows that follow: the server stores one table's rows
while kidx makes the next table's, or the rest of the same table's (``Loader.stream``).
The connection stays one transaction's: the thread holds it only between a load asked
for and the next statement of the write, which first waits for every load asked for
(``Loader.settle``) and raises the first one's error, as the load itself would have; a
rollback gives up those not finished (``Loader.abandon``). The driver lets go of the
interpreter while it waits on the network, so the two threads do run side by side.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

CHUNK = 1_000  # rows a stream hands its COPY at once (RowStream)
_END = object()  # a stream's last chunk has been handed over
_ABANDON = object()  # the write is rolled back: the stream's COPY fails
_STOP = object()  # the connection closes: the thread ends


class Abandoned(Exception):
    """A load given up because its write is rolled back (never seen outside this module)."""


class RowStream:
    """The rows of one ``COPY`` handed over in chunks while it runs (``Loader.stream``)."""

    def __init__(self) -> None:
        self.chunks: queue.SimpleQueue = queue.SimpleQueue()
        self.closed = False

    def put(self, rows: Sequence[Sequence]) -> None:
        """More rows, in order (after ``close``: an error)."""
        if self.closed:
            raise RuntimeError("rows handed to a closed COPY stream")
        self.chunks.put(rows)

    def close(self) -> None:
        """No more rows: the COPY ends once it has sent those handed over."""
        if not self.closed:
            self.closed = True
            self.chunks.put(_END)

    def abandon(self) -> None:
        self.closed = True
        self.chunks.put(_ABANDON)


class Loader:
    """The loads of one psycopg connection, run in order by a thread of their own: one
    thread from the first load asked for to the ``settle`` or ``abandon`` that ends them."""

    def __init__(self, connection: Any):
        self._connection = connection
        self._thread: threading.Thread | None = None
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()  # the running thread's
        self._error: BaseException | None = None
        self._abandoning = False
        self._streams: list[RowStream] = []  # open ones

    @property
    def busy(self) -> bool:
        """Whether loads were asked for since the last ``settle`` or ``abandon``."""
        return self._thread is not None

    def run(self, job: Callable[[Any], None]) -> None:
        """``job(connection)`` after the loads asked for before it, while the caller goes on."""
        if self._thread is None:
            self._jobs = queue.SimpleQueue()
            self._thread = threading.Thread(target=self._work, args=(self._jobs,), name="kidx-postgres-loader",
                                            daemon=True)
            self._thread.start()
        self._jobs.put(job)

    def copy(self, table: str, columns: str, rows: Sequence[Sequence] | Callable[[Any], Iterable[Sequence]],
             types: Sequence[str] = ()) -> None:
        """``rows`` (not changed after) into ``table``'s ``columns`` with one COPY; or a
        function of the connection that gives them, called as the load starts (a look-up
        first). With the columns' ``types``, in COPY's binary format (bytes sent as they are,
        not as hexadecimal text)."""

        def load(connection: Any) -> None:
            loaded = rows(connection) if callable(rows) else rows
            binary = " (FORMAT BINARY)" if types else ""
            with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN{binary}") as copy:
                if types:
                    copy.set_types(types)
                for row in loaded:
                    if self._abandoning:
                        raise Abandoned
                    copy.write_row(row)

        self.run(load)

    def stream(self, table: str, columns: str) -> RowStream:
        """A COPY into ``table``'s ``columns`` that sends the rows handed to the stream as they come."""
        stream = RowStream()
        self._streams.append(stream)

        def load(connection: Any) -> None:
            with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                while (chunk := stream.chunks.get()) is not _END:
                    if chunk is _ABANDON:
                        raise Abandoned
                    for row in chunk:
                        copy.write_row(row)

        self.run(load)
        return stream

    def settle(self) -> None:
        """Close the open streams, wait for every load asked for, and raise the first one's
        error (a driver error, as the load would have raised it)."""
        for stream in self._streams:
            stream.close()
        self._streams.clear()
        self._end()
        error, self._error = self._error, None
        if error is not None:
            raise error

    def abandon(self) -> None:
        """Give the loads up (their write is rolled back): those not started are skipped, the
        one running stops at its next row; returns once none runs. Errors are dropped."""
        self._abandoning = True
        try:
            for stream in self._streams:
                stream.abandon()
            self._streams.clear()
            self._end()
        finally:
            self._abandoning = False
        self._error = None

    close = abandon  # the connection closes: nothing asked for and not settled is kept

    def _end(self) -> None:
        """Wait for the thread to run what it was given, and end."""
        if self._thread is not None:
            self._jobs.put(_STOP)
            self._thread.join()
            self._thread = None

    def _work(self, jobs: queue.SimpleQueue) -> None:
        while (job := jobs.get()) is not _STOP:
            if self._error is not None or self._abandoning:
                continue  # the write fails or is rolled back: the loads after are not run
            try:
                job(self._connection)
            except BaseException as exc:  # handed to the write's thread by settle()
                self._error = exc
