"""kidx.publish.workers: what a process beside this one sends back, and how its failure reads."""

from __future__ import annotations

import os

import pytest

from kidx.errors import KidxError
from kidx.publish.workers import beside


class Unsendable(Exception):
    def __init__(self, what, why):  # two arguments: pickle cannot make it again from its args
        super().__init__(f"{what}: {why}")


def _pid_and(value):
    return os.getpid(), value


def _fails(error):
    raise error


def test_beside_works_in_a_process_of_its_own_and_here_when_not_parallel():
    shared = list(range(100_000))  # inherited by the fork, never pickled
    with beside(True, _pid_and, shared) as result:
        pid, value = result()
    assert pid != os.getpid() and value == shared
    with beside(False, _pid_and, shared) as result:
        assert result() == (os.getpid(), shared)


def test_an_error_beside_is_raised_here():
    with beside(True, _fails, KidxError("the store is gone")) as result, pytest.raises(KidxError) as raised:
        result()
    assert str(raised.value) == "the store is gone"
    with beside(True, _fails, Unsendable("a", "b")) as result, pytest.raises(KidxError) as raised:
        result()
    assert str(raised.value) == "Unsendable: a: b"
