"""kidx.records.NamedTuple makes the classes typing.NamedTuple makes (it exists so that
the read path need not import typing)."""

from __future__ import annotations

import pickle
import typing

import pytest

from kidx import records
from kidx.store.catalog import Entry


def _pair(base):
    class Point(base):
        """A point."""

        x: int
        label: str = "origin"

        @property
        def shown(self) -> str:
            return f"{self.label}@{self.x}"

        def moved(self, by: int) -> Point:
            return self._replace(x=self.x + by)

    return Point


def test_a_class_statement_makes_what_typing_makes():
    ours, theirs = _pair(records.NamedTuple), _pair(typing.NamedTuple)
    for made in (ours, theirs):
        point = made(3)
        assert point == (3, "origin") and isinstance(point, tuple)
        assert repr(point) == "Point(x=3, label='origin')"
        assert point.shown == "origin@3" and point.moved(2) == (5, "origin")
        assert made._fields == ("x", "label") and made._field_defaults == {"label": "origin"}
        assert made.__doc__ == "A point." and made.__mro__[1:] == (tuple, object)
        assert made._make([1, "a"]) == made(1, "a") and made(1)._asdict() == {"x": 1, "label": "origin"}
    assert list(ours.__annotations__) == list(theirs.__annotations__) == ["x", "label"]


def test_a_record_type_of_the_store_pickles_and_compares():
    entry = Entry("BenchmarkRun", "r", "sha256:" + "0" * 64, None, {}, {}, "2026-01-01T00:00:00Z", 1)
    assert pickle.loads(pickle.dumps(entry)) == entry
    assert entry._replace(generation=2).generation == 2 and entry.id is None


def test_what_typing_refuses_it_refuses():
    with pytest.raises(TypeError, match="Non-default namedtuple field y cannot follow default field x"):
        class Late(records.NamedTuple):
            x: int = 0
            y: int
    with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):
        class Replaced(records.NamedTuple):
            x: int

            def _replace(self):
                return self
    with pytest.raises(TypeError, match="offers the class syntax only"):
        records.NamedTuple("Point", [("x", int)])
    assert records.TYPE_CHECKING is False
